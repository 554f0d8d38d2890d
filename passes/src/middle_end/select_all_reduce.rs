//! `symm-mem-select-all-reduce`: each `symm_mem.all_reduce(_out)` becomes
//! the one-shot or two-shot form by its static byte size.
//!
//! Above `one-shot-max-bytes` two-shot wins with more than 2 ranks. Left at
//! its default (-1) the limit goes by the world size: 1 MiB on 2 ranks (or
//! a world set at launch), 512 KiB on more. A one-shot on `w` ranks reads
//! `w - 1` copies of the message over NVLink, a two-shot about two; on 4x
//! H200 the TP-4 Llama-3-8B decoder half-layer at 128 rows (1 MiB) took
//! 77.7-78.5 µs with the two-shot against 82.7 with the one-shot, the MLP
//! block 54.5-54.6 against 55.4 (bench/results/2026-11-27-tp4-h200x4.md). On 2
//! ranks only its push form can (it stores reduced chunks into the peers'
//! buffers, overwriting the inputs; the pull form reads as many bytes over
//! NVLink as one-shot and adds a barrier). When the output is the
//! function's own allocation, symm-mem-realize makes it symmetric and the
//! push lands in the peers' outputs; otherwise it lands in their inputs
//! and each rank copies its peer's half out afterwards, which costs more
//! than the push saves above `TWO_RANK_TWO_SHOT_MAX` (bench/results, 2x
//! H200, compiled: 12.9 vs 14.0 µs at 2 MB, even at 8 MB, 113.6 vs 109.1
//! at 32 MB). Dynamic sizes stay `all_reduce`, for the runtime to choose.

use crate::{
    GroupTable, OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, TypedPass,
    analysis::all_reduce::{
        Algorithm, ROWS_LAMPORT_MAX, ROWS_LAMPORT_MAX_MORE_RANKS, ROWS_TWO_SHOT_MAX, Reduction,
    },
    analysis::read_after::{own_static_allocation, used_after},
    ir::melior_ext::{OperationExt, byte_size},
    ir::op_kind::OpKind,
    ir::scalar::Scalar,
};
use melior::{
    Context,
    ir::{OperationRef, ShapedTypeLike, ValueLike, operation::OperationLike, r#type::MemRefType},
};
use symm_dialects::emit_remark;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<SelectAllReduce>(
    c"symm-mem-select-all-reduce",
    c"SymmMemSelectAllReduce",
    c"Choose one-shot or two-shot for each symm_mem.all_reduce by its byte size",
    c"func.func",
    &[
        ONE_SHOT_MAX_OPTION,
        LAMPORT_MAX_OPTION,
        PassOption::new(
            c"two-rank-push-max-bytes",
            c"On 2 ranks, the largest message that takes the two-shot pushing into the inputs (an output the compiler cannot make symmetric)",
            OptionKind::Int64,
            c"8388608",
        ),
    ],
    file!(),
);

pub struct SelectAllReduce;

/// `lamport-max-bytes`, of this pass (which takes the Lamport one-shot
/// above `one-shot-max-bytes` on 2 ranks) and of
/// `symm-mem-expand-collectives` (which makes the one-shots up to it
/// Lamport kernels).
pub const LAMPORT_MAX_OPTION: PassOption = PassOption::new(
    c"lamport-max-bytes",
    c"Largest one-shot of bf16 or f16 sums that takes the Lamport kernel (no barrier; on 2 ranks above one-shot-max-bytes too, in place of the two-shot; at most 4194304, symm_protocol::LAMPORT_MAX)",
    OptionKind::Int64,
    c"4194304",
);

/// `one-shot-max-bytes`, of this pass and of `symm-mem-expand-collectives`
/// (which cuts a dynamic all-reduce's sizes at the same limit).
pub const ONE_SHOT_MAX_OPTION: PassOption = PassOption::new(
    c"one-shot-max-bytes",
    c"Largest message that uses one-shot (-1: 1048576 on up to 2 ranks, 524288 on more)",
    OptionKind::Int64,
    c"-1",
);

/// The byte sizes the choice turns on (the passes' options).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The largest one-shot on every world size, where the option sets
    /// one (`None`: by the world size, `Limits::one_shot_max`).
    pub one_shot: Option<u64>,
    pub two_rank_push_max: u64,
    /// Largest one-shot of 16-bit float sums that takes the Lamport
    /// kernel (at most `symm_protocol::LAMPORT_MAX`).
    pub lamport_max: u64,
    /// Largest message a rows kernel (an all-reduce with a row statistic)
    /// takes as a two-shot, above it the one-shot, where the option sets
    /// one (`None`: by the world size, `Limits::rows_two_shot_max`).
    pub rows_two_shot: Option<u64>,
    /// Largest message a rows kernel takes as a Lamport one-shot (with
    /// `lamport_max` below it), where the option sets one (`None`: by the
    /// world size, `Limits::rows_lamport_max`).
    pub rows_lamport: Option<u64>,
}

