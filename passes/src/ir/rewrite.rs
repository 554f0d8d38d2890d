//! Erasing while walking, through MLIR's own walker and rewriter.
//!
//! A walk that lists the ops first and visits the list would, on erasing
//! an op that holds regions, free ops still on the list, which a later
//! visit reads (the use-after-free symm-fuzz once found). `walk_erasing`
//! instead runs MLIR's post-order walk, which visits an op after
//! everything it holds and has already stepped past it when the visit
//! returns; a visit asks for its op to be erased (`Visit::Erase`) and the
//! walk erases it through an `IRRewriter`, so no erased op can be visited
//! again.

use super::melior_ext::op_key;
use melior::ir::OperationRef;
use mlir_sys::*;
use std::collections::HashSet;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// What a visit does with the op it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visit {
    Keep,
    /// Erase it (its results must have no uses left).
    Erase,
}

/// MLIR's `IRRewriter`, on the context of an op.
struct Rewriter(MlirRewriterBase);

impl Rewriter {
    fn new(anchor: MlirOperation) -> Self {
        // SAFETY: a live operation; the rewriter is destroyed on drop.
        Self(unsafe { mlirIRRewriterCreateFromOp(anchor) })
    }
    /// Erases `op` and what its regions hold.
    fn erase(&mut self, op: MlirOperation) {
        // SAFETY: a live operation whose results have no uses (the
        // rewriter asserts it in debug builds of MLIR).
        unsafe { mlirRewriterBaseEraseOp(self.0, op) }
    }
}

impl Drop for Rewriter {
    fn drop(&mut self) {
        // SAFETY: created by mlirIRRewriterCreateFromOp, destroyed once.
        unsafe { mlirIRRewriterDestroy(self.0) }
    }
}

/// The visit, as the C callback sees it: the op's raw handle.
type VisitRaw<'f> = dyn FnMut(MlirOperation) -> Visit + 'f;

struct Walk<'f> {
    visit: &'f mut VisitRaw<'f>,
    rewriter: Rewriter,
    root: MlirOperation,
    panic: Option<Box<dyn std::any::Any + Send>>,
}

unsafe extern "C" fn visit_one(op: MlirOperation, user: *mut c_void) -> MlirWalkResult {
    // SAFETY: `user` is the `Walk` that `walk_erasing` passed, alive for
    // the walk; MLIR calls back on its own thread.
    let walk = unsafe { &mut *user.cast::<Walk>() };
    match catch_unwind(AssertUnwindSafe(|| (walk.visit)(op))) {
        Ok(Visit::Erase) if op.ptr != walk.root.ptr => {
            walk.rewriter.erase(op);
            MlirWalkResult_MlirWalkResultAdvance
        }
        Ok(_) => MlirWalkResult_MlirWalkResultAdvance,
        Err(panic) => {
            // Unwinding must not cross C++: stop here, rethrow after.
            walk.panic = Some(panic);
            MlirWalkResult_MlirWalkResultInterrupt
        }
    }
}

/// Visits `root` and every op it holds, each after the ops its regions
/// hold (post-order), and erases each op whose visit says so (never
/// `root`). A visit may add ops before its op (they are not visited) and
/// rewrite uses; it must not erase ops itself.
pub fn walk_erasing<'c, 'a>(
    root: OperationRef<'c, 'a>,
    mut visit: impl FnMut(OperationRef<'c, 'a>) -> Visit,
) {
    // SAFETY: MLIR hands the visit live ops of `root`'s IR, which outlives
    // the walk.
    let mut visit_raw = |op: MlirOperation| visit(unsafe { super::melior_ext::operation_at(op) });
    let mut walk = Walk {
        visit: &mut visit_raw,
        rewriter: Rewriter::new(root.to_raw()),
        root: root.to_raw(),
        panic: None,
    };
    // SAFETY: `walk` outlives the call; the callback matches the C type.
    unsafe {
        mlirOperationWalk(
            root.to_raw(),
            Some(visit_one),
            (&mut walk as *mut Walk).cast(),
            MlirWalkOrder_MlirWalkPostOrder,
        );
    }
    if let Some(panic) = walk.panic.take() {
        resume_unwind(panic);
    }
}

/// Erases `ops`, collected earlier in the pass, through MLIR's post-order
/// walk of `root` and its rewriter: an op is erased when the walk reaches
/// it, after the ops its regions hold, so an op nested in another of them
/// is never touched after its parent freed it. Their results must have no
/// uses left (symbols, ops without results).
pub fn erase_collected(root: OperationRef, ops: &[OperationRef]) {
    let doomed: HashSet<usize> = ops.iter().map(|op| op_key(*op)).collect();
    if doomed.is_empty() {
        return;
    }
    walk_erasing(root, |op| {
        if doomed.contains(&op_key(op)) {
            Visit::Erase
        } else {
            Visit::Keep
        }
    });
}

/// Erases `op` (in the IR, its results without uses) through MLIR's
/// rewriter, as a pattern would: the one way a pass body takes an op out
/// of the IR outside a conversion or a walk.
pub fn erase(op: OperationRef) {
    Rewriter::new(op.to_raw()).erase(op.to_raw());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::melior_ext::OperationExt;
    use crate::ir::op_kind::OpKind;
    use melior::ir::{Module, operation::OperationLike};

    /// A function whose `scf.for` holds a `memref.store`, and a second
    /// store after it.
    const NESTED: &str = r#"
      func.func @f(%m: memref<4xf32>, %v: f32, %i: index) {
        scf.for %j = %i to %i step %i {
          memref.store %v, %m[%j] : memref<4xf32>
        }
        memref.store %v, %m[%i] : memref<4xf32>
        return
      }
    "#;

    fn count(root: OperationRef, kind: OpKind) -> usize {
        root.descendants()
            .into_iter()
            .filter(|op| op.isa(kind))
            .count()
    }

    #[test]
    fn erasing_a_parent_and_its_child_touches_neither_after_it_is_gone() {
        let context = symm_dialects::create_context();
        let module = Module::parse(&context, NESTED).expect("parses");
        let root = module.as_operation();
        // The child listed after its parent, as a walk lists them: erasing
        // them in list order would free the child with its parent first.
        let doomed: Vec<OperationRef> = root
            .descendants()
            .into_iter()
            .filter(|op| op.isa(OpKind::ScfFor) || op.isa(OpKind::MemrefStore))
            .take(2)
            .collect();
        assert!(doomed[0].isa(OpKind::ScfFor) && doomed[1].isa(OpKind::MemrefStore));
        erase_collected(root, &doomed);
        assert_eq!(count(root, OpKind::ScfFor), 0);
        // The second store, not collected, stays.
        assert_eq!(count(root, OpKind::MemrefStore), 1);
        assert!(module.as_operation().verify());
    }

    #[test]
    fn erase_takes_one_op_out_through_the_rewriter() {
        let context = symm_dialects::create_context();
        let module = Module::parse(&context, NESTED).expect("parses");
        let root = module.as_operation();
        let last_store = root
            .descendants()
            .into_iter()
            .filter(|op| op.isa(OpKind::MemrefStore))
            .last()
            .expect("a store");
        erase(last_store);
        assert_eq!(count(root, OpKind::MemrefStore), 1);
        assert!(module.as_operation().verify());
    }
}
