//! `symm-peer-probe`: how fast SM loads and stores cross NVLink between
//! two ranks, the ceiling any all-reduce kernel works under. Each rank
//! moves 32 MiB per call through a symmetric buffer, pulling (loads from
//! the peer's copy), pushing (stores into it) or both at once, on grids of
//! several sizes, both ranks together or rank 0 alone. No signal pads:
//! the data is junk, only the time counts.
//!
//!   symm-launch -n 2 symm-peer-probe

use std::{process::ExitCode, time::Duration};
use symm_runtime::{
    Error, Result,
    cuda::{self, DeviceBuffer, Event, KernelCache, Stream, launch},
    group::Group,
    library::{Algorithm, Dtype, ReduceOp},
    session::Session,
    symmetric::SymmetricBuffer,
};

const BYTES: usize = 32 << 20;
const ITERS: usize = 100;
const WARMUP: usize = 20;
const ENTRY: &str = "two_copies";

/// Blocks [0, split) copy job a, the rest job b; each job is a grid-stride
/// loop of 16-byte vectors, four in flight per thread.
const PTX: &str = ".version 8.0
.target sm_90
.address_size 64

.visible .entry two_copies(.param .u64 p_src_a, .param .u64 p_dst_a, .param .u64 p_src_b,
  .param .u64 p_dst_b, .param .u64 p_vectors, .param .u32 p_split)
{
  .reg .pred %p<4>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<40>;
  ld.param.u64 %rd1, [p_src_a];
  ld.param.u64 %rd2, [p_dst_a];
  ld.param.u64 %rd3, [p_vectors];
  ld.param.u32 %r7, [p_split];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %nctaid.x;
  setp.lt.u32 %p2, %r2, %r7;
  @%p2 bra job;
  ld.param.u64 %rd1, [p_src_b];
  ld.param.u64 %rd2, [p_dst_b];
  sub.u32 %r2, %r2, %r7;
  sub.u32 %r4, %r4, %r7;
  bra start;
job:
  mov.u32 %r4, %r7;
start:
  mad.lo.u32 %r5, %r2, %r3, %r1;
  cvt.u64.u32 %rd4, %r5;
  mul.lo.u32 %r6, %r4, %r3;
  cvt.u64.u32 %rd5, %r6;
four:
  mad.lo.u64 %rd6, %rd5, 3, %rd4;
  setp.ge.u64 %p1, %rd6, %rd3;
  @%p1 bra one;
  shl.b64 %rd10, %rd4, 4;
  shl.b64 %rd11, %rd5, 4;
  add.u64 %rd12, %rd10, %rd11;
  add.u64 %rd13, %rd12, %rd11;
  add.u64 %rd14, %rd13, %rd11;
  add.u64 %rd20, %rd1, %rd10;
  add.u64 %rd21, %rd1, %rd12;
  add.u64 %rd22, %rd1, %rd13;
  add.u64 %rd23, %rd1, %rd14;
  ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd20];
  ld.global.v4.b32 {%r14, %r15, %r16, %r17}, [%rd21];
  ld.global.v4.b32 {%r18, %r19, %r20, %r21}, [%rd22];
  ld.global.v4.b32 {%r22, %r23, %r24, %r25}, [%rd23];
  add.u64 %rd24, %rd2, %rd10;
  add.u64 %rd25, %rd2, %rd12;
  add.u64 %rd26, %rd2, %rd13;
  add.u64 %rd27, %rd2, %rd14;
  st.global.v4.b32 [%rd24], {%r10, %r11, %r12, %r13};
  st.global.v4.b32 [%rd25], {%r14, %r15, %r16, %r17};
  st.global.v4.b32 [%rd26], {%r18, %r19, %r20, %r21};
  st.global.v4.b32 [%rd27], {%r22, %r23, %r24, %r25};
  mad.lo.u64 %rd4, %rd5, 4, %rd4;
  bra four;
one:
  setp.ge.u64 %p1, %rd4, %rd3;
  @%p1 bra done;
  shl.b64 %rd10, %rd4, 4;
  add.u64 %rd20, %rd1, %rd10;
  ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd20];
  add.u64 %rd24, %rd2, %rd10;
  st.global.v4.b32 [%rd24], {%r10, %r11, %r12, %r13};
  add.u64 %rd4, %rd4, %rd5;
  bra one;
