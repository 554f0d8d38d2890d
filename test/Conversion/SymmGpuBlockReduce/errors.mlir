// RUN: symm-opt %s --pass-pipeline='builtin.module(symm-gpu-block-reduce)' -split-input-file -verify-diagnostics

// A kernel that does not say its block size: the reduction cannot know its
// warps.
gpu.module @unknown {
  gpu.func @k(%x: f32) kernel {
    // expected-error @+1 {{gpu.all_reduce in a kernel of unknown block size}}
    %s = gpu.all_reduce add %x uniform {} : (f32) -> f32
    gpu.return
  }
}

// -----

// A block of part of a warp.
gpu.module @partial {
  gpu.func @k(%x: f32) kernel attributes {known_block_size = array<i32: 48, 1, 1>} {
    // expected-error @+1 {{gpu.all_reduce in a kernel of 48 threads a block: the block reduction needs whole warps, 32 to 1024 threads}}
    %s = gpu.all_reduce add %x uniform {} : (f32) -> f32
    gpu.return
  }
}

// -----

// An operation the block reduction does not combine.
gpu.module @mul {
  gpu.func @k(%x: f32) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    // expected-error @+1 {{the block reduction takes `add`, `maxnumf`, `minnumf`, `maximumf` or `minimumf`}}
    %s = gpu.all_reduce mul %x uniform {} : (f32) -> f32
    gpu.return
  }
}

// -----

// A reduction given as a region.
gpu.module @region {
  gpu.func @k(%x: f32) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    // expected-error @+1 {{not a region or another operation}}
    %s = gpu.all_reduce %x uniform {
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      gpu.yield %c : f32
    } : (f32) -> f32
    gpu.return
  }
}

// -----

// An integer sum.
gpu.module @integer {
  gpu.func @k(%x: i32) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    // expected-error @+1 {{gpu.all_reduce of i32: the block reduction takes f32 or f64}}
    %s = gpu.all_reduce add %x uniform {} : (i32) -> i32
    gpu.return
  }
}

// -----

// Not every thread reaches it.
gpu.module @divergent {
  gpu.func @k(%x: f32) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    // expected-error @+1 {{gpu.all_reduce without `uniform`}}
    %s = gpu.all_reduce add %x {} : (f32) -> f32
    gpu.return
  }
}

// -----

// Inside a launch that was never outlined.
func.func @host(%x: f32) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{gpu.all_reduce outside a gpu.func: outline its kernel first}}
    %s = gpu.all_reduce add %x uniform {} : (f32) -> f32
    gpu.terminator
  }
  return
}