impl Limits {
    pub fn from_options(options: &PassOptions) -> Self {
        let bytes = |name: &str, default: u64| {
            options
                .int(name)
                .map_or(default, |value| value.max(0) as u64)
        };
        // -1 (any negative): by the world size.
        let by_world = |name: &str| {
            options
                .int(name)
                .and_then(|value| u64::try_from(value).ok())
        };
        Self {
            one_shot: by_world("one-shot-max-bytes"),
            two_rank_push_max: bytes("two-rank-push-max-bytes", TWO_RANK_TWO_SHOT_MAX),
            lamport_max: bytes("lamport-max-bytes", LAMPORT_MAX)
                .min(symm_protocol::LAMPORT_MAX as u64),
            rows_two_shot: by_world("rows-two-shot-max-bytes"),
            rows_lamport: by_world("rows-lamport-max-bytes")
                .map(|bytes| bytes.min(symm_protocol::LAMPORT_MAX as u64)),
        }
    }

    /// The largest one-shot on `world` ranks (`None`: set at launch).
    pub fn one_shot_max(&self, world: Option<u64>) -> u64 {
        self.one_shot.unwrap_or(match world {
            Some(ranks) if ranks > 2 => ONE_SHOT_MAX_MORE_RANKS,
            _ => ONE_SHOT_MAX,
        })
    }

    /// The largest rows Lamport one-shot on `world` ranks (`None`: set at
    /// launch): `ROWS_LAMPORT_MAX` on up to 2 ranks,
    /// `ROWS_LAMPORT_MAX_MORE_RANKS` on more.
    pub fn rows_lamport_max(&self, world: Option<u64>) -> u64 {
        self.rows_lamport.unwrap_or(match world {
            Some(ranks) if ranks > 2 => ROWS_LAMPORT_MAX_MORE_RANKS,
            _ => ROWS_LAMPORT_MAX,
        })
    }

    /// The largest rows two-shot on `world` ranks (`None`: set at launch):
    /// `ROWS_TWO_SHOT_MAX` on 2 ranks, no bound on more, where the
    /// one-shot reads `w - 1` copies of the message. On 4x H200 the TP-4
    /// decoder half-layer with the two-shot at every size took 148.5-149.2
    /// against 181.9-182.3 µs at 512 rows and 494.8-496.3 against
    /// 619.7-620.7 at 2048 (bench/results/2026-11-27-tp4-prefill-h200x4.md).
    pub fn rows_two_shot_max(&self, world: Option<u64>) -> u64 {
        self.rows_two_shot.unwrap_or(match world {
            Some(ranks) if ranks > 2 => u64::MAX,
            _ => ROWS_TWO_SHOT_MAX,
        })
    }
}

/// Largest one-shot on up to 2 ranks by default (`one-shot-max-bytes`).
pub const ONE_SHOT_MAX: u64 = 1 << 20;

/// Largest one-shot on more than 2 ranks by default.
pub const ONE_SHOT_MAX_MORE_RANKS: u64 = 512 << 10;

/// Largest one-shot that takes the Lamport kernel by default
/// (`lamport-max-bytes`).
pub const LAMPORT_MAX: u64 = symm_protocol::LAMPORT_MAX as u64;

/// Largest message for which the two-shot that pushes into the peers'
/// inputs (its output is not symmetric) beats one-shot on 2 ranks, by
/// default (`two-rank-push-max-bytes`).
pub const TWO_RANK_TWO_SHOT_MAX: u64 = 8 << 20;

/// What the choice depends on besides the byte size.
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts {
    pub world: Option<u64>,
    /// Something reads the input after the all-reduce.
    pub input_read_after: bool,
    /// The output is the function's own allocation (realize can make it
    /// symmetric without a copy).
    pub output_owned: bool,
    /// The largest message this all-reduce's Lamport one-shot takes (0: it
    /// takes none: not a 16-bit float sum, `Limits::lamport_for`).
    pub lamport_max: u64,
}

