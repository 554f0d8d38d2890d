//! Which kernel an all-reduce takes at each size: the facts read from the
//! op (`AllReduceFacts`, and `RowsFacts` for a row statistic), the kernel
//! for one message size, and the size segments a dynamic op dispatches
//! over (`Segment`). `expand` reads the facts and emits the dispatch.

use crate::analysis::all_reduce::{
    self as kernels, Algorithm, AllReduceKernel, Epilogue, EpilogueOperand, Push, Reduction,
    RowsEpilogue, Scalar,
};
use crate::middle_end::select_all_reduce::{Facts, Limits, choose};

/// What decides an all-reduce's kernels.
pub(super) struct AllReduceFacts {
    pub(super) element: Scalar,
    pub(super) element_bytes: u64,
    /// Elements, when static.
    pub(super) count: Option<u64>,
    /// Elements per leading index (all of them when static).
    pub(super) row_elements: u64,
    /// Elements at the function's bound (the static count when static).
    pub(super) max_count: u64,
    pub(super) world: u64,
    pub(super) reduction: Reduction,
    pub(super) columns: u64,
    pub(super) epilogue_types: Vec<(Scalar, bool)>,
    pub(super) epilogue: Option<String>,
    /// The algorithm the op names, if it names one.
    pub(super) fixed: Option<Algorithm>,
    pub(super) input_read_after: bool,
    pub(super) out_symmetric: bool,
    pub(super) fused: bool,
    pub(super) rows: Option<RowsFacts>,
    /// A matmul prologue's slices of K and the most rows that take them.
    pub(super) split_k: Option<(u64, u64)>,
    /// Its Lamport kernels take slices a generated matmul may send
    /// (`AllReduceKernel::matmul_sends`).
    pub(super) matmul_sends: bool,
}

/// What decides the row half of an `all_reduce_rows_out`'s kernels.
pub(super) struct RowsFacts {
    pub(super) step: String,
    pub(super) apply: String,
    /// Each row operand's element type, and whether it is broadcast.
    pub(super) operands: Vec<(Scalar, bool)>,
    pub(super) out_element: Scalar,
}

/// The kernel for messages up to `max_bytes` (and above the previous
/// segment's).
pub(super) struct Segment {
    pub(super) kernel: AllReduceKernel,
    pub(super) max_bytes: u64,
}

impl Segment {
    /// Vectors of one rank: all of them for a one-shot, a slice for a
    /// two-shot.
    pub(super) fn divisor(&self) -> u64 {
        match self.kernel.algorithm {
            Algorithm::OneShot => 1,
            Algorithm::TwoShot => self.kernel.world,
        }
    }

    pub(super) fn per_rank(&self, count: u64) -> u64 {
        (count / self.kernel.vector).div_ceil(self.divisor())
    }
}

impl AllReduceFacts {
    /// Bytes of one row of the message.
    pub(super) fn row_bytes(&self) -> u64 {
        self.row_elements * self.element_bytes
    }

    /// The fewest rows of a call that `segment` of `segments` takes: one
    /// more than the largest segment below it holds (`None` for the first
    /// segment, or rows of no bytes).
    pub(super) fn min_rows(&self, segments: &[Segment], segment: &Segment) -> Option<u64> {
        let below = segments
            .iter()
            .map(|s| s.max_bytes)
            .filter(|bytes| *bytes < segment.max_bytes)
            .max()?;
        let row_bytes = self.row_bytes();
        (row_bytes > 0).then(|| below / row_bytes + 1)
    }

    /// The largest message this all-reduce's Lamport one-shot takes (0:
    /// none): `Limits::lamport_for`, and for a rows kernel (a block a row,
    /// its messages whole rows) no more rows than `MAX_BLOCKS`. Both the
    /// choice of algorithm and the kernel go by it, so that a one-shot
    /// chosen for the Lamport kernel is one.
    fn lamport_max(&self, limits: Limits) -> u64 {
        let bound = limits.lamport_for(
            Some(self.element),
            self.reduction,
            self.rows.is_some(),
            Some(self.world),
        );
        match self.rows {
            Some(_) => bound.min(kernels::MAX_BLOCKS * self.columns * self.element_bytes),
            None => bound,
        }
    }