done:
  ret;
}
";

/// Bulk-copy (TMA) probes, one thread per block: `bulk_push` stores
/// `p_chunk` bytes of shared memory to `p_dst + offset` for every offset
/// of the block's grid stride below `p_bytes`, up to `SLOTS` in flight;
/// `bulk_pull` loads `p_src + offset` into shared memory the same way,
/// each slot completing on its own mbarrier. Shared memory holds junk, so
/// the slots share it.
const SLOTS: usize = 4;
const MAX_CHUNK: usize = 32 << 10;
const BULK_PUSH: &str = "bulk_push";
const BULK_PULL: &str = "bulk_pull";

fn bulk_ptx(pull: bool) -> String {
    use std::fmt::Write;
    let entry = if pull { BULK_PULL } else { BULK_PUSH };
    let mut ptx = format!(
        ".version 8.0
.target sm_90
.address_size 64

.visible .entry {entry}(.param .u64 p_addr, .param .u64 p_bytes, .param .u64 p_chunk)
{{
  .shared .align 128 .b8 smem[{smem}];
  .shared .align 8 .b64 mbar[{SLOTS}];
  .reg .pred %p<8>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<40>;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra done;
  ld.param.u64 %rd1, [p_addr];
  ld.param.u64 %rd2, [p_bytes];
  ld.param.u64 %rd3, [p_chunk];
  cvt.u32.u64 %r2, %rd3;
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd4, %r3, %r2;
  mul.wide.u32 %rd5, %r4, %r2;
  mov.u32 %r5, smem;
  mov.u32 %r6, mbar;
",
        smem = MAX_CHUNK
    );
    for s in 0..SLOTS {
        // %r(10+s) smem, %r(20+s) mbarrier, %r(30+s) its parity, %p(2+s) issued.
        let _ = write!(
            ptx,
            "  mov.u32 %r{a}, %r5;
  add.u32 %r{b}, %r6, {m};
  mov.u32 %r{c}, 0;
  setp.ne.u32 %p{i}, %r1, %r1;
",
            a = 10 + s,
            b = 20 + s,
            c = 30 + s,
            i = 2 + s,
            m = 8 * s
        );
        if pull {
            let _ = writeln!(ptx, "  mbarrier.init.shared::cta.b64 [%r{}], 1;", 20 + s);
        }
    }
    ptx.push_str(
        "  fence.proxy.async.shared::cta;
round:
",
    );
    for s in 0..SLOTS {
        let _ = write!(
            ptx,
            "  setp.ge.u64 %p7, %rd4, %rd2;
  @%p7 bra drain;
  add.u64 %rd6, %rd1, %rd4;
"
        );
        if pull {
            // Wait for this slot's previous load before reusing it.
            let _ = write!(
                ptx,
                "  @!%p{i} bra issue_{s};
wait_{s}:
  mbarrier.try_wait.parity.shared::cta.b64 %p6, [%r{b}], %r{c};
  @!%p6 bra wait_{s};
  xor.b32 %r{c}, %r{c}, 1;
issue_{s}:
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd7, [%r{b}], %r2;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r{a}], [%rd6], %r2, [%r{b}];
  setp.eq.u32 %p{i}, %r1, %r1;
",
                a = 10 + s,
                b = 20 + s,
                c = 30 + s,
                i = 2 + s
            );
        } else {
            let _ = write!(
                ptx,
                "  cp.async.bulk.global.shared::cta.bulk_group [%rd6], [%r{a}], %r2;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group.read {keep};
",
                a = 10 + s,
                keep = SLOTS - 1
            );
        }
        ptx.push_str(
            "  add.u64 %rd4, %rd4, %rd5;
",
        );
    }
    ptx.push_str(
        "  bra round;
drain:
",
    );
    if pull {
        for s in 0..SLOTS {
            let _ = write!(
                ptx,
                "  @!%p{i} bra drained_{s};
drain_{s}:
  mbarrier.try_wait.parity.shared::cta.b64 %p6, [%r{b}], %r{c};
  @!%p6 bra drain_{s};
drained_{s}:
",
                b = 20 + s,
                c = 30 + s,
                i = 2 + s
            );
        }
    } else {
        ptx.push_str(
            "  cp.async.bulk.wait_group 0;
",
        );
    }
    ptx.push_str(
        "done:
  ret;
}
",
    );
    ptx
}

