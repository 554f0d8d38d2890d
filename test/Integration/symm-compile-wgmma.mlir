// symm-compile --matmul-wgmma-gemv: on sm_90a the single matmuls without a
// prologue (here the MLP block's down projection, as 2 split-K slices for
// calls of up to 128 rows and whole above) get the wgmma GEMV for calls of
// 17-128 rows, whose PTX is `wgmma.mma_async` with the weight transposed
// (M-major) and the row count as N, fed by the TMA; the gate/up pair (with
// its RMSNorm prologue) gets none. On sm_90 the flag changes nothing (no
// wgmma there), and without the flag sm_90a's kernels have none either.
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/wg.o --emit=ptx --chip sm_90a --matmul-wgmma-gemv
// RUN: FileCheck %s < %t/wg.ptx
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/sm90.o --emit=ptx --matmul-wgmma-gemv
// RUN: not grep -q wgmma %t/sm90.ptx
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/off.o --emit=ptx --chip sm_90a
// RUN: not grep -q wgmma %t/off.ptx
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/few.o --emit=ptx --chip sm_90a --matmul-wgmma-gemv --matmul-wgmma-gemv-few
// RUN: FileCheck %s --check-prefix=FEW < %t/few.ptx

// CHECK-NOT: .entry symm_matmul_0_wgmma
// CHECK-LABEL: .visible .entry symm_matmul_1_wgmma64(
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint
// CHECK: wgmma.fence.sync.aligned
// The immediates: scale-a and scale-b 1, A transposed (M-major), B not.
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1, 0;
// CHECK: wgmma.commit_group.sync.aligned
// CHECK: wgmma.wait_group.sync.aligned 1
// CHECK-LABEL: .visible .entry symm_matmul_1_wgmma128(
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// FEW-LABEL: .visible .entry symm_matmul_1_wgmma16(
// FEW: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
