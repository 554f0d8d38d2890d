//! `bench/allreduce`: symm's signal-pad all-reduce against the anchors'
//! sizes and method (torch_allreduce_bench.py): bf16 sum, 200 timed
//! iterations after 50 warm-up, eager and in a CUDA graph of 10 calls
//! replayed 20 times, timed with CUDA events; and `marginal`: what one
//! more all-reduce adds to a graph (11 calls against 1), the compiled
//! all-reduce benchmark's measure; `one_shot_chain_marginal` is the same
//! for a chain whose calls alternate between two symmetric buffers (each
//! call's output is the next one's input), as the compiled benchmark's
//! program runs them. One JSON line per size on rank 0.
//! `SYMM_BENCH_NUMELS=a,b,...` times those element counts instead, in that
//! order.
//!
//!   symm-launch -n 2 symm-allreduce-bench

use std::{process::ExitCode, time::Duration};
use symm_runtime::{
    Result,
    cuda::{self, DeviceBuffer, Event, Graph, Stream, copy_to_device},
    group::Group,
    library::{Algorithm, Dtype, ReduceOp},
    session::Session,
    symmetric::SymmetricBuffer,
};

const ITERS: usize = 200;
const WARMUP: usize = 50;
const NUMELS: [usize; 7] = [64, 4096, 65536, 262144, 1048576, 4194304, 16777216];

/// Microseconds per call of `op`: eagerly, or as replays of a CUDA graph
/// of 10 calls (which includes a tenth of a graph launch).
fn time_us(
    stream: &Stream,
    group: &mut Group,
    graph: bool,
    op: &dyn Fn() -> Result<()>,
) -> Result<f64> {
    if graph {
        return Ok(replay_us(stream, group, 10, op)? / 10.0);
    }
    time_loop(stream, group, WARMUP + 1, ITERS, op)
}

/// What one more call costs inside a graph: replays of a graph of 11
/// calls against one of 1, per call added. The compiled all-reduce's
/// benchmark (bench/compiled) reports this, so the two compare.
fn marginal_us(stream: &Stream, group: &mut Group, op: &dyn Fn() -> Result<()>) -> Result<f64> {
    let one = replay_us(stream, group, 1, op)?;
    let eleven = replay_us(stream, group, 11, op)?;
    Ok((eleven - one) / 10.0)
}

/// Microseconds per replay of a graph of `calls` calls of `op`.
fn replay_us(
    stream: &Stream,
    group: &mut Group,
    calls: usize,
    op: &dyn Fn() -> Result<()>,
) -> Result<f64> {
    for _ in 0..3 {
        op()?;
    }
    stream.synchronize()?;
    let captured = Graph::capture(stream, || (0..calls).try_for_each(|_| op()))?;
    time_loop(stream, group, WARMUP / 10 + 1, ITERS / 10, &|| {
        captured.replay(stream)
    })
}

