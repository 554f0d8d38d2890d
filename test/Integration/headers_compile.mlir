// Every lit input and example that symm-compile accepts has a header that
// compiles as C and as C++ (issue 35): the pieces of every .mlir under
// test/ and examples/ (split as the lit tests split them) go through
// symm-compile, and each header it writes through cc and c++
// -fsyntax-only.
// REQUIRES: symm-compile
// RUN: rm -rf %t && python3 %S/Inputs/headers_compile.py %symm-compile %repo/runtime/include %t %repo/test %repo/examples | FileCheck %s
// CHECK: headers_compile: {{[0-9]+}} pieces, [[N:[0-9]+]] compiled by symm-compile, [[N]] headers compile as C and C++, 0 do not
