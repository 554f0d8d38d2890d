// The bundled examples parse, verify and round-trip, and the README's
// pipeline runs on them.
// RUN: symm-opt %examples/tp_layer.mlir | symm-opt | FileCheck %s
// RUN: symm-opt %examples/tp_layer.mlir \
// RUN:   --pass-pipeline='builtin.module(func.func(symm-mem-verify-groups),canonicalize)' \
// RUN:   2>&1 | FileCheck %s --check-prefix=PIPELINE

// CHECK: symm_mem.group @tp world_size(2)
// CHECK-LABEL: func.func @tp_layer
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<128x256xbf16>
// CHECK: linalg.matmul {{.*}} outs(%[[PARTIAL]]
// CHECK: %[[SUM:.*]] = symm_mem.all_reduce sum %[[PARTIAL]] group @tp
// CHECK: linalg.generic {{.*}} ins(%[[SUM]],

// PIPELINE: tp_layer.mlir:{{[0-9]+}}:1: remark: group @tp: world size 2, 0 symmetric buffers (0 bytes), 1 operand awaiting symmetric memory
