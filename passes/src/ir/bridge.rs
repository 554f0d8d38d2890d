//! The one place where handles of this IR layer are made from raw C API
//! handles: from melior's typed values (which are live by construction),
//! so that the rest of the crate never calls an `unsafe` `from_raw`.

use super::{Attr, Blk, Ctx, Op, Ty, Val};
use melior::{
    ContextRef,
    ir::{
        Attribute, AttributeLike, Block, BlockLike, BlockRef, Location, Operation, OperationRef,
        Type, TypeLike, Value, ValueLike,
    },
};

impl From<Type<'_>> for Ty {
    fn from(ty: Type<'_>) -> Self {
        // SAFETY: a live type of melior's context.
        unsafe { Ty::from_raw(ty.to_raw()) }
    }
}

impl From<Attribute<'_>> for Attr {
    fn from(attr: Attribute<'_>) -> Self {
        // SAFETY: a live attribute of melior's context.
        unsafe { Attr::from_raw(attr.to_raw()) }
    }
}

impl From<Value<'_, '_>> for Val {
    fn from(value: Value<'_, '_>) -> Self {
        // SAFETY: a live value of melior's IR.
        unsafe { Val::from_raw(value.to_raw()) }
    }
}

impl From<&Block<'_>> for Blk {
    fn from(block: &Block<'_>) -> Self {
        // SAFETY: a live block; the caller hands it to a region before it
        // drops (or this handle is not used after).
        unsafe { Blk::from_raw(block.to_raw()) }
    }
}

impl From<BlockRef<'_, '_>> for Blk {
    fn from(block: BlockRef<'_, '_>) -> Self {
        // SAFETY: a live block of melior's IR.
        unsafe { Blk::from_raw(block.to_raw()) }
    }
}

impl From<OperationRef<'_, '_>> for Op {
    fn from(op: OperationRef<'_, '_>) -> Self {
        // SAFETY: a live operation of melior's IR.
        unsafe { Op::from_raw(op.to_raw()) }
    }
}

/// An operation melior built, handed over to this layer (which inserts it
/// into a block, where its parent owns it).
pub fn adopt(op: Operation<'_>) -> Op {
    // SAFETY: the operation is live; melior gives up its ownership.
    unsafe { Op::from_raw(op.into_raw()) }
}

// The other way: melior handles for ours, for the typed builders. A pass
// runs on IR that outlives it, so these lifetimes are the pass run's.

/// A melior value for one of ours (the op that defines it outlives the
/// borrow, which melior cannot see through a raw handle).
pub fn value<'c>(v: Val) -> Value<'c, 'static> {
    // SAFETY: `v` is a live value of the module being built.
    unsafe { Value::from_raw(v.raw()) }
}

/// A melior reference to one of our operations.
pub fn operation<'c, 'a>(op: Op) -> OperationRef<'c, 'a> {
    // SAFETY: `op` is a live operation of the module the pass runs on.
    unsafe { OperationRef::from_raw(op.raw()) }
}

/// A melior reference to one of our blocks.
pub fn block<'c, 'a>(b: Blk) -> melior::ir::BlockRef<'c, 'a> {
    // SAFETY: `b` is a live block of the module the pass runs on.
    unsafe { melior::ir::BlockRef::from_raw(b.raw()) }
}

/// A melior reference to the context of the module being compiled.
pub fn context<'c>(ctx: Ctx) -> ContextRef<'c> {
    // SAFETY: the context of the module being compiled, alive for the pass.
    unsafe { ContextRef::from_raw(ctx.raw()) }
}

/// The location of one of our operations, as melior's.
pub fn location<'c>(op: Op) -> Location<'c> {
    // SAFETY: `op` is live; its location is the context's, which outlives
    // the pass.
    unsafe { Location::from_raw(op.loc()) }
}

/// A melior type for one of ours.
pub fn ty<'c>(t: Ty) -> Type<'c> {
    // SAFETY: `t` is a type of the context being compiled in, which
    // outlives the pass.
    unsafe { Type::from_raw(t.raw()) }
}

/// A melior attribute for one of ours.
pub fn attr<'c>(a: Attr) -> Attribute<'c> {
    // SAFETY: as for `ty`.
    unsafe { Attribute::from_raw(a.raw()) }
}

/// Builds one op with melior's typed builders, in the context of `ctx` at
/// `loc`, and hands it to this layer (detached: the caller inserts it).
pub fn build(
    ctx: Ctx,
    loc: mlir_sys::MlirLocation,
    build: impl for<'c> FnOnce(&'c melior::Context, melior::ir::Location<'c>) -> Operation<'c>,
) -> Op {
    let context = context(ctx);
    // SAFETY: the context of the module being compiled outlives this call,
    // and `loc` is one of its locations.
    let (context, loc) = unsafe { (context.to_ref(), melior::ir::Location::from_raw(loc)) };
    adopt(build(context, loc))
}

/// The same in the context of `loc`.
pub fn build_at(
    loc: mlir_sys::MlirLocation,
    build: impl for<'c> FnOnce(&'c melior::Context, melior::ir::Location<'c>) -> Operation<'c>,
) -> Op {
    self::build(Ctx::of_location(loc), loc, build)
}
