// Softmax and LayerNorm rows compile to a thread block per statistic row
// (warp shuffles, then shared memory), and the checking app links. The
// device machine runs it against a host reference (bench/results/*issue12*).
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %repo/bench/compiled/row_ops.mlir -o %t/row_ops.o --emit=ptx
// RUN: FileCheck %s < %t/row_ops.ptx
// RUN: c++ -O1 -std=c++17 -I %repo/runtime/include -I %examples/cpp -I %t \
// RUN:   %repo/bench/compiled/row_ops.cpp %t/row_ops.o %symm_runtime_lib -lpthread -ldl -lm -o %t/row_ops
// RUN: env -u RANK %t/row_ops > %t/run.txt 2>&1 || true
// RUN: FileCheck %s --check-prefix=START < %t/run.txt
// CHECK-NOT: .extern
// CHECK: shfl.sync.bfly
// CHECK: bar.sync
// CHECK-NOT: .extern
// START: {{skipped: no CUDA device|symm_init failed: environment: RANK is not set}}
