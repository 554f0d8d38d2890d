// A reduce-scatter written by hand as a GPU kernel, with the symm_mem
// device ops: every rank holds M x 4096 bf16 partial sums; rank r ends up
// with the sum over ranks of rows [r*M/W, (r+1)*M/W), accumulated in f32
// in rank order. (The compiler's own collectives are built from the same
// device ops.)
//
//   symm-compile examples/custom_kernel/reduce_scatter.mlir -o reduce_scatter.o
//   c++ examples/custom_kernel/reduce_scatter.cpp reduce_scatter.o libsymm_runtime.a ...
//
// The host function copies its input into a symmetric buffer (planned into
// a pool by symm-mem-plan), gets the pool's kernel handle with
// symm_mem.pool_of, and launches the kernel; the runtime runs it on the
// caller's stream and reports a peer that never arrives as an error.
module attributes {gpu.container_module} {
  symm_mem.group @tp world_size(2)

  gpu.module @custom {
    gpu.func @reduce_scatter(%pool: !symm_mem.pool, %in: memref<2048x4096xbf16>,
                             %out: memref<1024x4096xbf16>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cols = arith.constant 4096 : index
      %rows = arith.constant 1024 : index
      %zero = arith.constant 0.0 : f32
      %rank = symm_mem.pool_rank %pool
      %world = symm_mem.pool_world_size %pool
      %block = gpu.block_id x
      %threads = gpu.block_dim x
      %blocks = gpu.grid_dim x
      %thread = gpu.thread_id x
      // Every rank's input is in place before anyone reads it.
      symm_mem.barrier %pool channel %block
      %first_row = arith.muli %rank, %rows : index
      %count = arith.muli %rows, %cols : index
      %start0 = arith.muli %block, %threads : index
      %start = arith.addi %start0, %thread : index
      %stride = arith.muli %blocks, %threads : index
      scf.for %i = %start to %count step %stride {
        %row = arith.divui %i, %cols : index
        %col = arith.remui %i, %cols : index
        %src_row = arith.addi %first_row, %row : index
        %sum = scf.for %peer = %c0 to %world step %c1 iter_args(%acc = %zero) -> f32 {
          %theirs = symm_mem.peer_view %in[%peer] in %pool : memref<2048x4096xbf16>
          %v = memref.load %theirs[%src_row, %col] : memref<2048x4096xbf16>
          %w = arith.extf %v : bf16 to f32
          %next = arith.addf %acc, %w : f32
          scf.yield %next : f32
        }
        %rounded = arith.truncf %sum : f32 to bf16
        memref.store %rounded, %out[%row, %col] : memref<1024x4096xbf16>
      }
      // No rank overwrites its input while a peer may still read it.
      symm_mem.barrier %pool channel %block
      gpu.return
    }
  }

  func.func @reduce_scatter(%x: memref<2048x4096xbf16>, %out: memref<1024x4096xbf16>) {
    %c1 = arith.constant 1 : index
    %blocks = arith.constant 132 : index
    %threads = arith.constant 512 : index
    %buf = memref.alloc() : memref<2048x4096xbf16, #symm_mem.allocator<symmetric, @tp>>
    memref.copy %x, %buf : memref<2048x4096xbf16> to memref<2048x4096xbf16, #symm_mem.allocator<symmetric, @tp>>
    %pool = symm_mem.pool_of %buf : memref<2048x4096xbf16, #symm_mem.allocator<symmetric, @tp>>
    %in = memref.memory_space_cast %buf
        : memref<2048x4096xbf16, #symm_mem.allocator<symmetric, @tp>> to memref<2048x4096xbf16>
    gpu.launch_func @custom::@reduce_scatter blocks in (%blocks, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%pool : !symm_mem.pool, %in : memref<2048x4096xbf16>, %out : memref<1024x4096xbf16>)
    memref.dealloc %buf : memref<2048x4096xbf16, #symm_mem.allocator<symmetric, @tp>>
    return
  }
}
