//! The Lamport one-shot (16-bit float sums): no barrier. Each thread
//! stores its input vector, with -0.0 lanes written as +0.0, into its
//! rank's region of every rank's Lamport area (its own included, so every
//! rank sums the same values in rank order), then loads each rank's
//! region of its own area once no lane holds the sentinel -0.0
//! (`symm_mem.lamport_wait`), puts the sentinel back, and reduces. The
//! block's Lamport call counter (its own, after the staged kernels':
//! `symm_protocol::LAMPORT_EPOCHS`) picks one of two parities of the area: a peer
//! writes a parity again only two calls of the block later, after this
//! rank's next call sent it data, so after this call's reads and clears.
//! Vector `i` belongs to block `(i mod MAX_BLOCKS * LAMPORT_THREADS) /
//! LAMPORT_THREADS` at every size the kernel takes: one vector per thread
//! up to a full grid of `MAX_BLOCKS`, above it the full grid, whose loop
//! wraps (`symm_protocol::library::lamport_takes`), so a region's calls
//! are the block's. The rows kernel (`rows.rs`) uses the same
//! exchange with a block per row, for as many rows as there are channels.
//!
//! A split-K kernel that takes slices a generated matmul may send
//! (`AllReduceKernel::matmul_sends`) sends each slice on its own (rounded
//! on its own, one slice after the other in a region) where they all fit a
//! region
//! (`Emitter::lamport_slices_fit`, the same on every rank), and sums every
//! rank's slices in rank then slice order; else the sum of the slices, as
//! any other data. Its data may have been sent already, by the generated
//! matmul that made the slices (as it wrote them): the matmul then set the
//! block's stamp (`symm_protocol::LAMPORT_STAMPS`) to its call counter + 1,
//! and the block sends nothing, only receives. It sets the stamp back to
//! its counter once every thread has read it, which no later call's
//! counter + 1 equals (the counters wrap together).

use super::{Kernel, staged::Call};
use crate::collectives::emit::Emitter;
use crate::collectives::emit::Val;
use melior::dialect::arith::CmpiPredicate;

/// A Lamport call of a block: its call counter, where this rank's vectors
/// go (its region of every rank's area) and where every rank's arrive
/// (their regions of this rank's area).
pub(super) struct Lamport<'c> {
    pub(super) call: Call<'c>,
    outboxes: Vec<Val<'c>>,
    inboxes: Vec<Val<'c>>,
    /// A split-K kernel's: whether a matmul sent this call's data, and
    /// whether the slices go one by one (i1s).
    split: Option<Split<'c>>,
}

/// How a split-K kernel's call exchanges its slices.
#[derive(Clone, Copy)]
struct Split<'c> {
    sent: Val<'c>,
    sliced: Val<'c>,
    /// Vectors of a slice.
    vectors: Val<'c>,
    slices: u64,
}

