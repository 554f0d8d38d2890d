//! A Rust program linking the object symm-compile made from
//! examples/tp_mlp.mlir: every rank runs its shard of a 2-layer
//! tensor-parallel MLP and checks the result against the unsharded model.
//! The Rust twin of examples/cpp/tp_mlp.cpp.
//!
//!   cargo build --release -p symm-examples   # build.rs compiles examples/tp_mlp.mlir
//!   symm-launch -n 2 target/release/tp_mlp
//!
//! (test/Integration/tp_mlp_rust.mlir builds it with rustc against the
//! runtime's rlib instead, the same link as cargo's.)

use std::{ffi::c_void, process::ExitCode, time::Instant};
use symm_runtime::{
    Error, Result,
    cuda::{self, DeviceBuffer},
    session::Session,
};

const M: usize = 64;
const D: usize = 256;
const F: usize = 1024;
const LAYERS: usize = 2;

/// From tp_mlp.o (build.rs compiles examples/tp_mlp.mlir; symm-compile
/// writes these declarations beside the C header, tp_mlp.h): the runtime
/// handle (a `Session`, opaque to C), then x, (w1 shard, w2 shard, bias)
/// per layer, out; f32, row-major.
mod layer {
    include!(concat!(env!("OUT_DIR"), "/tp_mlp.rs"));
}

/// The same pseudo-random values on every rank (and in the C++ example).
fn value(seed: u64, index: u64, scale: f32) -> f32 {
    let mut x = (seed + 1)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(index.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 29;
    scale * ((x % 2001) as f32 / 1000.0 - 1.0)
}

struct Layer {
    w1: Vec<f32>,
    w2: Vec<f32>,
    b: Vec<f32>,
}

fn layers() -> Vec<Layer> {
    (0..LAYERS as u64)
        .map(|l| Layer {
            w1: (0..(D * F) as u64)
                .map(|i| value(10 + l, i, 0.06))
                .collect(),
            w2: (0..(F * D) as u64)
                .map(|i| value(20 + l, i, 0.03))
                .collect(),
            b: (0..D as u64).map(|i| value(30 + l, i, 0.5)).collect(),
        })
        .collect()
}

/// The unsharded model in f64: x = x + relu(x w1) w2 + b per layer.
fn reference(x: &[f32], layers: &[Layer]) -> Vec<f64> {
    let mut cur: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    for layer in layers {
        let mut h = vec![0.0f64; M * F];
        for i in 0..M {
            for k in 0..D {
                let a = cur[i * D + k];
                for j in 0..F {
                    h[i * F + j] += a * f64::from(layer.w1[k * F + j]);
                }
            }
        }
        h.iter_mut().for_each(|v| *v = v.max(0.0));
        let mut next = vec![0.0f64; M * D];
        for i in 0..M {
            for k in 0..F {
                let a = h[i * F + k];
                for j in 0..D {
                    next[i * D + j] += a * f64::from(layer.w2[k * D + j]);
                }
            }
            for j in 0..D {
                next[i * D + j] += f64::from(layer.b[j]) + cur[i * D + j];
            }
        }
        cur = next;
    }
    cur
}

fn run() -> Result<bool> {
    if cuda::device_count() == 0 {
        println!("skipped: no CUDA device");
        return Ok(true);
    }
    let mut session = Session::from_env()?;
    let (rank, world) = (session.group.rank(), session.group.world_size());
    if !F.is_multiple_of(world) {
        return Err(Error::InvalidArgument(format!(
            "{F} hidden units do not split over {world} ranks"
        )));
    }
    let shard = F / world;
    let x: Vec<f32> = (0..(M * D) as u64).map(|i| value(0, i, 1.0)).collect();
    let layers = layers();

    // This rank's shards: w1 columns and w2 rows [rank*shard, (rank+1)*shard).
    let mut weights = Vec::new();
    for layer in &layers {
        let w1: Vec<f32> = (0..D)
            .flat_map(|r| &layer.w1[r * F + rank * shard..r * F + (rank + 1) * shard])
            .copied()
            .collect();
        let w2 = layer.w2[rank * shard * D..(rank + 1) * shard * D].to_vec();
        weights.push([
            DeviceBuffer::from_slice(&w1)?,
            DeviceBuffer::from_slice(&w2)?,
            DeviceBuffer::from_slice(&layer.b)?,
        ]);
    }
    let dx = DeviceBuffer::from_slice(&x)?;
    let dout = DeviceBuffer::from_slice(&vec![0.0f32; M * D])?;
    let p = |buffer: &DeviceBuffer| buffer.ptr as *mut f32;
    let runtime = (&mut session as *mut Session).cast::<c_void>();
    let call = || {
        // SAFETY: the arguments match tp_mlp.h: the live runtime handle and
        // device buffers of the declared shapes, alive across the call.
        unsafe {
            layer::tp_mlp(
                runtime,
                p(&dx),
                p(&weights[0][0]),
                p(&weights[0][1]),
                p(&weights[0][2]),
                p(&weights[1][0]),
                p(&weights[1][1]),
                p(&weights[1][2]),
                p(&dout),
            )
        }
    };
    call();
    let out: Vec<f32> = dout.read(M * D)?;

    let expected = reference(&x, &layers);
    let worst = out
        .iter()
        .zip(&expected)
        .map(|(&a, &b)| (f64::from(a) - b).abs())
        .fold(0.0, f64::max);
    let scale = expected.iter().map(|v| v.abs()).fold(0.0, f64::max);
    let tolerance = 1e-5 * scale;
    let pass = worst <= tolerance;

    let iterations = 200;
    let start = Instant::now();
    for _ in 0..iterations {
        call();
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / f64::from(iterations);
    println!(
        "[rank {rank}/{world}] {} tp_mlp (Rust): {LAYERS} layers of {M}x{D} @ {D}x{F} (shard {shard}), \
         max |error| {worst:.3e} (tolerance {tolerance:.3e}), {us:.1} us per call",
        if pass { "PASS" } else { "FAIL" }
    );
    Ok(pass)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("tp_mlp: {error}");
            ExitCode::FAILURE
        }
    }
}
