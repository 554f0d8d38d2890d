//! Lowering through MLIR's dialect conversion driver
//! (`applyPartialConversion`, reached through `symmApplyPartialConversion`
//! in our C API): the caller says which ops are illegal and how to rewrite
//! one; the driver walks the IR, hands each illegal op to the rewrite with
//! its `ConversionPatternRewriter`, and fails if an illegal op is left. An
//! op the rewrite refuses (it reports why) stays, as legal.

use super::builders::{Terminator, put_terminator};
use melior::ir::{BlockRef, OperationRef, operation::OperationLike};
use mlir_sys::MlirOperation;
use std::any::Any;
use std::cell::RefCell;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use symm_dialects::ffi::{SymmConversion, symmConversionEraseOp, symmConversionUpdatedInPlace};

/// The conversion's rewriter, for the rewrite of one op.
pub struct Rewriter(*mut SymmConversion);

impl Rewriter {
    /// Erases `op` (its results must have no uses left): it leaves the IR
    /// at once, and the conversion destroys it when it ends, so the
    /// driver, whose list of ops may still hold it (a consumer after the
    /// op being rewritten), never reads freed memory.
    pub fn erase_op(&mut self, op: OperationRef) {
        // SAFETY: the live conversion and a live op.
        let erased = unsafe { symmConversionEraseOp(self.0, op.to_raw()) };
        // A rewrite that erases a used op is a bug of the pass: the panic
        // ends the conversion and becomes an internal error at the op.
        assert!(
            erased,
            "internal: a rewrite erased an op whose results are still used"
        );
    }

    /// `builders::replace_terminator`, erasing the old terminator through
    /// the conversion (it may sit in a region the driver has yet to visit).
    pub fn replace_terminator_of<'c>(
        &mut self,
        context: &'c melior::Context,
        block: BlockRef<'c, '_>,
        terminator: Terminator,
    ) {
        if let Some(old) = put_terminator(context, block, terminator) {
            self.erase_op(old);
        }
    }

    /// Tells the driver that the rewrite kept its root `op`, updated in
    /// place (its operands); the driver then checks that it is legal.
    pub fn updated_op_in_place(&mut self, op: OperationRef) {
        // SAFETY: the live conversion and a live op.
        unsafe { symmConversionUpdatedInPlace(self.0, op.to_raw()) }
    }
}

/// What a rewrite did with its op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rewrite {
    /// Rewritten: erased through the rewriter, or kept and updated in
    /// place (`Rewriter::updated_in_place`).
    Lowered,
    /// Left as it is; the rewrite reported why.
    Refused,
}

/// The rewrite of one illegal op (its raw handle, as the driver gives it).
type LowerOne<'f> = dyn FnMut(MlirOperation, &mut Rewriter) -> Rewrite + 'f;

/// What the callbacks share. The driver may ask for legality while a
/// rewrite runs (its rewriter notifies it), so the state is only ever
/// borrowed shared; the rewrite closure sits in a `RefCell`.
struct State<'f> {
    illegal: &'f dyn Fn(MlirOperation) -> bool,
    lower: RefCell<&'f mut LowerOne<'f>>,
    panic: RefCell<Option<Box<dyn Any + Send>>>,
}

impl State<'_> {
    fn panicked(&self) -> bool {
        self.panic.borrow().is_some()
    }
    fn keep(&self, panic: Box<dyn Any + Send>) {
        self.panic.borrow_mut().get_or_insert(panic);
    }
}

unsafe extern "C" fn is_illegal(op: MlirOperation, user: *mut c_void) -> bool {
    // SAFETY: `user` is the `State` that `convert` passed, alive for the
    // conversion; MLIR calls back on this thread.
    let state = unsafe { &*user.cast::<State>() };
    if state.panicked() {
        return false;
    }
    match catch_unwind(AssertUnwindSafe(|| (state.illegal)(op))) {
        Ok(illegal) => illegal,
        Err(panic) => {
            state.keep(panic);
            false
        }
    }
}

unsafe extern "C" fn lower(
    op: MlirOperation,
    conversion: *mut SymmConversion,
    user: *mut c_void,
) -> bool {
    // SAFETY: as in `is_illegal`.
    let state = unsafe { &*user.cast::<State>() };
    if state.panicked() {
        return false;
    }
    let mut rewriter = Rewriter(conversion);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut lower = state.lower.borrow_mut();
        (*lower)(op, &mut rewriter)
    }));
    match outcome {
        Ok(outcome) => outcome == Rewrite::Lowered,
        Err(panic) => {
            state.keep(panic);
            false
        }
    }
}

/// Converts the ops under `root` that `illegal` names with `lower`, by
/// MLIR's partial conversion. False when an illegal op was neither
/// lowered nor refused. A panic in either callback stops the conversion
/// and is rethrown here, outside C++.
fn convert_raw(
    root: MlirOperation,
    illegal: &dyn Fn(MlirOperation) -> bool,
    lower_one: &mut LowerOne,
) -> bool {
    let state = State {
        illegal,
        lower: RefCell::new(lower_one),
        panic: RefCell::new(None),
    };
    // SAFETY: a live root; the callbacks get `state`, which outlives the
    // call.
    let result = unsafe {
        symm_dialects::ffi::symmApplyPartialConversion(
            root,
            is_illegal,
            lower,
            (&raw const state).cast_mut().cast::<c_void>(),
        )
    };
    if let Some(panic) = state.panic.into_inner() {
        resume_unwind(panic);
    }
    result.value != 0
}

/// `convert_typed` in a pass that must leave no illegal op: one left is a
/// bug of the pass, reported at `root` as an internal error naming `left`.
pub fn convert_all_typed<'c, 'a>(
    root: OperationRef<'c, 'a>,
    left: &str,
    illegal: &dyn Fn(OperationRef<'c, 'a>) -> bool,
    lower_one: &mut dyn FnMut(OperationRef<'c, 'a>, &mut Rewriter) -> Rewrite,
) -> Result<(), crate::PassFailed> {
    if convert_typed(root, illegal, lower_one) {
        return Ok(());
    }
    symm_dialects::emit_error(root.location(), &format!("internal: {left}"));
    Err(crate::PassFailed)
}

/// Converts the ops under `root` that `illegal` names with `lower_one`,
/// by MLIR's partial conversion: the callbacks get melior references to
/// the ops the driver hands over (live while it runs, as the pass's IR
/// outlives the conversion). False when an illegal op was neither lowered
/// nor refused.
pub fn convert_typed<'c, 'a>(
    root: OperationRef<'c, 'a>,
    illegal: &dyn Fn(OperationRef<'c, 'a>) -> bool,
    lower_one: &mut dyn FnMut(OperationRef<'c, 'a>, &mut Rewriter) -> Rewrite,
) -> bool {
    // SAFETY: the driver hands over live ops of `root`'s IR.
    let typed = |op: MlirOperation| -> OperationRef<'c, 'a> {
        unsafe { super::melior_ext::operation_at(op) }
    };
    convert_raw(
        root.to_raw(),
        &|op| illegal(typed(op)),
        &mut |op, rewriter| lower_one(typed(op), rewriter),
    )
}