    /// The kernel for a message of `count` elements.
    pub(super) fn kernel(&self, count: u64, limits: Limits) -> AllReduceKernel {
        let bytes = count * self.element_bytes;
        let algorithm = self.fixed.unwrap_or_else(|| {
            let facts = Facts {
                world: Some(self.world),
                input_read_after: self.input_read_after,
                output_owned: self.out_symmetric,
                lamport_max: self.lamport_max(limits),
            };
            if choose(bytes, facts, limits) == "one_shot" {
                Algorithm::OneShot
            } else {
                Algorithm::TwoShot
            }
        });
        // A rows kernel's two-shot pushes reduced rows into the inputs, and
        // pays only up to `rows-two-shot-max-bytes` (by the world size:
        // ROWS_TWO_SHOT_MAX on 2 ranks, no bound on more).
        let algorithm = match (&self.rows, algorithm) {
            (Some(_), Algorithm::TwoShot) if self.input_read_after => Algorithm::OneShot,
            (Some(_), Algorithm::TwoShot)
                if self.fixed.is_none() && bytes > limits.rows_two_shot_max(Some(self.world)) =>
            {
                Algorithm::OneShot
            }
            _ => algorithm,
        };
        // Every message of the op must split into whole vectors: counts are
        // multiples of the row (one leading index) when dynamic.
        let unit = if self.count.is_some() {
            count
        } else {
            self.row_elements
        };
        let mut counts = vec![unit];
        if self.epilogue_types.iter().any(|(_, broadcast)| *broadcast) {
            counts.push(self.columns);
        }
        if self.rows.is_some() {
            // A block takes whole rows; a two-shot's chunks are rows.
            counts = vec![self.columns];
        } else if algorithm == Algorithm::TwoShot {
            // Slices must be whole vectors.
            counts.push(unit.div_ceil(self.world).max(1));
        }
        let vector = kernels::vector_width(self.element_bytes, &counts);
        // Each operand's element type, and its row length in vectors when
        // it is broadcast over rows.
        let operands = |types: &[(Scalar, bool)]| -> Vec<EpilogueOperand> {
            types
                .iter()
                .map(|(element, broadcast)| EpilogueOperand {
                    element: *element,
                    broadcast_row_vectors: broadcast.then_some(self.columns / vector),
                })
                .collect()
        };
        let rows = self.rows.as_ref().map(|rows| RowsEpilogue {
            step: rows.step.clone(),
            apply: rows.apply.clone(),
            operands: operands(&rows.operands),
            out_element: rows.out_element,
            columns: self.columns,
        });
        let epilogue = self.epilogue.as_ref().map(|function| Epilogue {
            function: function.clone(),
            operands: operands(&self.epilogue_types),
        });
        // The pool holds the input, so its staging slots hold any message
        // up to STAGING_MAX bytes (symm_protocol::staging_layout).
        // The Lamport one-shot (symm_protocol::library::lamport_takes): 16-bit
        // float sums up to the limit, each vector in the block its grid
        // keeps it in at every size; a rows kernel's row in the block of
        // its index (no more rows than channels), up to its own bound.
        let lamport = algorithm == Algorithm::OneShot && bytes <= self.lamport_max(limits);
        let staged = algorithm == Algorithm::OneShot && bytes <= kernels::STAGING_MAX && !lamport;
        let push = match algorithm {
            Algorithm::TwoShot if self.input_read_after => None,
            Algorithm::TwoShot if self.out_symmetric && !self.fused => Some(Push::IntoOutputs),
            Algorithm::TwoShot => Some(Push::IntoInputs),
            Algorithm::OneShot => None,
        };
        AllReduceKernel {
            algorithm,
            reduction: self.reduction,
            element: self.element,
            world: self.world,
            vector,
            epilogue,
            staged,
            lamport,
            push,
            tail: false,
            rows,
            split_k: None,
            matmul_sends: false,
        }
    }

