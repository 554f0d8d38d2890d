// A Rust app outside symm's workspace, as a user starts one: `cargo new`,
// a dependency on symm-runtime, a build dependency on symm-build, a
// build.rs. `cargo build` compiles the layer with the symm-compile
// executable (SYMM_COMPILE, else PATH's), links it, and needs no LLVM:
// none of MLIR_SYS_220_PREFIX, TABLEGEN_220_PREFIX and LIBCLANG_PATH is
// set. The project shares no Cargo workspace with symm (its own target
// folder, kept between runs under target/ for speed).
//
// REQUIRES: symm-compile, rustc
// RUN: rm -rf %t && mkdir -p %t && cp -r %S/Inputs/cargo_consumer %t/app
// RUN: cp %repo/Cargo.lock %t/app/Cargo.lock
// RUN: sed 's|@REPO@|%repo|g' %S/Inputs/cargo_consumer/Cargo.toml.in > %t/app/Cargo.toml
// RUN: cd %t/app && env -u MLIR_SYS_220_PREFIX -u TABLEGEN_220_PREFIX -u LIBCLANG_PATH -u RUSTFLAGS SYMM_COMPILE=%symm_tools_dir/symm-compile CARGO_TARGET_DIR=%repo/target/cargo-consumer cargo build --offline -q 2> %t/build.err
// RUN: %repo/target/cargo-consumer/debug/consumer | FileCheck %s --check-prefix=RUNS
// RUNS: linked 2 entry points
// The generated declarations sit beside the header.
// RUN: find %repo/target/cargo-consumer/debug/build -path '*consumer-*/out/scale.rs' | head -1 | xargs cat | FileCheck %s --check-prefix=BINDINGS
// BINDINGS: use symm_runtime as _;
// BINDINGS: pub fn scale(
// BINDINGS-NEXT: runtime: *mut ::core::ffi::c_void,
// BINDINGS-NEXT: tokens: i64
// BINDINGS-NEXT: arg0: *mut f32 /* memref<?x64xf32> */,
// BINDINGS: pub fn scale_async(

// Without a compiler to run, the build fails with one message saying what
// to install or set.
// RUN: touch %t/app/scale.mlir
// RUN: cd %t/app && not env SYMM_COMPILE=%t/missing/symm-compile CARGO_TARGET_DIR=%repo/target/cargo-consumer cargo build --offline -q 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: cannot run {{.*}}missing/symm-compile ({{.*}}): install symm's tools (./dev install --prefix P, then put P/bin on PATH) or set SYMM_COMPILE to the symm-compile executable
