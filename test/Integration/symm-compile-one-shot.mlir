// symm-compile's all-reduce size limits. The one-shot limit: left out, it
// goes by the world size (1 MiB on 2 ranks, 512 KiB on more), so a 1 MiB
// all-reduce on 4 ranks takes the two-shot and the same on 2 ranks the
// one-shot; --one-shot-max-bytes sets one limit for every world size (the
// pipeline gets -1 when it is left out).
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %s -o %t/w4.o --no-libdevice --remarks 2>&1 | FileCheck %s --check-prefix=W4
// RUN: %symm-compile %s -o %t/set.o --no-libdevice --remarks --one-shot-max-bytes=1048576 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SET
// RUN: sed -e 's/world_size(4)/world_size(2)/' %s > %t/w2.mlir
// RUN: %symm-compile %t/w2.mlir -o %t/w2.o --no-libdevice --remarks 2>&1 | FileCheck %s --check-prefix=W2
// The Llama MLP block at TP 4 (dynamic token count): the down projection's
// all-reduce sums its split-K slices in the Lamport one-shot up to 512 KiB
// (64 rows), and above runs the whole matmul before the two-shot; each range's
// kernel is in the remark.
// RUN: sed -e 's/world_size(2)/world_size(4)/' -e 's/7168/3584/g' %examples/llama_mlp.mlir > %t/mlp4.mlir
// RUN: %symm-compile %t/mlp4.mlir -o %t/mlp4.o --remarks 2>&1 | FileCheck %s --check-prefix=MLP4
// MLP4: remark: all_reduce of up to 2048 rows of 8192 bytes on 4 ranks, a kernel per size: up to 524288 bytes (64 rows): the Lamport one-shot summing 2 split-K slices; up to 16777216 bytes (2048 rows): the two-shot pushing into the peers' inputs, after the whole matmul{{$}}
// The decoder half-layer: its all-reduces with a row statistic take the
// two-shot above the one-shot up to --rows-two-shot-max-bytes; left out,
// that bound goes by the world size too (2 MiB on 2 ranks, the one-shot
// between barriers above; no bound on more), and set it holds everywhere.
// On 2 ranks the Lamport rows kernel takes all of it (up to 2 MiB).
// RUN: sed -e 's/world_size(2)/world_size(4)/' -e 's/7168/3584/g' -e 's/2048x4096xbf16/1024x4096xbf16/g' \
// RUN:   -e 's/?x2048xbf16/?x1024xbf16/g' %examples/llama_decoder.mlir > %t/dec4.mlir
// RUN: %symm-compile %t/dec4.mlir -o %t/dec4.o --remarks 2>&1 | FileCheck %s --check-prefix=DEC4
// RUN: %symm-compile %t/dec4.mlir -o %t/dec4set.o --remarks --rows-two-shot-max-bytes=2097152 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DEC4SET
// RUN: %symm-compile %examples/llama_decoder.mlir -o %t/dec2.o --remarks 2>&1 | FileCheck %s --check-prefix=DEC2
// DEC4: 45:12: remark: {{.*}} on 4 ranks, a kernel per size: {{.*}}; up to 16777216 bytes (2048 rows): the two-shot pushing into the peers' inputs{{$}}
// DEC4SET: 45:12: remark: {{.*}} on 4 ranks, a kernel per size: {{.*}}; up to 2097152 bytes (256 rows): the two-shot pushing into the peers' inputs; up to 16777216 bytes (2048 rows): the one-shot between barriers{{$}}
// DEC2: 45:12: remark: {{.*}} on 2 ranks, a kernel per size: up to 2097152 bytes (256 rows): the Lamport one-shot; up to 16777216 bytes (2048 rows): the one-shot between barriers{{$}}
// W4-DAG: remark: all_reduce of 1048576 bytes in group @tp (world size 4): two-shot
// W4-DAG: remark: all_reduce of 524288 bytes in group @tp (world size 4): one-shot
// SET-DAG: remark: all_reduce of 1048576 bytes in group @tp (world size 4): one-shot
// SET-DAG: remark: all_reduce of 524288 bytes in group @tp (world size 4): one-shot
// W2-DAG: remark: all_reduce of 1048576 bytes in group @tp (world size 2): one-shot
// W2-DAG: remark: all_reduce of 524288 bytes in group @tp (world size 2): one-shot

symm_mem.group @tp world_size(4)
func.func @limits(%big: memref<524288xbf16>, %half: memref<262144xbf16>) {
  %a = memref.alloc() : memref<524288xbf16>
  memref.copy %big, %a : memref<524288xbf16> to memref<524288xbf16>
  symm_mem.all_reduce_out sum %a into %big group @tp : memref<524288xbf16>, memref<524288xbf16>
  %b = memref.alloc() : memref<262144xbf16>
  memref.copy %half, %b : memref<262144xbf16> to memref<262144xbf16>
  symm_mem.all_reduce_out sum %b into %half group @tp : memref<262144xbf16>, memref<262144xbf16>
  memref.dealloc %a : memref<524288xbf16>
  memref.dealloc %b : memref<262144xbf16>
  return
}
