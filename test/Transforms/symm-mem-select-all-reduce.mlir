// RUN: symm-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(symm-mem-select-all-reduce))' | FileCheck %s
// RUN: symm-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(symm-mem-select-all-reduce{one-shot-max-bytes=64}))' 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=SMALL

// On 2 ranks two-shot wins above the threshold only in its push form,
// which overwrites the input: a caller's buffer (an argument) may be read
// after the function returns, so it stays one-shot.
// CHECK-LABEL: func.func @two_ranks
// CHECK-SAME: (%[[X:.*]]: memref<16777216xbf16>, %[[Y:.*]]: memref<16777216xbf16>)
// CHECK: %[[R:.*]] = symm_mem.all_reduce sum %[[X]] group @tp algorithm one_shot : memref<16777216xbf16> -> memref<16777216xbf16>
// CHECK: symm_mem.all_reduce_out max %[[X]] into %[[Y]] group @tp algorithm one_shot
// CHECK: return %[[R]]
// SMALL-LABEL: func.func @two_ranks
// SMALL: symm_mem.all_reduce sum {{.*}} algorithm one_shot
symm_mem.group @tp world_size(2)
func.func @two_ranks(%x: memref<16777216xbf16>, %y: memref<16777216xbf16>) -> memref<16777216xbf16> {
  // expected-remark@+1 {{all_reduce of 33554432 bytes in group @tp (world size 2): one-shot (its input is read afterwards, which two-shot would overwrite)}}
  %r = symm_mem.all_reduce sum %x group @tp : memref<16777216xbf16> -> memref<16777216xbf16>
  // expected-remark@+1 {{all_reduce of 33554432 bytes in group @tp (world size 2): one-shot (its input is read afterwards, which two-shot would overwrite)}}
  symm_mem.all_reduce_out max %x into %y group @tp : memref<16777216xbf16>, memref<16777216xbf16>
  return %r : memref<16777216xbf16>
}

// -----

// A buffer of the function's own: two-shot when nothing reads it after the
// all-reduce (also not through a view), one-shot when something does.
// CHECK-LABEL: func.func @two_ranks_own_buffers
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: symm_mem.all_reduce_out sum %[[A]] into {{.*}} algorithm two_shot
// CHECK: %[[B:.*]] = memref.alloc
// CHECK: symm_mem.all_reduce_out sum %[[B]] into {{.*}} algorithm one_shot
// CHECK: memref.copy %{{.*}}, %{{.*}}
// CHECK: %[[C:.*]] = memref.alloc
// CHECK: symm_mem.all_reduce_out sum %[[C]] into %[[O:.*]] group {{.*}} algorithm two_shot
// CHECK: symm_mem.all_reduce_out sum %{{.*}} into %{{.*}} group {{.*}} algorithm one_shot
// A caller's output cannot become symmetric: one-shot at 32 MiB.
symm_mem.group @tp world_size(2)
func.func @two_ranks_own_buffers(%x: memref<4194304xbf16>, %y: memref<4194304xbf16>, %z: memref<4194304xbf16>, %big: memref<16777216xbf16>) {
  %a = memref.alloc() : memref<4194304xbf16>
  memref.copy %x, %a : memref<4194304xbf16> to memref<4194304xbf16>
  // expected-remark@+1 {{all_reduce of 8388608 bytes in group @tp (world size 2): two-shot}}
  symm_mem.all_reduce_out sum %a into %y group @tp : memref<4194304xbf16>, memref<4194304xbf16>
  %b = memref.alloc() : memref<4194304xbf16>
  %b2 = memref.cast %b : memref<4194304xbf16> to memref<?xbf16>
  memref.copy %x, %b : memref<4194304xbf16> to memref<4194304xbf16>
  // expected-remark@+1 {{all_reduce of 8388608 bytes in group @tp (world size 2): one-shot (its input is read afterwards, which two-shot would overwrite)}}
  symm_mem.all_reduce_out sum %b into %y group @tp : memref<4194304xbf16>, memref<4194304xbf16>
  memref.copy %b2, %z : memref<?xbf16> to memref<4194304xbf16>
  // 32 MiB: two-shot only into an output of ours (made symmetric later).
  %c = memref.alloc() : memref<16777216xbf16>
  %o = memref.alloc() : memref<16777216xbf16>
  %d = memref.alloc() : memref<16777216xbf16>
  // expected-remark@+1 {{all_reduce of 33554432 bytes in group @tp (world size 2): two-shot}}
  symm_mem.all_reduce_out sum %c into %o group @tp : memref<16777216xbf16>, memref<16777216xbf16>
  // expected-remark@+1 {{all_reduce of 33554432 bytes in group @tp (world size 2): one-shot (above two-rank-push-max-bytes on 2 ranks with an output it cannot make symmetric, copying the peer's half out costs more than the push saves)}}
  symm_mem.all_reduce_out sum %d into %big group @tp : memref<16777216xbf16>, memref<16777216xbf16>
  return
}