    /// The kernels over the sizes the op can have, each with the largest
    /// message it takes: one for a static size; for a dynamic one, a kernel
    /// per range between the byte sizes where the choice changes.
    pub(super) fn segments(&self, limits: Limits) -> Vec<Segment> {
        let bytes = |count: u64| count * self.element_bytes;
        let (least, most) = (bytes(self.row_elements), bytes(self.max_count));
        let rows_bounds = self.rows.as_ref().map(|_| {
            [
                limits.rows_lamport_max(Some(self.world)),
                limits.rows_two_shot_max(Some(self.world)),
            ]
        });
        // A matmul prologue is split over K up to its row bound.
        let split_k_bound = self
            .split_k
            .map(|(_, max_rows)| bytes(self.row_elements).saturating_mul(max_rows));
        let mut bounds: Vec<u64> = [
            limits.lamport_max,
            self.lamport_max(limits),
            kernels::STAGING_MAX,
            limits.one_shot_max(Some(self.world)),
            limits.two_rank_push_max,
        ]
        .into_iter()
        .chain(rows_bounds.into_iter().flatten())
        .chain(split_k_bound)
        .filter(|limit| (least..most).contains(limit))
        .collect();
        bounds.sort_unstable();
        bounds.dedup();
        bounds.push(most);
        let mut segments: Vec<Segment> = Vec::new();
        for limit in bounds {
            // Whole rows: the largest message of the range.
            let count = (limit / self.element_bytes / self.row_elements).max(1) * self.row_elements;
            let mut kernel = self.kernel(count, limits);
            // Split-K kernels are one-shots: a two-shot's blocks read other
            // vectors of the peers' inputs than they would have summed.
            if let (Some((slices, _)), Some(bound)) = (self.split_k, split_k_bound)
                && limit <= bound
                && kernel.algorithm == Algorithm::OneShot
            {
                kernel.split_k = Some(slices);
                kernel.matmul_sends = self.matmul_sends && kernel.lamport;
            }
            match segments.last_mut() {
                Some(last) if last.kernel == kernel => last.max_bytes = limit,
                _ => segments.push(Segment {
                    kernel,
                    max_bytes: limit,
                }),
            }
        }
        segments
    }

