# Shared by the device scripts: the environment every run needs (NVLink
# multicast off) and two ways to start ranks.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 PYTHONUNBUFFERED=1
B=${B:-target/issue12}
# The CUDA libraries of torch's pip wheels (cuBLAS, NCCL) for our binaries.
nvidia_libraries() {
  export LD_LIBRARY_PATH=$(python3 -c "import nvidia, glob, os; print(':'.join(glob.glob(os.path.join(nvidia.__path__[0], '*', 'lib'))))" 2>/dev/null)
}
run() { echo "== $*"; "$@"; echo "exit status $?"; }
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