impl<'c> Kernel<'_, 'c> {
    pub(super) fn lamport_one_shot(&self) {
        let e = self.e;
        let lamport = self.lamport_call();
        // Every vector of the thread goes out before it waits for any: a
        // thread holds more than one where the grid wraps (above
        // `MAX_BLOCKS * LAMPORT_THREADS` vectors), and each wait is an
        // NVLink flight.
        e.for_range(self.gtid, self.nvec, self.stride, |e, i| {
            self.lamport_send(e, &lamport, i);
        });
        e.for_range(self.gtid, self.nvec, self.stride, |e, i| {
            // The epilogue's operands (a residual) load while the peers'
            // vectors travel, not after they arrived.
            let operands = self.epilogue_operands(e, i);
            let reduced = self.lamport_reduce(e, &lamport, i);
            self.store_with(e, i, reduced, &operands);
        });
        self.lamport_end(&lamport);
    }

    /// The block's Lamport call: its counter's parity picks the regions.
    pub(super) fn lamport_call(&self) -> Lamport<'c> {
        let e = self.e;
        let call = self.call(e.lamport_counter(self.channel));
        let parity = call.parity;
        let outboxes = self
            .peers
            .iter()
            .map(|p| e.lamport_region(self.pool, *p, parity, self.rank_index))
            .collect();
        let inboxes = self
            .peers
            .iter()
            .map(|p| e.lamport_region(self.pool, self.rank_index, parity, *p))
            .collect();
        let split = self
            .spec
            .split_k
            .filter(|_| self.spec.matmul_sends)
            .map(|slices| {
                let stamp = e.epoch(self.pool, e.lamport_stamp(self.channel));
                let vectors = self.slice_vectors(e);
                let elements = e.mul(vectors, e.c64(self.spec.vector as i64));
                Split {
                    sent: e.cmp(CmpiPredicate::Eq, stamp, call.next),
                    sliced: e.lamport_slices_fit(self.pool, elements, slices),
                    vectors,
                    slices,
                }
            });
        Lamport {
            call,
            outboxes,
            inboxes,
            split,
        }
    }

    /// Stores this rank's vector `i` (-0.0 lanes as +0.0) into every rank's
    /// region for it, unless a matmul sent it: a split-K kernel's slices one
    /// by one where they fit.
    pub(super) fn lamport_send(&self, e: &Emitter<'c>, lamport: &Lamport<'c>, i: Val<'c>) {
        let Some(split) = lamport.split else {
            return self.send_vector(e, lamport, i, |e| self.own(e, i));
        };
        let unsent = e.xor(split.sent, e.constant(e.int_type(1), 1));
        e.when(unsent, |e| {
            e.if_else(
                split.sliced,
                |e| {
                    for slice in 0..split.slices {
                        let at = self.slice_vector(e, i, split.vectors, slice);
                        self.send_vector(e, lamport, at, |e| {
                            e.truncf(self.slice_term(e, at), self.vector(self.element))
                        });
                    }
                },
                |e| self.send_vector(e, lamport, i, |e| self.own(e, i)),
            );
        });
    }

    /// Stores `value` (-0.0 lanes as +0.0) at vector `i` of this rank's
    /// region of every rank's area.
    fn send_vector(
        &self,
        e: &Emitter<'c>,
        lamport: &Lamport<'c>,
        i: Val<'c>,
        value: impl FnOnce(&Emitter<'c>) -> Val<'c>,
    ) {
        let vector = self.vector(self.element);
        let sent = e.lamport_sendable(Some(self.spec.vector), self.element, value);
        let align = self.align(self.spec.element);
        for outbox in &lamport.outboxes {
            e.store(sent, e.gep(*outbox, i, vector), align);
        }
    }

    /// Vector `i` of the reduction: every rank's (and with slices sent one
    /// by one, every slice's) once it has arrived, in rank then slice
    /// order; the sentinel goes back behind them.
    pub(super) fn lamport_reduce(
        &self,
        e: &Emitter<'c>,
        lamport: &Lamport<'c>,
        i: Val<'c>,
    ) -> Val<'c> {
        let Some(split) = lamport.split else {
            let terms = self.lamport_receive(e, lamport, &[i]);
            return self.combine(e, terms);
        };
        e.choose(
            split.sliced,
            self.vector(self.element),
            |e| {
                let places: Vec<Val<'c>> = (0..split.slices)
                    .map(|slice| self.slice_vector(e, i, split.vectors, slice))
                    .collect();
                let terms = self.lamport_receive(e, lamport, &places);
                self.combine(e, terms)
            },
            |e| {
                let terms = self.lamport_receive(e, lamport, &[i]);
                self.combine(e, terms)
            },
        )
    }

    /// The vectors at `places` of every rank's region, in rank then place
    /// order, once each has arrived; the sentinel goes back behind them.
    fn lamport_receive(
        &self,
        e: &Emitter<'c>,
        lamport: &Lamport<'c>,
        places: &[Val<'c>],
    ) -> Vec<Val<'c>> {
        let vector = self.vector(self.element);
        let sentinel_bits = e.splat(self.spec.vector, e.int_type(16), i64::from(i16::MIN));
        let sentinel = e.bitcast(sentinel_bits, vector);
        let align = self.align(self.spec.element);
        let at = |inbox: &Val<'c>, place: &Val<'c>| e.gep(*inbox, *place, vector);
        let terms = lamport
            .inboxes
            .iter()
            .flat_map(|inbox| places.iter().map(move |place| (inbox, place)))
            .map(|(inbox, place)| e.lamport_wait(self.pool, at(inbox, place), vector))
            .collect();
        for inbox in &lamport.inboxes {
            for place in places {
                e.store(sentinel, at(inbox, place), align);
            }
        }
        terms
    }

    /// Moves the block's Lamport counter on, once every thread has read it
    /// (and the stamp, which goes back to the counter's value).
    pub(super) fn lamport_end(&self, lamport: &Lamport<'c>) {
        let e = self.e;
        e.sync_threads();
        self.end_call(&lamport.call);
        if lamport.split.is_some() {
            let first = e.cmp(CmpiPredicate::Eq, self.tid, e.c64(0));
            e.when(first, |e| {
                e.set_epoch(self.pool, e.lamport_stamp(self.channel), lamport.call.epoch)
            });
        }
    }
}
