//! The signal-pad layout that the runtime's PTX kernels and the compiler's
//! `gpu.func` kernels share. Compiled and library collectives use the same
//! pools and pads, so one definition keeps them from drifting apart; this
//! crate depends on nothing (no MLIR, no CUDA).
//!
//! A rank's pad starts with one u32 CAS slot per (channel, peer), channel
//! = thread block: slot `block * MAX_WORLD + peer` ([`cas_slot`]). A put is
//! a CAS 0->1 with release semantics at system scope on the peer's slot
//! (channel, me); a wait is a CAS 1->0 with acquire semantics on my slot
//! (channel, peer). Slots return to 0, so CUDA-graph replays need no reset.
//! The staged one-shot adds as many u32 counters after the slots: a put is
//! a posted release add of 1 on the peer's counter (channel, me), a wait
//! spins with acquire loads until my counter (channel, peer) reaches the
//! block's call number + 1. Its input goes through one of two staging
//! slots after a buffer's data, picked by the block's call counter.
//!
//! The Lamport one-shot (16-bit floats) needs no barrier: each rank
//! stores its input straight into a region of every peer's Lamport area,
//! which holds the sentinel -0.0 (u16 0x8000) wherever no data has
//! arrived; readers spin until no lane is the sentinel, then put it back.
//! A rank's area holds two parities (the block's call counter picks one)
//! of one region per source rank ([`lamport_layout`]).
//!
//! A compiled program finds a pool's tables through a [`Descriptor`]: u64
//! words in device memory that its kernels load.

#![no_std]

pub mod abi;
pub mod library;

/// The device global whose presence in a compiled program's GPU module
/// says that every kernel in it waits for the grids before it
/// (`griddepcontrol.wait`, put there by `symm-wait-for-prior-grids`), so
/// that the runtime may launch them with programmatic dependent launch.
pub const WAITS_FOR_PRIOR_GRIDS: &str = "symm_waits_for_prior_grids";

/// The alignment, in bytes, of every buffer a compiled program takes: its
/// kernels (the generated matmuls, the collectives, the row kernels) move
/// 16-byte vectors. An entry point refuses an argument off this boundary,
/// and a generated matmul whose operands are off it (a view inside the
/// program) runs the library's kernels instead.
pub const VECTOR_ALIGNMENT: u64 = 16;

/// Calls of up to this many rows run a generated matmul as a GEMV (the
/// one-row GEMV, then the tensor-core GEMV): the default of
/// `symm-linalg-matmul-to-gpu`'s `mma-gemv-rows`. Those GEMVs launch while
/// the grid before them drains (programmatic dependent launch), which the
/// runtime's measured choice credits them for.
pub const GEMV_MAX_ROWS: u64 = 16;

/// Most ranks a group can have for the signal-pad kernels (one NVLink domain).
pub const MAX_WORLD: usize = 8;
/// Most thread blocks of a signal-pad kernel, i.e. channels of a pad.
pub const MAX_BLOCKS: usize = 264;
/// Most blocks of a two-shot: one per SM of an H100/H200, measured best
/// from 2 to 32 MiB (bench/probes/peer_bandwidth.rs; 264 blocks cost up to
/// 10% at 2 MiB). A constant, not the device's SM count: every rank must
/// launch the same grid, since block b pairs with the peers' block b.
pub const TWO_SHOT_MAX_BLOCKS: usize = MAX_BLOCKS / 2;
/// Threads per block of the all-reduce kernels.
pub const THREADS: u32 = 512;
/// Blocks of `THREADS` a kernel launched on at most `most_blocks` blocks
/// must fit on one SM at once, so that its grid runs in one wave on an
/// H100/H200 (132 SMs, `TWO_SHOT_MAX_BLOCKS`): 2 for `MAX_BLOCKS`, which
/// bounds a thread to 64 registers. The kernels declare it to ptxas
/// (`.minnctapersm`); without it, a fused RMSNorm that took 80 registers
/// fit one block per SM and ran 256 rows 1.42x slower (two waves).
pub const fn blocks_per_sm(most_blocks: usize) -> u32 {
    most_blocks.div_ceil(TWO_SHOT_MAX_BLOCKS) as u32
}
/// Bytes of the CAS slots of one pad.
pub const CAS_BYTES: usize = MAX_BLOCKS * MAX_WORLD * 4;
/// Bytes of one rank's signal pad: the CAS slots, then as many counters.
pub const PAD_BYTES: usize = 2 * CAS_BYTES;

