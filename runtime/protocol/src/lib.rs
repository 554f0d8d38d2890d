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
//! The runtime's staged one-shot adds as many u32 counters after the slots.

#![no_std]

/// Most ranks a group can have for the signal-pad kernels (one NVLink domain).
pub const MAX_WORLD: usize = 8;
/// Most thread blocks of a signal-pad kernel, i.e. channels of a pad.
pub const MAX_BLOCKS: usize = 264;
/// Threads per block of the all-reduce kernels.
pub const THREADS: u32 = 512;
/// Bytes of the CAS slots of one pad.
pub const CAS_BYTES: usize = MAX_BLOCKS * MAX_WORLD * 4;
/// Bytes of one rank's signal pad: the CAS slots, then as many counters.
pub const PAD_BYTES: usize = 2 * CAS_BYTES;

/// Index (in u32s) of the CAS slot of channel `block` for `peer`.
pub const fn cas_slot(block: usize, peer: usize) -> usize {
    block * MAX_WORLD + peer
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
}
