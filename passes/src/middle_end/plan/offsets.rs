//! Offset assignment for buffers that share one pool.
//!
//! Two buffers may share bytes only if their live intervals are disjoint.
//! Finding the smallest pool is NP-hard (it is dynamic storage allocation),
//! so two heuristics run and the smaller pool wins:
//!
//! - **online best-fit**: sweep the program in order, allocating each buffer
//!   from the smallest free block that fits and returning it to a coalescing
//!   free list when it dies. O(n log n).
//! - **greedy by size** (largest first, each into the tightest gap among the
//!   already placed buffers that are live at the same time). Usually
//!   tighter, but O(n²), so it runs only up to `GREEDY_LIMIT` buffers.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

/// A buffer's live range in program order (both ends inclusive) and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub start: usize,
    pub end: usize,
    pub bytes: u64,
}

impl Interval {
    #[cfg(test)]
    fn overlaps(&self, other: &Interval) -> bool {
        self.start <= other.end && other.start <= self.end
    }
}

/// Offsets into one pool, in the order of the input intervals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub offsets: Vec<u64>,
    pub pool_bytes: u64,
    /// Buffers placed (at least partly) on bytes that a buffer which died
    /// earlier occupied.
    pub reuses: usize,
}

fn align(bytes: u64, alignment: u64) -> u64 {
    bytes.div_ceil(alignment) * alignment
}

/// The most bytes live at once, with sizes rounded up to `alignment`: no
/// placement can use a smaller pool.
pub fn lower_bound(intervals: &[Interval], alignment: u64) -> u64 {
    let mut events: Vec<(usize, bool, u64)> = Vec::with_capacity(intervals.len() * 2);
    for interval in intervals {
        let bytes = align(interval.bytes, alignment);
        events.push((interval.start, false, bytes));
        events.push((interval.end + 1, true, bytes));
    }
    // At the same point, frees come before allocations.
    events.sort_by_key(|&(at, free, _)| (at, !free));
    let (mut live, mut peak) = (0u64, 0u64);
    for (_, free, bytes) in events {
        if free {
            live -= bytes;
        } else {
            live += bytes;
            peak = peak.max(live);
        }
    }
    peak
}

/// Assigns each buffer an offset, a multiple of `alignment` (a power of
/// two), so that buffers live at the same time never overlap.
pub fn assign_offsets(intervals: &[Interval], alignment: u64) -> Placement {
    let alignment = alignment.max(1);
    let online = online_best_fit(intervals, alignment);
    let greedy = greedy_by_size(intervals, alignment);
    if greedy.pool_bytes < online.pool_bytes {
        greedy
    } else {
        online
    }
}

/// Free blocks of a pool, coalesced, findable by offset and by size.
#[derive(Default)]
struct FreeList {
    by_offset: BTreeMap<u64, u64>,
    by_size: BTreeSet<(u64, u64)>,
}

impl FreeList {
    fn remove(&mut self, offset: u64, size: u64) {
        self.by_offset.remove(&offset);
        self.by_size.remove(&(size, offset));
    }

    fn insert(&mut self, mut offset: u64, mut size: u64) {
        if let Some((&prev, &prev_size)) = self.by_offset.range(..offset).next_back()
            && prev + prev_size == offset
        {
            self.remove(prev, prev_size);
            offset = prev;
            size += prev_size;
        }
        if let Some(&next_size) = self.by_offset.get(&(offset + size)) {
            self.remove(offset + size, next_size);
            size += next_size;
        }
        self.by_offset.insert(offset, size);
        self.by_size.insert((size, offset));
    }

    /// Takes `size` bytes from the smallest block that fits, or extends the
    /// pool's last free block, or grows the pool at `top`.
    fn take(&mut self, size: u64, top: &mut u64) -> u64 {
        if let Some(&(block, offset)) = self.by_size.range((size, 0)..).next() {
            self.remove(offset, block);
            if block > size {
                self.insert(offset + size, block - size);
            }
            return offset;
        }
        if let Some((&offset, &block)) = self.by_offset.iter().next_back()
            && offset + block == *top
        {
            self.remove(offset, block);
            *top = offset + size;
            return offset;
        }
        let offset = *top;
        *top += size;
        offset
    }
}

