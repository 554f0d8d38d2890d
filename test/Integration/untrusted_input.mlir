// Inputs the fuzzer found (bench/results/*fuzz*) and what the tools now do
// with them: a located error and a non-zero exit, never a signal, a panic,
// an LLVM fatal error or a header written from hostile names. `not`
// fails if the command dies of a signal.
// REQUIRES: symm-compile
// RUN: rm -rf %t && split-file %s %t

// MLIR 22's parser segfaults on an index dense array (an upstream bug):
// RUN: not symm-opt %t/index_array.mlir 2> %t/opt.txt
// RUN: FileCheck %s --check-prefix=OPT-CRASH < %t/opt.txt
// RUN: not %symm-compile %t/index_array.mlir -o %t/a.o 2> %t/compile.txt
// RUN: FileCheck %s --check-prefix=COMPILE-CRASH < %t/compile.txt
// OPT-CRASH: index_array.mlir:3:1: error: internal error in the MLIR parser (signal 11 (segmentation fault)) on this line; it is an MLIR bug that the input triggers
// OPT-CRASH-NOT: Stack dump
// COMPILE-CRASH-NOT: Stack dump
// COMPILE-CRASH: index_array.mlir:3:1: error: internal error in the MLIR parser (signal 11 (segmentation fault)) on this line

// A result number of 2^31 makes the parser allocate per result (upstream);
// the address space is bounded, so it fails quickly and is reported.
// RUN: env SYMM_MAX_MEMORY_GB=2 not symm-opt %t/result_number.mlir 2> %t/oom.txt
// RUN: FileCheck %s --check-prefix=OOM < %t/oom.txt
// RUN: env SYMM_MAX_MEMORY_GB=2 not %symm-compile %t/result_number.mlir -o %t/b.o 2> %t/oom2.txt
// RUN: FileCheck %s --check-prefix=OOM2 < %t/oom2.txt
// OOM: result_number.mlir:3:1: error: internal error in the MLIR parser (out of memory (the input asks for more than the tool may allocate)
// OOM2: result_number.mlir:3:1: error: internal error in the MLIR parser (out of memory

// Names are checked as C identifiers, never pasted into the header.
// RUN: not %symm-compile %t/hostile_name.mlir -o %t/c.o 2> %t/name.txt
// RUN: FileCheck %s --check-prefix=NAME < %t/name.txt
// RUN: not test -e %t/c.h
// NAME: hostile_name.mlir:1:1: error: entry point: its name "x(void); int evil" is not a C identifier

// Bytes that are not UTF-8 in a diagnostic are printed, not a panic.
// RUN: not %symm-compile %t/not_utf8.mlir -o %t/d.o 2> %t/utf8.txt
// RUN: FileCheck %s --check-prefix=UTF8 < %t/utf8.txt
// UTF8: not_utf8.mlir:2:3: error: 'func.call' op '{{.*}}' does not reference a valid function

// The real reason for a refused entry point, at the function.
// RUN: not %symm-compile %t/memory_space.mlir -o %t/e.o 2> %t/space.txt
// RUN: FileCheck %s --check-prefix=SPACE < %t/space.txt
// SPACE: memory_space.mlir:1:1: error: @f: argument #0 is memref<4xf32, 1>: entry points take memrefs in the default memory space
// RUN: not %symm-compile %t/two_results.mlir -o %t/f.o 2> %t/results.txt
// RUN: FileCheck %s --check-prefix=RESULTS < %t/results.txt
// RESULTS: two_results.mlir:1:1: error: @g: entry points return at most one value

// A region left open and a block defined twice, a mutant symm-fuzz found:
// cleaning up after the error, MLIR 22's parser writes to a freed operation
// (valgrind shows it in upstream mlir-opt-22 too: Operation::dropAllReferences
// after Operation::erase). The tools report the error and exit 1; in one
// process over many inputs the damage surfaced later as a heap abort.
// RUN: not symm-opt %t/block_twice.mlir 2> %t/block.txt
// RUN: FileCheck %s --check-prefix=BLOCK < %t/block.txt
// RUN: not %symm-compile %t/block_twice.mlir -o %t/h.o 2> %t/block2.txt
// RUN: FileCheck %s --check-prefix=BLOCK < %t/block2.txt
// BLOCK: block_twice.mlir:16:3: error: redefinition of block '^bb0'

// An all-reduce of nothing is refused where it is written.
// RUN: not %symm-compile %t/zero.mlir -o %t/g.o 2> %t/zero.txt
// RUN: FileCheck %s --check-prefix=ZERO < %t/zero.txt
// ZERO: zero.mlir:3:3: error: 'symm_mem.all_reduce_out' op reduces no elements

