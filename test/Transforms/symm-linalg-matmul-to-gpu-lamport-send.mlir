// RUN: symm-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{lamport-send=true})' | FileCheck %s
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu)' 2>&1 | FileCheck %s --check-prefix=OFF

// symm-linalg-matmul-to-gpu's lamport-send (off by default: on 2x H200 the
// layers measured no faster with it, bench/results/2026-11-27-lamport-send-h200x2.md).
// OFF-NOT: the GEMVs send
// OFF-NOT: !symm_mem.pool, %{{[^:]*}}: i32
// OFF-LABEL: func.func @slices_to_lamport

// Split-K slices that feed a Lamport all-reduce kernel (as
// symm-mem-expand-collectives marks them: `symm.lamport_send`, the elements
// per channel of that kernel, and its launch `symm.lamport_receiver`, the
// first after the matmul): the GEMVs take the kernel's pool and a flag,
// set in the last round of the measured choice only. With it, and where
// every slice fits a Lamport region (as the all-reduce decides), each
// output element also goes, rounded to bf16, into every rank's Lamport
// area after the slices before it, and slice 0 stamps each channel.
// CHECK-LABEL: gpu.func @symm_matmul_0_gemv1
// CHECK-SAME: %[[POOL:[^:]*]]: !symm_mem.pool, %[[FLAG:[^:]*]]: i32
// CHECK: %[[FIRST:.*]] = symm_mem.lamport_region %[[POOL]][%{{.*}}] slot %c0 from %c0
// CHECK: %[[SECOND:.*]] = symm_mem.lamport_region %[[POOL]][%{{.*}}] slot %c1 from %c0
// CHECK: %[[FITS:.*]] = arith.cmpi ule
// CHECK: %[[FLAGGED:.*]] = arith.cmpi ne, %[[FLAG]], %{{.*}} : i32
// CHECK: %[[GO:.*]] = arith.andi %[[FLAGGED]], %[[FITS]] : i1
// CHECK: %[[ME:.*]] = symm_mem.pool_rank %[[POOL]]
// CHECK: %[[START:.*]] = arith.muli %{{.*}}, %{{.*}} : i64
// The element as the output stage writes it, then sent:
// CHECK: llvm.store %[[RESULT:[^,]*]], %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK: scf.if %[[GO]] {
// CHECK: %[[V:.*]] = arith.truncf %[[RESULT]] : f32 to bf16
// CHECK: %[[BITS:.*]] = llvm.bitcast %[[V]] : bf16 to i16
// CHECK: %[[SENTINEL:.*]] = arith.cmpi eq, %[[BITS]], %{{.*}} : i16
// CHECK: %[[SENT:.*]] = arith.select %[[SENTINEL]], %{{.*}}, %[[V]] : bf16
// CHECK: %[[CHANNEL:.*]] = arith.divui %[[AT:.*]], %c1024_i64 : i64
// CHECK: %[[COUNTER:.*]] = symm_mem.epoch %[[POOL]] channel %{{.*}}
// CHECK: %[[PLACE:.*]] = arith.addi %[[START]], %[[AT]] : i64
// CHECK: scf.for %[[RANK:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[REGION:.*]] = symm_mem.lamport_region %[[POOL]][%[[RANK]]] slot %{{.*}} from %[[ME]]
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[REGION]][%[[PLACE]]] : (!llvm.ptr, i64) -> !llvm.ptr, bf16
// CHECK: llvm.store %[[SENT]], %[[TO]] {alignment = 2 : i64} : bf16, !llvm.ptr
// CHECK: %[[STAMP:.*]] = arith.addi %{{.*}}, %c528 : index
// CHECK: symm_mem.set_epoch %[[POOL]] channel %[[STAMP]] to
// CHECK-LABEL: gpu.func @symm_matmul_0_mma16(
// CHECK-SAME: !symm_mem.pool, %{{[^:]*}}: i32
// CHECK: symm_mem.lamport_region
// CHECK-LABEL: func.func @slices_to_lamport
// CHECK-SAME: %[[IN:[^:]*]]: memref<?x4096xbf16, #symm_tp>)
// CHECK: %[[P:.*]] = symm_mem.pool_of %[[IN]]
// CHECK: %[[ROUNDS:.*]] = scf.if
// CHECK: scf.for %[[ROUND:.*]] = %{{.*}} to %[[ROUNDS]] step
// CHECK: %[[NEXT:.*]] = arith.addi %[[ROUND]], %{{.*}} : index
// CHECK: %[[ISLAST:.*]] = arith.cmpi eq, %[[NEXT]], %[[ROUNDS]] : index
// CHECK: %[[SEND:.*]] = arith.extui %[[ISLAST]] : i1 to i32
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_gemv1 {{.*}} args({{.*}}, %[[P]] : !symm_mem.pool, %[[SEND]] : i32)
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16 {{.*}} args({{.*}}, %[[P]] : !symm_mem.pool, %[[SEND]] : i32)
// The tensor-core kernel does not send: the all-reduce's blocks find no
// stamp and send the slices themselves.
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0 {{.*}} args({{[^!]*}}: !llvm.ptr, {{[^!]*}}: !llvm.ptr, {{[^!]*}}: !llvm.ptr, {{[^!]*}}: i64)
// CHECK: gpu.launch_func @symm_kernels::@receive_sent {{.*}} {symm.lamport_receiver}
module attributes {gpu.container_module} {
  symm_mem.group @tp world_size(2)
  gpu.module @symm_kernels {
    gpu.func @receive_sent(%pool: !symm_mem.pool) kernel {
      gpu.return
    }
  }
  func.func @slices_to_lamport(%a: memref<?x7168xbf16>, %w: memref<7168x4096xbf16>, %p: memref<2x?x4096xf32>,
                               %in: memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %pool = symm_mem.pool_of %in : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>
    %m = memref.dim %a, %c0 : memref<?x7168xbf16>
    %as = memref.reinterpret_cast %a to offset: [0], sizes: [2, %m, 3584], strides: [3584, 7168, 1]
        : memref<?x7168xbf16> to memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>
    %ws = memref.reinterpret_cast %w to offset: [0], sizes: [2, 3584, 4096], strides: [14680064, 4096, 1]
        : memref<7168x4096xbf16> to memref<2x3584x4096xbf16>
    // expected-remark@+2 {{the GEMVs send the product into the all-reduce's Lamport areas themselves: each split-K slice, as they write it, into every rank's area}}
    // expected-remark@+1 {{matmul in 2 split-K slices of 3584x4096: generated kernel @symm_matmul_0}}
    linalg.batch_matmul {symm.lamport_send = 1024 : i64, symm.overwrites}
        ins(%as, %ws : memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>, memref<2x3584x4096xbf16>)
        outs(%p : memref<2x?x4096xf32>)
    gpu.launch_func @symm_kernels::@receive_sent blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%pool : !symm_mem.pool) {symm.lamport_receiver}
    return
  }
}

