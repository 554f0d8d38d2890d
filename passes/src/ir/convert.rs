//! Lowering through MLIR's dialect conversion driver
//! (`applyPartialConversion`, reached through `symmApplyPartialConversion`
//! in our C API): the caller says which ops are illegal and how to rewrite
//! one; the driver walks the IR, hands each illegal op to the rewrite with
//! its `ConversionPatternRewriter`, and fails if an illegal op is left. An
//! op the rewrite refuses (it reports why) stays, as legal.

use super::Op;
use mlir_sys::{MlirOperation, MlirRewriterBase, mlirRewriterBaseEraseOp};
use std::any::Any;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// The conversion's rewriter, for the rewrite of one op.
pub struct Rewriter(MlirRewriterBase);

impl Rewriter {
    /// Erases `op` (its results must have no uses left) through the
    /// driver, which then knows it is gone.
    pub fn erase(&mut self, op: Op) {
        // SAFETY: the driver's live rewriter and a live op whose results
        // have no uses.
        unsafe { mlirRewriterBaseEraseOp(self.0, op.raw()) }
    }
}

/// What a rewrite did with its op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rewrite {
    /// Rewritten and erased through the rewriter.
    Lowered,
    /// Left as it is; the rewrite reported why.
    Refused,
}

struct State<'f> {
    illegal: &'f dyn Fn(Op) -> bool,
    lower: &'f mut dyn FnMut(Op, &mut Rewriter) -> Rewrite,
    panic: Option<Box<dyn Any + Send>>,
}

unsafe extern "C" fn is_illegal(op: MlirOperation, user: *mut c_void) -> bool {
    // SAFETY: `user` is the `State` that `convert` passed, alive for the
    // conversion; MLIR calls back on this thread, one call at a time.
    let state = unsafe { &mut *user.cast::<State>() };
    if state.panic.is_some() {
        return false;
    }
    // SAFETY: MLIR passes a live operation.
    let op = unsafe { Op::from_raw(op) };
    match catch_unwind(AssertUnwindSafe(|| (state.illegal)(op))) {
        Ok(illegal) => illegal,
        Err(panic) => {
            state.panic = Some(panic);
            false
        }
    }
}

unsafe extern "C" fn lower(
    op: MlirOperation,
    rewriter: MlirRewriterBase,
    user: *mut c_void,
) -> bool {
    // SAFETY: as in `is_illegal`.
    let state = unsafe { &mut *user.cast::<State>() };
    if state.panic.is_some() {
        return false;
    }
    // SAFETY: MLIR passes a live operation.
    let op = unsafe { Op::from_raw(op) };
    let mut rewriter = Rewriter(rewriter);
    match catch_unwind(AssertUnwindSafe(|| (state.lower)(op, &mut rewriter))) {
        Ok(outcome) => outcome == Rewrite::Lowered,
        Err(panic) => {
            state.panic = Some(panic);
            false
        }
    }
}

/// Converts the ops under `root` that `illegal` names with `lower`, by
/// MLIR's partial conversion. False when an illegal op was neither
/// lowered nor refused. A panic in either callback stops the conversion
/// and is rethrown here, outside C++.
pub fn convert(
    root: Op,
    illegal: &dyn Fn(Op) -> bool,
    lower_one: &mut dyn FnMut(Op, &mut Rewriter) -> Rewrite,
) -> bool {
    let mut state = State {
        illegal,
        lower: lower_one,
        panic: None,
    };
    // SAFETY: a live root; the callbacks get `state`, which outlives the
    // call.
    let result = unsafe {
        symm_dialects::ffi::symmApplyPartialConversion(
            root.raw(),
            is_illegal,
            lower,
            (&raw mut state).cast::<c_void>(),
        )
    };
    if let Some(panic) = state.panic.take() {
        resume_unwind(panic);
    }
    result.value != 0
}
