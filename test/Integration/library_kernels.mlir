// The runtime's library kernels (runtime/kernels/: PTX and the table the
// runtime embeds) are what the compiler's kernel IR and pipeline generate
// now: symm-kernels regenerates every one and fails on any difference.
// After a change to the kernels, the device ops' lowering or the pipeline:
//   target/debug/symm-kernels --write runtime/kernels
//
// REQUIRES: symm-kernels
// RUN: %symm-kernels --check %repo/runtime/kernels | FileCheck %s
// CHECK: {{[0-9]+}} files in {{.*}}runtime/kernels are current

// A stale file is reported, with the command that regenerates it.
// RUN: rm -rf %t && cp -r %repo/runtime/kernels %t && echo "// edited" >> %t/symm_barrier.ptx
// RUN: not %symm-kernels --check %t 2>&1 | FileCheck %s --check-prefix=STALE
// STALE: 1 of the library kernels' files in {{.*}} are stale: symm_barrier.ptx (differs); run `symm-kernels --write

// So is a kernel that is no longer generated.
// RUN: rm -rf %t && cp -r %repo/runtime/kernels %t && echo "" > %t/symm_gone.ptx
// RUN: not %symm-kernels --check %t 2>&1 | FileCheck %s --check-prefix=EXTRA
// EXTRA: symm_gone.ptx (not generated)
