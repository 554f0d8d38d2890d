//! The runtime's GPU tests, one process per GPU under symm-launch:
//!
//!   symm-launch -n 2 symm-gpu-tests            # every test
//!   symm-gpu-tests --threads 2                 # one process, a thread per GPU
//!   symm-gpu-tests --dump-ptx DIR              # write every kernel's PTX
//!
//! Without a CUDA device it prints "skipped: no CUDA device" and succeeds.
//! Each test prints PASS or FAIL with its measurements; the last line is
//! "N passed, M failed".

use std::{
    process::ExitCode,
    time::{Duration, Instant},
};
use symm_runtime::{
    Error, Result,
    collectives::Collectives,
    cuda::{self, DeviceBuffer, Event, Graph, check, copy_from_device, copy_to_device},
    group::Group,
    library::{self, Algorithm, Dtype, ReduceOp},
    session::Session,
    stream_gate::{self, StreamGate},
    symmetric::SymmetricBuffer,
};

const DTYPES: [Dtype; 3] = [Dtype::F32, Dtype::F16, Dtype::Bf16];
const OPS: [ReduceOp; 3] = [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min];
/// (algorithm, in place): two-shot also runs with `out` = its input.
const VARIANTS: [(Algorithm, bool); 3] = [
    (Algorithm::OneShot, false),
    (Algorithm::TwoShot, false),
    (Algorithm::TwoShot, true),
];
/// Byte sizes, several not a multiple of 16; 16 B, 8 KiB, 128 KiB,
/// 512 KiB and 1 MiB take the Lamport one-shot for bf16 and f16 sums.
const SIZES: [usize; 11] = [
    16,
    20,
    36,
    1000,
    4104,
    8 << 10,
    65540,
    128 << 10,
    512 << 10,
    1 << 20,
    64 << 20,
];

/// Small integers: exact in every dtype, and so are their sums here.
fn value(rank: usize, index: usize) -> f32 {
    (((index * 7 + rank * 13) % 97) as i32 - 48) as f32
}

/// The matmul tests' lhs, `rows` x `columns`: a[i][j] = 1 where j = i
/// (mod 64), else 0, so that row i sums every 64th row of the weight from
/// row i % 64 on, an integer sum whatever a kernel's order.
fn selector(rows: usize, columns: usize) -> Vec<f32> {
    (0..rows * columns)
        .map(|x| f32::from(u8::from((x % columns) % 64 == (x / columns) % 64)))
        .collect()
}

fn to_bits(dtype: Dtype, values: &[f32]) -> Vec<u8> {
    match dtype {
        Dtype::F32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        Dtype::Bf16 => values
            .iter()
            .flat_map(|v| ((v.to_bits() >> 16) as u16).to_le_bytes())
            .collect(),
        Dtype::F16 => values
            .iter()
            .flat_map(|v| f32_to_f16(*v).to_le_bytes())
            .collect(),
    }
}

/// f32 -> f16 for the small integers used here (exact, no rounding needed).
fn f32_to_f16(value: f32) -> u16 {
    if value == 0.0 {
        return if value.is_sign_negative() { 0x8000 } else { 0 };
    }
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let mantissa = ((bits >> 13) & 0x3ff) as u16;
    sign | ((exponent as u16) << 10) | mantissa
}

fn reduce(op: ReduceOp, values: impl Iterator<Item = f32>) -> f32 {
    values
        .reduce(|a, b| match op {
            ReduceOp::Sum => a + b,
            ReduceOp::Max => a.max(b),
            ReduceOp::Min => a.min(b),
        })
        .unwrap_or(0.0)
}

type TestFn = fn(&mut Ctx) -> Result<String>;

struct Ctx {
    session: Session,
    passed: usize,
    failed: usize,
    /// "[thread R] " in single-process mode.
    prefix: String,
}

impl Ctx {
    fn record(&mut self, name: &str, result: Result<String>) {
        match result {
            Ok(detail) => {
                self.passed += 1;
                println!("{}PASS {name}: {detail}", self.prefix);
            }
            Err(error) => {
                self.failed += 1;
                println!("{}FAIL {name}: {error}", self.prefix);
            }
        }
    }

    fn barrier(&mut self, name: &str) -> Result<()> {
        let (rank, world, timeout) = (
            self.session.group.rank(),
            self.session.group.world_size(),
            self.session.group.config.timeout,
        );
        self.session.group.store.barrier(name, rank, world, timeout)
    }

    /// Puts `data` into `input`, clears `out` and meets the peers at `tag`.
    fn load_input(
        &mut self,
        input: &SymmetricBuffer,
        data: &[u8],
        out: &DeviceBuffer,
        tag: &str,
    ) -> Result<()> {
        copy_to_device(input.local(), data)?;
        out.zero()?;
        self.session.device.synchronize()?;
        self.barrier(tag)
    }

    /// Enqueues one all-reduce of `elements` on the session's stream.
    fn all_reduce(
        &self,
        input: &SymmetricBuffer,
        target: u64,
        elements: usize,
        (dtype, op, algorithm): (Dtype, ReduceOp, Algorithm),
    ) -> Result<()> {
        self.session.collectives.all_reduce(
            input,
            target,
            elements,
            dtype,
            op,
            algorithm,
            self.session.stream.raw,
        )
    }

    /// Waits for the stream; a peer's timeout in `what` is an error.
    fn finish(&self, what: &str) -> Result<()> {
        self.session.stream.synchronize()?;
        self.session.collectives.check_peers(what)
    }

    fn allocate(&mut self, id: &str, bytes: usize) -> Result<SymmetricBuffer> {
        SymmetricBuffer::allocate(
            &mut self.session.group,
            self.session.device.ordinal,
            id,
            bytes,
        )
    }
}