// -----

// More ranks: two-shot above the threshold; dynamic sizes stay generic.
// CHECK-LABEL: func.func @eight_ranks
// CHECK: symm_mem.all_reduce sum %{{.*}} group @dp algorithm one_shot : memref<64xf32>
// CHECK: symm_mem.all_reduce sum %{{.*}} group @dp algorithm two_shot : memref<1048576xf32>
// CHECK: symm_mem.all_reduce sum %{{.*}} group @dp : memref<?xf32>
// SMALL-LABEL: func.func @eight_ranks
// SMALL: symm_mem.all_reduce sum %{{.*}} group @dp algorithm two_shot : memref<64xf32>
symm_mem.group @dp world_size(8)
func.func @eight_ranks(%s: memref<64xf32>, %l: memref<1048576xf32>, %d: memref<?xf32>) {
  // expected-remark@+1 {{all_reduce of 256 bytes in group @dp (world size 8): one-shot}}
  %0 = symm_mem.all_reduce sum %s group @dp : memref<64xf32> -> memref<64xf32>
  // expected-remark@+1 {{all_reduce of 4194304 bytes in group @dp (world size 8): two-shot}}
  %1 = symm_mem.all_reduce sum %l group @dp : memref<1048576xf32> -> memref<1048576xf32>
  // expected-remark@+1 {{all_reduce of dynamic size: each call takes the kernel of its size's range (symm-mem-expand-collectives names them)}}
  %2 = symm_mem.all_reduce sum %d group @dp : memref<?xf32> -> memref<?xf32>
  return
}

// -----

// Left at its default, the one-shot limit goes by the world size: 512 KiB
// on 4 ranks (a one-shot reads 3 copies over NVLink, a two-shot about 2),
// 1 MiB on 2. A limit the option sets holds on every world size.
// CHECK-LABEL: func.func @four_ranks_at_the_limits
// CHECK: symm_mem.all_reduce_out sum %[[A:.*]] into %{{.*}} group @tp4 algorithm one_shot : memref<262144xbf16>
// CHECK: symm_mem.all_reduce_out sum %[[B:.*]] into %{{.*}} group @tp4 algorithm two_shot : memref<524288xbf16>
// CHECK: symm_mem.all_reduce_out sum %[[C:.*]] into %{{.*}} group @tp2 algorithm one_shot : memref<524288xbf16>
// SMALL-LABEL: func.func @four_ranks_at_the_limits
// SMALL: algorithm two_shot : memref<262144xbf16>
// SMALL: algorithm two_shot : memref<524288xbf16>
symm_mem.group @tp4 world_size(4)
symm_mem.group @tp2 world_size(2)
func.func @four_ranks_at_the_limits(%o1: memref<262144xbf16>, %o2: memref<524288xbf16>, %o3: memref<524288xbf16>) {
  %a = memref.alloc() : memref<262144xbf16>
  // expected-remark@+1 {{all_reduce of 524288 bytes in group @tp4 (world size 4): one-shot}}
  symm_mem.all_reduce_out sum %a into %o1 group @tp4 : memref<262144xbf16>, memref<262144xbf16>
  %b = memref.alloc() : memref<524288xbf16>
  // expected-remark@+1 {{all_reduce of 1048576 bytes in group @tp4 (world size 4): two-shot}}
  symm_mem.all_reduce_out sum %b into %o2 group @tp4 : memref<524288xbf16>, memref<524288xbf16>
  %c = memref.alloc() : memref<524288xbf16>
  // expected-remark@+1 {{all_reduce of 1048576 bytes in group @tp2 (world size 2): one-shot}}
  symm_mem.all_reduce_out sum %c into %o3 group @tp2 : memref<524288xbf16>, memref<524288xbf16>
  return
}