fn online_best_fit(intervals: &[Interval], alignment: u64) -> Placement {
    let mut order: Vec<usize> = (0..intervals.len()).collect();
    order.sort_by_key(|&i| (intervals[i].start, i));
    let mut offsets = vec![0u64; intervals.len()];
    let mut free = FreeList::default();
    let mut dying: BinaryHeap<Reverse<(usize, usize)>> = BinaryHeap::new();
    let mut top = 0u64;
    for &i in &order {
        let interval = intervals[i];
        while let Some(&Reverse((end, j))) = dying.peek() {
            if end >= interval.start {
                break;
            }
            dying.pop();
            free.insert(offsets[j], align(intervals[j].bytes, alignment));
        }
        offsets[i] = free.take(align(interval.bytes, alignment), &mut top);
        dying.push(Reverse((interval.end, i)));
    }
    finish(intervals, alignment, offsets)
}

fn greedy_by_size(intervals: &[Interval], alignment: u64) -> Placement {
    let mut order: Vec<usize> = (0..intervals.len()).collect();
    // Largest first; among equals, the longest-lived, then program order.
    order.sort_by_key(|&i| {
        let interval = intervals[i];
        (
            Reverse(interval.bytes),
            Reverse(interval.end - interval.start),
            interval.start,
        )
    });
    let mut offsets = vec![0u64; intervals.len()];
    let mut placed = IntervalIndex::new(intervals);
    for &i in &order {
        let size = align(intervals[i].bytes, alignment);
        let mut taken: Vec<(u64, u64)> = placed
            .overlapping(intervals[i])
            .into_iter()
            .map(|j| {
                (
                    offsets[j],
                    offsets[j] + align(intervals[j].bytes, alignment),
                )
            })
            .collect();
        taken.sort_unstable();
        // The tightest gap between live neighbours that fits; else after all.
        let (mut best, mut best_gap, mut cursor) = (None, u64::MAX, 0u64);
        for (lo, hi) in taken {
            if lo >= cursor + size && lo - cursor < best_gap {
                best = Some(cursor);
                best_gap = lo - cursor;
            }
            cursor = cursor.max(hi);
        }
        offsets[i] = best.unwrap_or(cursor);
        placed.insert(i);
    }
    finish(intervals, alignment, offsets)
}

/// The placed intervals, queryable for those overlapping a given one: a
/// segment tree over program points answers "which contain point s", a
/// map by start answers "which start inside (s, e]"; together, exactly the
/// overlapping ones.
struct IntervalIndex<'a> {
    intervals: &'a [Interval],
    /// Sorted distinct start and end points.
    points: Vec<usize>,
    tree: Vec<Vec<usize>>,
    by_start: BTreeMap<usize, Vec<usize>>,
}

impl<'a> IntervalIndex<'a> {
    fn new(intervals: &'a [Interval]) -> Self {
        let mut points: Vec<usize> = intervals.iter().flat_map(|i| [i.start, i.end]).collect();
        points.sort_unstable();
        points.dedup();
        let tree = vec![Vec::new(); 4 * points.len().max(1)];
        Self {
            intervals,
            points,
            tree,
            by_start: BTreeMap::new(),
        }
    }

    fn rank(&self, point: usize) -> usize {
        self.points.partition_point(|&p| p < point)
    }

    fn insert(&mut self, id: usize) {
        let interval = self.intervals[id];
        let (lo, hi) = (self.rank(interval.start), self.rank(interval.end));
        let last = self.points.len() - 1;
        self.insert_node(1, 0, last, lo, hi, id);
        self.by_start.entry(interval.start).or_default().push(id);
    }

    fn insert_node(&mut self, node: usize, l: usize, r: usize, lo: usize, hi: usize, id: usize) {
        if hi < l || r < lo {
            return;
        }
        if lo <= l && r <= hi {
            self.tree[node].push(id);
            return;
        }
        let mid = (l + r) / 2;
        self.insert_node(2 * node, l, mid, lo, hi, id);
        self.insert_node(2 * node + 1, mid + 1, r, lo, hi, id);
    }