// -----

// Where the GEMVs cannot send, a remark at the matmul says why, and they
// take no pool: a marked matmul with no launch after it of a kernel that
// reads the stamps (`_sent`), and one whose output is not f32 slices.
// CHECK-LABEL: func.func @no_receiver
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_gemv1 {{.*}} args({{[^!]*}}: !llvm.ptr, {{[^!]*}}: !llvm.ptr, {{[^!]*}}: !llvm.ptr, {{[^!]*}}: i64)
// CHECK-LABEL: func.func @receiver_without_stamps
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_1_gemv1 {{.*}} args({{[^!]*}}: !llvm.ptr, {{[^!]*}}: !llvm.ptr, {{[^!]*}}: !llvm.ptr, {{[^!]*}}: i64)
// CHECK-LABEL: func.func @bf16_product
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_2_gemv1 {{.*}} args({{[^!]*}}: !llvm.ptr, {{[^!]*}}: !llvm.ptr, {{[^!]*}}: !llvm.ptr, {{[^!]*}}: i64)
module attributes {gpu.container_module} {
  symm_mem.group @tp world_size(2)
  gpu.module @symm_kernels {
    gpu.func @receive_sent(%pool: !symm_mem.pool) kernel {
      gpu.return
    }
  }
  func.func @no_receiver(%a: memref<?x2048xbf16>, %w: memref<2048x4096xbf16>, %c: memref<?x4096xf32>) {
    // expected-remark@+2 {{the GEMVs leave the all-reduce its Lamport send: no launch of a Lamport kernel that takes the slices follows}}
    // expected-remark@+1 {{matmul 2048x4096: generated kernel @symm_matmul_0}}
    linalg.matmul {symm.lamport_send = 1024 : i64, symm.overwrites}
        ins(%a, %w : memref<?x2048xbf16>, memref<2048x4096xbf16>) outs(%c : memref<?x4096xf32>)
    return
  }
  gpu.module @plain_kernels {
    gpu.func @plain(%pool: !symm_mem.pool) kernel {
      gpu.return
    }
  }
  func.func @receiver_without_stamps(%a: memref<?x2048xbf16>, %w: memref<2048x4096xbf16>, %c: memref<?x4096xf32>,
                                     %in: memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %pool = symm_mem.pool_of %in : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>
    // expected-remark@+2 {{the GEMVs leave the all-reduce its Lamport send: no launch of a Lamport kernel that takes the slices follows}}
    // expected-remark@+1 {{matmul 2048x4096: generated kernel @symm_matmul_1}}
    linalg.matmul {symm.lamport_send = 1024 : i64, symm.overwrites}
        ins(%a, %w : memref<?x2048xbf16>, memref<2048x4096xbf16>) outs(%c : memref<?x4096xf32>)
    gpu.launch_func @plain_kernels::@plain blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%pool : !symm_mem.pool) {symm.lamport_receiver}
    return
  }
  func.func @bf16_product(%a: memref<?x2048xbf16>, %w: memref<2048x4096xbf16>, %c: memref<?x4096xbf16>,
                          %in: memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %pool = symm_mem.pool_of %in : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>
    // expected-remark@+2 {{the GEMVs leave the all-reduce its Lamport send: its output is not the f32 split-K slices}}
    // expected-remark@+1 {{matmul 2048x4096: generated kernel @symm_matmul_2}}
    linalg.matmul {symm.lamport_send = 1024 : i64, symm.overwrites}
        ins(%a, %w : memref<?x2048xbf16>, memref<2048x4096xbf16>) outs(%c : memref<?x4096xbf16>)
    gpu.launch_func @symm_kernels::@receive_sent blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%pool : !symm_mem.pool) {symm.lamport_receiver}
    return
  }
}
