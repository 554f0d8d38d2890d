//! The staged one-shot: every rank's data through the pool's staging
//! slots, blocks meeting through call counters (epochs) instead of a
//! closing barrier; the counters and slots the staged rows kernels use too.

use super::Kernel;
use crate::collectives::emit::Val;
use melior::dialect::arith::CmpiPredicate;

impl<'c> Kernel<'_, 'c> {
    /// The staged one-shot: each block copies its vectors of the input into
    /// the staging slot its call counter (epoch) picks, meets its peers
    /// through counters (one posted add each way instead of CAS round
    /// trips), reduces from the peers' slots, and bumps its counter. No
    /// closing barrier is needed: a block writes slot s on its n-th call
    /// and peers read it on their n-th call; their reads of s on call n-2
    /// ended before their call n-1 signalled this block, which it waited
    /// for before call n began.
    pub(super) fn staged_one_shot(&self) {
        let e = self.e;
        let staging = self.staging();
        self.strided(
            e,
            self.gtid,
            self.nvec,
            |e, i| self.own(e, i),
            |e, i, v| self.store_raw(e, v, staging.mine, i),
        );
        self.in_tail(e, |e, j| {
            let v = self.load_scalar(e, self.input, j);
            self.store_scalar(e, v, staging.mine, j);
        });
        self.meet_counters(&staging);
        self.reduce_all(&staging.slots);
        self.end_staged(&staging);
    }

    /// This block's call on call counter `counter` (`symm_mem.epoch`):
    /// the parity it takes and the number after it.
    pub(super) fn call(&self, counter: Val<'c>) -> Call<'c> {
        let e = self.e;
        let epoch = e.epoch(self.pool, counter);
        let (parity, next) = e.parity_and_next(epoch);
        Call {
            counter,
            epoch,
            parity,
            next,
        }
    }

    /// Thread 0 moves the call counter on: the block's next call takes the
    /// other parity. Every thread must have read the counter before.
    pub(super) fn end_call(&self, call: &Call<'c>) {
        let e = self.e;
        let first = e.cmp(CmpiPredicate::Eq, self.tid, e.c64(0));
        e.when(first, |e| e.set_epoch(self.pool, call.counter, call.next));
    }

    /// The staging slots of this block's call (its epoch's parity).
    pub(super) fn staging(&self) -> Staging<'c> {
        let e = self.e;
        let call = self.call(self.channel);
        // Every rank's slot, before the barrier: after it, only the loads
        // of the data itself should stand between a block and its result.
        Staging {
            mine: e.staging_slot(self.pool, self.rank_index, call.parity),
            slots: self
                .peers
                .iter()
                .map(|p| e.staging_slot(self.pool, *p, call.parity))
                .collect(),
            call,
        }
    }

    /// The staged kernels' barrier: thread p < world posts to peer p's
    /// counter for this channel and waits for its own to reach the call's.
    pub(super) fn meet_counters(&self, staging: &Staging<'c>) {
        let e = self.e;
        e.sync_threads();
        let lane = e.cmp(CmpiPredicate::Ult, self.tid, e.c64(self.spec.world as i64));
        e.when(lane, |e| {
            let peer = e.cast(self.tid, e.index());
            e.add_counter(self.pool, peer, self.channel);
            e.wait_counter(self.pool, peer, self.channel, staging.call.next);
        });
        e.sync_threads();
    }

    /// At a staged kernel's end: its next call takes the other slot. No
    /// barrier first: every thread read the epoch before `meet_counters`'
    /// barriers, and a block's reads of this call's slots need not end
    /// before the epoch moves (peers wait for its next call's counters
    /// before they write a slot again; the next call starts after this
    /// kernel ends).
    pub(super) fn end_staged(&self, staging: &Staging<'c>) {
        self.end_call(&staging.call);
    }
}

/// A block's call on one of its call counters: the counter (a channel of
/// `symm_mem.epoch`), its value, the parity of this call, the number after
/// it.
pub(super) struct Call<'c> {
    pub(super) counter: Val<'c>,
    /// The counter's value at the call.
    pub(super) epoch: Val<'c>,
    pub(super) parity: Val<'c>,
    pub(super) next: Val<'c>,
}

/// A staged call's slots: this rank's, every rank's (in rank order), and
/// the call.
pub(super) struct Staging<'c> {
    pub(super) mine: Val<'c>,
    pub(super) slots: Vec<Val<'c>>,
    pub(super) call: Call<'c>,
}