fn p2p(ctx: &mut Ctx) -> Result<String> {
    let (rank, world) = (ctx.session.group.rank(), ctx.session.group.world_size());
    let words = 1 << 18;
    let buffer = ctx.allocate("p2p", words * 4)?;
    // SAFETY: our own mapping.
    check(
        unsafe { cudarc::driver::sys::cuMemsetD32_v2(buffer.local(), rank as u32 + 1, words) },
        "cuMemsetD32",
    )?;
    ctx.session.device.synchronize()?;
    ctx.barrier("p2p-filled")?;
    for peer in 0..world {
        let address = buffer
            .peer(peer)
            .ok_or_else(|| Error::Cuda("no mapping".into()))?;
        let seen: Vec<u32> = copy_from_device(address + 4 * 1000, 1)?;
        if seen[0] != peer as u32 + 1 {
            return Err(Error::Cuda(format!(
                "read {} from rank {peer}, expected {}",
                seen[0],
                peer + 1
            )));
        }
    }
    ctx.barrier("p2p-read")?;
    // Write into every peer's copy, at a slot of our own.
    for peer in 0..world {
        let address = buffer
            .peer(peer)
            .ok_or_else(|| Error::Cuda("no mapping".into()))?;
        copy_to_device(
            address + 4 * (2000 + rank as u64),
            &[0xabc0u32 + rank as u32],
        )?;
    }
    ctx.session.device.synchronize()?;
    ctx.barrier("p2p-written")?;
    let slots: Vec<u32> = copy_from_device(buffer.local() + 4 * 2000, world)?;
    for (writer, &slot) in slots.iter().enumerate() {
        if slot != 0xabc0 + writer as u32 {
            return Err(Error::Cuda(format!(
                "rank {writer} wrote {slot:#x} into our copy"
            )));
        }
    }
    Ok(format!(
        "read and wrote the copies of {world} ranks over P2P"
    ))
}

