#!/bin/bash
# Issue 12 on 2x H200, in one device call: math accuracy, softmax and
# LayerNorm rows against a host reference, both Llama layer
# examples (dynamic token count) at M = 1, 16, 128, 2048 in one process each
# against torch's f32 reference (llama_mlp from C++ and from Rust), the async chain, planted failures (a kernel
# fault through each entry point, too many tokens, PTX the driver refuses),
# then the runtime's GPU tests. Binaries from
# bench/model/build_apps.sh target/issue12 (carried).
cd "$(dirname "$0")/../.."
source bench/device/lib.sh
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 bench/model/reference.py --out /tmp/llama --m 1 16 32 128 2048
  run $B/symm-launch -n 1 $B/math_accuracy
  run $B/symm-launch -n 1 $B/row_ops
  run $B/symm-launch -n 2 $B/llama_mlp /tmp/llama
  run $B/symm-launch -n 2 $B/llama_mlp_rust /tmp/llama
  run $B/symm-launch -n 2 $B/llama_attn_out /tmp/llama
  run $B/symm-launch -n 2 $B/llama_mlp /tmp/llama --plant-fault=sync
  run $B/symm-launch -n 2 $B/llama_mlp /tmp/llama --plant-fault=async
  run $B/symm-launch -n 2 $B/llama_mlp /tmp/llama --plant-fault=too-many-tokens
  run $B/symm-launch -n 2 $B/llama_mlp_bad_ptx /tmp/llama
  run $B/symm-launch -n 2 $B/tp_mlp
  run $B/symm-launch -n 2 $B/symm-gpu-tests
} 2>&1 | tee "$OUT/issue12.log"