    fn overlapping(&self, query: Interval) -> Vec<usize> {
        let mut found = Vec::new();
        // Placed intervals containing query.start.
        let at = self.rank(query.start);
        let (mut node, mut l, mut r) = (1, 0, self.points.len() - 1);
        loop {
            found.extend_from_slice(&self.tree[node]);
            if l == r {
                break;
            }
            let mid = (l + r) / 2;
            if at <= mid {
                (node, r) = (2 * node, mid);
            } else {
                (node, l) = (2 * node + 1, mid + 1);
            }
        }
        // Placed intervals starting after query.start, no later than its end.
        if query.end > query.start {
            for ids in self
                .by_start
                .range(query.start + 1..=query.end)
                .map(|(_, ids)| ids)
            {
                found.extend_from_slice(ids);
            }
        }
        found
    }
}

/// Pool size and reuse count of a finished assignment.
fn finish(intervals: &[Interval], alignment: u64, offsets: Vec<u64>) -> Placement {
    let pool_bytes = intervals
        .iter()
        .zip(&offsets)
        .map(|(interval, offset)| offset + align(interval.bytes, alignment))
        .max()
        .unwrap_or(0);
    let reuses = count_reuses(intervals, alignment, &offsets);
    Placement {
        offsets,
        pool_bytes,
        reuses,
    }
}

/// Buffers that land on bytes some earlier-dead buffer used: a sweep in
/// program order over the union of dead byte ranges.
fn count_reuses(intervals: &[Interval], alignment: u64, offsets: &[u64]) -> usize {
    let mut order: Vec<usize> = (0..intervals.len()).collect();
    order.sort_by_key(|&i| (intervals[i].start, i));
    let mut dying: BinaryHeap<Reverse<(usize, usize)>> = BinaryHeap::new();
    let mut dead = FreeList::default();
    let mut reuses = 0;
    for &i in &order {
        while let Some(&Reverse((end, j))) = dying.peek() {
            if end >= intervals[i].start {
                break;
            }
            dying.pop();
            add_range(&mut dead, offsets[j], align(intervals[j].bytes, alignment));
        }
        let (lo, hi) = (
            offsets[i],
            offsets[i] + align(intervals[i].bytes, alignment),
        );
        let touches_dead = dead
            .by_offset
            .range(..hi)
            .next_back()
            .is_some_and(|(&offset, &size)| offset + size > lo);
        if touches_dead && hi > lo {
            reuses += 1;
        }
        dying.push(Reverse((intervals[i].end, i)));
    }
    reuses
}