    /// The remark for a dynamic all-reduce's `segments`: each size range
    /// and its kernel (in rows too), and where a split-K matmul runs whole.
    pub(super) fn describe(&self, segments: &[Segment]) -> String {
        let row_bytes = self.row_bytes();
        let ranges: Vec<String> = segments
            .iter()
            .map(|segment| {
                let whole = match (self.split_k, segment.kernel.split_k) {
                    (Some(_), None) => ", after the whole matmul",
                    _ => "",
                };
                format!(
                    "up to {} bytes ({} rows): {}{whole}",
                    segment.max_bytes,
                    segment.max_bytes / row_bytes,
                    segment.kernel.describe()
                )
            })
            .collect();
        format!(
            "all_reduce of up to {} rows of {row_bytes} bytes on {} ranks, a kernel per size: {}",
            self.max_count / self.row_elements,
            self.world,
            ranges.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The facts of a dynamic all-reduce of up to 4096 bf16 rows of 4096
    /// on 2 ranks, its output the caller's, with a row statistic or not.
    fn facts(rows: bool) -> AllReduceFacts {
        AllReduceFacts {
            element: Scalar::Bf16,
            element_bytes: 2,
            count: None,
            row_elements: 4096,
            max_count: 4096 * 4096,
            world: 2,
            reduction: Reduction::Sum,
            columns: 4096,
            epilogue_types: vec![(Scalar::Bf16, false)],
            epilogue: Some("symm_epilogue_0".into()),
            fixed: None,
            input_read_after: false,
            out_symmetric: false,
            fused: true,
            rows: rows.then(|| RowsFacts {
                step: "symm_epilogue_0_step".into(),
                apply: "symm_epilogue_0_apply".into(),
                operands: vec![(Scalar::Bf16, true)],
                out_element: Scalar::Bf16,
            }),
            split_k: None,
            matmul_sends: false,
        }
    }

    const LIMITS: Limits = Limits {
        one_shot: Some(1 << 20),
        two_rank_push_max: 8 << 20,
        lamport_max: 0,
        rows_two_shot: Some(kernels::ROWS_TWO_SHOT_MAX),
        rows_lamport: None,
    };

    /// The remark names each size range's kernel, in bytes and rows, and
    /// where a split-K matmul runs whole (above the one-shots, on 4 ranks
    /// from 512 KiB by default).
    #[test]
    fn describes_each_size_range() {
        let mut split = facts(false);
        split.split_k = Some((2, 128));
        split.world = 4;
        let limits = Limits {
            one_shot: None,
            lamport_max: 1 << 20,
            ..LIMITS
        };
        assert_eq!(
            split.describe(&split.segments(limits)),
            "all_reduce of up to 4096 rows of 8192 bytes on 4 ranks, a kernel per size: \
             up to 524288 bytes (64 rows): the Lamport one-shot summing 2 split-K slices; \
             up to 33554432 bytes (4096 rows): the two-shot pushing into the peers' inputs, \
             after the whole matmul"
        );
    }

    /// On 2 ranks the Lamport one-shot runs up to its 4 MiB bound, above
    /// the barrier one-shot's 1 MiB where the two-shot would: the MLP
    /// block's all-reduce at hidden 5120 sums the split-K slices up to 128
    /// rows (1.25 MiB) and takes the whole product up to 409 rows; on 4
    /// ranks the one-shots stop at 512 KiB.
    #[test]
    fn two_ranks_take_the_lamport_one_shot_past_the_one_shot_bound() {
        let limits = Limits {
            one_shot: None,
            lamport_max: symm_protocol::LAMPORT_MAX as u64,
            ..LIMITS
        };
        let mut hidden_5120 = AllReduceFacts {
            row_elements: 5120,
            columns: 5120,
            max_count: 2048 * 5120,
            ..facts(false)
        };
        hidden_5120.split_k = Some((2, 128));
        let kernels = |facts: &AllReduceFacts| -> Vec<(Algorithm, bool, Option<u64>, u64)> {
            facts
                .segments(limits)
                .iter()
                .map(|s| {
                    (
                        s.kernel.algorithm,
                        s.kernel.lamport,
                        s.kernel.split_k,
                        s.max_bytes,
                    )
                })
                .take(3)
                .collect()
        };
        assert_eq!(
            kernels(&hidden_5120),
            [
                (Algorithm::OneShot, true, Some(2), 128 * 10240),
                (Algorithm::OneShot, true, None, 4 << 20),
                (Algorithm::TwoShot, false, None, 8 << 20),
            ]
        );
        hidden_5120.world = 4;
        assert_eq!(
            kernels(&hidden_5120)[..2],
            [
                (Algorithm::OneShot, true, Some(2), 512 << 10),
                (Algorithm::TwoShot, false, None, 2048 * 10240),
            ]
        );
    }

    /// A rows kernel takes a block a row, so its Lamport one-shot stops
    /// at MAX_BLOCKS rows where that is below ROWS_LAMPORT_MAX (hidden
    /// 2048: 264 rows, 1056 KiB), and the two-shot takes the sizes above
    /// up to its bound, as before the Lamport one-shot passed the
    /// barrier one-shot's.
    #[test]
    fn rows_lamport_stops_at_a_block_a_row() {
        let limits = Limits {
            one_shot: None,
            lamport_max: symm_protocol::LAMPORT_MAX as u64,
            rows_two_shot: None,
            ..LIMITS
        };
        let narrow = AllReduceFacts {
            row_elements: 2048,
            columns: 2048,
            max_count: 2048 * 2048,
            ..facts(true)
        };
        let kernels: Vec<(Algorithm, bool, u64)> = narrow
            .segments(limits)
            .iter()
            .map(|s| (s.kernel.algorithm, s.kernel.lamport, s.max_bytes))
            .take(3)
            .collect();
        let row = 2048 * 2;
        assert_eq!(
            kernels,
            [
                (Algorithm::OneShot, true, kernels::MAX_BLOCKS * row),
                (Algorithm::TwoShot, false, 2 << 20),
                (Algorithm::OneShot, false, 8 << 20),
            ]
        );
    }

    fn plan(facts: &AllReduceFacts) -> Vec<(Algorithm, bool, u64)> {
        facts
            .segments(LIMITS)
            .into_iter()
            .map(|s| (s.kernel.algorithm, s.kernel.staged, s.max_bytes))
            .collect()
    }

    #[test]
    fn rows_kernels_take_the_two_shot_only_up_to_its_limit() {
        use Algorithm::{OneShot, TwoShot};
        let mb = 1 << 20;
        assert_eq!(
            plan(&facts(true)),
            vec![
                (OneShot, true, 512 << 10),
                (OneShot, false, mb),
                (TwoShot, false, 2 * mb),
                (OneShot, false, 32 * mb),
            ]
        );
        // The plain epilogue keeps the all-reduce's own limits.
        assert_eq!(
            plan(&facts(false)),
            vec![
                (OneShot, true, 512 << 10),
                (OneShot, false, mb),
                (TwoShot, false, 8 * mb),
                (OneShot, false, 32 * mb),
            ]
        );
    }

    /// Left at its default, the rows kernels' two-shot bound goes by the
    /// world size: 2 MiB on 2 ranks, none on 4, where every size above the
    /// one-shot takes the two-shot.
    #[test]
    fn rows_kernels_two_shot_bound_goes_by_the_world_size() {
        use Algorithm::{OneShot, TwoShot};
        let by_world = Limits {
            one_shot: None,
            rows_two_shot: None,
            ..LIMITS
        };
        let algorithms = |world: u64| {
            let facts = AllReduceFacts {
                world,
                ..facts(true)
            };
            facts
                .segments(by_world)
                .into_iter()
                .map(|s| (s.kernel.algorithm, s.max_bytes))
                .collect::<Vec<_>>()
        };
        let mb = 1 << 20;
        assert_eq!(
            algorithms(2),
            vec![
                (OneShot, 512 << 10),
                (OneShot, mb),
                (TwoShot, 2 * mb),
                (OneShot, 32 * mb)
            ]
        );
        assert_eq!(
            algorithms(4),
            vec![(OneShot, 512 << 10), (TwoShot, 32 * mb)]
        );
    }

    #[test]
    fn rows_kernels_take_whole_rows_and_every_channel() {
        let facts = facts(true);
        let kernel = facts.kernel(4096 * 16, LIMITS);
        let rows = kernel.rows.as_ref().expect("a rows kernel");
        assert_eq!(kernel.vector, 8);
        assert_eq!(rows.operands[0].broadcast_row_vectors, Some(512));
        assert_eq!(kernel.most_blocks(), kernels::MAX_BLOCKS);
        assert_eq!(
            kernel.name(),
            "symm_one_shot_staged_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply"
        );
        // A two-shot rows kernel pushes into the inputs; read afterwards,
        // the input cannot take it: one-shot.
        let mut read_after = facts;
        read_after.input_read_after = true;
        assert_eq!(
            read_after.kernel(4096 * 256, LIMITS).algorithm,
            Algorithm::OneShot
        );
    }

    #[test]
    fn lamport_takes_small_sums_of_16_bit_floats_only() {
        let limits = Limits {
            lamport_max: 256 << 10,
            ..LIMITS
        };
        let plain = facts(false);
        let at = |facts: &AllReduceFacts, count: u64| {
            let kernel = facts.kernel(count, limits);
            (kernel.lamport, kernel.staged)
        };
        // Up to the limit Lamport, then staged to STAGING_MAX.
        assert_eq!(at(&plain, 4096), (true, false));
        assert_eq!(at(&plain, 4096 * 32), (true, false));
        assert_eq!(at(&plain, 4096 * 33), (false, true));
        assert_eq!(
            plain.kernel(4096, limits).name(),
            "symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0"
        );
        // Its blocks are LAMPORT_THREADS wide, one vector per thread: 8 KB
        // (512 vectors of 8 lanes) on 4 blocks of 128, where the staged
        // kernel's 512-thread blocks take one.
        let lamport = plain.kernel(4096, limits);
        assert_eq!(lamport.threads(), 128);
        assert_eq!(lamport.grid_blocks(512), 4);
        let staged = plain.kernel(4096 * 33, limits);
        assert_eq!(staged.threads(), kernels::THREADS);
        assert_eq!(staged.grid_blocks(512), 1);
        // The largest Lamport message still has a block per 128 vectors.
        assert_eq!(
            lamport.grid_blocks((256 << 10) / 16),
            (256 << 10) / 16 / 128
        );
        // The dispatch gains a segment at the limit.
        let segments: Vec<(bool, u64)> = plain
            .segments(limits)
            .into_iter()
            .map(|s| (s.kernel.lamport, s.max_bytes))
            .take(2)
            .collect();
        assert_eq!(segments, vec![(true, 256 << 10), (false, 512 << 10)]);
        // No sentinel in f32, -0.0 matters to max.
        let mut f32 = facts(false);
        (f32.element, f32.element_bytes) = (Scalar::F32, 4);
        assert_eq!(at(&f32, 4096), (false, true));
        let mut max = facts(false);
        max.reduction = Reduction::Max;
        assert_eq!(at(&max, 4096), (false, true));
        // A rows kernel (residual + RMSNorm) takes it too, a block per row
        // of 512 threads: 16 rows of 4096 on 16 blocks.
        let rows = facts(true);
        assert_eq!(at(&rows, 4096 * 16), (true, false));
        // Up to the Lamport bound (here 32 rows of 4096 bf16), then staged.
        assert_eq!(at(&rows, 4096 * 32), (true, false));
        assert_eq!(at(&rows, 4096 * 33), (false, true));
        let kernel = rows.kernel(4096 * 16, limits);
        assert_eq!(kernel.threads(), kernels::THREADS);
        assert!(
            kernel
                .name()
                .starts_with("symm_one_shot_lamport_sum_bf16_w2_v8_")
        );
        // Odd counts take narrow vectors: more than one per thread of the
        // widest grid would move vectors between blocks across sizes.
        let mut odd = facts(false);
        (odd.count, odd.row_elements, odd.max_count) = (Some(135_169), 135_169, 135_169);
        assert_eq!(at(&odd, 135_169), (false, true));
    }

    /// With lamport-send only the split-K Lamport kernel takes slices a
    /// matmul may send (its own name); the barrier one-shot and the kernels
    /// of the whole product stay as they were.
    #[test]
    fn matmul_sends_marks_the_split_k_lamport_kernel_only() {
        let limits = Limits {
            lamport_max: 512 << 10,
            ..LIMITS
        };
        let mut split = facts(false);
        split.split_k = Some((2, 128));
        let plain = split.segments(limits);
        split.matmul_sends = true;
        let sending = split.segments(limits);
        let marks: Vec<bool> = sending.iter().map(|s| s.kernel.matmul_sends).collect();
        assert_eq!(marks[..3], [true, false, false]);
        assert_eq!(
            sending[0].kernel.name(),
            format!("{}_sent", plain[0].kernel.name())
        );
        for (a, b) in plain.iter().zip(&sending).skip(1) {
            assert_eq!(a.kernel, b.kernel);
        }
        // Without a split there is nothing to send.
        split.split_k = None;
        assert!(
            split
                .segments(limits)
                .iter()
                .all(|s| !s.kernel.matmul_sends)
        );
    }

    /// A matmul prologue split over K up to 128 rows of 4096 bf16 (1 MiB):
    /// the one-shots up to that size sum the slices (the Lamport one and the
    /// barrier one), and the kernels above run on the whole product.
    #[test]
    fn split_k_takes_the_one_shots_up_to_its_rows() {
        let limits = Limits {
            lamport_max: 512 << 10,
            ..LIMITS
        };
        let mut split = facts(false);
        split.split_k = Some((2, 128));
        let segments = split.segments(limits);
        let kernels: Vec<(bool, Option<u64>, u64)> = segments
            .iter()
            .map(|s| (s.kernel.lamport, s.kernel.split_k, s.max_bytes))
            .collect();
        assert_eq!(
            kernels[..3],
            [
                (true, Some(2), 512 << 10),
                (false, Some(2), 1 << 20),
                (false, None, 8 << 20),
            ]
        );
        assert!(segments[2].kernel.algorithm == Algorithm::TwoShot);
        assert!(segments[1].kernel.name().ends_with("_splitk2"));
        // A bound below the Lamport limit splits the Lamport range there.
        split.split_k = Some((2, 16));
        let bounds: Vec<(Option<u64>, u64)> = split
            .segments(limits)
            .iter()
            .map(|s| (s.kernel.split_k, s.max_bytes))
            .take(2)
            .collect();
        assert_eq!(bounds, [(Some(2), 16 * 8192), (None, 512 << 10)]);
    }

    /// The rows kernels (residual + RMSNorm) take the split too, in each of
    /// their one-shots up to 128 rows: by default the Lamport one, which
    /// then takes the whole product up to ROWS_LAMPORT_MAX (2 MiB, 256
    /// rows); with a lower `rows-lamport-max-bytes`, Lamport up to it,
    /// staged up to STAGING_MAX, between barriers up to the bound. The
    /// two-shot above sums no slices.
    #[test]
    fn split_k_takes_the_rows_one_shots() {
        let mut split = facts(true);
        split.split_k = Some((2, 128));
        let kernels = |limits| -> Vec<(bool, bool, Option<u64>, u64)> {
            split
                .segments(limits)
                .iter()
                .map(|s| {
                    (
                        s.kernel.lamport,
                        s.kernel.staged,
                        s.kernel.split_k,
                        s.max_bytes,
                    )
                })
                .take(4)
                .collect()
        };
        let by_default = Limits {
            lamport_max: symm_protocol::LAMPORT_MAX as u64,
            ..LIMITS
        };
        assert_eq!(
            kernels(by_default)[..3],
            [
                (true, false, Some(2), 1 << 20),
                (true, false, None, kernels::ROWS_LAMPORT_MAX),
                (false, false, None, 32 << 20),
            ]
        );
        let lower = Limits {
            rows_lamport: Some(256 << 10),
            ..by_default
        };
        assert_eq!(
            kernels(lower),
            [
                (true, false, Some(2), 256 << 10),
                (false, true, Some(2), 512 << 10),
                (false, false, Some(2), 1 << 20),
                (false, false, None, 2 << 20),
            ]
        );
        // On 4 ranks (the one-shot bound by the world size too): Lamport up
        // to 256 KiB, staged up to the one-shot's 512 KiB, two-shot above.
        let mut four = facts(true);
        four.split_k = Some((2, 128));
        four.world = 4;
        let by_world = Limits {
            one_shot: None,
            ..by_default
        };
        let on_four: Vec<(bool, bool, Algorithm, u64)> = four
            .segments(by_world)
            .iter()
            .map(|s| {
                (
                    s.kernel.lamport,
                    s.kernel.staged,
                    s.kernel.algorithm,
                    s.max_bytes,
                )
            })
            .take(3)
            .collect();
        assert_eq!(
            on_four,
            [
                (true, false, Algorithm::OneShot, 256 << 10),
                (false, true, Algorithm::OneShot, 512 << 10),
                (false, false, Algorithm::TwoShot, 2 << 20),
            ]
        );
        let segments = split.segments(lower);
        assert!(segments[3].kernel.algorithm == Algorithm::TwoShot);
        assert!(
            segments[2]
                .kernel
                .name()
                .ends_with("_rows_symm_epilogue_0_apply_splitk2")
        );
    }
}