/// Two copies of `BYTES / 2` each, in the halves of one grid.
struct Pattern {
    name: &'static str,
    /// (source, destination) of each half, from (local, peer) addresses.
    jobs: fn(u64, u64) -> [(u64, u64); 2],
    /// Rank 0 only (rank 1 idles), or both ranks at once.
    one_way: bool,
}

const HALF: u64 = (BYTES / 2) as u64;

const PATTERNS: [Pattern; 5] = [
    Pattern {
        name: "pull, both ways",
        jobs: |local, peer| [(peer, local), (peer + HALF, local + HALF)],
        one_way: false,
    },
    Pattern {
        name: "push, both ways",
        jobs: |local, peer| [(local, peer), (local + HALF, peer + HALF)],
        one_way: false,
    },
    Pattern {
        name: "half pull + half push, both ways",
        jobs: |local, peer| [(peer, local), (local + HALF, peer + HALF)],
        one_way: false,
    },
    Pattern {
        name: "pull, rank 0 only",
        jobs: |local, peer| [(peer, local), (peer + HALF, local + HALF)],
        one_way: true,
    },
    Pattern {
        name: "push, rank 0 only",
        jobs: |local, peer| [(local, peer), (local + HALF, peer + HALF)],
        one_way: true,
    },
];

fn launch_copies(
    function: cudarc::driver::sys::CUfunction,
    jobs: [(u64, u64); 2],
    blocks: u32,
    stream: &Stream,
) -> Result<()> {
    let vectors = HALF / 16;
    let split = blocks / 2;
    let mut slots: [u64; 6] = [
        jobs[0].0,
        jobs[0].1,
        jobs[1].0,
        jobs[1].1,
        vectors,
        u64::from(split),
    ];
    let mut args: Vec<*mut std::ffi::c_void> =
        slots.iter_mut().map(|s| (s as *mut u64).cast()).collect();
    // SAFETY: the parameters match two_copies' (a u32 read from the first
    // bytes of its little-endian 8-byte slot); every address lies in a
    // mapped BYTES buffer.
    unsafe { launch(function, blocks, 512, stream.raw, &mut args) }
}

fn launch_bulk(
    function: cudarc::driver::sys::CUfunction,
    address: u64,
    chunk: usize,
    blocks: u32,
    stream: &Stream,
) -> Result<()> {
    let mut slots: [u64; 3] = [address, BYTES as u64, chunk as u64];
    let mut args: Vec<*mut std::ffi::c_void> =
        slots.iter_mut().map(|s| (s as *mut u64).cast()).collect();
    // SAFETY: the parameters match bulk_push/bulk_pull; every chunk lies in
    // the mapped BYTES buffer (BYTES is a multiple of every chunk).
    unsafe { launch(function, blocks, 32, stream.raw, &mut args) }
}

/// Microseconds per call of `call`, `ITERS` calls after `WARMUP`, both
/// ranks starting together.
fn timed(
    group: &mut Group,
    stream: &Stream,
    label: &str,
    call: &dyn Fn() -> Result<()>,
) -> Result<f64> {
    let (rank, world, timeout) = (group.rank(), group.world_size(), group.config.timeout);
    for _ in 0..WARMUP {
        call()?;
    }
    stream.synchronize()?;
    group.store.barrier(label, rank, world, timeout)?;
    let (start, end) = (Event::new()?, Event::new()?);
    start.record(stream)?;
    for _ in 0..ITERS {
        call()?;
    }
    end.record(stream)?;
    let us = f64::from(start.elapsed_ms(&end)?) * 1000.0 / ITERS as f64;
    group
        .store
        .barrier(&format!("{label}/done"), rank, world, timeout)?;
    Ok(us)
}

fn gbps(us: f64) -> f64 {
    BYTES as f64 / us / 1e3
}