impl Facts {
    /// Whether the Lamport one-shot (no barrier) takes `bytes` on 2 ranks,
    /// where it beats the two-shot above the barrier one-shot's bound.
    pub fn lamport_pays(&self, bytes: u64) -> bool {
        self.world == Some(2) && bytes <= self.lamport_max
    }
}

impl Limits {
    /// The largest message the Lamport one-shot takes of a `reduction` of
    /// `element` (0: none), with a row statistic or not, on `world` ranks,
    /// within `symm_protocol::LAMPORT_MAX`.
    pub fn lamport_for(
        &self,
        element: Option<Scalar>,
        reduction: Reduction,
        rows: bool,
        world: Option<u64>,
    ) -> u64 {
        let takes = element.and_then(Scalar::dtype).is_some_and(|dtype| {
            symm_protocol::library::lamport_takes(dtype, reduction, 0, usize::MAX)
        });
        let bound = match (takes, rows) {
            (false, _) => 0,
            (true, false) => self.lamport_max,
            (true, true) => self.lamport_max.min(self.rows_lamport_max(world)),
        };
        bound.min(symm_protocol::LAMPORT_MAX as u64)
    }
}

/// The algorithm for `bytes` on `facts.world` ranks (`None`: unknown).
pub fn choose(bytes: u64, facts: Facts, limits: Limits) -> &'static str {
    let Facts {
        world,
        input_read_after,
        output_owned,
        ..
    } = facts;
    let two_ranks_push_pays =
        !input_read_after && (output_owned || bytes <= limits.two_rank_push_max);
    if bytes <= limits.one_shot_max(world)
        || facts.lamport_pays(bytes)
        || (world == Some(2) && !two_ranks_push_pays)
    {
        "one_shot"
    } else {
        "two_shot"
    }
}

impl TypedPass for SelectAllReduce {
    fn run_typed<'c>(
        _context: &'c Context,
        function: OperationRef<'c, '_>,
        options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let limits = Limits::from_options(options);
        let groups = function
            .parent_operation()
            .map(GroupTable::from_module)
            .unwrap_or_default();
        for op in function.descendants() {
            if matches!(op.kind(), OpKind::AllReduce | OpKind::AllReduceOut) {
                select(op, &groups, limits);
            }
        }
        Ok(())
    }
}

