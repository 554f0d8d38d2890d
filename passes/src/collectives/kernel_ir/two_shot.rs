//! The two-shot all-reduces: reduce-scatter then all-gather through the
//! inputs, and the push two-shots that store each reduced chunk into every
//! peer's output or input.

use super::Kernel;
use crate::collectives::emit::Emitter;
use crate::collectives::emit::Val;
use melior::dialect::arith::CmpiPredicate;

impl<'c> Kernel<'_, 'c> {
    /// `(chunk, [mine_start, mine_hi))`: vectors per rank, and this
    /// thread's first vector of this rank's chunk and the chunk's end.
    pub(super) fn chunk_bounds(&self) -> (Val<'c>, Val<'c>, Val<'c>) {
        let e = self.e;
        let world = self.spec.world as i64;
        let chunk = e.div(e.add(self.nvec, e.c64(world - 1)), e.c64(world));
        let lo = e.mul(self.rank, chunk);
        let hi = e.min(e.add(lo, chunk), self.nvec);
        (chunk, e.add(lo, self.gtid), hi)
    }

    /// `rank != p` for every rank p.
    pub(super) fn not_me(&self) -> Vec<Val<'c>> {
        (0..self.spec.world)
            .map(|p| {
                self.e
                    .cmp(CmpiPredicate::Ne, self.rank, self.e.c64(p as i64))
            })
            .collect()
    }

    /// For each peer p != me, the vectors of peer p's chunk from
    /// `source(p)` through the epilogue into `out`.
    pub(super) fn over_peer_chunks(
        &self,
        e: &Emitter<'c>,
        chunk: Val<'c>,
        not_me: &[Val<'c>],
        source: impl Fn(usize) -> Val<'c>,
    ) {
        for (p, differs) in not_me.iter().enumerate() {
            let from = source(p);
            e.when(*differs, |e| {
                let lo = e.mul(e.c64(p as i64), chunk);
                let hi = e.min(e.add(lo, chunk), self.nvec);
                self.strided(
                    e,
                    e.add(lo, self.gtid),
                    hi,
                    |e, i| self.load(e, from, i),
                    |e, i, v| self.store(e, i, v),
                );
            });
        }
    }

    /// This rank's chunk `[start, hi)` reduced from every rank's input into
    /// `out` (through the epilogue); `also` stores each reduced vector
    /// wherever the algorithm needs it besides.
    pub(super) fn reduce_own_chunk(
        &self,
        start: Val<'c>,
        hi: Val<'c>,
        also: impl Fn(&Emitter<'c>, Val<'c>, Val<'c>),
    ) {
        self.strided(
            self.e,
            start,
            hi,
            |e, i| self.load_terms(e, &self.sources, i),
            |e, i, terms| {
                let reduced = self.combine(e, terms);
                also(e, i, reduced);
                self.store(e, i, reduced);
            },
        );
    }

    /// Reduce-scatter: this rank reduces its chunk and leaves the rounded
    /// result in its own input (for peers) and in `out`; after a barrier,
    /// it copies every peer's reduced chunk. A vector's position is handled
    /// by the same block on every rank, so the per-block barrier orders each
    /// read after the peer's write.
    pub(super) fn two_shot(&self) {
        let e = self.e;
        let (chunk, start, hi) = self.chunk_bounds();
        self.reduce_own_chunk(start, hi, |e, i, reduced| {
            self.store_raw(e, reduced, self.input, i)
        });
        e.barrier(self.pool, self.channel);
        self.over_peer_chunks(e, chunk, &self.not_me(), |p| self.sources[p]);
    }

    /// Push two-shot: this rank reduces its chunk, writes it (through the
    /// epilogue) to `out` and stores the reduced vectors into every peer's
    /// buffer at the same place: with `Push::IntoOutputs` their output, and
    /// that is all; with `Push::IntoInputs` their input, and after the
    /// closing barrier each rank runs the chunks its peers pushed into its
    /// own input through the epilogue into `out`. Each input byte crosses
    /// NVLink once per direction and no barrier sits between the halves.
    /// Inputs are overwritten.
    pub(super) fn push_two_shot(&self) {
        let e = self.e;
        let (chunk, start, hi) = self.chunk_bounds();
        let not_me = self.not_me();
        let targets = self.out_targets.as_ref().unwrap_or(&self.sources);
        self.reduce_own_chunk(start, hi, |e, i, reduced| {
            for (p, differs) in not_me.iter().enumerate() {
                e.when(*differs, |e| self.store_raw(e, reduced, targets[p], i));
            }
        });
        // The tail belongs to the last rank, which pushes it like a chunk:
        // written in place by every rank, it could reach a peer before the
        // peer had read it.
        let last = e.c64(self.spec.world as i64 - 1);
        let owner = e.cmp(CmpiPredicate::Eq, self.rank, last);
        e.when(owner, |e| {
            self.in_tail(e, |e, j| {
                let reduced = self.reduce_scalar(e, &self.sources, j);
                self.store_scalar(e, reduced, self.out, j);
                for peer in &self.sources[..self.sources.len() - 1] {
                    self.store_scalar(e, reduced, *peer, j);
                }
            })
        });
        e.barrier(self.pool, self.channel);
        if self.out_pool.is_some() {
            return;
        }
        if self.spec.epilogue.is_some() {
            return self.over_peer_chunks(e, chunk, &not_me, |_| self.input);
        }
        // In place (`out` is the input), the pushed chunks are the result.
        let i64 = e.i64();
        let elsewhere = e.cmp(
            CmpiPredicate::Ne,
            e.ptr_to_int(self.out, i64),
            e.ptr_to_int(self.input, i64),
        );
        e.when(elsewhere, |e| {
            self.over_peer_chunks(e, chunk, &not_me, |_| self.input);
            e.when(e.cmp(CmpiPredicate::Ne, self.rank, last), |e| {
                self.in_tail(e, |e, j| {
                    let pushed = self.load_scalar(e, self.input, j);
                    self.store_scalar(e, pushed, self.out, j);
                })
            });
        });
    }
}
