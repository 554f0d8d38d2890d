// A malformed file: an MLIR diagnostic with file, line and column, and a
// non-zero exit status (`not` fails the test on a zero exit or a crash).
// RUN: not symm-opt %s 2>&1 | FileCheck %s
// RUN: not symm-opt %s.does-not-exist 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not symm-opt %S/driver.mlir --pass-pipeline='builtin.module(no-such-pass)' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PIPELINE

// MISSING: cannot open input file '{{.*}}malformed.mlir.does-not-exist': No such file or directory
// PIPELINE: 'no-such-pass' does not refer to a registered pass or pass pipeline

symm_mem.group @tp world_size(2)
func.func @broken(%x: memref<4xf32>) {
  // CHECK: malformed.mlir:[[@LINE+1]]:{{[0-9]+}}: error: expected ':'
  %0 = symm_mem.all_reduce sum %x group @tp memref<4xf32> -> memref<4xf32>
  return
}
