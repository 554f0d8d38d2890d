//! Erasing while walking, through MLIR's own walker and rewriter.
//!
//! `Op::walk` lists the ops first and visits the list; erasing an op that
//! holds regions then frees ops still on the list, which a later visit
//! reads (the use-after-free symm-fuzz once found). `walk_erasing` instead
//! runs MLIR's post-order walk, which visits an op after everything it
//! holds and has already stepped past it when the visit returns; a visit
//! asks for its op to be erased (`Visit::Erase`) and the walk erases it
//! through an `IRRewriter`, so no erased op can be visited again.

use super::Op;
use mlir_sys::*;
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
    fn new(anchor: Op) -> Self {
        // SAFETY: a live operation; the rewriter is destroyed on drop.
        Self(unsafe { mlirIRRewriterCreateFromOp(anchor.raw()) })
    }
    /// Erases `op` and what its regions hold.
    fn erase(&mut self, op: Op) {
        // SAFETY: a live operation whose results have no uses (the
        // rewriter asserts it in debug builds of MLIR).
        unsafe { mlirRewriterBaseEraseOp(self.0, op.raw()) }
    }
}

impl Drop for Rewriter {
    fn drop(&mut self) {
        // SAFETY: created by mlirIRRewriterCreateFromOp, destroyed once.
        unsafe { mlirIRRewriterDestroy(self.0) }
    }
}

struct Walk<'f> {
    visit: &'f mut dyn FnMut(Op) -> Visit,
    rewriter: Rewriter,
    root: Op,
    panic: Option<Box<dyn std::any::Any + Send>>,
}

unsafe extern "C" fn visit_one(op: MlirOperation, user: *mut c_void) -> MlirWalkResult {
    // SAFETY: `user` is the `Walk` that `walk_erasing` passed, alive for
    // the walk; MLIR calls back on its own thread.
    let walk = unsafe { &mut *user.cast::<Walk>() };
    // SAFETY: MLIR passes a live operation.
    let op = unsafe { Op::from_raw(op) };
    match catch_unwind(AssertUnwindSafe(|| (walk.visit)(op))) {
        Ok(Visit::Erase) if op != walk.root => {
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
pub fn walk_erasing(root: Op, mut visit: impl FnMut(Op) -> Visit) {
    let mut walk = Walk {
        visit: &mut visit,
        rewriter: Rewriter::new(root),
        root,
        panic: None,
    };
    // SAFETY: `walk` outlives the call; the callback matches the C type.
    unsafe {
        mlirOperationWalk(
            root.raw(),
            Some(visit_one),
            (&mut walk as *mut Walk).cast(),
            MlirWalkOrder_MlirWalkPostOrder,
        );
    }
    if let Some(panic) = walk.panic.take() {
        resume_unwind(panic);
    }
}
