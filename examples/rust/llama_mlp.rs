//! A Rust program linking the object symm-compile made from
//! examples/llama_mlp.mlir (a Llama-3-8B MLP block, bf16, 2-way tensor
//! parallel, any token count up to 2048): it loads the weights
//! bench/model/reference.py wrote, and for each token count checks the
//! output against that script's f32 reference, checks that 8 layers
//! enqueued on the asynchronous entry point with one synchronize equal 8
//! synchronizing calls bit for bit, and times both. The Rust twin of
//! examples/cpp/llama_mlp.cpp.
//!
//!   cargo build --release -p symm-examples   # build.rs compiles examples/llama_mlp.mlir
//!   symm-launch -n 2 target/release/llama_mlp DIR [M,...]
//!
//! (test/Integration/llama_mlp_rust.mlir builds it with rustc against the
//! runtime's rlib, the same link as cargo's.)

use std::{ffi::c_void, process::ExitCode, time::Instant};
use symm_runtime::{
    Error, Result,
    cuda::{self, DeviceBuffer},
    session::Session,
};

const D: usize = 4096;
const F: usize = 14336;
const MAX_TOKENS: usize = 2048;
const LAYERS: usize = 8;

/// From llama_mlp.o (build.rs compiles examples/llama_mlp.mlir; symm-compile
/// writes these declarations beside the C header, llama_mlp.h): the runtime
/// handle (a `Session`), the token count, x, the RMSNorm weight, this
/// rank's gate, up and down shards, out; bf16 as u16, row-major. The
/// `_async` form enqueues on `stream` (null: the runtime's) without waiting
/// and returns 0, or -1 when the call failed (`Session::compiled_status`
/// says why).
mod layer {
    include!(concat!(env!("OUT_DIR"), "/llama_mlp.rs"));
}

fn read<T: Copy + Default>(path: &str, count: usize, offset: usize) -> Result<Vec<T>> {
    let bytes = std::fs::read(path).map_err(|e| {
        Error::InvalidArgument(format!(
            "{path}: {e} (make it with bench/model/reference.py)"
        ))
    })?;
    let size = std::mem::size_of::<T>();
    let wanted = (offset + count) * size;
    if bytes.len() < wanted {
        return Err(Error::InvalidArgument(format!(
            "{path}: {} bytes, {wanted} needed",
            bytes.len()
        )));
    }
    let mut values = vec![T::default(); count];
    // SAFETY: plain-data T; `values` has room for `count` of them and the
    // file for offset + count.
    unsafe {
        std::ptr::copy_nonoverlapping(
            bytes[offset * size..].as_ptr(),
            values.as_mut_ptr().cast::<u8>(),
            count * size,
        );
    }
    Ok(values)
}

fn bf16(v: u16) -> f64 {
    f64::from(f32::from_bits(u32::from(v) << 16))
}

/// The tolerances of examples/cpp/llama_common.h: each element within 2^-6
/// of its magnitude plus 2^-6 of the reference's RMS, relative L2 below
/// 1e-2, the layer's own part (output minus residual) below 2e-2.
fn check(got: &[u16], want: &[f32], residual: &[u16]) -> (bool, f64, f64) {
    let sq: f64 = want.iter().map(|&w| f64::from(w).powi(2)).sum();
    let rms = (sq / want.len() as f64).sqrt();
    let (mut err, mut dsq, mut derr, mut elementwise) = (0.0, 0.0, 0.0, true);
    for ((&g, &w), &r) in got.iter().zip(want).zip(residual) {
        let (g, w, r) = (bf16(g), f64::from(w), bf16(r));
        let e = (g - w).abs();
        elementwise &= e <= w.abs() / 64.0 + rms / 64.0;
        err += e * e;
        dsq += (w - r).powi(2);
        derr += ((g - r) - (w - r)).powi(2);
    }
    let (rel, delta) = ((err / sq).sqrt(), (derr / dsq).sqrt());
    (elementwise && rel < 1e-2 && delta < 2e-2, rel, delta)
}

