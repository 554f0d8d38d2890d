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
//! calls are the block's.

use super::Kernel;
use crate::ir::Val;
use melior::dialect::arith::CmpiPredicate;
use symm_protocol::LAMPORT_EPOCHS;

impl<'c> Kernel<'_, 'c> {
    pub(super) fn lamport_one_shot(&self) {
        let e = self.e;
        let call = self.call(e.add(self.channel, e.c_index(LAMPORT_EPOCHS as i64)));
        let parity = call.parity;
        // Where this rank's vectors go (its region of every rank's area),
        // and where each rank's arrive (their regions of this rank's).
        let outboxes: Vec<Val> = self
            .peers
            .iter()
            .map(|p| e.lamport_region(self.pool, *p, parity, self.rank_index))
            .collect();
        let inboxes: Vec<Val> = self
            .peers
            .iter()
            .map(|p| e.lamport_region(self.pool, self.rank_index, parity, *p))
            .collect();
        let lanes = self.spec.vector;
        let vector = self.vector(self.element);
        let bits = e.vector(lanes, e.int_type(16));
        let sentinel_bits = e.splat(lanes, e.int_type(16), i64::from(i16::MIN));
        let sentinel = e.bitcast(sentinel_bits, vector);
        let positive_zero = e.zero(vector);
        let align = self.align(&self.spec.element);
        e.for_range(self.gtid, self.nvec, self.stride, |e, i| {
            let mine = self.load(e, self.input, i);
            let is_sentinel = e.cmp(CmpiPredicate::Eq, e.bitcast(mine, bits), sentinel_bits);
            let sent = e.select(is_sentinel, positive_zero, mine);
            for outbox in &outboxes {
                e.store(sent, e.gep(*outbox, i, vector), align);
            }
            let terms: Vec<Val> = inboxes
                .iter()
                .map(|inbox| e.lamport_wait(self.pool, e.gep(*inbox, i, vector), vector))
                .collect();
            for inbox in &inboxes {
                e.store(sentinel, e.gep(*inbox, i, vector), align);
            }
            let reduced = self.combine(e, terms);
            self.store(e, i, reduced);
        });
        // Every thread read the counter before any moves it on.
        e.sync_threads();
        self.end_call(&call);
    }
}
