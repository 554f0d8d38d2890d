//! What decides the two-shot's push forms: whether a buffer's memory may
//! still be read after an op (may the push overwrite the input?), and
//! whether a buffer is the function's own allocation (can the output be
//! made symmetric, without a copy, so the push lands in the peers' outputs?).

use crate::ir::melior_ext::{OperationExt, ValueExt, value_key};
use crate::ir::op_kind::OpKind;
use melior::ir::{BlockLike, OperationRef, Value, ValueLike, operation::OperationLike};

/// Whether `value`'s memory may be used after `op` (which uses it): some
/// use of it, or of a view of it, comes after `op` in `op`'s block (a use
/// nested in a region counts where its ancestor in that block sits), or
/// sits outside that block, or the value is a block argument (a caller's
/// buffer, readable after the function returns), or `op` sits in a loop
/// body (any region but a function's) and the buffer is not made in it.
pub fn used_after<'c: 'a, 'a>(value: Value<'c, 'a>, op: OperationRef<'c, 'a>) -> bool {
    if value.is_block_argument() {
        return true;
    }
    let Some(block) = op.block() else {
        return true;
    };
    // Inside a loop (or any region but a function body) `op` may run
    // again: its own next run, or a use before it in the block, reads the
    // buffer afterwards, unless the buffer is made anew in that block.
    let in_function_body = block
        .parent_operation()
        .is_some_and(|parent| parent.isa(OpKind::Func));
    let made_here = root_of(value)
        .defining_op()
        .is_some_and(|def| def.block() == Some(block));
    if !in_function_body && !made_here {
        return true;
    }
    // Where a use sits, counted at its ancestor in `op`'s block.
    let before_op = |user: OperationRef<'c, 'a>| {
        let anchor = user.ancestor_in(block);
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
                pending.extend(user.results().map(Value::from));
                continue;
            }
            if !before_op(user) {
                return true;
            }
        }
    }
    false
}

/// `value`, then the source of each view it is made by, down to the
/// buffer it comes from.
fn view_chain<'c: 'a, 'a>(value: Value<'c, 'a>) -> impl Iterator<Item = Value<'c, 'a>> {
    std::iter::successors(Some(value), |v| {
        v.defining_op()
            .filter(|def| def.is_view_like())
            .and_then(|def| def.operand(0).ok())
    })
}

/// Where a buffer comes from, looking through views.
pub fn root_of<'c: 'a, 'a>(value: Value<'c, 'a>) -> Value<'c, 'a> {
    view_chain(value).last().unwrap_or(value)
}

/// Whether `value` is `of` or a view of it (through view-like ops only:
/// buffers that are views of one pool are not views of each other).
pub fn is_view_of<'c: 'a, 'a>(value: Value<'c, 'a>, of: Value<'c, 'a>) -> bool {
    view_chain(value).any(|v| value_key(v) == value_key(of))
}

/// Whether `value` is (a view of) a statically shaped `memref.alloc` or
/// `symm_mem.alloc` of the function: a buffer the compiler may place in
/// symmetric memory without copying it.
pub fn own_static_allocation(value: Value) -> bool {
    root_of(value).defining_op().is_some_and(|def| {
        (def.isa(OpKind::MemrefAlloc) || def.isa(OpKind::SymmAlloc)) && def.operand_count() == 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::melior_ext::BlockExt;
    use melior::ir::{BlockLike, Module};

    const BUFFERS: &str = r#"
      func.func @f(%arg: memref<8xf32>, %n: index) {
        %a = memref.alloc() : memref<8xf32>
        %b = memref.alloc(%n) : memref<?xf32>
        %v = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
        %c = arith.constant 0.0 : f32
        memref.store %c, %a[%n] : memref<8xf32>
        memref.store %c, %v[%n] : memref<4xf32, strided<[1]>>
        return
      }
    "#;

    #[test]
    fn a_later_use_through_a_view_counts_and_arguments_always_do() {
        let context = symm_dialects::create_context();
        let module = Module::parse(&context, BUFFERS).expect("parses");
        let function = module.body().first_operation().expect("a function");
        let body = function.first_block().expect("a body");
        let ops = body.ops();
        let (alloc, dynamic, view, first_store, second_store) =
            (ops[0], ops[1], ops[2], ops[4], ops[5]);
        let a: Value = alloc.result(0).expect("a").into();
        let v: Value = view.result(0).expect("v").into();
        // The store through the view comes after the first store.
        assert!(used_after(a, first_store));
        assert!(!used_after(v, second_store));
        assert!(used_after(
            body.argument(0).expect("arg").into(),
            second_store
        ));
        assert_eq!(root_of(v), a);
        assert!(own_static_allocation(v));
        assert!(!own_static_allocation(dynamic.result(0).expect("b").into()));
    }
}
