// Device ops without results synchronize with peers: canonicalization and
// CSE must keep every one of them, in order, even though nothing uses a
// value they produce (a wait that only read would be dead code, and a
// kernel would race past its peers).
// RUN: symm-opt %s --canonicalize --cse | FileCheck %s

gpu.module @kernels {
  // CHECK-LABEL: gpu.func @kept
  gpu.func @kept(%pool: !symm_mem.pool, %peer: index, %ch: index, %n: i32) kernel {
    // CHECK-NEXT: symm_mem.put_signal
    // CHECK-NEXT: symm_mem.wait_signal
    // CHECK-NEXT: symm_mem.barrier
    // CHECK-NEXT: symm_mem.add_counter
    // CHECK-NEXT: symm_mem.wait_counter
    // CHECK-NEXT: symm_mem.wait_counter
    // CHECK-NEXT: symm_mem.set_epoch
    // CHECK-NEXT: gpu.return
    symm_mem.put_signal %pool to %peer channel %ch
    symm_mem.wait_signal %pool from %peer channel %ch
    symm_mem.barrier %pool channel %ch
    symm_mem.add_counter %pool to %peer channel %ch
    symm_mem.wait_counter %pool from %peer channel %ch reaches %n
    symm_mem.wait_counter %pool from %peer channel %ch reaches %n
    symm_mem.set_epoch %pool channel %ch to %n
    gpu.return
  }
}
