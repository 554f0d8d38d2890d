// RUN: symm-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(symm-linalg-rows-to-gpu))' | FileCheck %s

// RMSNorm's statistic: bf16 rows, the sum of squares in f32. One block per
// row, a block all-reduce, thread 0 folds the total into the output. Where
// the host finds the rows 16-byte aligned (and whole vectors), each thread
// reads 8 columns at a time (512 threads for 4096 columns) and folds them
// lane by lane; otherwise a strided loop of scalars on 1024 threads.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @sum_of_squares
// CHECK-SAME: (%[[X:.*]]: memref<16x4096xbf16>, %[[SS:.*]]: memref<16xf32>)
// CHECK-DAG: %[[ROWS:.*]] = memref.dim %[[SS]], %{{.*}} : memref<16xf32>
// CHECK-DAG: %[[COLS:.*]] = memref.dim %[[X]], %{{.*}} : memref<16x4096xbf16>
// CHECK: %[[REST:.*]] = arith.remui %[[COLS]], %c8
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[LOW:.*]] = arith.andi %{{.*}}, %c15
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[LOW]], %{{.*}} : index
// CHECK: scf.if %[[OK]] {
// CHECK:   %[[VT:.*]] = arith.constant 512 : index
// CHECK:   gpu.launch blocks(%[[VBX:[^,]*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ROWS]], {{.*}} threads(%[[VTX:[^,]*]], %{{.*}}, %{{.*}}) in (%[[VBDX:[^ ]*]] = %[[VT]],
// CHECK:     %[[VSTART:.*]] = arith.muli %[[VTX]], %c8
// CHECK:     %[[VSTEP:.*]] = arith.muli %[[VBDX]], %c8
// CHECK:     %[[VPART:.*]] = scf.for %[[VC:.*]] = %[[VSTART]] to %[[COLS]] step %[[VSTEP]] iter_args(%[[VP:.*]] = %{{.*}}) -> (f32)
// CHECK:       %[[XV:.*]] = vector.load %[[X]][%[[VBX]], %[[VC]]] {alignment = 16 : i64} : memref<16x4096xbf16>, vector<8xbf16>
// CHECK:       %[[X0:.*]] = vector.extract %[[XV]][0]
// CHECK:       %[[F0:.*]] = arith.extf %[[X0]] : bf16 to f32
// CHECK:       %[[S0:.*]] = arith.mulf %[[F0]], %[[F0]]
// CHECK:       %[[A0:.*]] = arith.addf %[[S0]], %[[VP]] : f32
// CHECK:       vector.extract %[[XV]][7]
// CHECK:       %[[A7:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:  scf.yield %[[A7]]
// CHECK:     %[[VTOTAL:.*]] = gpu.all_reduce add %[[VPART]] uniform
// CHECK:     scf.if
// CHECK:       %[[VOLD:.*]] = memref.load %[[SS]][%[[VBX]]]
// CHECK:       %[[VSUM:.*]] = arith.addf %[[VTOTAL]], %[[VOLD]] : f32
// CHECK:       memref.store %[[VSUM]], %[[SS]][%[[VBX]]]
// CHECK: } else {
// CHECK:   %[[T:.*]] = arith.constant 1024 : index
// CHECK:   gpu.launch blocks(%[[BX:[^,]*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ROWS]], {{.*}} threads(%[[TX:[^,]*]], %{{.*}}, %{{.*}}) in (%[[BDX:[^ ]*]] = %[[T]],
// CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:   %[[PART:.*]] = scf.for %[[C:.*]] = %[[TX]] to %[[COLS]] step %[[BDX]] iter_args(%[[P:.*]] = %[[ZERO]]) -> (f32)
// CHECK:     %[[V:.*]] = memref.load %[[X]][%[[BX]], %[[C]]]
// CHECK:     %[[F:.*]] = arith.extf %[[V]] : bf16 to f32
// CHECK:     %[[SQ:.*]] = arith.mulf %[[F]], %[[F]]
// CHECK:     %[[N:.*]] = arith.addf %[[SQ]], %[[P]] : f32
// CHECK:     scf.yield %[[N]]
// CHECK:   %[[TOTAL:.*]] = gpu.all_reduce add %[[PART]] uniform
// CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[TX]]
// CHECK:   scf.if %[[FIRST]]
// CHECK:     %[[OLD:.*]] = memref.load %[[SS]][%[[BX]]]
// CHECK:     %[[SUM:.*]] = arith.addf %[[TOTAL]], %[[OLD]] : f32
// CHECK:     memref.store %[[SUM]], %[[SS]][%[[BX]]]
// CHECK:   gpu.terminator
// CHECK-NOT: linalg.generic
func.func @sum_of_squares(%x: memref<16x4096xbf16>, %ss: memref<16xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x4096xbf16>) outs(%ss : memref<16xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Softmax's two statistics over bf16 rows: the maximum into bf16 (combined
// in f32, rounded once when stored), then the sum of exp(x - max) reading
// the per-row maximum through a (d0) map: once per vector of x, for its 8
// lanes. 1000 columns: 125 vectors, so 128 threads read vectors where the
// rows are aligned, 256 read scalars otherwise.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @softmax_statistics
// CHECK-SAME: (%[[X:.*]]: memref<128x1000xbf16>, %[[MX:.*]]: memref<128xbf16>, %[[SUM:.*]]: memref<128xf32>)
// CHECK: scf.if
// CHECK:   %[[VT:.*]] = arith.constant 128 : index
// CHECK:   gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %[[VT]],
// CHECK:   %[[VNEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK:   scf.for {{.*}} iter_args(%[[VP:.*]] = %[[VNEG]])
// CHECK:     %[[XV:.*]] = vector.load %[[X]]
// CHECK:     %[[X0:.*]] = vector.extract %[[XV]][0]
// CHECK:     %[[E0:.*]] = arith.extf %[[X0]] : bf16 to f32
// CHECK:     arith.maximumf %[[E0]], %[[VP]] : f32
// CHECK:   gpu.all_reduce maximumf
// CHECK: } else {
// CHECK:   %[[T:.*]] = arith.constant 256 : index
// CHECK:   gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %[[T]],
// CHECK:   %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK:   scf.for {{.*}} iter_args(%[[P:.*]] = %[[NEG]])
// CHECK:     %[[E:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:     arith.maximumf %[[E]], %[[P]] : f32
// CHECK:   %[[TOTAL:.*]] = gpu.all_reduce maximumf
// CHECK:   scf.if
// CHECK:     %[[OLD:.*]] = memref.load %[[MX]]
// CHECK:     %[[OLD32:.*]] = arith.extf %[[OLD]] : bf16 to f32
// CHECK:     %[[M:.*]] = arith.maximumf %[[TOTAL]], %[[OLD32]] : f32
// CHECK:     %[[R:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK:     memref.store %[[R]], %[[MX]]
// CHECK: scf.if
// CHECK:   gpu.launch
// CHECK:   scf.for %[[VC:[a-z0-9_]+]] = {{.*}} iter_args(%[[VQ:.*]] = %{{.*}})
// CHECK:     %[[XV2:.*]] = vector.load %[[X]][%[[VROW:.*]], %[[VC]]]
// CHECK:     %[[MV:.*]] = memref.load %[[MX]][%[[VROW]]]
// CHECK:     %[[L0:.*]] = vector.extract %[[XV2]][0]
// CHECK:     arith.subf %[[L0]], %[[MV]] : bf16
// CHECK:     math.exp
// CHECK:     arith.addf %{{.*}}, %[[VQ]] : f32
// CHECK:     vector.extract %[[XV2]][7]
// CHECK:   gpu.all_reduce add
// CHECK: } else {
// CHECK:   gpu.launch
// CHECK:   scf.for %[[C:[a-z0-9_]+]] = {{.*}} iter_args(%[[Q:.*]] = %{{.*}})
// CHECK:     memref.load %[[X]][%[[ROW:.*]], %[[C]]]
// CHECK:     memref.load %[[MX]][%[[ROW]]]
// CHECK:     math.exp
// CHECK:     arith.addf %{{.*}}, %[[Q]] : f32
// CHECK:   gpu.all_reduce add
func.func @softmax_statistics(%x: memref<128x1000xbf16>, %mx: memref<128xbf16>, %sum: memref<128xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<128x1000xbf16>) outs(%mx : memref<128xbf16>) {
  ^bb0(%v: bf16, %acc: bf16):
    %m = arith.maximumf %v, %acc : bf16
    linalg.yield %m : bf16
  }
  linalg.generic {indexing_maps = [#id, #col, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mx : memref<128x1000xbf16>, memref<128xbf16>) outs(%sum : memref<128xf32>) {
  ^bb0(%v: bf16, %m: bf16, %acc: f32):
    %d = arith.subf %v, %m : bf16
    %f = arith.extf %d : bf16 to f32
    %e = math.exp %f : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Three loops: batch x rows reduced over columns; the block id is split
// back into (batch, row), and a per-column weight reads the column only.
// Both span the row as their last dimension: f32 vectors of 4 lanes where
// aligned (the weight's address checked too), scalars otherwise.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#w = affine_map<(d0, d1, d2) -> (d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[X:.*]]: memref<2x8x64xf32>, %[[W:.*]]: memref<64xf32>, %[[O:.*]]: memref<2x8xf32>)
// CHECK-DAG: %[[B:.*]] = memref.dim %[[O]], %c0
// CHECK-DAG: %[[R:.*]] = memref.dim %[[O]], %c1
// CHECK: %[[GRID:.*]] = arith.muli %[[B]], %[[R]]
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: scf.if
// CHECK:   gpu.launch blocks(%[[VBX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]],
// CHECK:   %[[VROW:.*]] = arith.remui %[[VBX]], %[[R]]
// CHECK:   %[[VBATCH:.*]] = arith.divui %[[VBX]], %[[R]]
// CHECK:   scf.for %[[VC:[a-z0-9_]+]] =
// CHECK:     vector.load %[[X]][%[[VBATCH]], %[[VROW]], %[[VC]]] {alignment = 16 : i64} : memref<2x8x64xf32>, vector<4xf32>
// CHECK:     vector.load %[[W]][%[[VC]]] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
// CHECK:   memref.store %{{.*}}, %[[O]][%[[VBATCH]], %[[VROW]]]
// CHECK: } else {
// CHECK:   gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]],
// CHECK:   %[[ROW:.*]] = arith.remui %[[BX]], %[[R]]
// CHECK:   %[[BATCH:.*]] = arith.divui %[[BX]], %[[R]]
// CHECK:   scf.for %[[C:[a-z0-9_]+]] =
// CHECK:     memref.load %[[X]][%[[BATCH]], %[[ROW]], %[[C]]]
// CHECK:     memref.load %[[W]][%[[C]]]
// CHECK:   memref.store %{{.*}}, %[[O]][%[[BATCH]], %[[ROW]]]
func.func @batched(%x: memref<2x8x64xf32>, %w: memref<64xf32>, %o: memref<2x8xf32>) {
  linalg.generic {indexing_maps = [#id3, #w, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x8x64xf32>, memref<64xf32>) outs(%o : memref<2x8xf32>) {
  ^bb0(%v: f32, %s: f32, %acc: f32):
    %p = arith.mulf %v, %s : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Reductions this pass does not take stay generics, with a remark.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
#row = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: gpu.launch
func.func @kept(%x: memref<16x64xf32>, %o: memref<16xf32>, %c: memref<64xf32>) {
  // expected-remark @+1 {{row reduction kept on one thread per row: it combines with 'arith.mulf'}}
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x64xf32>) outs(%o : memref<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %p = arith.mulf %v, %acc : f32
    linalg.yield %p : f32
  }
  // expected-remark @+1 {{only the last loop may be a reduction}}
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<16x64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %p = arith.addf %v, %acc : f32
    linalg.yield %p : f32
  }
  // expected-remark @+1 {{reads the output's value other than to combine it}}
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x64xf32>) outs(%o : memref<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %d = arith.subf %v, %acc : f32
    %p = arith.addf %d, %acc : f32
    linalg.yield %p : f32
  }
  return
}

// -----

// A fill of the statistic right before its reduction (generalized, as the
// pipeline gives it) is folded: the total starts from the fill's value and
// the output is not read, one kernel less.
#scalar = affine_map<(d0) -> ()>
#vec = affine_map<(d0) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @filled_statistic
// CHECK-SAME: (%[[X:.*]]: memref<?x4096xbf16>, %[[SS:.*]]: memref<?xf32>)
// CHECK: %[[INIT:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK: %[[TOTAL:.*]] = gpu.all_reduce add
// CHECK: scf.if
// CHECK-NOT: memref.load %[[SS]]
// CHECK:   %[[SUM:.*]] = arith.addf %[[TOTAL]], %[[INIT]] : f32
// CHECK:   memref.store %[[SUM]], %[[SS]]
func.func @filled_statistic(%x: memref<?x4096xbf16>, %ss: memref<?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#scalar, #vec], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%ss : memref<?xf32>) {
  ^bb0(%z: f32, %unused: f32):
    linalg.yield %z : f32
  }
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x4096xbf16>) outs(%ss : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// RMSNorm: the statistic (its fill folded) and the scaling that reads it
// per row run in one kernel: each block reduces its row 8 bf16 lanes per
// thread at a time (a 16-byte load, 512 threads for 4096 columns), thread 0
// stores the total, and the block scales the row 8 lanes per thread with the
// total in a register. The host checks both reads' alignment and sizes;
// otherwise both run apart as before (else branch).
#scalar = affine_map<(d0) -> ()>
#vec = affine_map<(d0) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.*]]: memref<?x4096xbf16>, %[[W:.*]]: memref<4096xbf16>, %[[SS:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?x4096xbf16>)
// CHECK-COUNT-2: arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: %[[OK:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK:   %[[T:.*]] = arith.constant 512 : index
// CHECK:   gpu.launch blocks(%[[BX:[^,]*]], %{{.*}}, %{{.*}}) in ({{.*}}) threads(%[[TX:[^,]*]], %{{.*}}, %{{.*}}) in (%[[BDX:[^ ]*]] = %[[T]],
// CHECK:     %[[RSTART:.*]] = arith.muli %[[TX]], %c8{{(_[0-9]+)?}}
// CHECK:     %[[RSTEP:.*]] = arith.muli %[[BDX]], %c8{{(_[0-9]+)?}}
// CHECK:     scf.for %[[RC:.*]] = %[[RSTART]] to %{{.*}} step %[[RSTEP]] iter_args(%[[P:.*]] = %{{.*}}) -> (f32) {
// CHECK:       %[[XR:.*]] = vector.load %[[X]][%[[BX]], %[[RC]]] {alignment = 16 : i64}
// CHECK:       %[[X0:.*]] = vector.extract %[[XR]][0]
// CHECK:       %[[F0:.*]] = arith.extf %[[X0]] : bf16 to f32
// CHECK:       %[[S0:.*]] = arith.mulf %[[F0]], %[[F0]]
// CHECK:       %[[A0:.*]] = arith.addf %[[S0]], %[[P]] : f32
// CHECK:       %[[X1:.*]] = vector.extract %[[XR]][1]
// CHECK:       %[[F1:.*]] = arith.extf %[[X1]] : bf16 to f32
// CHECK:       %[[S1:.*]] = arith.mulf %[[F1]], %[[F1]]
// CHECK:       arith.addf %[[S1]], %[[A0]] : f32
// CHECK:       vector.extract %[[XR]][7]
// CHECK:       scf.yield
// CHECK:     %[[TOTAL:.*]] = gpu.all_reduce add
// CHECK:     %[[RESULT:.*]] = arith.addf %[[TOTAL]], %{{.*}} : f32
// CHECK:     scf.if
// CHECK:       memref.store %[[RESULT]], %[[SS]][%[[BX]]]
// CHECK:     %[[START:.*]] = arith.muli %[[TX]], %c8{{(_[0-9]+)?}}
// CHECK:     %[[STEP:.*]] = arith.muli %[[BDX]], %c8{{(_[0-9]+)?}}
// CHECK:     scf.for %[[C:.*]] = %[[START]] to %{{.*}} step %[[STEP]] {
// CHECK:       %[[XV:.*]] = vector.load %[[X]][%[[BX]], %[[C]]] {alignment = 16 : i64}
// CHECK:       %[[WV:.*]] = vector.load %[[W]][%[[C]]] {alignment = 16 : i64}
// CHECK:       arith.divf %[[RESULT]]
// CHECK:       vector.store %{{.*}}, %[[Y]][%[[BX]], %[[C]]] {alignment = 16 : i64}
// CHECK:     gpu.terminator
// CHECK: } else {
// CHECK:   gpu.launch
// CHECK:   linalg.generic
// CHECK-SAME: ins(%[[X]], %[[SS]], %[[W]]
func.func @rms_norm(%x: memref<?x4096xbf16>, %w: memref<4096xbf16>, %ss: memref<?xf32>, %y: memref<?x4096xbf16>) {
  %zero = arith.constant 0.0 : f32
  %hidden = arith.constant 4096.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  linalg.generic {indexing_maps = [#scalar, #vec], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%ss : memref<?xf32>) {
  ^bb0(%z: f32, %unused: f32):
    linalg.yield %z : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x4096xbf16>) outs(%ss : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss, %w : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>)
      outs(%y : memref<?x4096xbf16>) {
  ^bb0(%v: bf16, %s: f32, %wv: bf16, %unused: bf16):
    %mean = arith.divf %s, %hidden : f32
    %var = arith.addf %mean, %eps : f32
    %inv = math.rsqrt %var : f32
    %f = arith.extf %v : bf16 to f32
    %n = arith.mulf %f, %inv : f32
    %wf = arith.extf %wv : bf16 to f32
    %r = arith.mulf %n, %wf : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// -----

// The statistic reads its input transposed (the reduced loop is not that
// input's last dimension): the kernel is still fused, with the reduction's
// strided scalar loads on 1024 threads; the scaling keeps its vectors.
#scalar = affine_map<(d0) -> ()>
#vec = affine_map<(d0) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @transposed_statistic
// CHECK-SAME: (%[[XT:.*]]: memref<4096x?xbf16>, %[[Z:.*]]: memref<?x4096xbf16>, %[[SS:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?x4096xbf16>)
// CHECK: scf.if
// CHECK:   %[[T:.*]] = arith.constant 1024 : index
// CHECK:   gpu.launch blocks(%[[BX:[^,]*]], %{{.*}}, %{{.*}}) in ({{.*}}) threads(%[[TX:[^,]*]], %{{.*}}, %{{.*}}) in (%[[BDX:[^ ]*]] = %[[T]],
// CHECK:     scf.for %[[C:.*]] = %[[TX]] to %{{.*}} step %[[BDX]] iter_args
// CHECK:       memref.load %[[XT]][%[[C]], %[[BX]]]
// CHECK-NOT:   vector.load %[[XT]]
// CHECK:     gpu.all_reduce add
// CHECK:     vector.load %[[Z]]
// CHECK:     vector.store %{{.*}}, %[[Y]]
// CHECK: } else {
func.func @transposed_statistic(%xt: memref<4096x?xbf16>, %z: memref<?x4096xbf16>, %ss: memref<?xf32>, %y: memref<?x4096xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#scalar, #vec], iterator_types = ["parallel"]}
      ins(%zero : f32) outs(%ss : memref<?xf32>) {
  ^bb0(%v: f32, %unused: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#t, #row], iterator_types = ["parallel", "reduction"]}
      ins(%xt : memref<4096x?xbf16>) outs(%ss : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %ss : memref<?x4096xbf16>, memref<?xf32>) outs(%y : memref<?x4096xbf16>) {
  ^bb0(%v: bf16, %s: f32, %unused: bf16):
    %inv = math.rsqrt %s : f32
    %f = arith.extf %v : bf16 to f32
    %n = arith.mulf %f, %inv : f32
    %r = arith.truncf %n : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}
