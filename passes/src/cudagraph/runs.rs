//! The partitioning algorithm on its own: ops in program order, each
//! capturable or not, become maximal runs; and a run's signature from
//! def-use facts. No MLIR here.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// What a CUDA graph can do with one top-level op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpClass {
    /// Capturable; `work` if it launches GPU work (a kernel, a copy, a
    /// collective), so that a run without work is not worth a graph.
    Capturable { work: bool },
    /// Must run outside any graph.
    Fallback,
}

/// A stretch of the function body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// Outlined into a partition and launched as a CUDA graph.
    Partition(Range<usize>),
    /// Stays in the function: fallback ops, or capturable ops with no GPU
    /// work (constants, views) that need no graph.
    Outside(Range<usize>),
}

/// Maximal runs of capturable ops with GPU work become partitions, in
/// program order; everything else stays outside. `None` means every op is
/// capturable, so the whole function can be captured with no partitions.
pub fn segments(classes: &[OpClass]) -> Option<Vec<Segment>> {
    if classes
        .iter()
        .all(|class| matches!(class, OpClass::Capturable { .. }))
    {
        return None;
    }
    let mut segments = Vec::new();
    let mut start = 0;
    while start < classes.len() {
        let capturable = classes[start] != OpClass::Fallback;
        let end = (start..classes.len())
            .find(|&i| (classes[i] != OpClass::Fallback) != capturable)
            .unwrap_or(classes.len());
        let has_work = classes[start..end].contains(&OpClass::Capturable { work: true });
        let segment = if capturable && has_work {
            Segment::Partition(start..end)
        } else {
            Segment::Outside(start..end)
        };
        // Merge neighbouring stretches that stay outside.
        match (segments.last_mut(), segment) {
            (Some(Segment::Outside(previous)), Segment::Outside(next)) => previous.end = next.end,
            (_, segment) => segments.push(segment),
        }
        start = end;
    }
    Some(segments)
}

/// One op's values: those it defines and those it reads (including reads
/// by ops nested in it of values defined outside it).
#[derive(Clone, Debug, Default)]
pub struct DefUse {
    pub defines: Vec<u32>,
    pub uses: Vec<u32>,
}

/// Inputs (values the run reads but does not define, in order of first
/// use) and outputs (values the run defines that later ops read, in order
/// of definition). `later_uses` are reads after the last op, such as the
/// terminator's.
pub fn signature(ops: &[DefUse], run: Range<usize>, later_uses: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let defined: HashSet<u32> = ops[run.clone()]
        .iter()
        .flat_map(|op| op.defines.iter().copied())
        .collect();
    let mut inputs = Vec::new();
    let mut seen = HashSet::new();
    for op in &ops[run.clone()] {
        for &value in &op.uses {
            if !defined.contains(&value) && seen.insert(value) {
                inputs.push(value);
            }
        }
    }
    let read_after: HashSet<u32> = ops[run.end..]
        .iter()
        .flat_map(|op| op.uses.iter().copied())
        .chain(later_uses.iter().copied())
        .collect();
    let order: HashMap<u32, usize> = ops[run.clone()]
        .iter()
        .flat_map(|op| op.defines.iter().copied())
        .enumerate()
        .map(|(i, value)| (value, i))
        .collect();
    let mut outputs: Vec<u32> = defined
        .into_iter()
        .filter(|v| read_after.contains(v))
        .collect();
    outputs.sort_by_key(|value| order[value]);
    (inputs, outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORK: OpClass = OpClass::Capturable { work: true };
    const CHEAP: OpClass = OpClass::Capturable { work: false };
    const FALL: OpClass = OpClass::Fallback;

    #[test]
    fn everything_capturable_needs_no_partitions() {
        assert_eq!(segments(&[WORK, CHEAP, WORK]), None);
        assert_eq!(segments(&[]), None);
    }

    #[test]
    fn fallback_ops_separate_partitions_in_order() {
        assert_eq!(
            segments(&[WORK, WORK, FALL, CHEAP, WORK, FALL, FALL, WORK]),
            Some(vec![
                Segment::Partition(0..2),
                Segment::Outside(2..3),
                Segment::Partition(3..5),
                Segment::Outside(5..7),
                Segment::Partition(7..8),
            ])
        );
    }

    #[test]
    fn runs_without_gpu_work_stay_outside_and_merge() {
        assert_eq!(
            segments(&[CHEAP, FALL, CHEAP, FALL, WORK]),
            Some(vec![Segment::Outside(0..4), Segment::Partition(4..5)])
        );
        assert_eq!(segments(&[FALL]), Some(vec![Segment::Outside(0..1)]));
    }

    fn op(defines: &[u32], uses: &[u32]) -> DefUse {
        DefUse {
            defines: defines.to_vec(),
            uses: uses.to_vec(),
        }
    }

    #[test]
    fn signature_lists_reads_from_outside_and_values_read_later() {
        // 0: %1 = f(%0)   1: %2 = g(%1, %9)   2: %3 = h(%2, %1)   3: k(%2)
        let ops = [
            op(&[1], &[0]),
            op(&[2], &[1, 9]),
            op(&[3], &[2, 1]),
            op(&[], &[2]),
        ];
        assert_eq!(signature(&ops, 1..3, &[3]), (vec![1, 9], vec![2, 3]));
        assert_eq!(signature(&ops, 0..4, &[]), (vec![0, 9], vec![]));
        // Inputs are deduplicated and kept in first-use order.
        let ops = [op(&[5], &[7, 8, 7]), op(&[6], &[8, 5])];
        assert_eq!(signature(&ops, 0..2, &[6]), (vec![7, 8], vec![6]));
    }
}
