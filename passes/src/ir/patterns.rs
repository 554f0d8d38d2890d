//! Rewrite patterns on melior's API: a pattern is a plain function of the
//! context, the matched op and the driver's rewriter, and every change goes
//! through that rewriter, so the driver (MLIR's walk-based pattern driver)
//! never visits an op a rewrite erased. The raw handles the C API's
//! callback passes become melior references here, in one place.

use melior::{
    Context, RewritePattern, RewritePatternSet, RewriterBase, create_op_rewrite_pattern,
    ir::OperationRef,
};
use std::{
    any::Any,
    cell::RefCell,
    panic::{AssertUnwindSafe, catch_unwind, resume_unwind},
    rc::Rc,
};

/// A rewrite of one matched op; false leaves it as it is (the pattern did
/// not apply).
pub type RewriteOne =
    for<'c, 'a> fn(&'c Context, OperationRef<'c, 'a>, RewriterBase<'c, 'a>) -> bool;

/// A panic inside a pattern, kept to be rethrown once the driver is out of
/// C++ (unwinding through it would abort).
type Panicked = Rc<RefCell<Option<Box<dyn Any + Send>>>>;

/// Applies `patterns` (root op name and rewrite) to the ops nested in
/// `root`, in one walk (`mlirWalkAndApplyPatterns`: no folding, no
/// iteration to a fixed point).
pub fn walk_and_apply<'c>(
    context: &'c Context,
    root: OperationRef<'c, '_>,
    patterns: &[(&str, RewriteOne)],
) {
    let panicked: Panicked = Rc::default();
    let set = RewritePatternSet::new(context);
    for &(name, rewrite) in patterns {
        set.add(pattern(context, name, rewrite, panicked.clone()));
    }
    melior::walk_and_apply_patterns(root, set.freeze());
    let panic = panicked.borrow_mut().take();
    if let Some(panic) = panic {
        resume_unwind(panic);
    }
}

fn pattern(
    context: &Context,
    root: &str,
    rewrite: RewriteOne,
    panicked: Panicked,
) -> RewritePattern {
    create_op_rewrite_pattern(
        root,
        1,
        context,
        move |_, op, rewriter| {
            if panicked.borrow().is_some() {
                return false;
            }
            // SAFETY: during matchAndRewrite the driver passes a live op
            // and its live rewriter, valid for this call; the op's context
            // outlives both.
            let applied = catch_unwind(AssertUnwindSafe(|| unsafe {
                let op = super::melior_ext::operation_at(op);
                let rewriter = super::melior_ext::pattern_rewriter_at(rewriter);
                super::melior_ext::with_context_of(op, |context| rewrite(context, op, rewriter))
            }));
            applied.unwrap_or_else(|panic| {
                panicked.borrow_mut().get_or_insert(panic);
                false
            })
        },
        &[],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::melior_ext::OperationExt;
    use crate::ir::op_kind::OpKind;
    use melior::ir::{BlockLike, Module, Value, ValueLike, operation::OperationLike};

    /// Replaces each `arith.addf %x, %y` by `%x` (erasing it through the
    /// rewriter), so that the walk meets ops a rewrite erased if the
    /// driver did not know.
    fn fold_add<'c, 'a>(
        _: &'c Context,
        op: OperationRef<'c, 'a>,
        rewriter: RewriterBase<'c, 'a>,
    ) -> bool {
        let Ok(lhs) = op.operand(0) else {
            return false;
        };
        rewriter.replace_op_with_values(op, &[lhs]);
        true
    }

    #[test]
    fn a_walk_that_erases_through_the_rewriter_visits_no_erased_op() {
        let context = symm_dialects::create_context();
        let module = Module::parse(
            &context,
            r#"
            func.func @f(%x: f32, %n: index) -> f32 {
              %a = arith.addf %x, %x : f32
              %r = scf.for %i = %n to %n step %n iter_args(%acc = %a) -> (f32) {
                %b = arith.addf %acc, %x : f32
                %c = arith.addf %b, %b : f32
                scf.yield %c : f32
              }
              return %r : f32
            }
            "#,
        )
        .expect("parses");
        let function = module.body().first_operation().expect("@f");
        walk_and_apply(&context, function, &[("arith.addf", fold_add)]);
        assert!(
            !function
                .descendants()
                .iter()
                .any(|op| op.dialect() == crate::ir::op_kind::OpDialect::Arith
                    && op.to_string().contains("addf"))
        );
        assert!(module.as_operation().verify());
        // The loop yields its argument now.
        let for_op = function
            .descendants()
            .into_iter()
            .find(|op| op.isa(OpKind::ScfFor))
            .expect("the loop");
        let yielded: Value = for_op
            .first_block()
            .and_then(|body| body.terminator())
            .and_then(|terminator| terminator.operand(0).ok())
            .expect("a yield");
        assert!(yielded.is_block_argument());
    }

    fn panics<'c, 'a>(_: &'c Context, _: OperationRef<'c, 'a>, _: RewriterBase<'c, 'a>) -> bool {
        panic!("a pattern's bug")
    }

    #[test]
    fn a_panicking_pattern_panics_outside_the_driver() {
        let context = symm_dialects::create_context();
        let module = Module::parse(
            &context,
            "func.func @f(%x: f32) -> f32 {\n %a = arith.addf %x, %x : f32\n return %a : f32\n}",
        )
        .expect("parses");
        let function = module.body().first_operation().expect("@f");
        let caught = catch_unwind(AssertUnwindSafe(|| {
            walk_and_apply(&context, function, &[("arith.addf", panics)])
        }));
        assert!(caught.is_err());
    }
}
