// symm-compile --matmul-wgmma-gemv: on sm_90a the single matmuls without a
// prologue (here the MLP block's down projection, as 2 split-K slices for
// calls of up to 128 rows and whole above) get the wgmma GEMV for calls of
// 17-128 rows, whose PTX is `wgmma.mma_async` with the weight transposed
// (M-major) and the row count as N, fed by the TMA; the gate/up pair (with
// its RMSNorm prologue) gets none. On sm_90 (the default chip, no wgmma)
// the flag is refused with the chip it needs, and without the flag
// sm_90a's kernels have none either.
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/wg.o --emit=ptx --chip sm_90a --matmul-wgmma-gemv
// RUN: FileCheck %s < %t/wg.ptx
// RUN: not %symm-compile %examples/llama_mlp.mlir -o %t/sm90.o --matmul-wgmma-gemv 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: not %symm-compile %examples/llama_mlp.mlir -o %t/few90.o --chip sm_90a --matmul-wgmma-gemv-few 2>&1 | FileCheck %s --check-prefix=ALONE
// SM90: --matmul-wgmma-gemv needs a chip with wgmma (--chip sm_90a); sm_90 has none
// ALONE: error: the following required arguments were not provided:
// ALONE-NEXT: --matmul-wgmma-gemv{{$}}
// On sm_90a without the flag, the down projection's slices, which read the
// output of the pair's GEMV launched just before them, get the 16-row wgmma
// GEMV with an 8-stage ring for calls of 2 to 16 rows, whose first 8
// stages of weight it copies before it waits for the pair (once); its
// whole form only takes calls above 128 rows, and the pair gets none.
// The same ring's 8-row kernel (m64n8k16) takes the calls of up to 8 rows.
// --no-matmul-wgmma-gemv-after-gemv drops both, --no-matmul-wgmma-gemv-eight-rows
// the 8-row one.
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/after.o --emit=ptx --chip sm_90a
// RUN: FileCheck %s --check-prefix=AFTER < %t/after.ptx
// AFTER-NOT: .entry symm_matmul_0_wgmma
// AFTER-LABEL: .visible .entry symm_matmul_1_wgmma8(
// AFTER-NOT: griddepcontrol
// AFTER-COUNT-8: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint
// AFTER: griddepcontrol.wait;
// AFTER: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16
// AFTER-NOT: m64n16k16
// AFTER-LABEL: .visible .entry symm_matmul_1_wgmma16(
// AFTER-NOT: griddepcontrol
// AFTER-COUNT-8: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint
// AFTER-NOT: cp.async.bulk.tensor
// AFTER: griddepcontrol.wait;
// AFTER-NOT: griddepcontrol.wait
// AFTER: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// AFTER-NOT: .entry symm_matmul_{{[0-9]}}_wgmma
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/off.o --emit=ptx --chip sm_90a --no-matmul-wgmma-gemv-after-gemv
// RUN: not grep -q wgmma %t/off.ptx
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/no8.o --emit=ptx --chip sm_90a --no-matmul-wgmma-gemv-eight-rows
// RUN: grep -q symm_matmul_1_wgmma16 %t/no8.ptx
// RUN: not grep -q "wgmma8\|m64n8k16" %t/no8.ptx
// That ring runs in clusters of 2 that share `a` by TMA multicast (the
// pass's lit test shows how); --matmul-wgmma-gemv-cluster 1 drops them, 2
// or 4 gives every wgmma ring its clusters, 3 is refused.
// RUN: FileCheck %s --check-prefix=CLUSTER < %t/after.ptx
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/nocluster.o --emit=ptx --chip sm_90a --matmul-wgmma-gemv-cluster 1
// RUN: grep -q symm_matmul_1_wgmma8 %t/nocluster.ptx
// RUN: not grep -q "reqnctapercluster\|multicast\|mapa" %t/nocluster.ptx
// CLUSTER-LABEL: .visible .entry symm_matmul_1_wgmma8(
// CLUSTER: .reqnctapercluster 2, 1, 1
// CLUSTER: barrier.cluster.arrive.aligned;
// CLUSTER: multicast::cluster
// CLUSTER: mapa.shared::cluster
// CLUSTER: mbarrier.arrive.shared::cluster.b64 _,
// CLUSTER-LABEL: .visible .entry symm_matmul_1_wgmma16(
// CLUSTER: .reqnctapercluster 2, 1, 1
// RUN: not %symm-compile %examples/llama_mlp.mlir -o %t/cluster3.o --chip sm_90a --matmul-wgmma-gemv-cluster 3 2>&1 | FileCheck %s --check-prefix=CLUSTER3
// CLUSTER3: error: symm-linalg-matmul-to-gpu: wgmma-gemv-cluster = 3: blocks of a cluster that share `a`, 1, 2 or 4
// A single matmul whose register GEMV runs a short grid (the decoder's
// o_proj: 64 blocks) gets the 16-row wgmma GEMV with an 8-stage ring (160 KB
// of stages) too, and only it of the matmuls that read no GEMV's output:
// the down projection takes the ring because it follows the pair (in
// clusters of 2; o_proj's in none). --no-matmul-wgmma-gemv-short drops
// o_proj's; sm_90 has none.
// RUN: %symm-compile %examples/llama_decoder.mlir -o %t/short.o --emit=ptx --chip sm_90a
// RUN: FileCheck %s --check-prefix=SHORT < %t/short.ptx
// RUN: %symm-compile %examples/llama_decoder.mlir -o %t/noshort.o --emit=ptx --chip sm_90a --no-matmul-wgmma-gemv-short
// RUN: FileCheck %s --check-prefix=NOSHORT < %t/noshort.ptx
// RUN: %symm-compile %examples/llama_decoder.mlir -o %t/none.o --emit=ptx --chip sm_90a --no-matmul-wgmma-gemv-short --no-matmul-wgmma-gemv-after-gemv
// RUN: not grep -q wgmma %t/none.ptx
// RUN: %symm-compile %examples/llama_decoder.mlir -o %t/short90.o --emit=ptx
// RUN: not grep -q wgmma %t/short90.ptx
// NOSHORT-NOT: .entry symm_matmul_{{[01]}}_wgmma
// NOSHORT: .visible .entry symm_matmul_2_wgmma8(
// NOSHORT: .visible .entry symm_matmul_2_wgmma16(
// NOSHORT-NOT: .entry symm_matmul_{{[0-9]}}_wgmma
// SHORT-NOT: .entry symm_matmul_{{[1-9]}}_wgmma
// SHORT-LABEL: .visible .entry symm_matmul_0_wgmma8(
// SHORT-NOT: reqnctapercluster
// SHORT: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16
// SHORT-LABEL: .visible .entry symm_matmul_0_wgmma16(
// SHORT: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// SHORT-NOT: .entry symm_matmul_1_wgmma
// SHORT: .visible .entry symm_matmul_2_wgmma8(
// SHORT: .reqnctapercluster 2, 1, 1
// SHORT: .visible .entry symm_matmul_2_wgmma16(
// SHORT: .reqnctapercluster 2, 1, 1
// SHORT-NOT: .entry symm_matmul_{{[0-9]}}_wgmma
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/few.o --emit=ptx --chip sm_90a --matmul-wgmma-gemv --matmul-wgmma-gemv-few
// RUN: FileCheck %s --check-prefix=FEW < %t/few.ptx
// --matmul-wgmma-gemv-prefetch sets the weight rows the wgmma GEMV
// prefetches (1024: 7 a thread of 160) and --no-matmul-wgmma-gemv-evict-first
// drops the weight copies' L2 policy; both need --matmul-wgmma-gemv.
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/pf.o --emit=ptx --chip sm_90a --matmul-wgmma-gemv --matmul-wgmma-gemv-prefetch 1024 --no-matmul-wgmma-gemv-evict-first
// RUN: FileCheck %s --check-prefix=PF < %t/pf.ptx
// RUN: not %symm-compile %examples/llama_mlp.mlir -o %t/pf90.o --chip sm_90a --matmul-wgmma-gemv-prefetch 1024 2>&1 | FileCheck %s --check-prefix=PFALONE
// PFALONE: error: the following required arguments were not provided:
// PFALONE-NEXT: --matmul-wgmma-gemv{{$}}
// PF-LABEL: .visible .entry symm_matmul_1_wgmma64(
// PF-COUNT-7: prefetch.global.L2
// PF-NOT: prefetch.global.L2
// PF-NOT: L2::cache_hint
// PF: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// PF-NOT: L2::cache_hint
// PF-LABEL: .visible .entry symm_matmul_1_wgmma128(

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
