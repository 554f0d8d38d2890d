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
// OPT-CRASH: symm-opt: internal error: MLIR crashed on this input (signal 11 (segmentation fault)); it is an MLIR bug that the input triggers
// COMPILE-CRASH: index_array.mlir:3:1: error: internal error in the MLIR parser (signal 11 (segmentation fault)) on this line

// A result number of 2^31 makes the parser allocate per result (upstream);
// the address space is bounded, so it fails quickly and is reported.
// RUN: env SYMM_MAX_MEMORY_GB=2 not symm-opt %t/result_number.mlir 2> %t/oom.txt
// RUN: FileCheck %s --check-prefix=OOM < %t/oom.txt
// RUN: env SYMM_MAX_MEMORY_GB=2 not %symm-compile %t/result_number.mlir -o %t/b.o 2> %t/oom2.txt
// RUN: FileCheck %s --check-prefix=OOM2 < %t/oom2.txt
// OOM: internal error: MLIR crashed on this input (out of memory (the input asks for more than the tool may allocate)
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
