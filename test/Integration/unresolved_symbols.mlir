// A kernel calling a function that nothing links is a compile error at the
// op that needs it, not a module that fails to load at run time: here
// without libdevice, math.exp and math.rsqrt are named at their lines.
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: not %symm-compile %s -o %t/k.o --no-libdevice 2> %t/errors.txt
// RUN: FileCheck %s < %t/errors.txt
// RUN: not test -e %t/k.o
// Each error once, though the kernel is compiled and checked per call.
// RUN: grep -c "needs libdevice" %t/errors.txt | FileCheck %s --check-prefix=ONCE
// ONCE: {{^2$}}
// A libdevice path that does not exist is refused up front.
// RUN: not %symm-compile %s -o %t/k.o --libdevice=%t/missing.bc 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: env SYMM_LIBDEVICE=%t/missing.bc not %symm-compile %s -o %t/k.o 2>&1 | FileCheck %s --check-prefix=ENV
// With the libdevice ./dev installs, it compiles.
// RUN: %symm-compile %s -o %t/k.o --emit=ptx
// RUN: FileCheck %s --check-prefix=LINKED < %t/k.ptx

// CHECK: unresolved_symbols.mlir:[[@LINE+12]]:{{[0-9]+}}: error: 'math.exp' (lowered to a call to __nv_expf) needs libdevice, which was not found: run ./dev setup, pass --libdevice=PATH to symm-compile or set SYMM_LIBDEVICE
// CHECK: unresolved_symbols.mlir:[[@LINE+12]]:{{[0-9]+}}: error: 'math.rsqrt' (lowered to a call to __nv_rsqrtf) needs libdevice
// CHECK: symm-compile: {{.*}}unresolved_symbols.mlir does not compile (see the errors above)
// MISSING: symm-compile: --libdevice: {{.*}}missing.bc: cannot read it
// ENV: symm-compile: SYMM_LIBDEVICE: {{.*}}missing.bc: cannot read it
// LINKED-NOT: .extern
// LINKED: ex2.approx
#id = affine_map<(d0) -> (d0)>
func.func @k(%a: memref<1024xf32>, %b: memref<1024xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    %r = math.rsqrt %e : f32
    linalg.yield %r : f32
  }
  return
}
