//! `symm-mem-to-dps` (seed 001 [1/5]): every functional collective becomes
//! its destination-passing `_out` form, writing into an explicit
//! `memref.alloc`. The allocation is then visible to planning, which can
//! reuse it across layers.

use crate::ir::op_kind::OpKind;
use crate::{
    PassDescriptor, PassFailed, PassOptions, SymmPass,
    ir::builders::{Builder, all_gather_matmul_out, all_reduce_out},
    ir::rewrite::{Visit, walk_erasing},
    ir::{Op, Val},
};

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<ToDps>(
    c"symm-mem-to-dps",
    c"SymmMemToDps",
    c"Rewrite functional symm_mem collectives into their _out forms writing into explicit allocations",
    c"func.func",
    &[],
    file!(),
);

pub struct ToDps;

impl SymmPass for ToDps {
    fn run(function: Op, _options: &PassOptions) -> Result<(), PassFailed> {
        // The functional op goes once its out form took its uses: the walk
        // erases it through the rewriter, after every op it holds.
        walk_erasing(function, |op| match op.kind() {
            // The functional collectives, which have out forms.
            OpKind::AllReduce | OpKind::AllGatherMatmul => {
                rewrite(op);
                Visit::Erase
            }
            _ => Visit::Keep,
        });
        Ok(())
    }
}

/// Sizes of the dynamic dimensions of the result, computed from operands.
fn result_sizes(builder: &mut Builder, op: Op) -> Vec<Val> {
    let result = op.result(0).ty();
    if !op.isa(OpKind::AllGatherMatmul) {
        return builder.dynamic_sizes_of(op.operand(0), result);
    }
    // (world_size * rows of a) x (columns of b)
    let (a, b) = (op.operand(0), op.operand(1));
    let shape = result.shape();
    let mut sizes = Vec::new();
    if shape[0].is_none() {
        let group = op.attr("group").expect("verified collectives have a group");
        let world = builder.world_size(group);
        let rows = builder.dim(a, 0);
        sizes.push(builder.muli(world, rows));
    }
    if shape[1].is_none() {
        sizes.push(builder.dim(b, 1));
    }
    sizes
}

/// `op` (an all-reduce or all-gather matmul) as its out form.
fn rewrite(op: Op) {
    let mut builder = Builder::before(op);
    let result = op.result(0);
    let sizes = result_sizes(&mut builder, op);
    let out = builder.alloc(result.ty(), &sizes, None);
    let group = op.attr("group").expect("verified collectives have a group");
    let new = if op.isa(OpKind::AllReduce) {
        let reduction = op
            .attr("reduction")
            .expect("verified all-reduces have a reduction");
        all_reduce_out(
            op.loc(),
            op.operand(0),
            out,
            reduction,
            group,
            op.attr("algorithm"),
        )
    } else {
        all_gather_matmul_out(op.loc(), [op.operand(0), op.operand(1)], out, group)
    };
    builder.insert(new);
    result.replace_all_uses_with(out);
}