/// Largest message for the staged one-shot; larger ones take the plain
/// one-shot, whose extra staging copy would cost bandwidth.
pub const STAGING_MAX: usize = 512 << 10;

/// Where a symmetric buffer of `bytes` data bytes keeps its two staging
/// slots: (offset of the first from the buffer's base, bytes per slot).
/// Every message of at most `min(bytes, STAGING_MAX)` bytes fits a slot.
pub const fn staging_layout(bytes: usize) -> (usize, usize) {
    let offset = bytes.next_multiple_of(128);
    let slot = if offset < STAGING_MAX {
        offset
    } else {
        STAGING_MAX
    };
    (offset, slot)
}

/// Largest message the Lamport one-shot takes: its area holds
/// `2 * world` regions of up to this many bytes in every rank's copy
/// (a buffer of at least this size keeps 16 MiB of them on 2 ranks, 64
/// MiB on 8). 4 MiB is the MLP block's all-reduce at 256 tokens of hidden
/// 8192 (Llama-3-70B), 512 of 4096: on 2 ranks the Lamport one-shot beat
/// the two-shot by 2.4-12.7 µs a block from 1 to 4 MiB, as it beat the
/// barrier one-shot at Llama-3-8B's 1 MiB
/// (bench/results/2026-11-27-lamport-1m-h200x2.md,
/// bench/results/2026-11-28-lamport-2m-h200x2.md).
pub const LAMPORT_MAX: usize = 4 << 20;

/// Largest total of split-K slices that a Lamport all-reduce sends one by
/// one, each in its own region's part (`Emitter::lamport_slices_fit`): a
/// slice of at most half of it has no more 16-byte vectors than a full
/// Lamport grid has threads, so vector `i` is in block `i / 128`, the
/// channel a matmul that sends its slices itself computes.
pub const LAMPORT_SLICES_MAX: usize = 1 << 20;

/// Where the Lamport one-shot's per-block call counters start in a pool's
/// table of call counters (`Descriptor::Epochs`): after the staged
/// kernels' (one u32 per channel each). Apart, so that a Lamport call does
/// not move the call number that the staged kernels pair with their
/// counters.
pub const LAMPORT_EPOCHS: usize = MAX_BLOCKS;

/// Threads per block of the Lamport one-shot, whose thread holds one
/// vector: small blocks spread a message over more SMs, each with fewer
/// remote stores and spins in flight.
pub const LAMPORT_THREADS: u32 = 128;

/// Where the Lamport kernels' stamps start in a pool's table of call
/// counters: one u32 per channel, after their call counters. A generated
/// matmul that sends its product into the Lamport areas itself (its
/// epilogue, instead of the all-reduce kernel) sets channel `c`'s stamp to
/// the channel's call counter + 1; the all-reduce's block then sends
/// nothing and, once it has read the stamp, sets it back to its counter,
/// a value no later call's counter + 1 can equal.
pub const LAMPORT_STAMPS: usize = 2 * MAX_BLOCKS;

/// Bytes of a pool's table of call counters: the staged kernels', the
/// Lamport kernels', the Lamport stamps.
pub const EPOCH_BYTES: usize = 3 * MAX_BLOCKS * 4;

/// The u16 every lane of a Lamport area holds where no data has arrived:
/// -0.0 in bf16 and f16. Senders write +0.0 for it (a sum is unchanged).
pub const LAMPORT_SENTINEL: u16 = 0x8000;

/// Where a symmetric buffer of `bytes` data bytes, whose staging slots
/// end at `after`, keeps its Lamport area on `world` ranks: (offset from
/// the buffer's base, bytes per region, bytes of the area). Region
/// `(parity, source)` is the `parity * world + source`th.
pub const fn lamport_layout(bytes: usize, after: usize, world: usize) -> (usize, usize, usize) {
    let region = if bytes.next_multiple_of(128) < LAMPORT_MAX {
        bytes.next_multiple_of(128)
    } else {
        LAMPORT_MAX
    };
    (after.next_multiple_of(128), region, 2 * world * region)
}

