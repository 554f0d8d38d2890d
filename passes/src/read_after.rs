//! Whether a buffer's memory may still be read after an op: the question
//! that decides if a push two-shot may overwrite its input.

use crate::ir::{Op, Val};

/// Whether `value`'s memory may be used after `op` (which uses it): some
/// use of it, or of a view of it, comes after `op` in `op`'s block (a use
/// nested in a region counts where its ancestor in that block sits), or
/// sits outside that block, or the value is a block argument (a caller's
/// buffer, readable after the function returns).
pub fn used_after(value: Val, op: Op) -> bool {
    if value.block_arg().is_some() {
        return true;
    }
    let Some(block) = op.block() else {
        return true;
    };
    let order = block.ops();
    let Some(at) = order.iter().position(|&o| o == op) else {
        return true;
    };
    let position = |user: Op| -> Option<usize> {
        let mut anchor = user;
        while anchor.block() != Some(block) {
            anchor = anchor.parent()?;
        }
        order.iter().position(|&o| o == anchor)
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
            match position(user) {
                Some(p) if p < at => {}
                _ => return true,
            }
        }
    }
    false
}
