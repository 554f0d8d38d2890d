# Shared by the device scripts: the environment every run needs (NVLink
# multicast off) and two ways to start ranks.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 PYTHONUNBUFFERED=1
B=${B:-target/issue12}
# The CUDA libraries of torch's pip wheels (cuBLAS, NCCL) for our binaries.
nvidia_libraries() {
  export LD_LIBRARY_PATH=$(python3 -c "import nvidia, glob, os; print(':'.join(glob.glob(os.path.join(nvidia.__path__[0], '*', 'lib'))))" 2>/dev/null)
}
run() { echo "== $*"; "$@"; echo "exit status $?"; }
# A check log's tally: LABEL: its PASS and FAIL lines and the non-zero exit
# statuses `run` recorded in it.
tally() {
  local label=$1 log=$2
  echo "$label: $(grep -c 'PASS ' "$log") PASS, $(grep -c 'FAIL ' "$log") FAIL, $(grep '^exit status' "$log" | grep -vc 'status 0$') non-zero exits"
}
# A layer bench's JSON lines (the log $2) as one line per token count:
# LABEL ($1), the count, then each column named after (µs, nan where
# absent) and whether the checks held.
bench_columns() {
  local label=$1 log=$2
  shift 2
  grep '^{' "$log" | python3 -c "
import sys, json
label, cols = sys.argv[1], sys.argv[2:]
for line in sys.stdin:
    r = json.loads(line)
    print(label, r['m'], ' '.join(f'{c}={r.get(c, float(\"nan\")):.1f}' for c in cols), 'checks', r.get('checks'))" "$label" "$@"
}
# RANKS ranks (2 unless set) without a launcher, which would stop the
# survivors of a death; GPUS (else one per rank) spreads them as
# symm-launch --gpus does (rank r on GPU r mod GPUS).
ranks() {
  local port=$((29000 + RANDOM % 1000)) start=$SECONDS world=${RANKS:-2}
  local gpus=${GPUS:-${RANKS:-2}}
  for r in $(seq 0 $((world - 1))); do
    (RANK=$r WORLD_SIZE=$world LOCAL_RANK=$((r % gpus)) MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@"; \
      echo "exit status $? after $((SECONDS - start)) s") 2>&1 | sed "s/^/[rank $r] /" &
  done
  wait
}
# Rank 0 runs the first command, rank 1 the second (each one word: a
# binary), without a launcher; GPUS=1 puts both on GPU 0.
pair() {
  local port=$((29000 + RANDOM % 1000)) start=$SECONDS commands=("$1" "$2")
  for r in 0 1; do
    (RANK=$r WORLD_SIZE=2 LOCAL_RANK=$((r % ${GPUS:-2})) MASTER_ADDR=127.0.0.1 MASTER_PORT=$port ${commands[$r]}; \
      echo "exit status $? after $((SECONDS - start)) s") 2>&1 | sed "s/^/[rank $r] /" &
  done
  wait
}
# What a layer-check script of build $B sets up: logs in $OUT (/tmp unless
# set), a 30 s bound on waits for peers, $L its layers; the GPU named first.
layer_checks_setup() {
  OUT=${OUT:-/tmp}
  export SYMM_TIMEOUT_S=30
  L=$B/layers
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
}
# What a one-GPU script of build $B sets up first: layer_checks_setup, the
# CUDA libraries of torch's wheels (nvidia_libraries), and GPU 0 alone.
single_gpu_setup() {
  layer_checks_setup
  nvidia_libraries
  export CUDA_VISIBLE_DEVICES=0
}
# bench/model/matmul_check.py at world size 1 on build $B (its symm-launch,
# and the runtime beside its layers in $B/layers).
py() { SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \
  timeout 150 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$@"; }
# The decoder half-layer $L/lib<NAME>.so at widths "DxAxF" (hidden, attention
# and MLP features a rank holds) through py, logged by run:
# dec_py NAME DxAxF [matmul_check.py options].
dec_py() {
  local name=$1 d a f
  IFS=x read -r d a f <<< "$2"
  shift 2
  run py "$L/lib$name.so" "$d" "$f" --decoder "$a" "$@"
}
# The same on WORLD ranks sharing GPU 0 (symm-launch --gpus 1), each with
# its shard: tp_py WORLD LIB D F [matmul_check.py options].
tp_py() {
  local world=$1
  shift
  SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \
    timeout 280 "$B/symm-launch" -n "$world" --gpus 1 python3 bench/model/matmul_check.py "$@"
}
# ptxas's resources (registers, spills) of the kernels of symm-compile
# --emit=ptx files whose names match the regex $1, each line naming its
# file, by the lit suite's checker (which assembles each gpu.module for its
# own .target and fails on one that does not assemble or a kernel over its
# launch's registers): ptxas_resources REGEX FILE.ptx... ptxas is nvcc's
# neighbour.
ptxas_resources() {
  local regex=$1
  shift
  python3 "$(dirname "${BASH_SOURCE[0]}")/../../test/Integration/Inputs/ptxas_generated.py" \
    "$(dirname "$(command -v nvcc)")/ptxas" --report "$regex" "$@"
}
# The kernels per call of build $B's variants ($L/lib<v>.so, the 4096/7168
# block) forced generated, in a CUDA graph, programmatic launch on (two
# rounds) and off: pdl_profile_rounds "v1 v2 ..." PROFILE_TOKENS.
pdl_profile_rounds() {
  local pdl v
  for pdl in 1 1 0; do
    for v in $1; do
      echo "== $v SYMM_PDL=$pdl"
      SYMM_MATMUL=generated SYMM_PDL=$pdl run py "$L/lib$v.so" 4096 7168 --profile "$2"
    done
  done
}
# Scratch-build variants ($B/layers/lib<v>.so, the 4096/7168 block) against
# each other, forced generated, kernels per call in a CUDA graph, two
# rounds: variant_rounds "v1 v2 ..." CHECK_TOKENS PROFILE_TOKENS.
variant_rounds() {
  for round in 1 2; do
    for v in $1; do
      echo "== $v round $round"
      SYMM_MATMUL=generated run py "$B/layers/lib$v.so" 4096 7168 --tokens "$2" --profile "$3"
    done
  done
}
# The down projection alone (programmatic launch off, CUDA graph, 3 weight
# copies) in build $B's MLP blocks $L/lib<v>_4096x7168.so for each v of $1
# forced generated, then cuBLAS's (the first block forced to the library),
# at the rows $2 (checked at 2 and 8 first), ROUNDS rounds (6); the kernel
# lines only: down_alone "mlpH mlp" 2,4,8,16.
down_alone() {
  local round v first=${1%% *}
  for round in $(seq 1 "${ROUNDS:-6}"); do
    for v in $1 library; do
      local way=generated layer=$v
      [[ $v == library ]] && way=library layer=$first
      echo "== round $round $layer $way"
      SYMM_MATMUL=$way SYMM_PDL=0 py "$L/lib${layer}_4096x7168.so" 4096 7168 --tokens 2,8 --profile "$2" \
        --profile-copies 3 2>&1 | grep -E "us wall|symm_matmul_1_|nvjet.*tss|FAIL|PASS"
    done
  done
}
# Kernels per call (CUDA graph, 3 weight copies, forced generated,
# programmatic launch on) of build $B's MLP block 4096/7168 at the rows
# $2 and its decoders (TP 2's and TP 8's widths) at the rows $3, for each
# pair "MLP:DECODER" of layer prefixes in $1 (say "mlpH:decH mlp:dec":
# $L/lib<MLP>_4096x7168.so, lib<DECODER>_<widths>.so; DECODERS, "DxAxF ...",
# replaces the widths), ROUNDS rounds (2):
# blocks_ab "mlpH:decH mlp:dec" 2,8,16 2,8,16.
blocks_ab() {
  local round pair w
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for pair in $1; do
      echo "== ${pair%%:*} round $round"
      SYMM_MATMUL=generated run py "$L/lib${pair%%:*}_4096x7168.so" 4096 7168 --profile "$2" --profile-copies 3
    done
    for w in ${DECODERS:-4096x2048x7168 4096x512x1792}; do
      for pair in $1; do
        echo "== ${pair#*:}_$w round $round"
        SYMM_MATMUL=generated dec_py "${pair#*:}_$w" "$w" --profile "$3" --profile-copies 3
      done
    done
  done
}
# compute-sanitizer memcheck and racecheck on the kernels whose names hold
# $1 (mma16 unless set), build $B's 4096/7168 and 5120/1728 blocks at the
# token counts $2 (2,16 unless set).
sanitize_layers() {
  for tool in memcheck racecheck; do
    for w in 4096x7168 5120x1728; do
      SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \
        run timeout 250 compute-sanitizer --tool $tool --target-processes all --kernel-name "kns=${1:-mma16}" \
        "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$B/layers/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens "${2:-2,16}"
    done
  done
}
# The C++ Llama apps of build $B against torch's f32 reference, at world
# size 1 and at TP 2 with both ranks on one GPU, measured and generated.
llama_apps() {
  run python3 bench/model/reference.py --out /tmp/ref --m 1 4 9 16 17
  for way in measured generated; do
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 1 "$B/llama_mlp_w1" /tmp/ref --tokens=1,4,16 --iterations=10
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_mlp_w2" /tmp/ref --tokens=1,9,17 --iterations=5
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_decoder_w2" /tmp/ref --tokens=1,9,17 --iterations=5
  done
}
# The C++ apps of build $B (unpacked from $B/apps.tar.xz where the carry
# limit packed them) against torch's f32 reference, each way as measured:
# llama_mlp at world size 1 at the tokens $1, llama_mlp and llama_decoder
# at TP 2 with both ranks on GPU 0 at the tokens $2 (comma lists):
# apps_checks 9,16,17 9,16,17.
apps_checks() {
  local app
  if [[ -f $B/apps.tar.xz ]]; then tar -xJf "$B/apps.tar.xz" -C "$B"; fi
  # shellcheck disable=SC2046 # the token counts are words
  run python3 bench/model/reference.py --out /tmp/ref --m $(tr ',' '\n' <<< "$1,$2" | sort -nu)
  run timeout 150 "$B/symm-launch" -n 1 "$B/llama_mlp_w1" /tmp/ref --tokens="$1" --iterations=5
  for app in llama_mlp_w2 llama_decoder_w2; do
    run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/$app" /tmp/ref --tokens="$2" --iterations=5
  done
}
# At TP 2 with both ranks on GPU 0, against torch's f32 reference: build
# $B's MLP blocks WIDTHS (layers mlp_tp2_<D>x<F>, matmul_check.py at 1, 9,
# 16 and 17 rows), then the shipped C++ MLP app ($B/llama_mlp_w2) measured
# and forced generated at 1, 9, 16 and 17 tokens: tp2_mlp_checks "4096x7168 ...".
tp2_mlp_checks() {
  local way w
  for w in $1; do
    run tp_py 2 "$B/layers/libmlp_tp2_$w.so" "${w%x*}" "${w#*x}" --tokens 1,9,16,17
  done
  run python3 bench/model/reference.py --out /tmp/ref --m 1 9 16 17
  for way in measured generated; do
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_mlp_w2" /tmp/ref \
      --tokens=1,9,16,17 --iterations=5
  done
}
# compute-sanitizer's TOOLS on the tensor-core GEMVs (kernel names holding
# SANITIZE_KERNELS, `mma` unless set), forced generated and without graphs,
# on build $B's MLP blocks WIDTHS at SANITIZE_TOKENS rows (2,16 unless set),
# at world size 1, or with SANITIZE_RANKS ranks sharing GPU 0 on the
# blocks libmlp_tp<RANKS>_<WIDTH>.so (a variant's: <WIDTH>SANITIZE_SUFFIX,
# say _nar); each run's summary and check lines counted:
# sanitize_mma "memcheck racecheck" "4096x7168 2064x1000". (racecheck
# faults where the filter leaves a cuBLAS kernel uninstrumented: a width
# whose down projection keeps cuBLAS, like 2064x1000's.)
sanitize_mma() {
  local w tool ranks=${SANITIZE_RANKS:-1} prefix=libmlp_
  ((ranks > 1)) && prefix=libmlp_tp${ranks}_
  for w in $2; do
    for tool in $1; do
      SYMM_MATMUL=generated SYMM_CUDA_GRAPHS=0 SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so \
        PYTHONPATH=python:bench/model timeout 150 compute-sanitizer --tool "$tool" \
        --target-processes all --kernel-name "kns=${SANITIZE_KERNELS:-mma}" \
        "$B/symm-launch" -n "$ranks" --gpus 1 \
        python3 bench/model/matmul_check.py "$B/layers/$prefix$w${SANITIZE_SUFFIX:-}.so" "${w%x*}" "${w#*x}" \
        --tokens "${SANITIZE_TOKENS:-2,16}" 2>&1 \
        | grep "SUMMARY\|Internal\|PASS\|FAIL\|rror" | sort | uniq -c | cut -c1-200
      echo "== $tool $w done"
    done
  done
}
# The C++ apps $B/<app> named, at TP 2 with both ranks on GPU 0, against
# torch's f32 reference, measured and generated: tp2_apps APP...
tp2_apps() {
  local way app
  run python3 bench/model/reference.py --out /tmp/ref --m 1 4 9 16 17
  for way in measured generated; do
    for app in "$@"; do
      SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/$app" /tmp/ref \
        --tokens=1,4,9,16,17 --iterations=5
    done
  done
}
# A/B of layer libraries $B/layers/lib<name>.so (the 4096/7168 block),
# forced generated, kernels per call in a CUDA graph, alternating, two
# rounds: ab_rounds "name1 name2" PROFILE_TOKENS.
ab_rounds() {
  for round in 1 2; do
    for lib in $1; do
      echo "== $lib round $round"
      SYMM_MATMUL=generated run py "$B/layers/lib$lib.so" 4096 7168 --tokens 2 --profile "$2"
    done
  done
}
# The four widths' checks against torch's f32 reference at the dispatch
# edges (forced generated, then measured), and a whole-norm layer
# ($B/layers/libmlp_whole.so) forced generated.
widths_checks() {
  for w in 4096x7168 3072x8192 5120x1728 2064x1000; do
    SYMM_MATMUL=generated run py "$B/layers/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,4,5,8,9,15,16,17
  done
  run py "$B/layers/libmlp_4096x7168.so" 4096 7168 --tokens 1,2,16,17,64
  SYMM_MATMUL=generated run py "$B/layers/libmlp_whole.so" 4096 7168 --tokens 2,16
}
# The weight-read floor (bench/floor/stream_read.cu, built once a script)
# of BYTES... on GPU 0, with the machine's name: by default the Llama-3-8B
# MLP block's bytes at TP 2 (all, gate+up, down).
floor_read() {
  if [[ -z ${STREAM_READ_BUILT:-} ]]; then
    nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/stream_read bench/floor/stream_read.cu
    STREAM_READ_BUILT=1
  fi
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  (($#)) || set -- 176160768 117440512 58720256
  CUDA_VISIBLE_DEVICES=0 run timeout 200 /tmp/stream_read "$@"
}
# The MLP block at five widths (the four of widths_checks and 8192/3584, a
# TP-8 rank of Llama-3-70B) against torch's f32 reference at the dispatch
# edges, forced generated, then the 4096/7168 block measured with the
# choices logged (build $B).
five_width_checks() {
  for w in 4096x7168 3072x8192 5120x1728 2064x1000 8192x3584; do
    SYMM_MATMUL=generated run py "$B/layers/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,4,5,8,9,15,16,17
  done
  SYMM_LOG=info run py "$B/layers/libmlp_4096x7168.so" 4096 7168 --tokens 1,2,8,9,16,17,64
}
# Whether part $1 of a device script runs: PARTS names them (default:
# every part the script lists in ALL_PARTS).
part() { [[ " ${PARTS:-${ALL_PARTS:-}} " == *" $1 "* ]]; }
# On 2 GPUs: the floor, then two rounds of the MLP block and the decoder
# half-layer of build $1 ($1/layers/libllama_{mlp,decoder}.so) beside
# torch's variants and torch.compile, each bench also timing the variant
# $2 ($1/layers/libllama_{mlp,decoder}_$2.so) in the same process; logs in
# $OUT (LAYER_TOKENS: 1,16,128,2048 unless set).
layers_beside_x2() {
  local L=$1/layers variant=$2
  floor_read 2>&1 | tee "$OUT/floor.log"
  export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
  export LAYER_TOKENS=${LAYER_TOKENS:-1,16,128,2048}
  for round in 1 2; do
    run timeout 280 torchrun --nproc_per_node=2 bench/model/layer_bench.py "$L/libllama_mlp.so" \
      "$variant=$L/libllama_mlp_$variant.so" 2>&1 | tee "$OUT/layer_bench_$round.log"
    run timeout 280 torchrun --nproc_per_node=2 bench/model/decoder_bench.py "$L/libllama_decoder.so" \
      "$variant=$L/libllama_decoder_$variant.so" 2>&1 | tee "$OUT/decoder_bench_$round.log"
  done
}
