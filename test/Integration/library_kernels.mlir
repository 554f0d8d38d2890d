// The runtime's library kernels (runtime/kernels/: PTX and the table the
// runtime embeds) are what the compiler's kernel IR and pipeline generate
// now: symm-kernels regenerates every one and fails on any difference.
// After a change to the kernels, the device ops' lowering or the pipeline:
//   target/debug/symm-kernels --write runtime/kernels
//
// REQUIRES: symm-kernels
// RUN: %symm-kernels --check %repo/runtime/kernels | FileCheck %s
// CHECK: {{[0-9]+}} files in {{.*}}runtime/kernels are current

// A stale file is reported, with the command that regenerates it.
// RUN: rm -rf %t && cp -r %repo/runtime/kernels %t && echo "// edited" >> %t/symm_barrier.ptx
// RUN: not %symm-kernels --check %t 2>&1 | FileCheck %s --check-prefix=STALE
// STALE: 1 of the library kernels' files in {{.*}} are stale: symm_barrier.ptx (differs); run `symm-kernels --write

// So is a kernel that is no longer generated.
// RUN: rm -rf %t && cp -r %repo/runtime/kernels %t && echo "" > %t/symm_gone.ptx
// RUN: not %symm-kernels --check %t 2>&1 | FileCheck %s --check-prefix=EXTRA
// EXTRA: symm_gone.ptx (not generated)

// The kernels as built, before lowering (--print-ir).
// The library two-shot of any element count: the elements after the last
// whole vector belong to the last rank, which reduces them and pushes them
// into the peers' inputs like its chunk (reduced in place by every rank,
// they raced with a peer still reading them); a rank whose output is not
// its input copies what was pushed after the closing barrier.
// RUN: %symm-kernels --print-ir symm_two_shot_push_sum_f16_w2_v8_tail | FileCheck %s --check-prefix=TWO
// TWO-LABEL: gpu.func @symm_two_shot_push_sum_f16_w2_v8_tail(
// TWO-SAME: %[[POOL:[^:]*]]: !symm_mem.pool, %[[IN:[^:]*]]: !llvm.ptr, %[[OUT:[^:]*]]: !llvm.ptr, %[[COUNT:[^:]*]]: i64)
// TWO: %[[RANKIDX:.*]] = symm_mem.pool_rank %[[POOL]]
// TWO-NEXT: %[[RANK:.*]] = arith.index_cast %[[RANKIDX]] : index to i64
// TWO: %[[P0:.*]] = symm_mem.peer_ptr %[[POOL]][%{{.*}}], %[[IN]]
// TWO-NEXT: %[[P1:.*]] = symm_mem.peer_ptr %[[POOL]][%{{.*}}], %[[IN]]
// TWO: %[[NVEC:.*]] = arith.divui %[[COUNT]], %{{.*}} : i64
// TWO: symm_mem.barrier %[[POOL]]
// TWO: %[[OWNER:.*]] = arith.cmpi eq, %[[RANK]], %{{.*}} : i64
// TWO-NEXT: scf.if %[[OWNER]] {
// TWO: %[[START:.*]] = arith.muli %[[NVEC]], %{{.*}} : i64
// TWO-NEXT: %[[J:.*]] = arith.addi %[[START]], %{{.*}} : i64
// TWO-NEXT: %[[HAS:.*]] = arith.cmpi slt, %[[J]], %[[COUNT]] : i64
// TWO-NEXT: scf.if %[[HAS]] {
// TWO: llvm.getelementptr %[[P0]][%[[J]]] {{.*}} f16
// TWO: llvm.getelementptr %[[P1]][%[[J]]] {{.*}} f16
// TWO: %[[SUM:.*]] = arith.truncf %{{.*}} : f32 to f16
// TWO-NEXT: %[[TO_OUT:.*]] = llvm.getelementptr %[[OUT]][%[[J]]]
// TWO-NEXT: llvm.store %[[SUM]], %[[TO_OUT]]
// TWO-NEXT: %[[TO_PEER:.*]] = llvm.getelementptr %[[P0]][%[[J]]]
// TWO-NEXT: llvm.store %[[SUM]], %[[TO_PEER]]
// TWO-NEXT: {{^ *}$}}
// TWO-NEXT: {{^ *}$}}
// TWO-NEXT: symm_mem.barrier %[[POOL]]
// TWO-NEXT: %[[O:.*]] = llvm.ptrtoint %[[OUT]]
// TWO-NEXT: %[[I:.*]] = llvm.ptrtoint %[[IN]]
// TWO-NEXT: %[[ELSEWHERE:.*]] = arith.cmpi ne, %[[O]], %[[I]] : i64
// TWO-NEXT: scf.if %[[ELSEWHERE]] {

