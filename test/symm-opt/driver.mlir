// mlir-opt parity of the driver: stdin, -o, IR dumps, timing, --help.
// RUN: symm-opt < %s | FileCheck %s
// RUN: symm-opt %s -o %t && FileCheck %s < %t
// RUN: symm-opt %s --mlir-print-ir-after-all \
// RUN:   --pass-pipeline='builtin.module(func.func(symm-mem-verify-groups),canonicalize)' \
// RUN:   2>&1 >/dev/null | FileCheck %s --check-prefix=DUMP
// RUN: symm-opt %s --mlir-timing --symm-mem-verify-groups 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=TIMING
// RUN: symm-opt --help | FileCheck %s --check-prefix=HELP

// CHECK: symm_mem.group @tp world_size(2)
// CHECK-LABEL: func.func @f
// CHECK: symm_mem.all_reduce sum

// DUMP: IR Dump After SymmMemVerifyGroups (symm-mem-verify-groups)
// DUMP: IR Dump After Canonicalizer (canonicalize)

// TIMING: Execution time report
// TIMING: SymmMemVerifyGroups

// HELP: OVERVIEW: symm-opt: the symm compiler's MLIR optimizer driver
// HELP-DAG: --symm-mem-verify-groups
// HELP-DAG: --canonicalize
// HELP-DAG: --split-input-file
// HELP-DAG: --verify-diagnostics
// HELP-DAG: --convert-gpu-to-nvvm

symm_mem.group @tp world_size(2)
func.func @f(%x: memref<4xf32>) -> memref<4xf32> {
  %0 = symm_mem.all_reduce sum %x group @tp : memref<4xf32> -> memref<4xf32>
  return %0 : memref<4xf32>
}