// Scalar arguments (issue 35): the header declares them with their space
// and compiles as C and C++; f16/bf16 scalars, which travel in FP
// registers, are refused.
// RUN: %symm-compile %t/scalars.mlir -o %t/scalars.o
// RUN: FileCheck %s --check-prefix=SCALARS < %t/scalars.h
// RUN: cc -fsyntax-only -I %repo/runtime/include %t/scalars.h
// RUN: c++ -x c++ -fsyntax-only -I %repo/runtime/include %t/scalars.h
// SCALARS: int64_t arg1 /* index */,
// SCALARS: float arg2 /* f32 */,
// SCALARS: bool arg3 /* i1 */,
// SCALARS: uint32_t arg4 /* ui32 */);
// RUN: not %symm-compile %t/bf16_scalar.mlir -o %t/i.o 2> %t/bf16.txt
// RUN: FileCheck %s --check-prefix=BF16 < %t/bf16.txt
// BF16: bf16_scalar.mlir:1:1: error: @f: argument #0 is bf16: a 16-bit float scalar travels in a floating-point register

// Names that would break the header or replace a library function at link
// time are refused at the function.
// RUN: not %symm-compile %t/bool_name.mlir -o %t/j.o 2> %t/bool.txt
// RUN: FileCheck %s --check-prefix=BOOL < %t/bool.txt
// BOOL: bool_name.mlir:1:1: error: entry point: its name '_Bool' is a C or C++ keyword
// RUN: not %symm-compile %t/typedef_name.mlir -o %t/k.o 2> %t/typedef.txt
// RUN: FileCheck %s --check-prefix=TYPEDEF < %t/typedef.txt
// TYPEDEF: typedef_name.mlir:1:1: error: entry point: its name 'int64_t' ends in '_t'
// RUN: not %symm-compile %t/malloc_name.mlir -o %t/l.o 2> %t/malloc.txt
// RUN: FileCheck %s --check-prefix=MALLOC < %t/malloc.txt
// MALLOC: malloc_name.mlir:1:1: error: entry point: its name 'malloc' is a function of the C library or POSIX
// RUN: not %symm-compile %t/async_clash.mlir -o %t/m.o 2> %t/clash.txt
// RUN: FileCheck %s --check-prefix=CLASH < %t/clash.txt
// CLASH: async_clash.mlir:5:1: error: entry point: its name 'f_async' is the name of the asynchronous form of the entry point @f

// Collectives in sequential control flow compile; in a parallel loop the
// verifier refuses them, and the tool says the input "is not valid".
// RUN: %symm-compile %t/sequential.mlir -o %t/n.o
// RUN: not %symm-compile %t/parallel.mlir -o %t/o.o 2> %t/parallel.txt
// RUN: FileCheck %s --check-prefix=PARALLEL < %t/parallel.txt
// PARALLEL: parallel.mlir:4:10: error: 'symm_mem.all_reduce' op is a collective, which every rank runs once per call, in order: {{.*}} not inside 'scf.parallel'
// PARALLEL: symm-compile: {{.*}}parallel.mlir is not valid (see the errors above)

// Host code that writes device memory (an affine.parallel stays host code)
// is refused at the store; host code the pipeline cannot lower at all (the
// same loop on a host buffer) is an error at the op, with an error: line,
// not only a list.
// RUN: not %symm-compile %t/affine_parallel.mlir -o %t/p.o 2> %t/affine.txt
// RUN: FileCheck %s --check-prefix=AFFINE < %t/affine.txt
// AFFINE: affine_parallel.mlir:3:5: error: 'affine.store' writes device memory from host code, which cannot dereference device pointers
// RUN: not %symm-compile %t/affine_parallel_host.mlir -o %t/ph.o 2> %t/affine_host.txt
// RUN: FileCheck %s --check-prefix=AFFINE-HOST < %t/affine_host.txt
// AFFINE-HOST: affine_parallel_host.mlir:2:3: error: 'scf.parallel' is left after lowering

// Deep nesting: the tools run MLIR on a 1 GiB stack with an alternate
// signal stack, and refuse input nested deeper than 5,000 levels at the
// line, before MLIR recurses into it; never a silent signal.
// RUN: python3 -c "n=4000; print('func.func @f(%%b: i1) {\n' + 'scf.if %%b {\n'*n + '}\n'*n + 'return\n}')" > %t/deep_ok.mlir
// RUN: symm-opt %t/deep_ok.mlir -o /dev/null
// RUN: %symm-compile %t/deep_ok.mlir -o %t/q.o
// RUN: python3 -c "n=100000; print('func.func @f(%%b: i1) {\n' + 'scf.if %%b {\n'*n + '}\n'*n + 'return\n}')" > %t/deep.mlir
// RUN: not symm-opt %t/deep.mlir 2> %t/deep_opt.txt
// RUN: FileCheck %s --check-prefix=DEEP < %t/deep_opt.txt
// RUN: not %symm-compile %t/deep.mlir -o %t/r.o 2> %t/deep_compile.txt
// RUN: FileCheck %s --check-prefix=DEEP < %t/deep_compile.txt
// DEEP: deep.mlir:5001:1: error: the input nests deeper than 5000 levels
// DEEP-NOT: Stack dump

