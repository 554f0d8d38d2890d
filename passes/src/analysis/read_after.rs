//! What decides the two-shot's push forms: whether a buffer's memory may
//! still be read after an op (may the push overwrite the input?), and
//! whether a buffer is the function's own allocation (can the output be
//! made symmetric, without a copy, so the push lands in the peers' outputs?).

use crate::ir::op_kind::OpKind;
use crate::ir::{Op, Val};

/// Whether `value`'s memory may be used after `op` (which uses it): some
/// use of it, or of a view of it, comes after `op` in `op`'s block (a use
/// nested in a region counts where its ancestor in that block sits), or
/// sits outside that block, or the value is a block argument (a caller's
/// buffer, readable after the function returns), or `op` sits in a loop
/// body (any region but a function's) and the buffer is not made in it.
pub fn used_after(value: Val, op: Op) -> bool {
    if value.block_arg().is_some() {
        return true;
    }
    let Some(block) = op.block() else {
        return true;
    };
    // Inside a loop (or any region but a function body) `op` may run
    // again: its own next run, or a use before it in the block, reads the
    // buffer afterwards, unless the buffer is made anew in that block.
    let in_function_body = block
        .parent_op()
        .is_some_and(|parent| parent.isa(OpKind::Func));
    if !in_function_body && root_of(value).def().and_then(Op::block) != Some(block) {
        return true;
    }
    // Where a use sits, counted at its ancestor in `op`'s block.
    let before_op = |user: Op| {
        let anchor = user.ancestor_in(Some(block));
        anchor.block() == Some(block) && anchor.is_before_in_block(op)
    };
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        for (user, index) in value.uses() {
            if user == op {
                continue;
            }
            if user.is_view_like() && index == 0 {
                // A view aliases the buffer wherever it is defined.
                pending.extend(user.results());
                continue;
            }
            if !before_op(user) {
                return true;
            }
        }
    }
    false
}

/// Where a buffer comes from, looking through views.
pub fn root_of(mut value: Val) -> Val {
    while let Some(def) = value.def() {
        if !def.is_view_like() || def.num_operands() == 0 {
            break;
        }
        value = def.operand(0);
    }
    value
}

/// Whether `value` is (a view of) a statically shaped `memref.alloc` or
/// `symm_mem.alloc` of the function: a buffer the compiler may place in
/// symmetric memory without copying it.
pub fn own_static_allocation(value: Val) -> bool {
    root_of(value).def().is_some_and(|def| {
        (def.isa(OpKind::MemrefAlloc) || def.isa(OpKind::SymmAlloc)) && def.num_operands() == 0
    })
}
