// The bundled examples parse, verify and round-trip, and the README's
// pipeline runs on them.
// RUN: symm-opt %examples/tp_layer.mlir | symm-opt | FileCheck %s
// RUN: symm-opt %examples/tp_layer.mlir \
// RUN:   --pass-pipeline='builtin.module(func.func(symm-mem-verify-groups),symm-mem-middle-end,canonicalize)' \
// RUN:   2>&1 | FileCheck %s --check-prefix=PIPELINE

// CHECK: symm_mem.group @tp world_size(2)
// CHECK-LABEL: func.func @tp_layer
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<128x256xbf16>
// CHECK: linalg.matmul {{.*}} outs(%[[PARTIAL]]
// CHECK: %[[SUM:.*]] = symm_mem.all_reduce sum %[[PARTIAL]] group @tp
// CHECK: linalg.generic {{.*}} ins(%[[SUM]],

// PIPELINE: tp_layer.mlir:{{[0-9]+}}:1: remark: group @tp: world size 2, 0 symmetric buffers (0 bytes), 1 operand awaiting symmetric memory
// PIPELINE: remark: symmetric operand #0 of symm_mem.all_reduce_out (#symm_mem.allocator<symmetric, @tp>): path 1, zero copy
// PIPELINE: remark: regular pool: 65536 bytes for 1 buffer
// PIPELINE: remark: pool @__symm_pool_tp_layer_tp (#symm_mem.allocator<symmetric, @tp>): 65536 bytes for 1 buffer
// PIPELINE: symm_mem.global @__symm_pool_tp_layer_tp alignment(128) : memref<65536xi8, #[[$TP:.*]]>
// PIPELINE: func.func @tp_layer(%arg0
// PIPELINE: %[[POOL:.*]] = symm_mem.get_global @__symm_pool_tp_layer_tp
// PIPELINE: %[[PARTIAL:.*]] = memref.view %[[POOL]]
// PIPELINE: linalg.matmul {{.*}} outs(%[[PARTIAL]] : memref<128x256xbf16, #[[$TP]]>)
// PIPELINE: symm_mem.all_reduce_out sum %[[PARTIAL]] into
