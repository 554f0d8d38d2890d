// Every symm_mem device op lowered to llvm, nvvm and scf ops: descriptor
// words by their index (symm/Protocol.h), loaded once at the kernel's
// entry; the signal protocol's single PTX instructions; and the pool in
// kernel signatures and launches.
// RUN: symm-opt %s --convert-symm-mem-to-nvvm | FileCheck %s

module attributes {gpu.container_module} {
gpu.module @kernels {
  // CHECK-LABEL: gpu.func @rank_and_world
  // CHECK-SAME: (%[[POOL:.*]]: !llvm.ptr)
  gpu.func @rank_and_world(%pool: !symm_mem.pool) kernel {
    // CHECK: %[[AT:.*]] = llvm.getelementptr %[[POOL]][5] : (!llvm.ptr) -> !llvm.ptr, i64
    // CHECK: llvm.load %[[AT]] invariant {alignment = 8 : i64} : !llvm.ptr -> i64
    %rank = symm_mem.pool_rank %pool
    // CHECK: %[[W:.*]] = llvm.getelementptr %[[POOL]][6] : (!llvm.ptr) -> !llvm.ptr, i64
    // CHECK: llvm.load %[[W]] invariant
    %world = symm_mem.pool_world_size %pool
    gpu.return
  }

  // CHECK-LABEL: gpu.func @peer_ptr
  // CHECK-SAME: (%[[POOL:.*]]: !llvm.ptr, %[[LOCAL:.*]]: !llvm.ptr, %[[PEER_IDX:.*]]: index)
  gpu.func @peer_ptr(%pool: !symm_mem.pool, %local: !llvm.ptr, %peer: index) kernel {
    // CHECK-NEXT: %[[RANK_AT:.*]] = llvm.getelementptr %[[POOL]][5]
    // CHECK-NEXT: %[[RANK:.*]] = llvm.load %[[RANK_AT]]
    // CHECK-NEXT: %[[BASES_AT:.*]] = llvm.getelementptr %[[POOL]][0]
    // CHECK-NEXT: %[[BASES:.*]] = llvm.load %[[BASES_AT]] invariant {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
    // CHECK-NEXT: %[[PEER:.*]] = builtin.unrealized_conversion_cast %[[PEER_IDX]] : index to i64
    // CHECK: %[[OWN_AT:.*]] = llvm.getelementptr %[[BASES]][%[[RANK]]]
    // CHECK: %[[OWN:.*]] = llvm.load %[[OWN_AT]]
    // CHECK: %[[L:.*]] = llvm.ptrtoint %[[LOCAL]] : !llvm.ptr to i64
    // CHECK: %[[O:.*]] = llvm.ptrtoint %[[OWN]] : !llvm.ptr to i64
    // CHECK: %[[OFFSET:.*]] = llvm.sub %[[L]], %[[O]] : i64
    // CHECK: %[[THEIRS_AT:.*]] = llvm.getelementptr %{{.*}}[%[[PEER]]]
    // CHECK: %[[THEIRS:.*]] = llvm.load %[[THEIRS_AT]]
    // CHECK: llvm.getelementptr %[[THEIRS]][%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %p = symm_mem.peer_ptr %pool[%peer], %local : !llvm.ptr
    gpu.return
  }

  // CHECK-LABEL: gpu.func @peer_view
  gpu.func @peer_view(%pool: !symm_mem.pool, %buf: memref<?xbf16>, %peer: index) kernel {
    // CHECK: %[[DESC:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<?xbf16> to !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    // CHECK: %[[ALLOC:.*]] = llvm.extractvalue %[[DESC]][0]
    // CHECK: llvm.ptrtoint %[[ALLOC]]
    // CHECK: %[[A:.*]] = llvm.insertvalue %{{.*}}, %[[DESC]][0]
    // CHECK: %[[ALIGNED:.*]] = llvm.extractvalue %[[A]][1]
    // CHECK: llvm.ptrtoint %[[ALIGNED]]
    // CHECK: %[[V:.*]] = llvm.insertvalue %{{.*}}, %[[A]][1]
    // CHECK: %[[VIEW:.*]] = builtin.unrealized_conversion_cast %[[V]] : {{.*}} to memref<?xbf16>
    // CHECK: memref.load %[[VIEW]]
    %view = symm_mem.peer_view %buf[%peer] in %pool : memref<?xbf16>
    %c0 = arith.constant 0 : index
    %x = memref.load %view[%c0] : memref<?xbf16>
    gpu.return
  }

  // CHECK-LABEL: gpu.func @staging_slot
  gpu.func @staging_slot(%pool: !symm_mem.pool, %peer: index, %slot: index) kernel {
    // CHECK: %[[OFF_AT:.*]] = llvm.getelementptr %{{.*}}[2]
    // CHECK: %[[STAGING:.*]] = llvm.load %[[OFF_AT]]
    // CHECK: %[[SLOT_AT:.*]] = llvm.getelementptr %{{.*}}[3]
    // CHECK: %[[BYTES:.*]] = llvm.load %[[SLOT_AT]]
    // CHECK: %[[SKIP:.*]] = llvm.mul %{{.*}}, %[[BYTES]] : i64
    // CHECK: %[[OFFSET:.*]] = llvm.add %[[STAGING]], %[[SKIP]] : i64
    // CHECK: llvm.getelementptr %{{.*}}[%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %s = symm_mem.staging_slot %pool[%peer] slot %slot
    gpu.return
  }

  // Region (slot, source) of a rank's Lamport area: the area's offset
  // (word 9) plus (slot * world + source) regions of word 10's bytes.
  // CHECK-LABEL: gpu.func @lamport_region
  gpu.func @lamport_region(%pool: !symm_mem.pool, %peer: index, %slot: index, %source: index) kernel {
    // CHECK: %[[WORLD_AT:.*]] = llvm.getelementptr %{{.*}}[6]
    // CHECK: %[[WORLD:.*]] = llvm.load %[[WORLD_AT]]
    // CHECK: %[[AREA_AT:.*]] = llvm.getelementptr %{{.*}}[9]
    // CHECK: %[[AREA:.*]] = llvm.load %[[AREA_AT]]
    // CHECK: %[[REGION_AT:.*]] = llvm.getelementptr %{{.*}}[10]
    // CHECK: %[[REGION:.*]] = llvm.load %[[REGION_AT]]
    // CHECK: %[[ROW:.*]] = llvm.mul %{{.*}}, %[[WORLD]] : i64
    // CHECK: %[[INDEX:.*]] = llvm.add %[[ROW]], %{{.*}} : i64
    // CHECK: %[[SKIP:.*]] = llvm.mul %[[INDEX]], %[[REGION]] : i64
    // CHECK: %[[OFFSET:.*]] = llvm.add %[[AREA]], %[[SKIP]] : i64
    // CHECK: llvm.getelementptr %{{.*}}[%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %r = symm_mem.lamport_region %pool[%peer] slot %slot from %source
    gpu.return
  }

  // A volatile load, again until no lane is the sentinel (0x8000), under
  // the pool's timeout; the value of the attempt that saw every lane.
  // CHECK-LABEL: gpu.func @lamport_wait
  // CHECK-SAME: (%{{[^:]*}}: !llvm.ptr, %[[AT:[^:]*]]: !llvm.ptr
  gpu.func @lamport_wait(%pool: !symm_mem.pool, %at: !llvm.ptr, %out: !llvm.ptr) kernel {
    // CHECK: %[[START:.*]] = nvvm.read.ptx.sreg.globaltimer : i64
    // CHECK: %[[POISON:.*]] = llvm.mlir.poison : vector<8xbf16>
    // CHECK: %[[GOT:.*]] = scf.while (%{{.*}} = %[[POISON]]) : (vector<8xbf16>) -> vector<8xbf16> {
    // CHECK: %[[V:.*]] = llvm.load volatile %[[AT]] {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
    // CHECK: %[[BITS:.*]] = llvm.bitcast %[[V]] : vector<8xbf16> to vector<8xi16>
    // CHECK: %[[SENTINEL:.*]] = llvm.mlir.constant(dense<-32768> : vector<8xi16>) : vector<8xi16>
    // CHECK: %[[LANES:.*]] = llvm.icmp "eq" %[[BITS]], %[[SENTINEL]] : vector<8xi16>
    // CHECK: %[[WAITING:.*]] = "llvm.intr.vector.reduce.or"(%[[LANES]]) : (vector<8xi1>) -> i1
    // CHECK: %[[ARRIVED:.*]] = llvm.xor %[[WAITING]], %{{.*}} : i1
    // CHECK: scf.if %[[ARRIVED]] -> (i1)
    // CHECK: nvvm.read.ptx.sreg.globaltimer
    // CHECK: scf.condition(%{{.*}}) %[[V]] : vector<8xbf16>
    // CHECK: llvm.store %[[GOT]], %{{.*}} : vector<8xbf16>, !llvm.ptr
    %v = symm_mem.lamport_wait %pool, %at : vector<8xbf16>
    llvm.store %v, %out : vector<8xbf16>, !llvm.ptr
    gpu.return
  }

  // CHECK-LABEL: gpu.func @signals
  gpu.func @signals(%pool: !symm_mem.pool, %peer: index, %ch: index) kernel {
    // Rank, pad table, timeout and error flag, once, at the entry.
    // CHECK-NEXT: %[[RANK_AT:.*]] = llvm.getelementptr %[[SPOOL:.*]][5]
    // CHECK-NEXT: %[[RANK:.*]] = llvm.load %[[RANK_AT]]
    // CHECK-NEXT: %[[PADS_AT:.*]] = llvm.getelementptr %[[SPOOL]][1]
    // CHECK-NEXT: %[[PADS:.*]] = llvm.load %[[PADS_AT]]
    // CHECK-NEXT: %[[TIMEOUT_AT:.*]] = llvm.getelementptr %[[SPOOL]][7]
    // CHECK-NEXT: %[[TIMEOUT:.*]] = llvm.load %[[TIMEOUT_AT]]
    // CHECK-NEXT: %[[FLAG_AT:.*]] = llvm.getelementptr %[[SPOOL]][8]
    // CHECK-NEXT: %[[FLAG:.*]] = llvm.load %[[FLAG_AT]]
    // The put: slot (channel, me) = channel * 8 + rank in the peer's pad.
    // CHECK: %[[PEER_PAD_AT:.*]] = llvm.getelementptr %[[PADS]][%{{.*}}]
    // CHECK: %[[ROW:.*]] = llvm.mul %{{.*}}, %{{.*}} : i64
    // CHECK: %[[IDX:.*]] = llvm.add %[[ROW]], %[[RANK]] : i64
    // CHECK: %[[PUT:.*]] = llvm.getelementptr %{{.*}}[%[[IDX]]] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    // CHECK: %[[START:.*]] = nvvm.read.ptx.sreg.globaltimer : i64
    // CHECK: scf.while
    // CHECK: %[[OLD:.*]] = llvm.inline_asm has_side_effects "atom.release.sys.global.cas.b32 $0, [$1], $2, $3;", "=r,l,r,r,~{memory}" %[[PUT]]
    // CHECK: %[[DONE:.*]] = llvm.icmp "eq" %[[OLD]]
    // The clock is read only after a failed attempt.
    // CHECK-NEXT: %[[LATENESS:.*]] = scf.if %[[DONE]] -> (i1) {
    // CHECK-NEXT: %[[NO:.*]] = llvm.mlir.constant(false) : i1
    // CHECK-NEXT: scf.yield %[[NO]] : i1
    // CHECK-NEXT: } else {
    // CHECK-NEXT: %[[NOW:.*]] = nvvm.read.ptx.sreg.globaltimer
    // CHECK-NEXT: %[[SPENT:.*]] = llvm.sub %[[NOW]], %[[START]]
    // CHECK-NEXT: %[[LATE:.*]] = llvm.icmp "ugt" %[[SPENT]], %[[TIMEOUT]]
    // CHECK-NEXT: scf.if %[[LATE]]
    // CHECK: llvm.store %{{.*}}, %[[FLAG]] : i32, !llvm.ptr
    // CHECK: scf.yield %[[LATE]] : i1
    // CHECK: llvm.or %[[DONE]], %[[LATENESS]]
    // CHECK: scf.condition
    symm_mem.put_signal %pool to %peer channel %ch
    // CHECK: llvm.inline_asm has_side_effects "atom.acquire.sys.global.cas.b32 $0, [$1], $2, $3;"
    symm_mem.wait_signal %pool from %peer channel %ch
    // The counter half starts CAS_BYTES (8448) into a pad.
    // CHECK: %[[CB:.*]] = llvm.mlir.constant(8448 : i64) : i64
    // CHECK: llvm.getelementptr %{{.*}}[%[[CB]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    // CHECK: llvm.inline_asm has_side_effects "red.release.sys.global.add.u32 [$0], 1;", "l,~{memory}"
    symm_mem.add_counter %pool to %peer channel %ch
    gpu.return
  }

  // CHECK-LABEL: gpu.func @barrier
  gpu.func @barrier(%pool: !symm_mem.pool, %ch: index) kernel {
    // CHECK: %[[WORLD_AT:.*]] = llvm.getelementptr %{{.*}}[6]
    // CHECK: %[[WORLD:.*]] = llvm.load %[[WORLD_AT]]
    // CHECK: nvvm.barrier0
    // CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
    // CHECK: %[[T:.*]] = llvm.zext %[[TID]] : i32 to i64
    // CHECK: %[[LANE:.*]] = llvm.icmp "ult" %[[T]], %[[WORLD]] : i64
    // CHECK: scf.if %[[LANE]]
    // CHECK: atom.release.sys.global.cas.b32
    // CHECK: atom.acquire.sys.global.cas.b32
    // CHECK: nvvm.barrier0
    // CHECK-NEXT: gpu.return
    symm_mem.barrier %pool channel %ch
    gpu.return
  }

  // CHECK-LABEL: gpu.func @counters_and_epochs
  gpu.func @counters_and_epochs(%pool: !symm_mem.pool, %peer: index, %ch: index) kernel {
    // CHECK: %[[EPOCHS_AT:.*]] = llvm.getelementptr %{{.*}}[4]
    // CHECK: %[[EPOCHS:.*]] = llvm.load %[[EPOCHS_AT]]
    // CHECK: %[[MINE:.*]] = llvm.getelementptr %[[EPOCHS]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    // CHECK: %[[E:.*]] = llvm.load %[[MINE]] : !llvm.ptr -> i32
    %e = symm_mem.epoch %pool channel %ch
    // CHECK: scf.while
    // CHECK: %[[SEEN:.*]] = llvm.inline_asm has_side_effects "ld.acquire.sys.global.u32 $0, [$1];", "=r,l,~{memory}"
    // CHECK: %[[AHEAD:.*]] = llvm.sub %[[SEEN]], %[[E]] : i32
    // CHECK: llvm.icmp "sge" %[[AHEAD]]
    symm_mem.wait_counter %pool from %peer channel %ch reaches %e
    // CHECK: llvm.store %[[E]], %{{.*}} : i32, !llvm.ptr
    symm_mem.set_epoch %pool channel %ch to %e
    gpu.return
  }

  // A device function that takes a pool: its signature converts too.
  // CHECK-LABEL: func.func @helper
  // CHECK-SAME: (%{{.*}}: !llvm.ptr) -> index
  func.func @helper(%pool: !symm_mem.pool) -> index {
    %r = symm_mem.pool_rank %pool
    return %r : index
  }
  // CHECK-LABEL: gpu.func @calls_helper
  // CHECK: call @helper(%{{.*}}) : (!llvm.ptr) -> index
  gpu.func @calls_helper(%pool: !symm_mem.pool) kernel {
    %r = func.call @helper(%pool) : (!symm_mem.pool) -> index
    gpu.return
  }
}

// The host passes the descriptor pointer where it passed the pool.
// CHECK-LABEL: func.func @host
// CHECK-SAME: (%[[D:.*]]: !llvm.ptr)
// CHECK: gpu.launch_func @kernels::@rank_and_world {{.*}} args(%[[D]] : !llvm.ptr)
func.func @host(%d: !llvm.ptr) {
  %pool = builtin.unrealized_conversion_cast %d : !llvm.ptr to !symm_mem.pool
  %c1 = arith.constant 1 : index
  gpu.launch_func @kernels::@rank_and_world blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%pool : !symm_mem.pool)
  return
}
}
