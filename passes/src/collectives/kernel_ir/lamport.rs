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
//! Vector `i` belongs to block `i / LAMPORT_THREADS` at every size the kernel
//! takes (one vector per thread; `expand` keeps it so), so a region's
//! calls are the block's. The rows kernel (`rows.rs`) uses the same
//! exchange with a block per row, for as many rows as there are channels.

use super::{Kernel, staged::Call};
use crate::collectives::emit::Emitter;
use crate::collectives::emit::Val;
use melior::dialect::arith::CmpiPredicate;
use symm_protocol::LAMPORT_EPOCHS;

/// A Lamport call of a block: its call counter, where this rank's vectors
/// go (its region of every rank's area) and where every rank's arrive
/// (their regions of this rank's area).
pub(super) struct Lamport<'c> {
    pub(super) call: Call<'c>,
    outboxes: Vec<Val<'c>>,
    inboxes: Vec<Val<'c>>,
}

impl<'c> Kernel<'_, 'c> {
    pub(super) fn lamport_one_shot(&self) {
        let e = self.e;
        let lamport = self.lamport_call();
        e.for_range(self.gtid, self.nvec, self.stride, |e, i| {
            // The epilogue's operands (a residual) load while the peers'
            // vectors travel, not after they arrived.
            let operands = self.epilogue_operands(e, i);
            self.lamport_send(e, &lamport, i);
            let terms = self.lamport_receive(e, &lamport, i);
            let reduced = self.combine(e, terms);
            self.store_with(e, i, reduced, &operands);
        });
        self.lamport_end(&lamport);
    }

    /// The block's Lamport call: its counter's parity picks the regions.
    pub(super) fn lamport_call(&self) -> Lamport<'c> {
        let e = self.e;
        let call = self.call(e.add(self.channel, e.c_index(LAMPORT_EPOCHS as i64)));
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
        Lamport {
            call,
            outboxes,
            inboxes,
        }
    }

    /// Stores this rank's vector `i` (-0.0 lanes as +0.0) into every rank's
    /// region for it.
    pub(super) fn lamport_send(&self, e: &Emitter<'c>, lamport: &Lamport<'c>, i: Val<'c>) {
        let vector = self.vector(self.element);
        let bits = e.vector(self.spec.vector, e.int_type(16));
        let sentinel_bits = e.splat(self.spec.vector, e.int_type(16), i64::from(i16::MIN));
        let mine = self.own(e, i);
        let is_sentinel = e.cmp(CmpiPredicate::Eq, e.bitcast(mine, bits), sentinel_bits);
        let sent = e.select(is_sentinel, e.zero(vector), mine);
        let align = self.align(self.spec.element);
        for outbox in &lamport.outboxes {
            e.store(sent, e.gep(*outbox, i, vector), align);
        }
    }

    /// Every rank's vector `i`, in rank order, once each has arrived; the
    /// sentinel goes back behind them.
    pub(super) fn lamport_receive(
        &self,
        e: &Emitter<'c>,
        lamport: &Lamport<'c>,
        i: Val<'c>,
    ) -> Vec<Val<'c>> {
        let vector = self.vector(self.element);
        let sentinel_bits = e.splat(self.spec.vector, e.int_type(16), i64::from(i16::MIN));
        let sentinel = e.bitcast(sentinel_bits, vector);
        let align = self.align(self.spec.element);
        let terms = lamport
            .inboxes
            .iter()
            .map(|inbox| e.lamport_wait(self.pool, e.gep(*inbox, i, vector), vector))
            .collect();
        for inbox in &lamport.inboxes {
            e.store(sentinel, e.gep(*inbox, i, vector), align);
        }
        terms
    }

    /// Moves the block's Lamport counter on, once every thread has read it.
    pub(super) fn lamport_end(&self, lamport: &Lamport<'c>) {
        self.e.sync_threads();
        self.end_call(&lamport.call);
    }
}
