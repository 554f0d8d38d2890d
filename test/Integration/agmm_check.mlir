// bench/compiled/agmm_check builds: a compiled all_gather_matmul that
// becomes a CUDA graph (graph begin/end around the ring's runtime call) and
// the app that checks every call against a host reference (run on the
// device machine: bench/results/*compiled-agmm-graphs*).
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %repo/bench/compiled/agmm_check.mlir -o %t/agmm_check.o --emit=llvm
// RUN: FileCheck %s < %t/agmm_check.ll
// RUN: c++ -O1 -I %repo/runtime/include -I %t %repo/bench/compiled/agmm_check.cpp %t/agmm_check.o \
// RUN:   %symm_runtime_lib -lpthread -ldl -lm -o %t/agmm_check
// RUN: env -u RANK %t/agmm_check > %t/run.txt 2>&1 || true
// RUN: FileCheck %s --check-prefix=START < %t/run.txt

// CHECK: define i32 @agmm_async(
// CHECK: call i32 @symm_rt_graph_begin(
// CHECK: call void @symm_rt_all_gather_matmul(
// CHECK: call void @symm_rt_graph_end(

// START: {{skipped: no CUDA device|symm_init failed: environment: RANK is not set}}