/// Microseconds per run of `run`, `reps` times after `warmup` runs, once
/// every rank is ready.
fn time_loop(
    stream: &Stream,
    group: &mut Group,
    warmup: usize,
    reps: usize,
    run: &dyn Fn() -> Result<()>,
) -> Result<f64> {
    let (rank, world, timeout) = (group.rank(), group.world_size(), group.config.timeout);
    for _ in 0..warmup {
        run()?;
    }
    stream.synchronize()?;
    group.store.barrier("bench", rank, world, timeout)?;
    // The ranks leave the store's barrier up to a few hundred µs apart;
    // one more run (its kernels meet their peers) lines their GPUs up, so
    // that the timed runs do not include a rank waiting for the other.
    run()?;
    let (start, end) = (Event::new()?, Event::new()?);
    start.record(stream)?;
    for _ in 0..reps {
        run()?;
    }
    end.record(stream)?;
    Ok(start.elapsed_ms(&end)? as f64 * 1000.0 / reps as f64)
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
    } = Session::new(Group::from_env()?, Duration::from_secs(30))?;
    let rank = group.rank();
    // SYMM_BENCH_NUMELS=8192,64 times other sizes, or in another order.
    let numels: Vec<usize> = match std::env::var("SYMM_BENCH_NUMELS") {
        Ok(list) => list
            .split(',')
            .filter_map(|n| n.trim().parse().ok())
            .collect(),
        Err(_) => NUMELS.to_vec(),
    };
    for numel in numels {
        let bytes = numel * 2;
        let input = SymmetricBuffer::allocate(
            &mut group,
            device.ordinal,
            &format!("bench/{numel}"),
            bytes,
        )?;
        let out = DeviceBuffer::new(bytes)?;
        let other = SymmetricBuffer::allocate(
            &mut group,
            device.ordinal,
            &format!("bench/{numel}/chained"),
            bytes,
        )?;
        let fill: Vec<u16> = vec![((rank as f32 + 1.0).to_bits() >> 16) as u16; numel];
        copy_to_device(input.local(), &fill)?;
        device.synchronize()?;
        let mut row = format!("{{\"numel\": {numel}, \"bytes\": {bytes}");
        // Two-shot in place is what the anchors time (torch's
        // two_shot_all_reduce_ and NCCL both reduce in place).
        for (name, algorithm, in_place) in [
            ("one_shot", Algorithm::OneShot, false),
            ("two_shot", Algorithm::TwoShot, false),
            ("two_shot_inplace", Algorithm::TwoShot, true),
        ] {
            let target = if in_place { input.local() } else { out.ptr };
            let op = || {
                collectives.all_reduce(
                    &input,
                    target,
                    numel,
                    Dtype::Bf16,
                    ReduceOp::Sum,
                    algorithm,
                    stream.raw,
                )
            };
            for graph in [false, true] {
                let us = time_us(&stream, &mut group, graph, &op)?;
                collectives.check_peers("bench")?;
                row.push_str(&format!(
                    ", \"symm_{name}_{}_us\": {us:.2}",
                    if graph { "cg" } else { "eager" }
                ));
            }
            let us = marginal_us(&stream, &mut group, &op)?;
            collectives.check_peers("bench")?;
            row.push_str(&format!(", \"symm_{name}_marginal_us\": {us:.2}"));
        }
        // The compiled benchmark's chain: a -> b, b -> a, ...
        let calls = std::cell::Cell::new(0usize);
        let chained = || {
            let call = calls.replace(calls.get() + 1);
            let (from, to) = if call.is_multiple_of(2) {
                (&input, &other)
            } else {
                (&other, &input)
            };
            collectives.all_reduce(
                from,
                to.local(),
                numel,
                Dtype::Bf16,
                ReduceOp::Sum,
                Algorithm::OneShot,
                stream.raw,
            )
        };
        let us = marginal_us(&stream, &mut group, &chained)?;
        collectives.check_peers("bench")?;
        row.push_str(&format!(", \"symm_one_shot_chain_marginal_us\": {us:.2}"));
        row.push('}');
        if rank == 0 {
            println!("{row}");
        }
    }
    // All-reduce + RMSNorm: fused kernel against all-reduce then RMSNorm.
    let hidden = 4096;
    let gamma = DeviceBuffer::from_slice(&vec![0x3f80u16; hidden])?;
    for rows in [1usize, 16, 64, 256, 1024, 4096] {
        let bytes = rows * hidden * 2;
        let input =
            SymmetricBuffer::allocate(&mut group, device.ordinal, &format!("norm/{rows}"), bytes)?;
        let (out, reduced) = (DeviceBuffer::new(bytes)?, DeviceBuffer::new(bytes)?);
        let fill: Vec<u16> = vec![((rank as f32 + 1.0).to_bits() >> 16) as u16; rows * hidden];
        copy_to_device(input.local(), &fill)?;
        device.synchronize()?;
        let mut row =
            format!("{{\"rmsnorm_rows\": {rows}, \"hidden\": {hidden}, \"bytes\": {bytes}");
        for graph in [false, true] {
            let fused = || {
                collectives
                    .all_reduce_rmsnorm(&input, gamma.ptr, out.ptr, rows, hidden, 1e-6, stream.raw)
            };
            let apart = || {
                collectives.all_reduce(
                    &input,
                    reduced.ptr,
                    rows * hidden,
                    Dtype::Bf16,
                    ReduceOp::Sum,
                    Algorithm::OneShot,
                    stream.raw,
                )?;
                collectives.rmsnorm(
                    reduced.ptr,
                    gamma.ptr,
                    out.ptr,
                    rows,
                    hidden,
                    1e-6,
                    stream.raw,
                )
            };
            let tag = if graph { "cg" } else { "eager" };
            let fused_us = time_us(&stream, &mut group, graph, &fused)?;
            let apart_us = time_us(&stream, &mut group, graph, &apart)?;
            collectives.check_peers("bench")?;
            row.push_str(&format!(
                ", \"fused_{tag}_us\": {fused_us:.2}, \"apart_{tag}_us\": {apart_us:.2}"
            ));
        }
        row.push('}');
        if rank == 0 {
            println!("{row}");
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("symm-allreduce-bench: {error}");
            ExitCode::FAILURE
        }
    }
}