fn run() -> Result<()> {
    if cuda::device_count() == 0 {
        println!("skipped: no CUDA device");
        return Ok(());
    }
    let Session {
        mut group,
        device,
        stream,
        mut collectives,
        ..
    } = Session::new(Group::from_env()?, Duration::from_secs(30))?;
    let (rank, world) = (group.rank(), group.world_size());
    if world != 2 {
        return Err(Error::InvalidArgument(format!(
            "the probe runs on 2 ranks, not {world}"
        )));
    }
    let buffer = SymmetricBuffer::allocate(&mut group, device.ordinal, "probe", BYTES)?;
    let peer = buffer
        .peer(1 - rank)
        .ok_or_else(|| Error::InvalidArgument("the ranks cannot map each other's memory".into()))?;
    let local = buffer.local();
    let kernels = KernelCache::default();
    let copies = kernels.get(ENTRY, || PTX.to_owned())?;
    let say = |line: String| {
        if rank == 0 {
            println!("{line}");
        }
    };
    say(
        "SM loads/stores, 32 MiB per rank per call, 512 threads per block; \
         GB/s = bytes one rank moves / time"
            .into(),
    );
    for pattern in &PATTERNS {
        let active = !pattern.one_way || rank == 0;
        let jobs = (pattern.jobs)(local, peer);
        for blocks in [66u32, 132, 264, 528, 1056] {
            let label = format!("{}/{blocks}", pattern.name);
            let us = timed(&mut group, &stream, &label, &|| {
                if active {
                    launch_copies(copies, jobs, blocks, &stream)?;
                }
                Ok(())
            })?;
            say(format!(
                "{:<34} {blocks:>5} blocks: {us:7.1} us, {:6.1} GB/s",
                pattern.name,
                gbps(us)
            ));
        }
    }
    say("bulk copies (cp.async.bulk, one thread per block, 4 chunks in flight), 32 MiB per rank per call".into());
    let (push, pull) = (
        kernels.get(BULK_PUSH, || bulk_ptx(false))?,
        kernels.get(BULK_PULL, || bulk_ptx(true))?,
    );
    for (name, function, one_way) in [
        ("bulk push, both ways", push, false),
        ("bulk pull, both ways", pull, false),
        ("bulk push, rank 0 only", push, true),
    ] {
        let active = !one_way || rank == 0;
        for blocks in [132u32, 264] {
            for chunk in [4usize << 10, 8 << 10, 16 << 10, 32 << 10] {
                let label = format!("{name}/{blocks}/{chunk}");
                let us = timed(&mut group, &stream, &label, &|| {
                    if active {
                        launch_bulk(function, peer, chunk, blocks, &stream)?;
                    }
                    Ok(())
                })?;
                say(format!(
                    "{name:<24} {blocks:>4} blocks, {:>2} KiB chunks: {us:7.1} us, {:6.1} GB/s",
                    chunk >> 10,
                    gbps(us)
                ));
            }
        }
    }
    say(format!(
        "all-reduce kernels by grid size, bf16 sum, eager, {ITERS} calls after {WARMUP}"
    ));
    // One-shot reads every input to the end, so it cannot write in place.
    let one_shot_out = DeviceBuffer::new(BYTES)?;
    for (name, algorithm, bytes) in [
        ("one-shot", Algorithm::OneShot, BYTES),
        ("two-shot in place", Algorithm::TwoShot, 2 << 20),
        ("two-shot in place", Algorithm::TwoShot, 8 << 20),
        ("two-shot in place", Algorithm::TwoShot, BYTES),
    ] {
        let out = if algorithm == Algorithm::OneShot {
            one_shot_out.ptr
        } else {
            local
        };
        for blocks in [33u32, 66, 132, 198, 264] {
            collectives.set_max_blocks(blocks);
            let label = format!("{name}/{bytes}/{blocks}");
            let us = timed(&mut group, &stream, &label, &|| {
                collectives.all_reduce(
                    &buffer,
                    out,
                    bytes / 2,
                    Dtype::Bf16,
                    ReduceOp::Sum,
                    algorithm,
                    stream.raw,
                )
            })?;
            collectives.check_peers("probe")?;
            say(format!(
                "{name:<18} {:>3} MiB, grid capped at {blocks:>3} blocks: {us:7.1} us",
                bytes >> 20
            ));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("symm-peer-probe: {error}");
            ExitCode::FAILURE
        }
    }
}
