// The whole pipeline (symm-compile) lowers every block reduction through
// symm-gpu-block-reduce, never through convert-gpu-to-nvvm's gpu.all_reduce
// lowering (whose first-warp threads each store their own partial sum into
// one shared word: bench/results/2026-11-28-block-reduce-h200x2.md). Here
// the Llama MLP block at hidden 2064: its RMSNorm statistic's rows kernel
// (the cuBLAS path's) runs 288 threads, 9 warps, so each warp reads the 9
// warp sums clamped to slot 8, pads the rest with -0.0 and sums 16 lanes;
// one barrier, and the only shared store is lane 0's warp sum.
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed -e 's/4096/2064/g' -e 's/7168/1000/g' %examples/llama_mlp.mlir > %t/mlp.mlir
// RUN: %symm-compile %t/mlp.mlir -o %t/mlp.o --emit=ptx
// RUN: FileCheck %s < %t/mlp.ptx
// CHECK-NOT: __wg_
// CHECK-LABEL: .visible .entry llama_mlp_async_kernel(
// CHECK: .shared .align 16 .b8 [[BUF:symm_block_reduce_[0-9]+]][128];
// CHECK-COUNT-5: shfl.sync.bfly.b32
// CHECK: mov.b64 [[BASE:%rd[0-9]+]], [[BUF]];
// CHECK: st.shared.b32 [{{%rd[0-9]+}}], {{%r[0-9]+}};
// CHECK-NEXT: $L__BB{{[0-9_]+}}:
// CHECK-NEXT: bar.sync 0;
// CHECK-NEXT: and.b32 [[SLOT:%r[0-9]+]], {{%r[0-9]+}}, 15;
// CHECK-NEXT: min.u32 [[CLAMPED:%r[0-9]+]], [[SLOT]], 8;
// CHECK: ld.shared.b32 [[V:%r[0-9]+]],
// CHECK-NEXT: setp.lt.u32 [[IN:%p[0-9]+]], [[SLOT]], 9;
// CHECK-NEXT: selp.f32 [[PADDED:%r[0-9]+]], [[V]], 0f80000000, [[IN]];
// CHECK-NEXT: shfl.sync.bfly.b32 {{%r[0-9]+}}, [[PADDED]], 8, 31, -1;
// CHECK-NOT: st.shared
// CHECK-NOT: bar.sync
// CHECK: st.global