/// Fixes the algorithm of all-reduce `op` by its byte size, with a remark
/// saying which and why (dynamic sizes: cut by size at expansion).
fn select(op: OperationRef, groups: &GroupTable, limits: Limits) {
    // An algorithm the program fixed stays.
    if Algorithm::fixed_by_op(op).is_some() {
        return;
    }
    let (Ok(input), output) = (op.operand(0), op.operand(1).ok()) else {
        return;
    };
    let Some(bytes) = byte_size(input.r#type()) else {
        emit_remark(
            op.location(),
            "all_reduce of dynamic size: each call takes the kernel of its size's range \
             (symm-mem-expand-collectives names them)",
        );
        return;
    };
    let group = op.symbol_or_string("group").unwrap_or_default();
    let world = groups.get(&group).and_then(|decl| decl.world_size);
    let read_after = used_after(input, op);
    // The functional form's result will be an allocation of ours.
    let output_owned = output.is_none_or(own_static_allocation);
    let element = MemRefType::try_from(input.r#type())
        .ok()
        .and_then(|memref| Scalar::of_type(memref.element()));
    // Without a reduction kind (the verifier refuses that) no Lamport
    // kernel: a max takes none.
    let reduction = op
        .int_attribute("reduction")
        .and_then(Reduction::from_code)
        .unwrap_or(Reduction::Max);
    // all_reduce(_out) has no row statistic (the fused forms, which
    // expansion chooses for, do).
    let facts = Facts {
        world,
        input_read_after: read_after,
        output_owned,
        lamport_max: limits.lamport_for(element, reduction, false, world),
    };
    let algorithm = choose(bytes, facts, limits);
    let fixed = match algorithm {
        "one_shot" => Algorithm::OneShot,
        _ => Algorithm::TwoShot,
    };
    op.set_int_attribute("algorithm", 32, i64::from(fixed.code()));
    let one_shot_max = limits.one_shot_max(world);
    let world = world.map_or_else(|| "set at launch".to_owned(), |w| w.to_string());
    let why = if algorithm == "one_shot" && bytes > one_shot_max {
        if facts.lamport_pays(bytes) {
            " (the Lamport kernel, which needs no barrier, on 2 ranks: bf16 and f16 sums up to \
             lamport-max-bytes)"
        } else if read_after {
            " (its input is read afterwards, which two-shot would overwrite)"
        } else {
            " (above two-rank-push-max-bytes on 2 ranks with an output it cannot make \
             symmetric, copying the peer's half out costs more than the push saves)"
        }
    } else {
        ""
    };
    emit_remark(
        op.location(),
        &format!(
            "all_reduce of {bytes} bytes in group @{group} (world size {world}): {}{why}",
            algorithm.replace('_', "-")
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::{
        Facts, LAMPORT_MAX, Limits, ONE_SHOT_MAX, ONE_SHOT_MAX_MORE_RANKS, Reduction, Scalar,
        TWO_RANK_TWO_SHOT_MAX, choose,
    };

    fn facts(world: Option<u64>, input_read_after: bool, output_owned: bool) -> Facts {
        Facts {
            world,
            input_read_after,
            output_owned,
            lamport_max: 0,
        }
    }

    fn limits(one_shot_max: u64) -> Limits {
        Limits {
            one_shot: Some(one_shot_max),
            two_rank_push_max: TWO_RANK_TWO_SHOT_MAX,
            lamport_max: LAMPORT_MAX,
            rows_two_shot: Some(super::ROWS_TWO_SHOT_MAX),
            rows_lamport: None,
        }
    }

    #[test]
    fn two_ranks_take_two_shot_only_when_the_input_may_be_overwritten() {
        let m = limits(1 << 20);
        assert_eq!(choose(4 << 20, facts(Some(2), true, true), m), "one_shot");
        assert_eq!(choose(4 << 20, facts(Some(2), false, false), m), "two_shot");
        assert_eq!(choose(1 << 20, facts(Some(2), false, true), m), "one_shot");
        // Large: only when the push can land in symmetric outputs.
        assert_eq!(
            choose(64 << 20, facts(Some(2), false, false), m),
            "one_shot"
        );
        assert_eq!(choose(64 << 20, facts(Some(2), false, true), m), "two_shot");
        // Unless the push limit is raised.
        let raised = Limits {
            two_rank_push_max: 64 << 20,
            ..m
        };
        assert_eq!(
            choose(64 << 20, facts(Some(2), false, false), raised),
            "two_shot"
        );
    }

    #[test]
    fn more_ranks_switch_to_two_shot_above_the_threshold() {
        let m = limits(1 << 20);
        assert_eq!(choose(1 << 20, facts(Some(8), true, false), m), "one_shot");
        assert_eq!(
            choose((1 << 20) + 2, facts(Some(8), true, false), m),
            "two_shot"
        );
        assert_eq!(choose(4 << 20, facts(None, false, false), m), "two_shot");
        assert_eq!(choose(128, facts(None, false, false), m), "one_shot");
    }

    /// On 2 ranks the Lamport one-shot takes 16-bit float sums above the
    /// one-shot's bound up to its own, where the two-shot would; not on
    /// more ranks, not past its bound, not other sums.
    #[test]
    fn two_ranks_take_the_lamport_one_shot_up_to_its_bound() {
        let m = Limits {
            one_shot: None,
            ..limits(0)
        };
        let bf16 = m.lamport_for(Some(Scalar::Bf16), Reduction::Sum, false, Some(2));
        assert_eq!(bf16, LAMPORT_MAX);
        assert_eq!(LAMPORT_MAX, 4 << 20);
        let lamport = |world| Facts {
            lamport_max: bf16,
            ..facts(world, false, true)
        };
        assert_eq!(choose(3 << 19, lamport(Some(2)), m), "one_shot");
        assert_eq!(choose(4 << 20, lamport(Some(2)), m), "one_shot");
        assert_eq!(choose((4 << 20) + 16, lamport(Some(2)), m), "two_shot");
        assert_eq!(choose(3 << 19, lamport(Some(4)), m), "two_shot");
        assert_eq!(choose(3 << 19, lamport(None), m), "two_shot");
        assert_eq!(choose(3 << 19, facts(Some(2), false, true), m), "two_shot");
        // What the Lamport kernel takes: bf16 and f16 sums; a rows kernel
        // up to its own bound.
        assert_eq!(
            m.lamport_for(Some(Scalar::F16), Reduction::Sum, false, Some(2)),
            LAMPORT_MAX
        );
        assert_eq!(
            m.lamport_for(Some(Scalar::F32), Reduction::Sum, false, Some(2)),
            0
        );
        assert_eq!(
            m.lamport_for(Some(Scalar::Bf16), Reduction::Max, false, Some(2)),
            0
        );
        assert_eq!(m.lamport_for(None, Reduction::Sum, false, Some(2)), 0);
        assert_eq!(
            m.lamport_for(Some(Scalar::Bf16), Reduction::Sum, true, Some(2)),
            super::ROWS_LAMPORT_MAX
        );
        assert_eq!(
            m.lamport_for(Some(Scalar::Bf16), Reduction::Sum, true, Some(8)),
            super::ROWS_LAMPORT_MAX_MORE_RANKS
        );
        let off = Limits {
            lamport_max: 0,
            ..m
        };
        assert_eq!(
            off.lamport_for(Some(Scalar::Bf16), Reduction::Sum, false, Some(2)),
            0
        );
    }

    /// Left at its default, the limit goes by the world size: 1 MiB on 2
    /// ranks or a world set at launch, 512 KiB on more; a limit the
    /// option sets holds on every world size (0: never one-shot).
    #[test]
    fn the_default_limit_goes_by_the_world_size() {
        let by_world = Limits {
            one_shot: None,
            ..limits(0)
        };
        assert_eq!(by_world.one_shot_max(Some(2)), ONE_SHOT_MAX);
        assert_eq!(by_world.one_shot_max(None), ONE_SHOT_MAX);
        for world in [3, 4, 8] {
            assert_eq!(by_world.one_shot_max(Some(world)), ONE_SHOT_MAX_MORE_RANKS);
        }
        let tp4 = facts(Some(4), false, true);
        assert_eq!(choose(512 << 10, tp4, by_world), "one_shot");
        assert_eq!(choose((512 << 10) + 2, tp4, by_world), "two_shot");
        assert_eq!(
            choose(1 << 20, facts(Some(2), false, true), by_world),
            "one_shot"
        );
        assert_eq!(limits(1 << 20).one_shot_max(Some(4)), 1 << 20);
        assert_eq!(limits(0).one_shot_max(Some(2)), 0);
    }

    /// So does the rows kernels' two-shot bound: ROWS_TWO_SHOT_MAX on 2
    /// ranks or a world set at launch, none on more; a bound the option
    /// sets holds on every world size.
    #[test]
    fn the_default_rows_two_shot_bound_goes_by_the_world_size() {
        let by_world = Limits {
            rows_two_shot: None,
            ..limits(0)
        };
        assert_eq!(
            by_world.rows_two_shot_max(Some(2)),
            super::ROWS_TWO_SHOT_MAX
        );
        assert_eq!(by_world.rows_two_shot_max(None), super::ROWS_TWO_SHOT_MAX);
        for world in [3, 4, 8] {
            assert_eq!(by_world.rows_two_shot_max(Some(world)), u64::MAX);
        }
        let set = Limits {
            rows_two_shot: Some(16 << 20),
            ..limits(0)
        };
        assert_eq!(set.rows_two_shot_max(Some(2)), 16 << 20);
        assert_eq!(set.rows_two_shot_max(Some(8)), 16 << 20);
    }

    /// So does the rows kernels' Lamport bound: 2 MiB on 2 ranks or a world
    /// set at launch, 256 KiB on more; a bound the option sets holds on
    /// every world size.
    #[test]
    fn the_default_rows_lamport_bound_goes_by_the_world_size() {
        let by_world = limits(0);
        assert_eq!(by_world.rows_lamport_max(Some(2)), 2 << 20);
        assert_eq!(by_world.rows_lamport_max(None), 2 << 20);
        for world in [3, 4, 8] {
            assert_eq!(by_world.rows_lamport_max(Some(world)), 256 << 10);
        }
        let set = Limits {
            rows_lamport: Some(512 << 10),
            ..limits(0)
        };
        assert_eq!(set.rows_lamport_max(Some(2)), 512 << 10);
        assert_eq!(set.rows_lamport_max(Some(8)), 512 << 10);
    }

    /// The option's text names the defaults it stands for (it must be a C
    /// literal, so it cannot be built from them).
    #[test]
    fn the_option_text_names_the_default_limits() {
        let (text, default) = super::DESCRIPTOR
            .option("one-shot-max-bytes")
            .expect("the pass has one-shot-max-bytes");
        assert_eq!(default, "-1");
        assert!(text.contains(&format!(
            "-1: {ONE_SHOT_MAX} on up to 2 ranks, {ONE_SHOT_MAX_MORE_RANKS} on more"
        )));
    }
}