/// The u64 words of a pool descriptor, by index.
pub enum Descriptor {
    /// Device table of every rank's base address of the pool.
    Bases = 0,
    /// Device table of every rank's signal pad.
    Pads = 1,
    /// Offset of the staging slots from a base.
    Staging = 2,
    /// Bytes per staging slot.
    Slot = 3,
    /// This rank's per-block call counters (u32 each): `MAX_BLOCKS` for the
    /// staged kernels, then as many for the Lamport ones and their stamps
    /// (`EPOCH_BYTES`).
    Epochs = 4,
    /// This process's rank in the pool's group.
    Rank = 5,
    /// Ranks in the pool's group.
    World = 6,
    /// Nanoseconds a wait spins before it gives up and sets the error flag.
    Timeout = 7,
    /// Address of the u32 error flag that a timed-out wait sets to 1.
    Error = 8,
    /// Offset of the Lamport area from a base.
    Lamport = 9,
    /// Bytes per region of the Lamport area.
    LamportRegion = 10,
}

/// Words in a descriptor.
pub const DESCRIPTOR_WORDS: usize = 11;

/// Bumped by hand when the protocol changes in a way no constant below
/// shows (an order of the layout, a kernel's use of a region).
pub const PROTOCOL_REVISION: u64 = 1;

/// The protocol a compiled program and a runtime must share, as one
/// number: FNV-1a over `PROTOCOL_REVISION` and every constant that sizes
/// or places what both read (pools' layout, pads, call counters, Lamport
/// regions, descriptor words, grids). A compiled entry point passes the
/// one it was built with (`symm_rt_check_protocol`), so a program built by
/// another version of symm than its runtime fails its first call with an
/// error instead of reading another layout (say, 4 MiB Lamport messages
/// sent into a runtime's 1 MiB regions).
pub const PROTOCOL_FINGERPRINT: u64 = fingerprint(&[
    PROTOCOL_REVISION,
    MAX_WORLD as u64,
    MAX_BLOCKS as u64,
    THREADS as u64,
    PAD_BYTES as u64,
    STAGING_MAX as u64,
    LAMPORT_MAX as u64,
    LAMPORT_SLICES_MAX as u64,
    LAMPORT_EPOCHS as u64,
    LAMPORT_THREADS as u64,
    LAMPORT_STAMPS as u64,
    EPOCH_BYTES as u64,
    LAMPORT_SENTINEL as u64,
    DESCRIPTOR_WORDS as u64,
    VECTOR_ALIGNMENT,
]);

/// FNV-1a over `words`' little-endian bytes, halved so that it is a
/// positive i64 (the ABI's integer).
pub const fn fingerprint(words: &[u64]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < words.len() {
        let mut byte = 0;
        while byte < 8 {
            hash ^= (words[i] >> (8 * byte)) & 0xff;
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            byte += 1;
        }
        i += 1;
    }
    hash >> 1
}

/// Every shared constant and descriptor word as a C header (its
/// `Display`), which the C++ conversion patterns include
/// (`dialects/include/symm/Protocol.h`, kept current by a test), so the
/// compiler's lowering has no copy of its own.
pub struct CHeader;

