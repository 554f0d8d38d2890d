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

// A kernel whose registers exceed its launch is a failure: without its
// .reqntid (so a block of up to 1024 threads, 64 registers each) the
// tensor-core GEMV takes 128.
// RUN: grep -v "^\.reqntid" %t/mlp.ptx > %t/unbounded.ptx
// RUN: not %python %S/Inputs/ptxas_generated.py %ptxas %t/unbounded.ptx | FileCheck %s --check-prefix=OVER
// OVER: FAIL unbounded.ptx#{{[0-9]+}} symm_matmul_0_mma16: uses {{[0-9]+}} registers, more than the 64 its launch allows

// PTX that does not assemble is a failure, with ptxas's message: here an
// L2 eviction priority on a 128-bit load, which sm_90 takes only through a
// cache policy (L2::cache_hint).
// RUN: sed 's/ld.global.L1::no_allocate.v4.b32/ld.global.L1::no_allocate.L2::evict_first.v4.b32/' %t/mlp.ptx > %t/broken.ptx
// RUN: not %python %S/Inputs/ptxas_generated.py %ptxas %t/broken.ptx | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL broken.ptx#{{[0-9]+}}: does not assemble: {{.*}}L2::evict_first
