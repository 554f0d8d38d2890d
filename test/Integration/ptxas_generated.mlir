// The kernels symm-compile generates assemble (ptxas, which ./dev setup
// installs) and fit the block each is launched with (its .reqntid and
// .minnctapersm bound its registers), for the shipped examples as built by
// default (every example) and with the opt-in kernels and options: the TMA and wgmma
// GEMVs, the wgmma GEMV's prefetch depth and L2 policy, the tensor-core
// GEMV's in-loop prefetch. Without a GPU this is the check that their PTX
// is valid (the runtime only meets bad PTX when it loads the module).
//
// REQUIRES: ptxas, symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/mlp.o --emit=ptx
// RUN: %symm-compile %examples/llama_decoder.mlir -o %t/decoder.o --emit=ptx
// RUN: %symm-compile %examples/llama_attn_out.mlir -o %t/attn_out.o --emit=ptx
// RUN: %symm-compile %examples/partitioned.mlir -o %t/partitioned.o --emit=ptx
// RUN: %symm-compile %examples/tp_layer.mlir -o %t/tp_layer.o --emit=ptx
// RUN: %symm-compile %examples/tp_mlp.mlir -o %t/tp_mlp.o --emit=ptx
// RUN: %python %S/Inputs/ptxas_generated.py %ptxas %t/mlp.ptx %t/decoder.ptx %t/attn_out.ptx %t/partitioned.ptx %t/tp_layer.ptx %t/tp_mlp.ptx | FileCheck %s
// CHECK: [[N:[0-9]+]] of [[N]] kernels assembled within their launch's registers; 0 spill
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/opt_in.o --emit=ptx --chip sm_90a --matmul-tma-gemv --matmul-wgmma-gemv --matmul-wgmma-gemv-few --matmul-wgmma-gemv-prefetch 1024 --no-matmul-wgmma-gemv-evict-first --matmul-mma-gemv-ahead 4
// RUN: %symm-compile %examples/llama_decoder.mlir -o %t/opt_in_decoder.o --emit=ptx --chip sm_90a --matmul-tma-gemv --matmul-wgmma-gemv --matmul-wgmma-gemv-few --matmul-mma-gemv-ahead 8
// RUN: %python %S/Inputs/ptxas_generated.py %ptxas %t/opt_in.ptx %t/opt_in_decoder.ptx | FileCheck %s --check-prefix=OPT-IN
// OPT-IN: [[N:[0-9]+]] of [[N]] kernels assembled within their launch's registers; 0 spill

// Built for sm_90a as it is by default there: the decoder's o_proj gets the
// short-grid wgmma GEMV (8-stage ring), at TP 2 and, with TP 8's widths
// (K = 512, N = 4096; MLP 1792 a rank), the unsplit down projection too.
// RUN: %symm-compile %examples/llama_decoder.mlir -o %t/hopper_decoder.o --emit=ptx --chip sm_90a
// RUN: sed -e 's/world_size(2)/world_size(8)/' -e 's/2048x4096xbf16/512x4096xbf16/g' -e 's/?x2048xbf16/?x512xbf16/g' -e 's/7168/1792/g' %examples/llama_decoder.mlir > %t/decoder_tp8_widths.mlir
// RUN: %symm-compile %t/decoder_tp8_widths.mlir -o %t/hopper_tp8.o --emit=ptx --chip sm_90a
// RUN: %python %S/Inputs/ptxas_generated.py %ptxas %t/hopper_decoder.ptx %t/hopper_tp8.ptx | FileCheck %s --check-prefix=HOPPER
// RUN: grep -c "^.visible .entry symm_matmul_[0-9]*_wgmma16(" %t/hopper_tp8.ptx | FileCheck %s --check-prefix=TP8-WGMMA
// HOPPER: [[N:[0-9]+]] of [[N]] kernels assembled within their launch's registers; {{[0-9]+}} spill
// TP8-WGMMA: 2

// At 4 and 8 ranks every kernel fits too. The rows kernels' Lamport
// one-shot (all-reduce + residual + RMSNorm) spills there: a rows kernel
// may be launched on up to 264 blocks, two an SM, so 64 registers a
// thread, though at 4-8 ranks it takes at most 256 KiB (32 rows of the
// Llama-3-8B width). Listed here until that bound lifts the cap.
// RUN: sed 's/world_size(2)/world_size(4)/' %examples/llama_decoder.mlir > %t/decoder_tp4.mlir
// RUN: sed 's/world_size(2)/world_size(8)/' %examples/llama_decoder.mlir > %t/decoder_tp8.mlir
// RUN: sed 's/world_size(2)/world_size(8)/' %examples/llama_mlp.mlir > %t/mlp_tp8.mlir
// RUN: %symm-compile %t/decoder_tp4.mlir -o %t/decoder_tp4.o --emit=ptx
// RUN: %symm-compile %t/decoder_tp8.mlir -o %t/decoder_tp8.o --emit=ptx
// RUN: %symm-compile %t/mlp_tp8.mlir -o %t/mlp_tp8.o --emit=ptx
// RUN: %python %S/Inputs/ptxas_generated.py %ptxas %t/decoder_tp4.ptx %t/decoder_tp8.ptx %t/mlp_tp8.ptx | FileCheck %s --check-prefix=RANKS
// RANKS-DAG: spills {{[0-9]+}} bytes: decoder_tp4.ptx#{{[0-9]+}} symm_one_shot_lamport_sum_bf16_w4_v8_symm_epilogue_0_rows_symm_epilogue_0_apply{{$}}
// RANKS-DAG: spills {{[0-9]+}} bytes: decoder_tp4.ptx#{{[0-9]+}} symm_one_shot_lamport_sum_bf16_w4_v8_symm_epilogue_3_rows_symm_epilogue_3_apply_splitk2{{$}}
// RANKS-DAG: spills {{[0-9]+}} bytes: decoder_tp8.ptx#{{[0-9]+}} symm_one_shot_lamport_sum_bf16_w8_v8_symm_epilogue_0_rows_symm_epilogue_0_apply{{$}}
// RANKS-DAG: spills {{[0-9]+}} bytes: decoder_tp8.ptx#{{[0-9]+}} symm_one_shot_lamport_sum_bf16_w8_v8_symm_epilogue_3_rows_symm_epilogue_3_apply_splitk2{{$}}
// RANKS: [[N:[0-9]+]] of [[N]] kernels assembled within their launch's registers; 4 spill

// A kernel whose registers exceed its launch is a failure: without its
// .reqntid (so a block of up to 1024 threads, 64 registers each) the
// tensor-core GEMV takes 128.
// RUN: grep -v "^\.reqntid" %t/mlp.ptx > %t/unbounded.ptx
// RUN: not %python %S/Inputs/ptxas_generated.py %ptxas %t/unbounded.ptx | FileCheck %s --check-prefix=OVER
// OVER: FAIL unbounded.ptx#{{[0-9]+}} symm_matmul_0_mma16_norm_in_loop: uses {{[0-9]+}} registers, more than the 64 its launch allows

// PTX that does not assemble is a failure, with ptxas's message: here an
// L2 eviction priority on a 128-bit load, which sm_90 takes only through a
// cache policy (L2::cache_hint).
// RUN: sed 's/ld.global.L1::no_allocate.v4.b32/ld.global.L1::no_allocate.L2::evict_first.v4.b32/' %t/mlp.ptx > %t/broken.ptx
// RUN: not %python %S/Inputs/ptxas_generated.py %ptxas %t/broken.ptx | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL broken.ptx#{{[0-9]+}}: does not assemble: {{.*}}L2::evict_first