impl core::fmt::Display for CHeader {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        writeln!(
            f,
            "/* Generated from runtime/protocol/src/lib.rs by its test \
`c_header_is_current`;\n   do not edit. The signal-pad protocol that the \
runtime and the compiler share. */"
        )?;
        writeln!(f, "#ifndef SYMM_PROTOCOL_H\n#define SYMM_PROTOCOL_H\n")?;
        let constants: [(&str, usize); 8] = [
            ("MAX_WORLD", MAX_WORLD),
            ("MAX_BLOCKS", MAX_BLOCKS),
            ("THREADS", THREADS as usize),
            ("CAS_BYTES", CAS_BYTES),
            ("PAD_BYTES", PAD_BYTES),
            ("DESCRIPTOR_WORDS", DESCRIPTOR_WORDS),
            ("LAMPORT_SENTINEL", LAMPORT_SENTINEL as usize),
            ("LAMPORT_EPOCHS", LAMPORT_EPOCHS),
        ];
        for (name, value) in constants {
            writeln!(f, "#define SYMM_PROTOCOL_{name} {value}")?;
        }
        let words: [(&str, Descriptor); DESCRIPTOR_WORDS] = [
            ("BASES", Descriptor::Bases),
            ("PADS", Descriptor::Pads),
            ("STAGING", Descriptor::Staging),
            ("SLOT", Descriptor::Slot),
            ("EPOCHS", Descriptor::Epochs),
            ("RANK", Descriptor::Rank),
            ("WORLD", Descriptor::World),
            ("TIMEOUT", Descriptor::Timeout),
            ("ERROR", Descriptor::Error),
            ("LAMPORT", Descriptor::Lamport),
            ("LAMPORT_REGION", Descriptor::LamportRegion),
        ];
        writeln!(f)?;
        for (name, word) in words {
            writeln!(f, "#define SYMM_DESCRIPTOR_{name} {}", word as usize)?;
        }
        writeln!(f, "\n#endif /* SYMM_PROTOCOL_H */")
    }
}

/// Index (in u32s) of the CAS slot of channel `block` for `peer`.
pub const fn cas_slot(block: usize, peer: usize) -> usize {
    block * MAX_WORLD + peer
}

/// Fails unless the committed file at `path` is `generated`; with
/// `SYMM_REGENERATE` set, writes it first.
#[cfg(test)]
pub(crate) fn assert_generated_current(path: &str, generated: &str) {
    extern crate std;
    if std::env::var_os("SYMM_REGENERATE").is_some() {
        std::fs::write(path, generated).expect("writes the generated file");
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "{path} is stale: run `SYMM_REGENERATE=1 cargo test -p symm-protocol`"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_fill_the_cas_half_of_a_pad() {
        assert_eq!(cas_slot(0, 0), 0);
        assert_eq!(cas_slot(1, 0), MAX_WORLD);
        assert_eq!((cas_slot(MAX_BLOCKS - 1, MAX_WORLD - 1) + 1) * 4, CAS_BYTES);
        const { assert!(PAD_BYTES >= CAS_BYTES) };
    }

    #[test]
    fn lamport_regions_hold_every_message_up_to_the_cap() {
        for bytes in [1, 127, 4096, LAMPORT_MAX - 1, LAMPORT_MAX, 3 << 20] {
            let (offset, region, area) = lamport_layout(bytes, 1000, 2);
            assert!(offset >= 1000 && offset % 128 == 0);
            assert!(region >= bytes.min(LAMPORT_MAX) && region % 128 == 0);
            assert_eq!(area, 4 * region);
        }
    }

    /// The fingerprint moves with any of its words (the old 1 MiB Lamport
    /// bound gives another) and is a positive i64.
    #[test]
    fn the_fingerprint_tells_protocols_apart() {
        let words = [PROTOCOL_REVISION, LAMPORT_MAX as u64, MAX_BLOCKS as u64];
        let old_lamport = [PROTOCOL_REVISION, 1 << 20, MAX_BLOCKS as u64];
        assert_ne!(fingerprint(&words), fingerprint(&old_lamport));
        assert_ne!(fingerprint(&[1, 2]), fingerprint(&[2, 1]));
        assert!(i64::try_from(PROTOCOL_FINGERPRINT).is_ok());
        assert_eq!(PROTOCOL_FINGERPRINT, PROTOCOL_FINGERPRINT as i64 as u64);
    }

    #[test]
    fn c_header_is_current() {
        extern crate std;
        use std::string::ToString;
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../dialects/include/symm/Protocol.h"
        );
        assert_generated_current(path, &CHeader.to_string());
    }

    #[test]
    fn staging_slots_hold_every_message_up_to_the_cap() {
        assert_eq!(staging_layout(100), (128, 128));
        assert_eq!(staging_layout(1 << 20), (1 << 20, STAGING_MAX));
        for bytes in [1, 127, 128, 4096, STAGING_MAX, STAGING_MAX + 1, 3 << 20] {
            let (offset, slot) = staging_layout(bytes);
            assert!(offset >= bytes && offset % 128 == 0 && slot % 128 == 0);
            assert!(slot >= bytes.min(STAGING_MAX));
        }
    }
}
