// The Llama-3-8B layer examples compile at real shapes with a dynamic
// token count, their kernels' PTX calls nothing that is not defined
// (libdevice linked for exp and rsqrt), row reductions run a block per row,
// and the C++ apps link. On
// the device machine bench/device/issue12_h200x2.sh runs them against
// torch's f32 reference (bench/results/*issue12*); here they skip.
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/llama_mlp.o --emit=ptx
// RUN: FileCheck %s --check-prefix=MLP < %t/llama_mlp.ptx
// RUN: FileCheck %s --check-prefix=HEADER < %t/llama_mlp.h
// RUN: %symm-compile %examples/llama_attn_out.mlir -o %t/llama_attn_out.o --emit=ptx
// RUN: FileCheck %s --check-prefix=ATTN < %t/llama_attn_out.ptx
// RUN: %symm-compile %examples/llama_decoder.mlir -o %t/llama_decoder.o --emit=ptx
// RUN: FileCheck %s --check-prefix=DECODER < %t/llama_decoder.ptx
// RUN: FileCheck %s --check-prefix=EARLY < %t/llama_decoder.ptx
// RUN: FileCheck %s --check-prefix=FIRST < %t/llama_mlp.ptx
// RUN: not grep -q symm_epilogue_0_rows_symm_epilogue_0_apply_splitk2 %t/llama_decoder.ptx
// RUN: c++ -O1 -std=c++17 -I %repo/runtime/include -I %t %examples/cpp/llama_decoder.cpp \
// RUN:   %t/llama_decoder.o %symm_runtime_lib -lpthread -ldl -lm -o %t/llama_decoder
// RUN: c++ -O1 -std=c++17 -I %repo/runtime/include -I %t %examples/cpp/llama_mlp.cpp \
// RUN:   %t/llama_mlp.o %symm_runtime_lib -lpthread -ldl -lm -o %t/llama_mlp
// RUN: c++ -O1 -std=c++17 -I %repo/runtime/include -I %t %examples/cpp/llama_attn_out.cpp \
// RUN:   %t/llama_attn_out.o %symm_runtime_lib -lpthread -ldl -lm -o %t/llama_attn_out
// RUN: env -u RANK %t/llama_mlp %t > %t/run.txt 2>&1 || true
// RUN: FileCheck %s --check-prefix=START < %t/run.txt

// No .extern function anywhere: libdevice's expf and rsqrtf are linked in
// (the generated matmul kernels' dynamic shared memory is the one .extern).
// The sum of squares: a block per row, combined by warp shuffles.
// MLP-NOT: .extern .func
// MLP-DAG: shfl.sync.bfly
// MLP-DAG: rsqrt.approx
// MLP-DAG: ex2.approx
// The all-reduce + residual kernel is picked per call by size. Up to 128
// rows (symm-mem-split-k) the down projection runs as 2 f32 slices of K
// that the Lamport kernel sums where it reads its own rank's data (up to
// 1 MiB: all 128 rows).
// MLP-DAG: .visible .entry symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_splitk2(
// MLP-DAG: .visible .entry symm_one_shot_sum_bf16_w2_v8_symm_epilogue_0(
// MLP-DAG: .visible .entry symm_two_shot_push_sum_bf16_w2_v8_symm_epilogue_0(
// Up to 16 rows the RMSNorm, gate and up projections and SiLU·up may run as
// one generated kernel, and the down projection's slices as another
// (symm-linalg-matmul-to-gpu), on the tensor cores, the weight streamed by
// cp.async into an mbarrier pipeline.
// MLP-DAG: .visible .entry symm_matmul_0(
// MLP-DAG: .visible .entry symm_matmul_1(
// MLP-DAG: .extern .shared .align 128 .b8 __symm_dynamic_shared[];
// MLP-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// MLP-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// MLP-DAG: cp.async.cg.shared.global
// MLP-DAG: cp.async.mbarrier.arrive.noinc.shared.b64
// MLP-DAG: mbarrier.try_wait.parity.shared.b64
// MLP-NOT: .extern .func

// The all-reduce, the residual add and RMSNorm are one kernel per size
// (symm_mem.all_reduce_rows_out): no separate row kernel. On 2 ranks the
// Lamport one takes up to 2 MiB (256 rows), where the rows two-shot would
// stop, the barrier one-shot above: no two-shot.
// ATTN-NOT: .extern .func
// ATTN-NOT: symm_two_shot
// ATTN-DAG: .visible .entry symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply(
// ATTN-DAG: .visible .entry symm_one_shot_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply(
// ATTN-DAG: shfl.sync.bfly
// ATTN-DAG: rsqrt.approx
// ATTN-NOT: .extern .func

// The decoder layer's two all-reduces each carry the residual and a norm
// (rows kernels, epilogues 0 and 3); the o_proj (K = 2048) is below
// min-k, the down projection (K = 7168) is split over K into the MLP's up
// to 128 rows, all of which (1 MiB) the Lamport rows kernel takes, and the
// whole product up to 2 MiB (256 rows); the barrier one-shot above.
// DECODER-NOT: .extern .func
// DECODER-DAG: .visible .entry symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply(
// DECODER-DAG: .visible .entry symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_3_rows_symm_epilogue_3_apply_splitk2(
// DECODER-DAG: .visible .entry symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_3_rows_symm_epilogue_3_apply(
// DECODER-DAG: .visible .entry symm_one_shot_sum_bf16_w2_v8_symm_epilogue_3_rows_symm_epilogue_3_apply(
// DECODER-NOT: .extern .func

// On sm_90 (symm-compile's default chip) the decoder's rows kernel (the
// o_proj all-reduce + residual + RMSNorm) lets the next grid launch right
// after its wait for one-row calls (launch-dependents-rows=1), and the
// one-row gate/up pair behind it (symm_matmul_1_gemv1) prefetches its
// weights' first lines before its own wait. The MLP block's pair, first in
// its call, prefetches nothing (its GEMV for 1 to 16 rows applies the
// RMSNorm in its loop).
// EARLY-LABEL: .visible .entry symm_matmul_1_gemv1(
// EARLY: prefetch.global.L2
// EARLY-NEXT: griddepcontrol.wait;
// EARLY-LABEL: .visible .entry symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply(
// EARLY: griddepcontrol.wait;
// EARLY-NEXT: setp.gt.u64 %p[[P:[0-9]+]], %rd{{[0-9]+}}, 1;
// EARLY-NEXT: @%p[[P]] bra
// EARLY-NEXT: griddepcontrol.launch_dependents;
// FIRST-LABEL: .visible .entry symm_matmul_0_mma16_norm_in_loop(
// FIRST-NOT: prefetch.global.L2
// FIRST: griddepcontrol.wait;

// HEADER: void llama_mlp(
// HEADER-NEXT: symm_runtime *runtime,
// HEADER-NEXT: int64_t tokens /* the leading size of the ?x memrefs */,
// HEADER-NEXT: uint16_t *arg0 /* memref<?x4096xbf16> */,
// HEADER: int32_t llama_mlp_async(
// HEADER-NEXT: symm_runtime *runtime,
// HEADER-NEXT: void *stream,
// HEADER-NEXT: int64_t tokens

// START: {{skipped: no CUDA device|symm_init failed: environment: RANK is not set}}
