//! `symm-mem-select-all-reduce`: each `symm_mem.all_reduce(_out)` becomes
//! the one-shot or two-shot form by its static byte size.
//!
//! Thresholds come from bench/results (2x H200): on 2 ranks two-shot moves
//! as many bytes over NVLink as one-shot and adds a barrier, so one-shot
//! wins at every size; with more ranks two-shot's 1/W share pays off for
//! large messages, above `one-shot-max-bytes`. Dynamic sizes stay
//! `all_reduce`, for the runtime to choose.

use crate::{
    OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, SymmPass,
    ir::{Op, OpBuilder, emit_remark},
};

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<SelectAllReduce>(
    c"symm-mem-select-all-reduce",
    c"SymmMemSelectAllReduce",
    c"Choose one-shot or two-shot for each symm_mem.all_reduce by its byte size",
    c"func.func",
    &[PassOption::new(
        c"one-shot-max-bytes",
        c"Largest message that uses one-shot when the group has more than 2 ranks",
        OptionKind::Int64,
        c"1048576",
    )],
);

pub struct SelectAllReduce;

/// The algorithm for `bytes` on `world` ranks (`None`: unknown).
pub fn choose(bytes: u64, world: Option<u64>, one_shot_max: u64) -> &'static str {
    if world == Some(2) || bytes <= one_shot_max {
        "one_shot"
    } else {
        "two_shot"
    }
}

impl SymmPass for SelectAllReduce {
    fn run(function: Op, options: &PassOptions) -> Result<(), PassFailed> {
        let one_shot_max = options.int("one-shot-max-bytes").unwrap_or(1 << 20).max(0) as u64;
        let groups = function.parent().map(Op::group_table).unwrap_or_default();
        for op in function.walk() {
            let out_form = match op.name().as_str() {
                "symm_mem.all_reduce" => false,
                "symm_mem.all_reduce_out" => true,
                _ => continue,
            };
            let Some(bytes) = op.operand(0).ty().byte_size() else {
                emit_remark(
                    op.loc(),
                    "all_reduce of dynamic size: the runtime chooses the algorithm",
                );
                continue;
            };
            let group = op
                .attr("group")
                .and_then(|g| g.symbol_or_string())
                .unwrap_or_default();
            let world = groups.get(&group).and_then(|decl| decl.world_size);
            let algorithm = choose(bytes, world, one_shot_max);
            let name = format!(
                "symm_mem.{algorithm}_all_reduce{}",
                if out_form { "_out" } else { "" }
            );
            let mut new = OpBuilder::new(&name, op.loc())
                .operands(&op.operands())
                .results(&op.results().iter().map(|r| r.ty()).collect::<Vec<_>>());
            for attr in ["reduction", "group"] {
                if let Some(value) = op.attr(attr) {
                    new = new.attr(attr, value);
                }
            }
            let new = new.build();
            op.insert_before(new);
            for (old, replacement) in op.results().into_iter().zip(new.results()) {
                old.replace_all_uses_with(replacement);
            }
            op.erase();
            let world = world.map_or_else(|| "set at launch".to_owned(), |w| w.to_string());
            emit_remark(
                new.loc(),
                &format!(
                    "all_reduce of {bytes} bytes in group @{group} (world size {world}): {}",
                    algorithm.replace('_', "-")
                ),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::choose;

    #[test]
    fn two_ranks_always_use_one_shot() {
        assert_eq!(choose(64 << 20, Some(2), 1 << 20), "one_shot");
    }

    #[test]
    fn more_ranks_switch_to_two_shot_above_the_threshold() {
        assert_eq!(choose(1 << 20, Some(8), 1 << 20), "one_shot");
        assert_eq!(choose((1 << 20) + 2, Some(8), 1 << 20), "two_shot");
        assert_eq!(choose(4 << 20, None, 1 << 20), "two_shot");
        assert_eq!(choose(128, None, 1 << 20), "one_shot");
    }
}