/// Adds a byte range to a union of ranges, merging overlaps.
fn add_range(set: &mut FreeList, offset: u64, size: u64) {
    let (mut lo, mut hi) = (offset, offset + size);
    let overlapping: Vec<(u64, u64)> = set
        .by_offset
        .range(..=hi)
        .rev()
        .take_while(|&(&start, &len)| start + len >= lo)
        .map(|(&start, &len)| (start, len))
        .collect();
    for (start, len) in overlapping {
        set.remove(start, len);
        lo = lo.min(start);
        hi = hi.max(start + len);
    }
    set.by_offset.insert(lo, hi - lo);
    set.by_size.insert((hi - lo, lo));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(start: usize, end: usize, bytes: u64) -> Interval {
        Interval { start, end, bytes }
    }

    #[test]
    fn seed_002_three_live_buffers_then_a_fourth_reuses_one() {
        // a, b, c (64 B each) live together; d starts after all three die.
        let intervals = [iv(0, 3, 64), iv(0, 4, 64), iv(0, 5, 64), iv(6, 7, 64)];
        let placement = assign_offsets(&intervals, 64);
        assert_eq!(placement.pool_bytes, 192);
        assert_eq!(lower_bound(&intervals, 64), 192);
        let mut first_three = placement.offsets[..3].to_vec();
        first_three.sort_unstable();
        assert_eq!(first_three, vec![0, 64, 128]);
        assert!(placement.offsets[..3].contains(&placement.offsets[3]));
        assert_eq!(placement.reuses, 1);
    }

    #[test]
    fn a_chain_ping_pongs_in_one_slot() {
        // Eight buffers, each dead before the next is born.
        let intervals: Vec<_> = (0..8).map(|i| iv(2 * i, 2 * i + 1, 4096)).collect();
        let placement = assign_offsets(&intervals, 128);
        assert_eq!(placement.pool_bytes, 4096);
        assert!(placement.offsets.iter().all(|&offset| offset == 0));
        assert_eq!(placement.reuses, 7);
    }

    #[test]
    fn sizes_round_up_to_the_alignment() {
        let intervals = [iv(0, 1, 1), iv(0, 1, 129)];
        let placement = assign_offsets(&intervals, 128);
        assert_eq!(placement.pool_bytes, 128 + 256);
        assert!(placement.offsets.iter().all(|offset| offset % 128 == 0));
        assert_eq!(lower_bound(&intervals, 128), 384);
    }

    #[test]
    fn best_fit_picks_the_tightest_hole() {
        // A 256 B and a 128 B hole open up; a 128 B buffer takes the small one.
        let intervals = [
            iv(0, 2, 256),
            iv(0, 9, 128),
            iv(0, 2, 128),
            iv(0, 9, 128),
            iv(3, 9, 128),
        ];
        let placement = online_best_fit(&intervals, 128);
        assert_eq!(placement.offsets[4], placement.offsets[2]);
    }

    #[test]
    fn empty_input_gives_an_empty_pool() {
        let placement = assign_offsets(&[], 128);
        assert_eq!(placement.pool_bytes, 0);
        assert_eq!(lower_bound(&[], 128), 0);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn intervals() -> impl Strategy<Value = Vec<Interval>> {
            prop::collection::vec(
                (0usize..120, 0usize..40, 1u64..5000).prop_map(|(start, length, bytes)| Interval {
                    start,
                    end: start + length,
                    bytes,
                }),
                0..160,
            )
        }

        fn alignment() -> impl Strategy<Value = u64> {
            prop::sample::select(vec![1u64, 8, 64, 128, 256])
        }

        fn check(intervals: &[Interval], alignment: u64, placement: &Placement) {
            assert_eq!(placement.offsets.len(), intervals.len());
            for (i, a) in intervals.iter().enumerate() {
                let a_lo = placement.offsets[i];
                assert_eq!(
                    a_lo % alignment,
                    0,
                    "offset {a_lo} not aligned to {alignment}"
                );
                let a_hi = a_lo + align(a.bytes, alignment);
                assert!(a_hi <= placement.pool_bytes);
                for (j, b) in intervals.iter().enumerate().skip(i + 1) {
                    if a.overlaps(b) {
                        let b_lo = placement.offsets[j];
                        let b_hi = b_lo + align(b.bytes, alignment);
                        assert!(
                            a_hi <= b_lo || b_hi <= a_lo,
                            "live buffers {i} and {j} overlap: [{a_lo}, {a_hi}) and [{b_lo}, {b_hi})"
                        );
                    }
                }
            }
            assert!(placement.pool_bytes >= lower_bound(intervals, alignment));
            assert!(placement.reuses <= intervals.len());
        }

        proptest! {
            #[test]
            fn online_best_fit_never_overlaps_live_buffers(
                intervals in intervals(), alignment in alignment()
            ) {
                check(&intervals, alignment, &online_best_fit(&intervals, alignment));
            }

            #[test]
            fn greedy_by_size_never_overlaps_live_buffers(
                intervals in intervals(), alignment in alignment()
            ) {
                check(&intervals, alignment, &greedy_by_size(&intervals, alignment));
            }

            #[test]
            fn the_chosen_placement_is_the_smaller_one(
                intervals in intervals(), alignment in alignment()
            ) {
                let chosen = assign_offsets(&intervals, alignment);
                check(&intervals, alignment, &chosen);
                let online = online_best_fit(&intervals, alignment).pool_bytes;
                let greedy = greedy_by_size(&intervals, alignment).pool_bytes;
                prop_assert_eq!(chosen.pool_bytes, online.min(greedy));
            }
        }
    }
}