// -----

// On 2 ranks the Lamport one-shot (bf16 and f16 sums, no barrier) takes
// the messages above the one-shot's 1 MiB up to lamport-max-bytes (4 MiB)
// where the two-shot would: not an f32 sum, a max, or a bf16 sum past
// 4 MiB; not on 4 ranks.
// CHECK-LABEL: func.func @lamport_above_the_one_shot
// CHECK: symm_mem.all_reduce_out sum %{{.*}} into %{{.*}} group @tp2 algorithm one_shot : memref<786432xbf16>
// CHECK: symm_mem.all_reduce_out sum %{{.*}} into %{{.*}} group @tp2 algorithm one_shot : memref<2097152xbf16>
// CHECK: symm_mem.all_reduce_out sum %{{.*}} into %{{.*}} group @tp2 algorithm two_shot : memref<2097160xbf16>
// CHECK: symm_mem.all_reduce_out max %{{.*}} into %{{.*}} group @tp2 algorithm two_shot : memref<786432xbf16>
// CHECK: symm_mem.all_reduce_out sum %{{.*}} into %{{.*}} group @tp2 algorithm two_shot : memref<393216xf32>
// CHECK: symm_mem.all_reduce_out sum %{{.*}} into %{{.*}} group @tp4 algorithm two_shot : memref<786432xbf16>
// SMALL-LABEL: func.func @lamport_above_the_one_shot
// SMALL: algorithm one_shot : memref<786432xbf16>
symm_mem.group @tp2 world_size(2)
symm_mem.group @tp4 world_size(4)
func.func @lamport_above_the_one_shot(%o1: memref<786432xbf16>, %o2: memref<2097152xbf16>, %o3: memref<2097160xbf16>, %o4: memref<786432xbf16>, %o5: memref<393216xf32>, %o6: memref<786432xbf16>) {
  %a = memref.alloc() : memref<786432xbf16>
  // expected-remark@+1 {{all_reduce of 1572864 bytes in group @tp2 (world size 2): one-shot (the Lamport kernel, which needs no barrier, on 2 ranks: bf16 and f16 sums up to lamport-max-bytes)}}
  symm_mem.all_reduce_out sum %a into %o1 group @tp2 : memref<786432xbf16>, memref<786432xbf16>
  %b = memref.alloc() : memref<2097152xbf16>
  // expected-remark@+1 {{all_reduce of 4194304 bytes in group @tp2 (world size 2): one-shot (the Lamport kernel}}
  symm_mem.all_reduce_out sum %b into %o2 group @tp2 : memref<2097152xbf16>, memref<2097152xbf16>
  %c = memref.alloc() : memref<2097160xbf16>
  // expected-remark@+1 {{all_reduce of 4194320 bytes in group @tp2 (world size 2): two-shot}}
  symm_mem.all_reduce_out sum %c into %o3 group @tp2 : memref<2097160xbf16>, memref<2097160xbf16>
  %d = memref.alloc() : memref<786432xbf16>
  // expected-remark@+1 {{all_reduce of 1572864 bytes in group @tp2 (world size 2): two-shot}}
  symm_mem.all_reduce_out max %d into %o4 group @tp2 : memref<786432xbf16>, memref<786432xbf16>
  %e = memref.alloc() : memref<393216xf32>
  // expected-remark@+1 {{all_reduce of 1572864 bytes in group @tp2 (world size 2): two-shot}}
  symm_mem.all_reduce_out sum %e into %o5 group @tp2 : memref<393216xf32>, memref<393216xf32>
  %f = memref.alloc() : memref<786432xbf16>
  // expected-remark@+1 {{all_reduce of 1572864 bytes in group @tp4 (world size 4): two-shot}}
  symm_mem.all_reduce_out sum %f into %o6 group @tp4 : memref<786432xbf16>, memref<786432xbf16>
  return
}
