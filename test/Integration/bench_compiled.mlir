// bench/compiled builds: the generated all-reduce chains compile (Lamport
// one-shot up to 512 KiB; above 1 MiB two-shot, each output being the
// next all-reduce's input or our own buffer, so symmetric: the push lands
// in the peers' outputs), the checked-in MLIR is what the generator
// writes, and the timing app links. It runs on the device machine only.
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %repo/bench/compiled/gen_allreduce.py > %t/allreduce.mlir
// RUN: diff %t/allreduce.mlir %repo/bench/compiled/allreduce.mlir
// RUN: %symm-compile %t/allreduce.mlir -o %t/ar.o --emit=ptx
// RUN: FileCheck %s < %t/ar.ptx
// RUN: c++ -O1 -DALGORITHM=auto -I %repo/runtime/include -I %t %repo/bench/compiled/allreduce_bench.cpp \
// RUN:   %t/ar.o %symm_runtime_lib -lpthread -ldl -lm -o %t/bench
// RUN: env -u RANK %t/bench > %t/run.txt 2>&1 || true
// RUN: FileCheck %s --check-prefix=START < %t/run.txt

// CHECK-DAG: .visible .entry symm_one_shot_lamport_sum_bf16_w2_v8(
// CHECK-DAG: .visible .entry symm_two_shot_push_out_sum_bf16_w2_v8(

// START: {{skipped: no CUDA device|symm_init failed: environment: RANK is not set}}