fn run() -> Result<bool> {
    if cuda::device_count() == 0 {
        println!("skipped: no CUDA device");
        return Ok(true);
    }
    let mut session = Session::from_env()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args
        .first()
        .ok_or_else(|| Error::InvalidArgument("usage: llama_mlp DIR [M,...]".into()))?;
    let counts: Vec<usize> = match args.get(1) {
        Some(list) => list
            .split(',')
            .map(|m| {
                m.parse()
                    .map_err(|_| Error::InvalidArgument(format!("'{m}' is no token count")))
            })
            .collect::<Result<_>>()?,
        None => vec![1, 16, 128, 2048],
    };
    let (rank, world) = (session.group.rank(), session.group.world_size());
    let shard = F / world;
    let file = |name: &str| format!("{dir}/{name}");
    let x: Vec<u16> = read(&file("x.bin"), MAX_TOKENS * D, 0)?;
    let columns = |full: Vec<u16>| -> Vec<u16> {
        (0..D)
            .flat_map(|r| full[r * F + rank * shard..r * F + (rank + 1) * shard].to_vec())
            .collect()
    };
    let gate = DeviceBuffer::from_slice(&columns(read(&file("w_gate.bin"), D * F, 0)?))?;
    let up = DeviceBuffer::from_slice(&columns(read(&file("w_up.bin"), D * F, 0)?))?;
    let down: Vec<u16> = read(&file("w_down.bin"), shard * D, rank * shard * D)?;
    let down = DeviceBuffer::from_slice(&down)?;
    let norm = DeviceBuffer::from_slice(&read::<u16>(&file("norm_weight.bin"), D, 0)?)?;
    let dx = DeviceBuffer::from_slice(&x)?;
    let out = DeviceBuffer::new(MAX_TOKENS * D * 2)?;
    let p = |buffer: &DeviceBuffer| buffer.ptr as *mut u16;
    let runtime = (&mut session as *mut Session).cast::<c_void>();
    // SAFETY (both): the arguments match llama_mlp.h: the live runtime
    // handle, the token count, and device buffers of at least that many rows.
    let layer = |m: usize, input: *mut u16, output: *mut u16| unsafe {
        layer::llama_mlp(
            runtime,
            m as i64,
            input,
            p(&norm),
            p(&gate),
            p(&up),
            p(&down),
            output,
        )
    };
    let layer_async = |m: usize, input: *mut u16, output: *mut u16| -> Result<()> {
        let status = unsafe {
            layer::llama_mlp_async(
                runtime,
                std::ptr::null_mut(),
                m as i64,
                input,
                p(&norm),
                p(&gate),
                p(&up),
                p(&down),
                output,
            )
        };
        if status == 0 {
            return Ok(());
        }
        // SAFETY: the session outlives the calls; nothing else uses it now.
        unsafe { &mut *runtime.cast::<Session>() }.compiled_status()
    };
    let synchronize = || -> Result<()> {
        // SAFETY: as above.
        unsafe { &mut *runtime.cast::<Session>() }.synchronize_compiled(std::ptr::null_mut())
    };

    let mut pass = true;
    for m in counts {
        if !(1..=MAX_TOKENS).contains(&m) {
            return Err(Error::InvalidArgument(format!(
                "{m} tokens: the example takes 1 to {MAX_TOKENS}"
            )));
        }
        layer(m, p(&dx), p(&out));
        let want: Vec<f32> = read(&file(&format!("mlp_ref_m{m}.bin")), m * D, 0)?;
        let (ok, rel, delta) = check(&out.read::<u16>(m * D)?, &want, &x[..m * D]);
        println!(
            "{} llama_mlp (Rust) M={m}: rel L2 {rel:.3e}, layer part rel L2 {delta:.3e}",
            if ok { "PASS" } else { "FAIL" }
        );
        pass &= ok;

        let chain = |asynchronous: bool| -> Result<Vec<Vec<u16>>> {
            let buffers: Vec<DeviceBuffer> = (0..LAYERS)
                .map(|_| DeviceBuffer::new(m * D * 2))
                .collect::<Result<_>>()?;
            for i in 0..LAYERS {
                let input = if i == 0 { p(&dx) } else { p(&buffers[i - 1]) };
                if asynchronous {
                    layer_async(m, input, p(&buffers[i]))?;
                } else {
                    layer(m, input, p(&buffers[i]));
                }
            }
            synchronize()?;
            buffers.iter().map(|b| b.read::<u16>(m * D)).collect()
        };
        let identical = chain(false)? == chain(true)?;
        println!(
            "{} llama_mlp (Rust) M={m} async chain: {LAYERS} layers with one synchronize {} \
             {LAYERS} synchronizing calls bit for bit",
            if identical { "PASS" } else { "FAIL" },
            if identical { "equal" } else { "DIFFER from" }
        );
        pass &= identical;

        let iterations = 50;
        let start = Instant::now();
        for _ in 0..iterations {
            layer(m, p(&dx), p(&out));
        }
        let sync_us = start.elapsed().as_secs_f64() * 1e6 / f64::from(iterations);
        let start = Instant::now();
        for _ in 0..iterations {
            layer_async(m, p(&dx), p(&out))?;
        }
        synchronize()?;
        let async_us = start.elapsed().as_secs_f64() * 1e6 / f64::from(iterations);
        println!(
            "TIME llama_mlp (Rust) M={m}: {sync_us:.1} us per call synchronizing, \
             {async_us:.1} us per call enqueued back to back"
        );
    }
    Ok(pass)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("llama_mlp: {error}");
            ExitCode::FAILURE
        }
    }
}