fn barrier_stress(ctx: &mut Ctx) -> Result<String> {
    let buffer = ctx.allocate("barrier", 4096)?;
    let mismatches = DeviceBuffer::new(4)?;
    mismatches.zero()?;
    // SYMM_BARRIERS raises it for a soak (10^6 in bench/device/*).
    let iterations: u64 = std::env::var("SYMM_BARRIERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let start = Instant::now();
    ctx.session.collectives.barrier_test(
        &buffer,
        mismatches.ptr,
        iterations,
        ctx.session.stream.raw,
    )?;
    ctx.session.stream.synchronize()?;
    let elapsed = start.elapsed();
    ctx.session.collectives.check_peers("barrier test")?;
    let count: Vec<u32> = mismatches.read(1)?;
    if count[0] != 0 {
        return Err(Error::Cuda(format!("{} stale or lost signals", count[0])));
    }
    Ok(format!(
        "{iterations} barriers, no stale or lost signal, {:.2} µs each",
        elapsed.as_secs_f64() * 1e6 / iterations as f64 / 2.0
    ))
}

fn all_reduce_correctness(ctx: &mut Ctx) -> Result<String> {
    let (rank, world) = (ctx.session.group.rank(), ctx.session.group.world_size());
    let largest = *SIZES.iter().max().unwrap_or(&0);
    let input = ctx.allocate("correctness", largest)?;
    let out = DeviceBuffer::new(largest)?;
    let mut cases = 0;
    for dtype in DTYPES {
        for &bytes in &SIZES {
            let elements = bytes / dtype.bytes();
            let mine: Vec<f32> = (0..elements).map(|i| value(rank, i)).collect();
            for op in OPS {
                let expected_values: Vec<f32> = (0..elements)
                    .map(|i| reduce(op, (0..world).map(|r| value(r, i))))
                    .collect();
                let expected = to_bits(dtype, &expected_values);
                for (algorithm, in_place) in VARIANTS {
                    let target = if in_place { input.local() } else { out.ptr };
                    ctx.load_input(&input, &to_bits(dtype, &mine), &out, "case")?;
                    ctx.all_reduce(&input, target, elements, (dtype, op, algorithm))?;
                    ctx.finish("all-reduce")?;
                    let got: Vec<u8> = copy_from_device(target, bytes)?;
                    if got != expected {
                        let first = got
                            .iter()
                            .zip(&expected)
                            .position(|(a, b)| a != b)
                            .unwrap_or(0);
                        return Err(Error::Cuda(format!(
                            "{algorithm:?}{} {op:?} {dtype:?} {bytes} B: first difference at byte {first}",
                            if in_place { " in place" } else { "" }
                        )));
                    }
                    cases += 1;
                }
            }
        }
    }
    // A plain one-shot in place would race with the peers' reads.
    let refused = ctx.session.collectives.all_reduce(
        &input,
        input.local(),
        largest / 4,
        Dtype::F32,
        ReduceOp::Sum,
        Algorithm::OneShot,
        ctx.session.stream.raw,
    );
    match refused {
        Err(Error::InvalidArgument(message)) if message.contains("cannot run in place") => {}
        other => {
            return Err(Error::Cuda(format!(
                "a one-shot in place of {largest} bytes was not refused: {other:?}"
            )));
        }
    }
    Ok(format!(
        "{cases} cases (one-shot, two-shot, two-shot in place x sum/max/min x f32/f16/bf16 x {} sizes, 16 B to 64 MiB; bf16/f16 sums of whole vectors up to 1 MiB by the Lamport kernel) equal the host reference bit for bit; a one-shot in place beyond the staging slot is refused",
        SIZES.len()
    ))
}

/// The Lamport one-shot (bf16 and f16 sums of whole vectors): in place and
/// not, with -0.0 among the inputs (the sentinel, sent as +0.0), each size
/// three times so that both parities of every block's regions come back,
/// with a staged one-shot (an f32 sum) on the same buffer between calls
/// (the two keep apart counters).
fn lamport(ctx: &mut Ctx) -> Result<String> {
    let (rank, world) = (ctx.session.group.rank(), ctx.session.group.world_size());
    // Up to LAMPORT_MAX; above 33792 vectors (a full grid of 264 blocks
    // of 128 threads) the grid wraps, and the sizes alternate so that a
    // block's regions see calls of both kinds in turn.
    let sizes = [
        16,
        4 << 20,
        8 << 10,
        (768 << 10) + 16,
        128 << 10,
        (1536 << 10) + 16,
        512 << 10,
        1 << 20,
        (3 << 20) + 16,
        2 << 20,
        4 << 20,
    ];
    let largest = *sizes.iter().max().unwrap_or(&0);
    let input = ctx.allocate("lamport", largest)?;
    let out = DeviceBuffer::new(largest)?;
    // Rank r's value, with -0.0 wherever index % 5 == r % 5: sums with a
    // -0.0 term must equal the others' sum, and where every term is -0.0
    // (one rank) the sum comes out +0.0.
    let term = |r: usize, i: usize| {
        if i % 5 == r % 5 { -0.0 } else { value(r, i) }
    };
    let mut calls = 0;
    for dtype in [Dtype::Bf16, Dtype::F16] {
        for &bytes in &sizes {
            let elements = bytes / dtype.bytes();
            let mine: Vec<f32> = (0..elements).map(|i| term(rank, i)).collect();
            let expected: Vec<f32> = (0..elements)
                .map(|i| (0..world).map(|r| term(r, i)).fold(0.0, |a, b| a + b))
                .collect();
            let expected = to_bits(dtype, &expected);
            for round in 0..3 {
                for in_place in [false, true] {
                    let target = if in_place { input.local() } else { out.ptr };
                    ctx.load_input(&input, &to_bits(dtype, &mine), &out, "lamport-case")?;
                    ctx.all_reduce(
                        &input,
                        target,
                        elements,
                        (dtype, ReduceOp::Sum, Algorithm::OneShot),
                    )?;
                    // A staged one-shot on the same buffer's slots between.
                    ctx.all_reduce(
                        &input,
                        out.ptr,
                        4,
                        (Dtype::F32, ReduceOp::Sum, Algorithm::OneShot),
                    )?;
                    ctx.finish("lamport all-reduce")?;
                    if in_place {
                        let got: Vec<u8> = copy_from_device(target, bytes)?;
                        if got != expected {
                            let first = got.iter().zip(&expected).position(|(a, b)| a != b);
                            return Err(Error::Cuda(format!(
                                "Lamport {dtype:?} {bytes} B in place, round {round}: first \
                                 difference at byte {first:?}"
                            )));
                        }
                    }
                    calls += 1;
                }
            }
            // Out of place, checked without a staged call over the output.
            ctx.load_input(&input, &to_bits(dtype, &mine), &out, "lamport-out")?;
            ctx.all_reduce(
                &input,
                out.ptr,
                elements,
                (dtype, ReduceOp::Sum, Algorithm::OneShot),
            )?;
            ctx.finish("lamport all-reduce")?;
            if copy_from_device::<u8>(out.ptr, bytes)? != expected {
                return Err(Error::Cuda(format!(
                    "Lamport {dtype:?} {bytes} B out of place gave a wrong result"
                )));
            }
            calls += 1;
            ctx.barrier("lamport-checked")?;
        }
    }
    Ok(format!(
        "{calls} Lamport all-reduces (bf16, f16; 16 B to 4 MiB, where the grid wraps; in place and not; -0.0 terms; \
         both parities, with staged one-shots on the same buffer between) equal the host sums bit for bit"
    ))
}

fn graph_replay(ctx: &mut Ctx) -> Result<String> {
    let (rank, world) = (ctx.session.group.rank(), ctx.session.group.world_size());
    let elements = 1 << 16;
    let input = ctx.allocate("graph", elements * 2)?;
    let out = DeviceBuffer::new(elements * 2)?;
    copy_to_device(input.local(), &to_bits(Dtype::Bf16, &vec![0.0; elements]))?;
    ctx.session.device.synchronize()?;
    ctx.barrier("graph-ready")?;
    let graph = Graph::capture(&ctx.session.stream, || {
        ctx.session.collectives.all_reduce(
            &input,
            out.ptr,
            elements,
            Dtype::Bf16,
            ReduceOp::Sum,
            Algorithm::OneShot,
            ctx.session.stream.raw,
        )
    })?;
    for round in 0..20 {
        let mine: Vec<f32> = (0..elements).map(|i| value(rank, i + round)).collect();
        copy_to_device(input.local(), &to_bits(Dtype::Bf16, &mine))?;
        ctx.session.device.synchronize()?;
        ctx.barrier("graph-round")?;
        graph.replay(&ctx.session.stream)?;
        ctx.session.stream.synchronize()?;
        ctx.session.collectives.check_peers("graph replay")?;
        let expected: Vec<f32> = (0..elements)
            .map(|i| reduce(ReduceOp::Sum, (0..world).map(|r| value(r, i + round))))
            .collect();
        if copy_from_device::<u8>(out.ptr, elements * 2)? != to_bits(Dtype::Bf16, &expected) {
            return Err(Error::Cuda(format!("replay {round} gave a wrong result")));
        }
        ctx.barrier("graph-checked")?;
    }
    Ok("20 replays of a captured one-shot all-reduce match the reference, pointers stable".into())
}

/// A stream gate (`stream_gate`) keeps the host's pace out of a timing:
/// work enqueued 20 ms apart, timed between two events, takes the 20 ms
/// without a gate and the work's own time behind one; the work runs
/// either way, and a gate never opened gives up after its timeout (and
/// says so) instead of holding the stream.
fn stream_gate(ctx: &mut Ctx) -> Result<String> {
    const WORDS: usize = 1 << 20;
    let pause = Duration::from_millis(20);
    let stream = &ctx.session.stream;
    let buffer = DeviceBuffer::new(WORDS * 4)?;
    let fill = |value: u32| {
        // SAFETY: a live buffer of WORDS words and a live stream.
        check(
            unsafe { cudarc::driver::sys::cuMemsetD32Async(buffer.ptr, value, WORDS, stream.raw) },
            "cuMemsetD32Async",
        )
    };
    let timed = |gated: bool, value: u32| -> Result<(f64, bool)> {
        let gate = StreamGate::close_if(gated, stream)?;
        let (start, end) = (Event::new()?, Event::new()?);
        start.record(stream)?;
        fill(value)?;
        std::thread::sleep(pause);
        fill(value + 1)?;
        end.record(stream)?;
        let held = gate.is_none_or(StreamGate::open);
        let ms = f64::from(start.elapsed_ms(&end)?);
        let words = copy_from_device::<u32>(buffer.ptr, WORDS)?;
        if words.iter().any(|&w| w != value + 1) {
            return Err(Error::Cuda(format!(
                "the work behind a {} stream wrote {:#x}, not {:#x}",
                if gated { "gated" } else { "plain" },
                words[0],
                value + 1
            )));
        }
        Ok((ms, held))
    };
    let (plain, _) = timed(false, 10)?;
    let (gated, held) = timed(true, 20)?;
    if plain < 15.0 {
        return Err(Error::Cuda(format!(
            "work enqueued {pause:?} apart timed {plain:.2} ms without a gate: the test cannot \
             show what the gate removes"
        )));
    }
    if !held || gated > 5.0 {
        return Err(Error::Cuda(format!(
            "behind a gate the same work timed {gated:.2} ms (held until opened: {held})"
        )));
    }
    let start = Instant::now();
    let forgotten = StreamGate::close(stream)?;
    fill(30)?;
    stream.synchronize()?;
    let waited = start.elapsed();
    if forgotten.open() || waited < stream_gate::TIMEOUT {
        return Err(Error::Cuda(format!(
            "a gate never opened released its stream after {waited:?} without reporting a \
             timeout of {:?}",
            stream_gate::TIMEOUT
        )));
    }
    Ok(format!(
        "work enqueued {pause:?} apart timed {plain:.2} ms plain, {gated:.3} ms gated; a gate \
         never opened let go after {waited:.0?}, reported"
    ))
}

fn memory_baseline(ctx: &mut Ctx) -> Result<String> {
    // Physical memory returns only once every rank has released its
    // mappings, so measure after all ranks are done.
    ctx.session.device.synchronize()?;
    ctx.barrier("baseline-before")?;
    let (before, _) = ctx.session.device.memory_info()?;
    let cycles = 1000;
    let start = Instant::now();
    for cycle in 0..cycles {
        let buffer = ctx.allocate(&format!("cycle/{cycle}"), 1 << 20)?;
        drop(buffer);
    }
    ctx.session.device.synchronize()?;
    ctx.barrier("baseline-after")?;
    let (after, _) = ctx.session.device.memory_info()?;
    let leaked = before as i64 - after as i64;
    if leaked > 0 {
        return Err(Error::Cuda(format!(
            "{leaked} bytes not returned after {cycles} cycles"
        )));
    }
    Ok(format!(
        "{cycles} alloc/free cycles of 1 MiB, free memory {before} -> {after} bytes, {:.2} ms per cycle",
        start.elapsed().as_secs_f64() * 1e3 / cycles as f64
    ))
}

/// Rank 1 leaves without taking part; rank 0's all-reduce must fail with a
/// peer timeout instead of hanging.
fn dead_peer(mut ctx: Ctx) -> ExitCode {
    let rank = ctx.session.group.rank();
    let buffer = match ctx.allocate("dead-peer", 4096) {
        Ok(buffer) => buffer,
        Err(error) => {
            println!("FAIL dead-peer: {error}");
            return ExitCode::FAILURE;
        }
    };
    if rank == 1 {
        drop(buffer);
        drop(ctx);
        println!("rank 1 leaving without joining the all-reduce");
        return ExitCode::SUCCESS;
    }
    let out = DeviceBuffer::new(4096).ok();
    // The staged one-shot (f32: a counter barrier), then the Lamport one
    // (bf16 sum: a spin on the data), each with fresh kernels' error flag.
    let mut failed = false;
    for (dtype, kernel) in [(Dtype::F32, "staged"), (Dtype::Bf16, "Lamport")] {
        let start = Instant::now();
        let result = (|| {
            let quick = Collectives::new(Duration::from_secs(2))?;
            let out = out
                .as_ref()
                .ok_or_else(|| Error::Cuda("no output buffer".into()))?;
            quick.all_reduce(
                &buffer,
                out.ptr,
                4096 / dtype.bytes(),
                dtype,
                ReduceOp::Sum,
                Algorithm::OneShot,
                ctx.session.stream.raw,
            )?;
            ctx.session.stream.synchronize()?;
            quick.check_peers("all-reduce with a dead peer")
        })();
        let elapsed = start.elapsed();
        match result {
            Err(Error::PeerTimeout { .. }) if elapsed < Duration::from_secs(10) => println!(
                "PASS dead-peer ({kernel}): error after {:.2} s: {}",
                elapsed.as_secs_f64(),
                result.err().map(|e| e.to_string()).unwrap_or_default()
            ),
            other => {
                println!(
                    "FAIL dead-peer ({kernel}): {:?} after {:.2} s",
                    other.err(),
                    elapsed.as_secs_f64()
                );
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// All-gather + matmul against a host reference (small integers: exact).
fn all_gather_matmul(ctx: &mut Ctx) -> Result<String> {
    use symm_runtime::agmm::AllGatherMatmul;
    let (rank, world) = (ctx.session.group.rank(), ctx.session.group.world_size());
    let (m, k, n) = (64usize, 32usize, 48usize);
    let shard = |r: usize| -> Vec<f32> {
        (0..m * k)
            .map(|i| ((i * 3 + r * 5) % 4) as f32 - 1.0)
            .collect()
    };
    let b: Vec<f32> = (0..k * n).map(|i| ((i * 7) % 4) as f32 - 1.0).collect();
    let a = ctx.allocate("agmm", m * k * 2)?;
    copy_to_device(a.local(), &to_bits(Dtype::Bf16, &shard(rank)))?;
    let b_dev = DeviceBuffer::from_slice(&to_bits(Dtype::Bf16, &b))?;
    let gathered = DeviceBuffer::new(world * m * k * 2)?;
    let out = DeviceBuffer::new(world * m * n * 2)?;
    ctx.session.device.synchronize()?;
    ctx.barrier("agmm-ready")?;
    let ring = AllGatherMatmul::new(world)?;
    let call = |session: &Session| {
        ring.run(
            &session.collectives,
            &a,
            b_dev.ptr,
            gathered.ptr,
            out.ptr,
            (m, k, n),
            &session.stream,
        )
    };
    for _ in 0..3 {
        call(&ctx.session)?;
    }
    ctx.session.stream.synchronize()?;
    ctx.session.collectives.check_peers("all_gather_matmul")?;
    let mut expected = Vec::with_capacity(world * m * n);
    for r in 0..world {
        let a = shard(r);
        for row in 0..m {
            for col in 0..n {
                expected.push((0..k).map(|i| a[row * k + i] * b[i * n + col]).sum::<f32>());
            }
        }
    }
    let expected = to_bits(Dtype::Bf16, &expected);
    if copy_from_device::<u8>(out.ptr, world * m * n * 2)? != expected {
        return Err(Error::Cuda(
            "all_gather_matmul differs from the host reference".into(),
        ));
    }
    // The ring forks its copies onto streams of its own and joins them with
    // events: a capture must follow them (compiled programs capture it).
    let graph = Graph::capture(&ctx.session.stream, || call(&ctx.session))?;
    out.zero()?;
    ctx.session.device.synchronize()?;
    ctx.barrier("agmm-graph")?;
    for _ in 0..3 {
        graph.replay(&ctx.session.stream)?;
    }
    ctx.session.stream.synchronize()?;
    ctx.session
        .collectives
        .check_peers("all_gather_matmul replay")?;
    if copy_from_device::<u8>(out.ptr, world * m * n * 2)? != expected {
        return Err(Error::Cuda(
            "a replayed all_gather_matmul differs from the host reference".into(),
        ));
    }
    Ok(format!(
        "{world}x{m} x {k} @ {k} x {n} over the P2P ring equals the host reference, 3 calls, \
         then 3 replays of a captured call"
    ))
}

/// Matmul pairs (gate and up: two weights sharing the lhs, at one batch
/// stride) at decode and prefill shapes of Llama-3-8B's TP 1, where the
/// runtime measures the batched GEMM against two GEMMs on each shape's
/// first call (`pair_choice`; M = 128 is where two GEMMs won on an H200),
/// equal the host reference bit for bit, then again from a captured graph
/// (which reuses the way found). Each shape runs with the weights row-major
/// (k x n) and in nn.Linear's layout (n x k, `SYMM_TRANSPOSED_B`): the same
/// products. The data keep every sum an integer of at most 64, exact in
/// bf16 whatever the kernel's order of accumulation.
fn matmul_pair(ctx: &mut Ctx) -> Result<String> {
    use symm_protocol::abi::LayoutCode;
    use symm_runtime::{agmm::Matmul, library::GemmInputs};
    let matmul = Matmul::new()?;
    let mut shapes = Vec::new();
    for (m, k, n) in [
        (1usize, 4096usize, 14336usize),
        (128, 4096, 14336),
        (64, 256, 512),
    ] {
        let a = selector(m, k);
        let b: Vec<f32> = (0..2 * k * n)
            .map(|x| {
                let (p, kk, j) = (x / (k * n), (x / n) % k, x % n);
                ((kk * 7 + j * 3 + p) % 3) as f32 - 1.0
            })
            .collect();
        // The same weights stored transposed: b_t[p][j][kk] = b[p][kk][j].
        let b_t: Vec<f32> = (0..2 * k * n)
            .map(|x| {
                let (p, j, kk) = (x / (k * n), (x / k) % n, x % k);
                b[p * k * n + kk * n + j]
            })
            .collect();
        let mut expected = vec![0f32; 2 * m * n];
        for p in 0..2 {
            for i in 0..m {
                for t in (i % 64..k).step_by(64) {
                    let row = &b[p * k * n + t * n..p * k * n + (t + 1) * n];
                    let out = &mut expected[p * m * n + i * n..p * m * n + (i + 1) * n];
                    for (o, w) in out.iter_mut().zip(row) {
                        *o += w;
                    }
                }
            }
        }
        let expected = to_bits(Dtype::Bf16, &expected);
        let a_dev = DeviceBuffer::from_slice(&to_bits(Dtype::Bf16, &a))?;
        for (layout, weights) in [(LayoutCode::RowMajor, &b), (LayoutCode::TransposedB, &b_t)] {
            let b_dev = DeviceBuffer::from_slice(&to_bits(Dtype::Bf16, weights))?;
            let c = DeviceBuffer::new(2 * m * n * 2)?;
            let half = |buffer: &DeviceBuffer, elements: usize| buffer.ptr + (elements * 2) as u64;
            let stream = &ctx.session.stream;
            let call = || {
                matmul.gemm_pair(
                    GemmInputs {
                        dtype: Dtype::Bf16,
                        layout,
                    },
                    a_dev.ptr,
                    [b_dev.ptr, c.ptr],
                    [half(&b_dev, k * n), half(&c, m * n)],
                    (m, k, n),
                    0.0,
                    stream.raw,
                )
            };
            let what = format!("the matmul pair {m}x{k} @ 2 x {k}x{n} ({})", layout.text());
            call()?;
            stream.synchronize()?;
            if copy_from_device::<u8>(c.ptr, 2 * m * n * 2)? != expected {
                return Err(Error::Cuda(format!(
                    "{what} differs from the host reference"
                )));
            }
            let graph = Graph::capture(stream, call)?;
            c.zero()?;
            graph.replay(stream)?;
            stream.synchronize()?;
            if copy_from_device::<u8>(c.ptr, 2 * m * n * 2)? != expected {
                return Err(Error::Cuda(format!(
                    "replayed, {what} differs from the host reference"
                )));
            }
        }
        shapes.push(format!("{m}x{k} @ 2 x {k}x{n}"));
    }
    Ok(format!(
        "{} equal the host reference, weights k x n and n x k, called and replayed from a \
         graph (SYMM_LOG=info shows the way each shape took)",
        shapes.join(", ")
    ))
}

/// The GEMMs the layers hand to cuBLAS, each run with the kernel measured
/// for it (`gemm_algos`: cuBLAS's default or one of cuBLASLt's list) and
/// with cuBLAS's default call (`SYMM_GEMM_ALGO=default`), called and then
/// replayed from a graph: the outputs equal bit for bit. Llama-3-8B's TP-2
/// shapes: the batched gate and up (two weights at a stride) at 16 and 128
/// rows, the down projection's two split-K slices into f32 partials, and
/// o_proj with its weight in nn.Linear's layout. The data keep every sum an
/// integer of at most 64, exact whatever a kernel's order of accumulation.
fn gemm_algos(ctx: &mut Ctx) -> Result<String> {
    use symm_runtime::agmm::Matmul;
    use symm_runtime::gemm_algos::{AlgoPolicy, Strided};
    let measured = Matmul::with_algos(AlgoPolicy::Measured)?;
    let default = Matmul::with_algos(AlgoPolicy::Default)?;
    let stream = &ctx.session.stream;
    let mut shapes = Vec::new();
    // (m, k per product, n, batch, a's row length, a's batch stride,
    // weights transposed, f32 output)
    for (m, k, n, batch, a_ld, a_stride, transposed, f32_out) in [
        (
            16usize, 4096usize, 7168usize, 2i32, 4096usize, 0usize, false, false,
        ),
        (128, 4096, 7168, 2, 4096, 0, false, false),
        (128, 3584, 4096, 2, 7168, 3584, false, true),
        (64, 2048, 4096, 1, 2048, 0, true, false),
    ] {
        let products = batch as usize;
        let a = selector(m, a_ld);
        // Weights of separate products 64 elements apart (separate
        // matrices), slices of one weight back to back.
        let gap = if a_stride == 0 { 64 } else { 0 };
        let b_stride = k * n + gap;
        let b: Vec<f32> = (0..products * b_stride)
            .map(|x| ((x * 7 + x / n * 3) % 3) as f32 - 1.0)
            .collect();
        let out_dtype = if f32_out { Dtype::F32 } else { Dtype::Bf16 };
        let c_bytes = products * m * n * out_dtype.bytes();
        let a_dev = DeviceBuffer::from_slice(&to_bits(Dtype::Bf16, &a))?;
        let b_dev = DeviceBuffer::from_slice(&to_bits(Dtype::Bf16, &b))?;
        let outputs = [DeviceBuffer::new(c_bytes)?, DeviceBuffer::new(c_bytes)?];
        let call = |matmul: &Matmul, c: &DeviceBuffer| {
            let operand = |ptr, dtype, ld, batch_stride, transposed| Strided {
                ptr,
                dtype,
                ld,
                batch_stride: batch_stride as i64,
                transposed,
            };
            matmul.gemm_strided(
                [
                    operand(a_dev.ptr, Dtype::Bf16, a_ld, a_stride, false),
                    operand(
                        b_dev.ptr,
                        Dtype::Bf16,
                        if transposed { k } else { n },
                        if batch > 1 { b_stride } else { 0 },
                        transposed,
                    ),
                    operand(
                        c.ptr,
                        out_dtype,
                        n,
                        if batch > 1 { m * n } else { 0 },
                        false,
                    ),
                ],
                batch,
                (m, k, n),
                0.0,
                stream.raw,
            )
        };
        let what = format!(
            "the GEMM {m}x{k} @ {batch} x {k}x{n} ({})",
            out_dtype.text()
        );
        call(&measured, &outputs[0])?;
        call(&default, &outputs[1])?;
        stream.synchronize()?;
        let read = |c: &DeviceBuffer| copy_from_device::<u8>(c.ptr, c_bytes);
        let expected = read(&outputs[1])?;
        if read(&outputs[0])? != expected {
            return Err(Error::Cuda(format!(
                "{what} with its measured kernel differs from cuBLAS's default"
            )));
        }
        let graph = Graph::capture(stream, || call(&measured, &outputs[0]))?;
        outputs[0].zero()?;
        graph.replay(stream)?;
        stream.synchronize()?;
        if read(&outputs[0])? != expected {
            return Err(Error::Cuda(format!(
                "replayed, {what} with its measured kernel differs from cuBLAS's default"
            )));
        }
        shapes.push(format!("{m}x{k} @ {batch} x {k}x{n}"));
    }
    let took = match measured.algo_counts()? {
        Some((keys, listed)) => format!("{listed} of {keys} took a kernel of cuBLASLt's list"),
        None => "libcublasLt not found: all ran cuBLAS's default".into(),
    };
    Ok(format!(
        "{} equal cuBLAS's default bit for bit, called and replayed ({took}; SYMM_LOG=info \
         shows the times)",
        shapes.join(", ")
    ))
}

/// All-reduce + RMSNorm fused equals all-reduce then RMSNorm bit for bit,
/// and a host reference within rsqrt.approx's error.
fn fused_rmsnorm(ctx: &mut Ctx) -> Result<String> {
    // Per hidden size: `staged` rows (up to 128 KB) fit the staging slots and
    // take the staged kernel, `rows` (2.4 MB) the plain one. Rows of
    // 4096 fit a block's held vectors; 5120 and 8192 also take the path
    // that stores and rereads what lies beyond.
    let mut worst = 0f32;
    for (hidden, staged, rows) in [(4096, 16, 300), (5120, 12, 240), (8192, 8, 150)] {
        worst = worst.max(fused_rmsnorm_rows(ctx, hidden, staged, rows)?);
    }
    if worst > 2e-2 {
        return Err(Error::Cuda(format!(
            "fused RMSNorm is off the host reference by {worst:.3}"
        )));
    }
    Ok(format!(
        "rows of 4096, 5120 and 8192, staged (up to 128 KB) and not (2.4 MB): fused equals \
         all-reduce then RMSNorm bit for bit, max relative error vs host {worst:.1e}"
    ))
}

/// The fused kernel on `staged`, then `rows` rows of `hidden`, twice each
/// (the staged kernel alternates its slots), against all-reduce then
/// RMSNorm (bit for bit) and a host reference: the worst relative error.
fn fused_rmsnorm_rows(ctx: &mut Ctx, hidden: usize, staged: usize, rows: usize) -> Result<f32> {
    let (rank, world) = (ctx.session.group.rank(), ctx.session.group.world_size());
    let eps = 1e-6f32;
    let mine: Vec<f32> = (0..rows * hidden).map(|i| value(rank, i) / 16.0).collect();
    let gamma: Vec<f32> = (0..hidden).map(|i| 0.5 + (i % 5) as f32 / 4.0).collect();
    let input = ctx.allocate(&format!("rmsnorm/{hidden}"), rows * hidden * 2)?;
    copy_to_device(input.local(), &to_bits(Dtype::Bf16, &mine))?;
    let gamma_dev = DeviceBuffer::from_slice(&to_bits(Dtype::Bf16, &gamma))?;
    let (fused, reduced, unfused) = (
        DeviceBuffer::new(rows * hidden * 2)?,
        DeviceBuffer::new(rows * hidden * 2)?,
        DeviceBuffer::new(rows * hidden * 2)?,
    );
    ctx.session.device.synchronize()?;
    ctx.barrier("rmsnorm-ready")?;
    let stream = ctx.session.stream.raw;
    let mut worst = 0f32;
    // Twice each: the staged kernel alternates its slots.
    for rows in [staged, staged, rows, rows] {
        ctx.session.collectives.all_reduce_rmsnorm(
            &input,
            gamma_dev.ptr,
            fused.ptr,
            rows,
            hidden,
            eps,
            stream,
        )?;
        ctx.session.collectives.all_reduce(
            &input,
            reduced.ptr,
            rows * hidden,
            Dtype::Bf16,
            ReduceOp::Sum,
            Algorithm::OneShot,
            stream,
        )?;
        ctx.session.collectives.rmsnorm(
            reduced.ptr,
            gamma_dev.ptr,
            unfused.ptr,
            rows,
            hidden,
            eps,
            stream,
        )?;
        ctx.session.stream.synchronize()?;
        ctx.session
            .collectives
            .check_peers("fused all-reduce + RMSNorm")?;
        let a: Vec<u16> = copy_from_device(fused.ptr, rows * hidden)?;
        let b: Vec<u16> = copy_from_device(unfused.ptr, rows * hidden)?;
        if a != b {
            let first = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(0);
            return Err(Error::Cuda(format!(
                "{rows} rows of {hidden}: fused and unfused differ first at element {first}"
            )));
        }
        for row in 0..rows {
            let x: Vec<f32> = (0..hidden)
                .map(|i| {
                    (0..world)
                        .map(|r| value(r, row * hidden + i) / 16.0)
                        .sum::<f32>()
                })
                .collect();
            let rms = 1.0 / (x.iter().map(|v| v * v).sum::<f32>() / hidden as f32 + eps).sqrt();
            for i in 0..hidden {
                let want = x[i] * rms * gamma[i];
                let got = f32::from_bits((a[row * hidden + i] as u32) << 16);
                worst = worst.max((got - want).abs() / want.abs().max(1e-2));
            }
        }
        ctx.barrier("rmsnorm-checked")?;
    }
    Ok(worst)
}

/// The mgpu* ABI that MLIR-compiled host code calls: load a module, launch
/// a kernel on a stream, copy back.
fn mgpu_abi(ctx: &mut Ctx) -> Result<String> {
    use symm_runtime::mgpu::*;
    const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry fill(.param .u64 p, .param .u32 v) {\n  .reg .b64 %rd<4>;\n  .reg .b32 %r<4>;\n\
        ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [v];\n  mov.u32 %r2, %tid.x;\n\
        mul.wide.u32 %rd2, %r2, 4;\n  add.u64 %rd3, %rd1, %rd2;\n  st.global.u32 [%rd3], %r1;\n  ret;\n}\n\0";
    mgpuSetDefaultDevice(ctx.session.device.ordinal);
    // SAFETY: a NUL-terminated PTX image and matching kernel arguments.
    let values: Vec<u32> = unsafe {
        let module = mgpuModuleLoad(PTX.as_ptr().cast(), PTX.len() as i64);
        let function = mgpuModuleGetFunction(module, c"fill".as_ptr());
        let stream = mgpuStreamCreate();
        let device = mgpuMemAlloc(64 * 4, stream, false);
        let mut pointer = device as u64;
        let mut value = 0x5eed_u32;
        let mut params: [*mut std::ffi::c_void; 2] = [
            (&mut pointer as *mut u64).cast(),
            (&mut value as *mut u32).cast(),
        ];
        mgpuLaunchKernel(
            function,
            1,
            1,
            1,
            64,
            1,
            1,
            0,
            stream,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
            2,
        );
        let mut host = vec![0u32; 64];
        mgpuMemcpy(host.as_mut_ptr().cast(), device, 64 * 4, stream);
        mgpuStreamSynchronize(stream);
        mgpuMemFree(device, stream);
        mgpuStreamSynchronize(stream);
        mgpuStreamDestroy(stream);
        mgpuModuleUnload(module);
        host
    };
    ctx.session.device.bind()?;
    if values.iter().any(|&v| v != 0x5eed) {
        return Err(Error::Cuda(format!(
            "kernel launched through mgpu* wrote {:#x}",
            values[0]
        )));
    }
    Ok(
        "mgpuModuleLoad/GetFunction/LaunchKernel/MemAlloc/Memcpy/StreamSynchronize ran a kernel"
            .into(),
    )
}

fn dump_ptx(dir: &str) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("dump", e))?;
    let write = |name: &str, ptx: String| {
        std::fs::write(format!("{dir}/{name}.ptx"), ptx).map_err(|e| Error::io("dump", e))
    };
    for entry in library::KERNELS {
        write(entry.name, entry.ptx.to_owned())?;
    }
    Ok(())
}

fn run() -> Result<ExitCode> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--dump-ptx") {
        dump_ptx(args.get(2).map(String::as_str).unwrap_or("ptx"))?;
        return Ok(ExitCode::SUCCESS);
    }
    if cuda::device_count() == 0 {
        println!("skipped: no CUDA device");
        return Ok(ExitCode::SUCCESS);
    }
    if args.get(1).map(String::as_str) == Some("--threads") {
        let world: usize = args
            .get(2)
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| Error::InvalidArgument("--threads needs a number".into()))?;
        return run_threads(world);
    }
    let group = Group::from_env()?;
    let only = args.get(1).cloned();
    if only.as_deref() == Some("dead-peer") {
        return Ok(dead_peer(context(group, String::new())?));
    }
    let (_, failed) = run_suite(context(group, String::new())?, only);
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn context(group: Group, prefix: String) -> Result<Ctx> {
    Ok(Ctx {
        session: Session::new(group, Duration::from_secs(30))?,
        passed: 0,
        failed: 0,
        prefix,
    })
}

/// Single-process mode: each thread joins as one rank on its own GPU.
fn run_threads(world: usize) -> Result<ExitCode> {
    if cuda::device_count() < world {
        println!("skipped: {world} threads need {world} CUDA devices");
        return Ok(ExitCode::SUCCESS);
    }
    let store = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|e| Error::io("no free port", e))?;
    let handles: Vec<_> = (0..world)
        .map(|rank| {
            std::thread::spawn(move || -> Result<(usize, usize)> {
                let group =
                    Group::join(symm_runtime::group::GroupConfig::thread(rank, world, store))?;
                let ctx = context(group, format!("[thread {rank}] "))?;
                Ok(run_suite(ctx, None))
            })
        })
        .collect();
    let mut failed = 0;
    for handle in handles {
        match handle.join() {
            Ok(Ok((_, f))) => failed += f,
            Ok(Err(error)) => {
                println!("FAIL thread setup: {error}");
                failed += 1;
            }
            Err(_) => {
                println!("FAIL a thread panicked");
                failed += 1;
            }
        }
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Runs the tests (or only `only`); returns (passed, failed).
fn run_suite(mut ctx: Ctx, only: Option<String>) -> (usize, usize) {
    let tests: [(&str, TestFn); 12] = [
        ("p2p", p2p),
        ("barrier-100k", barrier_stress),
        ("all-reduce", all_reduce_correctness),
        ("lamport", lamport),
        ("graph-replay", graph_replay),
        ("memory-baseline", memory_baseline),
        ("mgpu-abi", mgpu_abi),
        ("all-gather-matmul", all_gather_matmul),
        ("fused-rmsnorm", fused_rmsnorm),
        ("matmul-pair", matmul_pair),
        ("gemm-algos", gemm_algos),
        ("stream-gate", stream_gate),
    ];
    // Without peer access (SYMM_FORCE_NCCL=1) only the collectives apply,
    // and they run on NCCL.
    let peer_access = ctx.session.group.peer_access;
    for (name, test) in tests {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        if !peer_access && !matches!(name, "all-reduce" | "graph-replay" | "stream-gate") {
            println!("{}skip {name}: no peer access (NCCL fallback)", ctx.prefix);
            continue;
        }
        // 100,000 barriers at one turn of a shared GPU each take hours.
        if name == "barrier-100k" && !ctx.session.gpu_sharers.is_empty() && only.is_none() {
            println!(
                "{}skip {name}: this rank shares its GPU with ranks {:?}",
                ctx.prefix, ctx.session.gpu_sharers
            );
            continue;
        }
        if let Err(error) = ctx.session.device.bind() {
            ctx.record(name, Err(error));
            continue;
        }
        let result = test(&mut ctx);
        ctx.record(name, result);
    }
    println!("{}{} passed, {} failed", ctx.prefix, ctx.passed, ctx.failed);
    (ctx.passed, ctx.failed)
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(error) => {
            println!("FAIL setup: {error}");
            ExitCode::FAILURE
        }
    }
}
