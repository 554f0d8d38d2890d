// Every library kernel assembles for sm_90 (ptxas, which ./dev setup
// installs) and fits the block it is launched with: its .reqntid (512, the
// Lamport one-shot's 128) and its .minnctapersm bound its registers, so a launch cannot fail for want of
// them (two-shots on 4-8 ranks once needed 158-255 of the 128 a thread can
// have). Kernels that spill are listed; see
// bench/results/2026-11-23-library-kernels-h200x2.md for which and why.
//
// REQUIRES: ptxas
// RUN: %python %S/Inputs/ptxas_check.py %ptxas %repo/runtime/kernels/*.ptx | FileCheck %s
// CHECK: 467 of 467 kernels assembled within their launch's registers; {{[0-9]+}} spill

// A kernel whose registers exceed its launch is a failure: the fused
// RMSNorm on 8 ranks, which runs up to 264 blocks (two per SM, 64
// registers a thread), takes 72 without .reqntid/.minnctapersm.
// RUN: rm -rf %t && mkdir -p %t
// RUN: grep -v "^\.reqntid\|^\.minnctapersm" %repo/runtime/kernels/symm_all_reduce_rms_norm_bf16_w8.ptx > %t/symm_unbounded.ptx
// RUN: not %python %S/Inputs/ptxas_check.py %ptxas %t/symm_unbounded.ptx | FileCheck %s --check-prefix=OVER
// OVER: FAIL {{.*}}symm_unbounded.ptx: uses {{[0-9]+}} registers, more than the 64 its launch allows

// PTX that does not assemble is a failure, with ptxas's message.
// RUN: echo ".version 8.0" > %t/symm_broken.ptx && echo ".target sm_90" >> %t/symm_broken.ptx && echo "bogus;" >> %t/symm_broken.ptx
// RUN: not %python %S/Inputs/ptxas_check.py %ptxas %t/symm_broken.ptx | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL {{.*}}symm_broken.ptx: does not assemble:
