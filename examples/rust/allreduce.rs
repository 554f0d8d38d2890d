//! A Rust program on the runtime: every rank fills a symmetric buffer with
//! its rank + 1, all-reduces it (eagerly, then from a captured CUDA graph)
//! and checks the sum.
//!
//!   cargo build --release -p symm-runtime --example allreduce
//!   target/release/symm-launch -n 2 target/release/examples/allreduce

use std::process::ExitCode;
use symm_runtime::{
    Result,
    cuda::{self, DeviceBuffer, Graph, copy_from_device, copy_to_device},
    library::{Algorithm, Dtype, ReduceOp},
    session::Session,
    symmetric::SymmetricBuffer,
};

fn run() -> Result<()> {
    if cuda::device_count() == 0 {
        println!("skipped: no CUDA device");
        return Ok(());
    }
    // Joins the group symm-launch describes: device, kernels and a stream.
    let Session {
        mut group,
        device,
        collectives,
        stream,
        ..
    } = Session::from_env()?;
    let (rank, world) = (group.rank(), group.world_size());

    let count = 1 << 20;
    let input = SymmetricBuffer::allocate(&mut group, device.ordinal, "example/input", count * 4)?;
    let out = DeviceBuffer::new(count * 4)?;
    copy_to_device(input.local(), &vec![(rank + 1) as f32; count])?;
    let expected = (world * (world + 1) / 2) as f32;
    let all_reduce = || {
        collectives.all_reduce(
            &input,
            out.ptr,
            count,
            Dtype::F32,
            ReduceOp::Sum,
            Algorithm::OneShot,
            stream.raw,
        )
    };
    let check = |mode: &str| -> Result<()> {
        stream.synchronize()?;
        collectives.check_peers(mode)?;
        let result: Vec<f32> = copy_from_device(out.ptr, count)?;
        match result.iter().position(|&v| v != expected) {
            Some(i) => Err(symm_runtime::Error::Cuda(format!(
                "{mode}: element {i} is {}",
                result[i]
            ))),
            None => {
                println!(
                    "rank {rank} of {world}: {mode} all-reduce of {count} floats = {expected} everywhere"
                );
                Ok(())
            }
        }
    };

    all_reduce()?;
    check("eager")?;
    let graph = Graph::capture(&stream, all_reduce)?;
    for _ in 0..10 {
        graph.replay(&stream)?;
    }
    check("graph-replayed")
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("allreduce: {error}");
            ExitCode::FAILURE
        }
    }
}
