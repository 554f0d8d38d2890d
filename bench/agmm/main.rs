//! All-gather + matmul in TFLOP/s at the anchor's shapes
//! (torch_agmm_bench.py): symm's P2P ring against one cuBLAS matmul of the
//! already gathered matrix ("mm alone"), bf16, 5 warm-up + 20 timed calls,
//! CUDA events. Checks the ring's result against that matmul.
//!
//!   symm-launch -n 2 symm-agmm-bench

use std::{process::ExitCode, time::Duration};
use symm_runtime::{
    Result,
    agmm::AllGatherMatmul,
    cuda::{self, DeviceBuffer, Event, Stream, copy_from_device, copy_to_device},
    group::Group,
    nccl::NcclComm,
    session::Session,
    symmetric::SymmetricBuffer,
};

const SHAPES: [(usize, usize, usize); 2] = [(8192, 8192, 8192), (32768, 16384, 8192)];

fn time_ms(stream: &Stream, group: &mut Group, op: &dyn Fn() -> Result<()>) -> Result<f64> {
    let (rank, world, timeout) = (group.rank(), group.world_size(), group.config.timeout);
    for _ in 0..5 {
        op()?;
    }
    stream.synchronize()?;
    group.store.barrier("agmm-bench", rank, world, timeout)?;
    let (start, end) = (Event::new()?, Event::new()?);
    start.record(stream)?;
    for _ in 0..20 {
        op()?;
    }
    end.record(stream)?;
    Ok(start.elapsed_ms(&end)? as f64 / 20.0)
}

/// Deterministic bf16 values in [-1, 1) with random mantissas: matmul
/// throughput depends on the data (low-entropy data runs at higher clocks),
/// so these behave like the anchor's `randn`.
fn fill(count: usize, seed: u64) -> Vec<u16> {
    let mut rng = symm_bench_rng(seed);
    (0..count)
        .map(|_| {
            let x = (rng() >> 40) as f32 / (1u64 << 23) as f32 * 2.0 - 1.0;
            (x.to_bits() >> 16) as u16
        })
        .collect()
}

/// xorshift64*, seeded; no dependency for one generator.
fn symm_bench_rng(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn bf16(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

fn run() -> Result<()> {
    if cuda::device_count() == 0 {
        println!("skipped: no CUDA device");
        return Ok(());
    }
    let Session {
        mut group,
        device,
        collectives,
        stream,
        ..
    } = Session::new(Group::from_env()?, Duration::from_secs(60))?;
    let (rank, world) = (group.rank(), group.world_size());
    let ring = AllGatherMatmul::new(world)?;
    let nccl = NcclComm::init(&mut group)?;
    for (big_m, k, n) in SHAPES {
        let m = big_m / world;
        let a = SymmetricBuffer::allocate(
            &mut group,
            device.ordinal,
            &format!("agmm/{big_m}"),
            m * k * 2,
        )?;
        copy_to_device(a.local(), &fill(m * k, rank as u64))?;
        let b = DeviceBuffer::from_slice(&fill(k * n, 99))?;
        let gathered = DeviceBuffer::new(big_m * k * 2)?;
        let out = DeviceBuffer::new(big_m * n * 2)?;
        let reference = DeviceBuffer::new(big_m * n * 2)?;
        device.synchronize()?;
        let flops = 2.0 * (big_m * k * n) as f64;
        let ring_op = || {
            ring.run(
                &collectives,
                &a,
                b.ptr,
                gathered.ptr,
                out.ptr,
                (m, k, n),
                &stream,
            )
        };
        let ring_ms = time_ms(&stream, &mut group, &ring_op)?;
        collectives.check_peers("all_gather_matmul")?;
        // The gathered matrix is complete once our own shard is in place.
        copy_to_device(
            gathered.ptr + (rank * m * k * 2) as u64,
            &fill(m * k, rank as u64),
        )?;
        let mm_op = || {
            ring.matmul
                .bf16(gathered.ptr, b.ptr, reference.ptr, big_m, k, n, stream.raw)
        };
        let mm_ms = time_ms(&stream, &mut group, &mm_op)?;
        stream.synchronize()?;
        // What the seed compares against: NCCL all-gather, then one matmul.
        let nccl_gathered = DeviceBuffer::new(big_m * k * 2)?;
        let nccl_out = DeviceBuffer::new(big_m * n * 2)?;
        let nccl_op = || {
            nccl.all_gather(a.local(), nccl_gathered.ptr, m * k * 2, stream.raw)?;
            ring.matmul.bf16(
                nccl_gathered.ptr,
                b.ptr,
                nccl_out.ptr,
                big_m,
                k,
                n,
                stream.raw,
            )
        };
        let nccl_ms = time_ms(&stream, &mut group, &nccl_op)?;
        stream.synchronize()?;
        let from_nccl: Vec<u16> = copy_from_device(nccl_out.ptr, big_m * n)?;
        let got: Vec<u16> = copy_from_device(out.ptr, big_m * n)?;
        let identical_to_nccl = got == from_nccl;
        let want: Vec<u16> = copy_from_device(reference.ptr, big_m * n)?;
        let worst = got
            .iter()
            .zip(&want)
            .map(|(&g, &w)| (bf16(g) - bf16(w)).abs() / bf16(w).abs().max(1.0))
            .fold(0f32, f32::max);
        if rank == 0 {
            println!(
                "{{\"M\": {big_m}, \"K\": {k}, \"N\": {n}, \"symm_ring_ag_mm_tflops\": {:.1}, \"symm_mm_only_tflops\": {:.1}, \"ring_over_mm\": {:.3}, \"max_rel_diff_vs_mm\": {worst:.2e}, \"nccl_ag_then_mm_tflops\": {:.1}, \"bit_identical_to_nccl_ag_then_mm\": {identical_to_nccl}}}",
                flops / (ring_ms * 1e-3) / 1e12,
                flops / (mm_ms * 1e-3) / 1e12,
                mm_ms / ring_ms,
                flops / (nccl_ms * 1e-3) / 1e12,
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("symm-agmm-bench: {error}");
            ExitCode::FAILURE
        }
    }
}
