// The installed tree, as a C++ user consumes it: `./dev install` puts the
// tools, the runtime (static and shared), its headers, libdevice, a CMake
// package and a pkg-config file under a prefix; examples/cpp then builds
// with find_package(symm), its compiled layers through
// symm_add_mlir_library (symm-compile at build time).
//
// REQUIRES: symm-compile, cmake
// RUN: rm -rf %t && %repo/dev install --prefix %t/prefix --from %symm_tools_dir 2>&1 | FileCheck %s --check-prefix=INSTALL
// INSTALL: installed symm {{[0-9.]+}} into {{.*}}prefix
// RUN: cmake -S %repo/examples/cpp -B %t/build -G Ninja -DCMAKE_PREFIX_PATH=%t/prefix > %t/configure.log
// RUN: cmake --build %t/build > %t/build.log
// RUN: FileCheck %s --check-prefix=BUILD < %t/build.log
// BUILD-DAG: symm-compile ../tp_mlp.mlir
// BUILD-DAG: symm-compile ../llama_mlp.mlir
// BUILD-DAG: Linking CXX executable allreduce
// BUILD-DAG: Linking CXX executable tp_mlp
// BUILD-DAG: Linking CXX executable llama_mlp
// BUILD-DAG: Linking CXX executable llama_attn_out
// The compiled layer's header sits on its library's include path.
// RUN: test -f %t/build/tp_mlp_layer/tp_mlp.h && test -x %t/build/llama_mlp

// pkg-config gives the flags and the link line the README's c++ line has.
// RUN: env PKG_CONFIG_PATH=%t/prefix/lib/pkgconfig pkg-config --cflags --libs symm | FileCheck %s --check-prefix=PC
// PC: -I{{.*}}prefix/lib/pkgconfig/../../include {{.*}}prefix/lib/pkgconfig/../../lib/libsymm_runtime.a -lpthread -ldl -lm

// The shared runtime has a SONAME, installed as a link to the versioned
// file; an app linked to it records that name, not a path.
// RUN: %python -c "import os, re, subprocess, sys; lib = sys.argv[1]; d = subprocess.run(['readelf', '-d', os.path.join(lib, 'libsymm_runtime.so')], capture_output=True, text=True).stdout; name = re.search(r'soname: \[(.*)\]', d).group(1); print(name); assert os.path.islink(os.path.join(lib, name)) and os.path.realpath(os.path.join(lib, 'libsymm_runtime.so')) == os.path.realpath(os.path.join(lib, name))" %t/prefix/lib | FileCheck %s --check-prefix=SONAME
// SONAME: libsymm_runtime.so.{{[0-9]+(\.[0-9]+)?$}}

// The internal C++ archives are not installed: only the package.
// RUN: ls %t/prefix/lib | FileCheck %s --check-prefix=LIBS --implicit-check-not=Symm --implicit-check-not=CudaGraph
// LIBS: cmake
// LIBS: libsymm_runtime.a

// An out-of-tree project: find_package with a version, static and shared.
// RUN: cmake -S %S/Inputs/cmake_consumer -B %t/consumer -G Ninja -DCMAKE_PREFIX_PATH=%t/prefix -DWANT=0.1 > %t/consumer.log
// RUN: cmake --build %t/consumer >> %t/consumer.log
// RUN: env -u RANK %t/consumer/consumer_static | FileCheck %s --check-prefix=RUNS
// RUN: env -u RANK %t/consumer/consumer_shared | FileCheck %s --check-prefix=RUNS
// RUNS: symm_init refused: environment: RANK is not set
// RUN: readelf -d %t/consumer/consumer_shared | FileCheck %s --check-prefix=NEEDED
// NEEDED: (NEEDED) Shared library: [libsymm_runtime.so.{{[0-9.]+}}]
// While 0.x, another minor version is not compatible, nor a major one.
// RUN: not cmake -S %S/Inputs/cmake_consumer -B %t/old -G Ninja -DCMAKE_PREFIX_PATH=%t/prefix -DWANT=0.0 2>&1 | FileCheck %s --check-prefix=OLD
// OLD: Could not find a configuration file for package "symm" that is compatible
// RUN: not cmake -S %S/Inputs/cmake_consumer -B %t/new -G Ninja -DCMAKE_PREFIX_PATH=%t/prefix -DWANT=1.0 2>&1 | FileCheck %s --check-prefix=OLD

// The installed compiler runs from the prefix and finds its libdevice there.
// RUN: %t/prefix/bin/symm-compile --version | FileCheck %s --check-prefix=VERSION
// VERSION: symm-compile {{[0-9.]+}}
// RUN: test -f %t/prefix/share/symm/libdevice.10.bc || ! test -f %repo/.deps/libdevice/libdevice.10.bc

// A missing prefix is a clear CMake error, not a build that links nothing.
// RUN: not cmake -S %repo/examples/cpp -B %t/nowhere -G Ninja -DCMAKE_PREFIX_PATH=%t/missing 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: Could not find a package configuration file provided by "symm"