// The all-reduce fused with RMSNorm, staged, on 2 ranks: the one-shot's
// counter barrier around a row loop with a block-wide sum of squares. A
// thread holds its vector of the row in registers from the reduction to
// the normalization (nothing is stored before), loads gamma's before the
// block sum, and rereads only what lies beyond (rows over 4096).
// RUN: %symm-kernels --print-ir symm_all_reduce_rms_norm_bf16_staged_w2 | FileCheck %s --check-prefix=NORM
// NORM-LABEL: gpu.func @symm_all_reduce_rms_norm_bf16_staged_w2(
// NORM-SAME: %[[POOL:[^:]*]]: !symm_mem.pool, %{{[^:]*}}: !llvm.ptr, %[[OUT:[^:]*]]: !llvm.ptr, %[[ROWS:[^:]*]]: i64, %[[GAMMA:[^:]*]]: !llvm.ptr, %[[HIDDEN:[^:]*]]: i64, %[[EPS:[^:]*]]: f32)
// NORM: %[[HELD:.*]] = arith.cmpi slt, %[[V:.*]], %{{.*}} : i64
// NORM: %[[INVERSE:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// NORM: %[[EPOCH:.*]] = symm_mem.epoch %[[POOL]] channel %[[BLOCK:.*]]
// NORM: %[[NEXT:.*]] = arith.addi %[[EPOCH]], %{{.*}} : i32
// NORM: symm_mem.add_counter %[[POOL]] to %[[PEER:.*]] channel %[[BLOCK]]
// NORM-NEXT: symm_mem.wait_counter %[[POOL]] from %[[PEER]] channel %[[BLOCK]] reaches %[[NEXT]]
// NORM: scf.for %[[ROW:.*]] = %{{.*}} to %[[ROWS]] step
// NORM: %[[X:.*]] = scf.if %[[HELD]] -> (vector<8xbf16>) {
// NORM-NOT: llvm.store
// NORM: } else {
// NORM-NEXT: llvm.mlir.zero : vector<8xbf16>
// NORM: %[[G:.*]] = scf.if %[[HELD]] -> (vector<8xbf16>) {
// NORM-NEXT: llvm.getelementptr %[[GAMMA]][%[[V]]]
// NORM: %[[SQUARES:.*]] = scf.for {{.*}} iter_args
// NORM: llvm.store
// NORM: %[[TOTAL:.*]] = gpu.all_reduce add %[[SQUARES]] uniform
// NORM: %[[MEAN:.*]] = arith.mulf %[[TOTAL]], %[[INVERSE]] : f32
// NORM-NEXT: %[[VAR:.*]] = arith.addf %[[MEAN]], %[[EPS]] : f32
// NORM-NEXT: %[[SCALE:.*]] = llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.f"(%[[VAR]])
// NORM-NEXT: scf.if %[[HELD]] {
// NORM-NEXT: arith.extf %[[X]] : vector<8xbf16> to vector<8xf32>
// NORM-NEXT: arith.extf %[[G]] : vector<8xbf16> to vector<8xf32>
// NORM: llvm.getelementptr %[[GAMMA]]
// NORM: gpu.barrier
// NORM: symm_mem.set_epoch %[[POOL]] channel %[[BLOCK]] to %[[NEXT]]

// From 3 ranks a thread holds nothing (the loads of every peer's vector
// fill its 64 registers): each vector is stored, then reread.
// RUN: %symm-kernels --print-ir symm_all_reduce_rms_norm_bf16_staged_w4 | FileCheck %s --check-prefix=NORM4
// NORM4-LABEL: gpu.func @symm_all_reduce_rms_norm_bf16_staged_w4(
// NORM4-NOT: scf.if {{.*}} -> (vector<8xbf16>)
// NORM4: %[[SQUARES:.*]] = scf.for {{.*}} iter_args
// NORM4: llvm.store
// NORM4: gpu.all_reduce add %[[SQUARES]] uniform
// NORM4: scf.for
// NORM4: llvm.load

// Every kernel declares its block size and the blocks an SM must hold
// (ptxas bounds its registers by them: a launch cannot fail for want of
// registers, as two-shots on 4 to 8 ranks did with 158-255).
// The Lamport one-shot's blocks are 128 threads (LAMPORT_THREADS), the
// others' 512.
// RUN: ls %repo/runtime/kernels/*.ptx | grep -v lamport | xargs grep -L "^.reqntid 512, 1, 1" | count 0
// RUN: grep -L "^.reqntid 128, 1, 1" %repo/runtime/kernels/symm_one_shot_lamport_*.ptx | count 0
// RUN: ls %repo/runtime/kernels/symm_one_shot_lamport_*.ptx | count 16
// RUN: grep -L "^.minnctapersm 2" %repo/runtime/kernels/symm_one_shot_*.ptx %repo/runtime/kernels/symm_*rms_norm*.ptx | count 0
// RUN: grep -L "^.minnctapersm 1" %repo/runtime/kernels/symm_two_shot_*.ptx %repo/runtime/kernels/symm_barrier*.ptx | count 0

// An entry that is not a library kernel is an error.
// RUN: not %symm-kernels --print-ir symm_no_such_kernel 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: symm-kernels: no library kernel symm_no_such_kernel
