// RUN: symm-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(symm-linalg-elementwise-to-gpu))' | FileCheck %s

// RMSNorm's scaling: bf16 rows (vectors of 8), a per-row f32 statistic (one
// load per thread), a bf16 weight along the columns (a vector). The host
// checks every vector operand's alignment; the generic stays as the
// fallback for views at odd offsets.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @rms_scale
// CHECK-SAME: (%[[X:.*]]: memref<?x4096xbf16>, %[[S:.*]]: memref<?xf32>, %[[W:.*]]: memref<4096xbf16>, %[[O:.*]]: memref<?x4096xbf16>)
// CHECK-DAG: %[[ROWS:.*]] = memref.dim %[[O]], %c0
// CHECK-DAG: %[[COLS:.*]] = memref.dim %[[O]], %c1
// CHECK: %[[XP:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[WP:.*]] = memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: %[[OP:.*]] = memref.extract_aligned_pointer_as_index %[[O]]
// CHECK: %[[LOW:.*]] = arith.andi %{{.*}}, %c15
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[LOW]], %{{.*}}
// CHECK: scf.if %[[OK]] {
// CHECK:   %[[PER_ROW:.*]] = arith.divui %[[COLS]], %{{.*}}
// CHECK:   %[[N:.*]] = arith.muli %[[PER_ROW]], %[[ROWS]]
// CHECK:   %[[BLOCKS:.*]] = arith.ceildivui %[[N]], %[[T:.*]] : index
// CHECK:   gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[BDX:.*]] = %[[T]],
// CHECK:     %[[ID:.*]] = arith.addi %{{.*}}, %[[TX]]
// CHECK:     arith.cmpi ult, %[[ID]], %[[N]]
// CHECK:     %[[R:.*]] = arith.divui %[[ID]], %[[PER_ROW]]
// CHECK:     %[[C:.*]] = arith.muli %{{.*}}, %c8
// CHECK:     %[[XV:.*]] = vector.load %[[X]][%[[R]], %[[C]]] {alignment = 16 : i64} : memref<?x4096xbf16>, vector<8xbf16>
// CHECK:     %[[SV:.*]] = memref.load %[[S]][%[[R]]] : memref<?xf32>
// CHECK:     %[[WV:.*]] = vector.load %[[W]][%[[C]]] {alignment = 16 : i64} : memref<4096xbf16>, vector<8xbf16>
// CHECK:     %[[X0:.*]] = vector.extract %[[XV]][0]
// CHECK:     %[[W0:.*]] = vector.extract %[[WV]][0]
// CHECK:     math.rsqrt
// CHECK:     %[[R0:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK:     vector.extract %[[XV]][7]
// CHECK:     %[[R7:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK:     %[[V:.*]] = vector.from_elements %[[R0]], {{.*}}, %[[R7]] : vector<8xbf16>
// CHECK:     vector.store %[[V]], %[[O]][%[[R]], %[[C]]] {alignment = 16 : i64}
// CHECK:   gpu.terminator
// CHECK: } else {
// CHECK:   linalg.generic
// CHECK-SAME: ins(%[[X]], %[[S]], %[[W]]
func.func @rms_scale(%x: memref<?x4096xbf16>, %s: memref<?xf32>, %w: memref<4096xbf16>, %o: memref<?x4096xbf16>) {
  %eps = arith.constant 1.0e-5 : f32
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s, %w : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>)
      outs(%o : memref<?x4096xbf16>) {
  ^bb0(%v: bf16, %ss: f32, %wv: bf16, %unused: bf16):
    %var = arith.addf %ss, %eps : f32
    %inv = math.rsqrt %var : f32
    %f = arith.extf %v : bf16 to f32
    %n = arith.mulf %f, %inv : f32
    %wf = arith.extf %wv : bf16 to f32
    %y = arith.mulf %n, %wf : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}

// -----

// f32 operands: four lanes. A generic reading its own output (an in-place
// accumulate) loads the output vector too.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @accumulate_f32
// CHECK: gpu.launch
// CHECK:   %[[A:.*]] = vector.load %arg0[{{.*}}] {alignment = 16 : i64} : memref<64x1024xf32>, vector<4xf32>
// CHECK:   %[[B:.*]] = vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<64x1024xf32>, vector<4xf32>
// CHECK:   %[[A3:.*]] = vector.extract %[[A]][3]
// CHECK:   %[[B3:.*]] = vector.extract %[[B]][3]
// CHECK:   %[[S3:.*]] = arith.addf %[[B3]], %[[A3]] : f32
// CHECK:   vector.from_elements {{.*}}, %[[S3]] : vector<4xf32>
func.func @accumulate_f32(%a: memref<64x1024xf32>, %acc: memref<64x1024xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x1024xf32>) outs(%acc : memref<64x1024xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A fill (generalized: the scalar is an input that is not a memref) writes
// a vector of that value.
#scalar = affine_map<(d0, d1) -> ()>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @fill
// CHECK-SAME: (%[[B:.*]]: memref<?x7168xbf16>)
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK: gpu.launch
// CHECK:   %[[V:.*]] = vector.from_elements %[[Z]], %[[Z]], %[[Z]], %[[Z]], %[[Z]], %[[Z]], %[[Z]], %[[Z]] : vector<8xbf16>
// CHECK:   vector.store %[[V]], %[[B]]
func.func @fill(%b: memref<?x7168xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%zero : bf16) outs(%b : memref<?x7168xbf16>) {
  ^bb0(%z: bf16, %unused: bf16):
    linalg.yield %z : bf16
  }
  return
}

// -----

// Rows of 4095 bf16 elements cannot be read 8 at a time.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @odd_rows
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @odd_rows(%a: memref<4x4095xbf16>, %b: memref<4x4095xbf16>) {
  // expected-remark @below {{element-wise generic kept on scalar accesses: it has a last dimension of 4095, not a multiple of 8 lanes}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x4095xbf16>) outs(%b : memref<4x4095xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    linalg.yield %v : bf16
  }
  return
}

// -----

// A transposed read cannot be a vector along the output's rows.
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @transposed(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>) {
  // expected-remark @below {{element-wise generic kept on scalar accesses: it reads the last loop through a dimension other than its last}}
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x64xbf16>) outs(%b : memref<64x64xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    linalg.yield %v : bf16
  }
  return
}

// -----

// A column view is strided along its last dimension.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @strided(%a: memref<64x64xbf16, strided<[1, 64]>>, %b: memref<64x64xbf16>) {
  // expected-remark @below {{element-wise generic kept on scalar accesses: it has an operand (memref<64x64xbf16, strided<[1, 64]>>) strided along its last dimension}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x64xbf16, strided<[1, 64]>>) outs(%b : memref<64x64xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    linalg.yield %v : bf16
  }
  return
}

// -----

// Bodies that read their indices keep the upstream lowering.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @iota(%b: memref<64x64xi32>) {
  // expected-remark @below {{element-wise generic kept on scalar accesses: it reads its loop indices (linalg.index)}}
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%b : memref<64x64xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 1 : index
    %v = arith.index_cast %i : index to i32
    linalg.yield %v : i32
  }
  return
}
