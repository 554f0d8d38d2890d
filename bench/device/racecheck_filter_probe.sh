set -uo pipefail
. bench/device/lib.sh
G=target/g24
python3 bench/model/reference.py --out /tmp/ref --m 1 16 96 128 --partitioned > /dev/null
for tokens in 1,16 96,128; do
  for filter in kns=symm_ kns=symm_one_shot none; do
    f=(--kernel-name $filter); [[ $filter == none ]] && f=()
    run timeout 200 "$G/symm-launch" -n 2 --gpus 1 compute-sanitizer --tool racecheck "${f[@]}" \
      --error-exitcode 9 "$G/w2/llama_decoder" /tmp/ref --tokens=$tokens --iterations=1 2>&1 \
      | grep -E "PASS|FAIL|SUMMARY|Internal|failed|exit status|^== " | grep -v "rank 1"
  done
done
