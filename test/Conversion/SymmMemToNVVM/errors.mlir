// What convert-symm-mem-to-nvvm refuses, at the op.
// RUN: symm-opt %s --convert-symm-mem-to-nvvm -split-input-file -verify-diagnostics

gpu.module @kernels {
  gpu.func @select_pool(%a: !symm_mem.pool, %b: !symm_mem.pool, %c: i1) kernel {
    // expected-error@+1 {{'arith.select' op carries a !symm_mem.pool; only symm_mem device ops, kernel and function arguments, calls and launches may: use the pool itself where it is needed}}
    %p = arith.select %c, %a, %b : !symm_mem.pool
    %r = symm_mem.pool_rank %p
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @pool_through_if(%a: !symm_mem.pool, %c: i1) kernel {
    // expected-error@+1 {{'scf.if' op carries a !symm_mem.pool}}
    %p = scf.if %c -> !symm_mem.pool {
      scf.yield %a : !symm_mem.pool
    } else {
      scf.yield %a : !symm_mem.pool
    }
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @pool_in_loop(%a: !symm_mem.pool, %n: index) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // expected-error@+1 {{'scf.for' op carries a !symm_mem.pool}}
    %p = scf.for %i = %c0 to %n step %c1 iter_args(%q = %a) -> !symm_mem.pool {
      scf.yield %q : !symm_mem.pool
    }
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @peer_view_not_strided(%pool: !symm_mem.pool, %buf: memref<8xf32, affine_map<(d0) -> (d0 floordiv 2)>>, %peer: index) kernel {
    // expected-error@+1 {{'symm_mem.peer_view' op needs a memref with a strided layout, got 'memref<8xf32, affine_map<(d0) -> (d0 floordiv 2)>>'}}
    %v = symm_mem.peer_view %buf[%peer] in %pool : memref<8xf32, affine_map<(d0) -> (d0 floordiv 2)>>
    gpu.return
  }
}