// A diagnostic without a location is printed at the input file, never at
// "unknown".
// RUN: not %symm-compile %t/unknown_loc.mlir -o %t/s.o 2> %t/unknown.txt
// RUN: FileCheck %s --check-prefix=UNKNOWN < %t/unknown.txt
// UNKNOWN: {{.*}}unknown_loc.mlir: error: 'symm_mem.all_reduce_out' op reduces no elements
// UNKNOWN-NOT: unknown: error

// An op in the module's body that is no symbol (a call there runs in no
// function, and LLVM would reject it without saying where): refused at the
// op (found by symm-fuzz).
// RUN: not %symm-compile %t/top_level_call.mlir -o %t/t.o 2> %t/top.txt
// RUN: FileCheck %s --check-prefix=TOP < %t/top.txt
// TOP: top_level_call.mlir:2:1: error: 'func.call' sits in the module's body, where only functions, globals and other symbols may: it has no function to run in; move it into one
// TOP-NOT: parentless

//--- index_array.mlir
// A comment, so the crash is on line 3.

func.func @f() attributes {a = array<index: 1, 2>} {
  return
}
//--- result_number.mlir
func.func @f() {
  %x = arith.constant 1 : i32
  %y = arith.addi %x#2147483648, %x : i32
  return
}
//--- hostile_name.mlir
func.func @"x(void); int evil"(%a: memref<4xf32>) {
  return
}
//--- memory_space.mlir
func.func @f(%a: memref<4xf32, 1>) {
  return
}
//--- two_results.mlir
func.func @g() -> (i32, i32) {
  %c = arith.constant 1 : i32
  return %c, %c : i32, i32
}
//--- block_twice.mlir
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @kept(%x: memref<16x64xf32>, %o: memref<16xf32>, %c: memref<64xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x64xf32>) outs(%o : memref<16xf32>) {
  }
    %p = arith.mulf %v, %acc : f32
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<16x64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %p = arith.addf %v, %acc : f32
    linalg.yield %p : f32
  ^bb0(%v: f32, %acc: f32):
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x64xf32>) outs(%o : memref<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %d = arith.subf %v, %acc : f32
    %p = arith.addf %d, %acc : f32
    linalg.yield %p : f32
  }
  return
}
//--- zero.mlir
symm_mem.group @tp world_size(2)
func.func @z(%a: memref<0xf32>, %b: memref<0xf32>) {
  symm_mem.all_reduce_out sum %a into %b group @tp : memref<0xf32>, memref<0xf32>
  return
}
//--- not_utf8.mlir
func.func @f() {
  func.call @"ÿþ"() : () -> ()
  return
}
//--- scalars.mlir
func.func @f(%a: memref<16xf32>, %n: index, %x: f32, %b: i1, %u: ui32) {
  return
}
//--- bf16_scalar.mlir
func.func @f(%x: bf16) {
  return
}
//--- bool_name.mlir
func.func @_Bool(%a: memref<4xf32>) {
  return
}
//--- typedef_name.mlir
func.func @int64_t(%a: memref<4xf32>) {
  return
}
//--- malloc_name.mlir
func.func @malloc(%a: memref<4xf32>) {
  return
}
//--- async_clash.mlir
func.func @f(%a: memref<4xf32>) {
  return
}

func.func @f_async(%a: memref<4xf32>) {
  return
}
//--- sequential.mlir
symm_mem.group @tp world_size(2)
func.func @f(%x: memref<64xf32>, %out: memref<64xf32>, %n: index, %b: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.if %b {
      %v = symm_mem.all_reduce sum %x group @tp : memref<64xf32> -> memref<64xf32>
      memref.copy %v, %out : memref<64xf32> to memref<64xf32>
    }
  }
  return
}
//--- parallel.mlir
symm_mem.group @tp world_size(2)
func.func @f(%x: memref<64xf32>, %c0: index, %c1: index, %c4: index) {
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = symm_mem.all_reduce sum %x group @tp : memref<64xf32> -> memref<64xf32>
    scf.reduce
  }
  return
}
//--- affine_parallel.mlir
func.func @f(%a: memref<4xf32>, %v: f32) {
  affine.parallel (%i) = (0) to (4) {
    affine.store %v, %a[%i] : memref<4xf32>
  }
  return
}
//--- affine_parallel_host.mlir
func.func @f(%a: memref<4xf32, #cudagraph.host>, %v: f32) {
  affine.parallel (%i) = (0) to (4) {
    affine.store %v, %a[%i] : memref<4xf32, #cudagraph.host>
  }
  return
}
//--- unknown_loc.mlir
symm_mem.group @tp world_size(2)
func.func @z(%a: memref<0xf32>, %b: memref<0xf32>) {
  symm_mem.all_reduce_out sum %a into %b group @tp : memref<0xf32>, memref<0xf32> loc(unknown)
  return
}
//--- top_level_call.mlir
func.func private @log()
func.call @log() : () -> ()
func.func @f() {
  return
}
