//! What melior's references lack and the passes ask of them, as extension
//! traits in one place: an operation's kind, where it sits relative to
//! others, a value's defining op and uses, a memref type's byte size, a
//! symbol or string attribute's text. The passes, all on melior's typed
//! API (`OperationRef`, `Value`), import these.
//!
//! Every query here is on a reference melior holds alive for its lifetime,
//! which is what the C calls below need.

use crate::ir::op_kind::{OpDialect, OpKind};
use melior::ir::{
    Attribute, AttributeLike, BlockLike, BlockRef, OperationRef, RegionLike, Type, TypeLike, Value,
    ValueLike,
    attribute::{DenseI32ArrayAttribute, IntegerAttribute},
    block::BlockArgument,
    operation::{OperationLike, OperationResult},
    r#type::MemRefType,
};

/// Queries on an operation that melior does not offer.
pub trait OperationExt<'c, 'a> {
    /// The op's kind (`OpKind::Other` for ops no pass names).
    fn kind(&self) -> OpKind;
    /// The op's dialect family.
    fn dialect(&self) -> OpDialect;
    /// The first block of the op's first region (its body), if it has one.
    fn first_block(&self) -> Option<BlockRef<'c, 'a>>;
    /// Whether the op is of kind `kind`.
    fn isa(&self, kind: OpKind) -> bool {
        self.kind() == kind
    }
    /// The op itself, or its ancestor that sits directly in `block` (the
    /// outermost ancestor when none does).
    fn ancestor_in(&self, block: BlockRef<'c, 'a>) -> OperationRef<'c, 'a>;
    /// Whether the op is a view of its first operand (`ViewLikeOpInterface`).
    fn is_view_like(&self) -> bool;
    /// Whether the op touches no memory and holds no regions.
    fn is_effect_free_value(&self) -> bool;
    /// Whether the op is a loop (`LoopLikeOpInterface`).
    fn is_loop(&self) -> bool;
    /// Whether the op is an L2 prefetch.
    fn is_l2_prefetch(&self) -> bool;
    /// Whether the op is `griddepcontrol.wait`.
    fn is_grid_dependency_wait(&self) -> bool;
    /// The integer value of attribute `name`, if it is an integer.
    fn int_attribute(&self, name: &str) -> Option<i64>;
    /// The text of attribute `name`, if it is a flat symbol reference or a
    /// string.
    fn symbol_or_string(&self, name: &str) -> Option<String>;
    /// Every op nested in this one, in pre-order (parents before their
    /// children), as references that outlive the traversal: melior's
    /// `walk` hands its callback references that may not leave it.
    fn descendants(&self) -> Vec<OperationRef<'c, 'a>>;
    /// Sets attribute `name` (melior asks for a mutable reference, which a
    /// walk's references are not; the pass owns the IR while it runs).
    fn set_attribute_to(&self, name: &str, value: Attribute<'c>);
    /// Sets operand `index` to `value` (as `set_attribute_to`, through a
    /// shared reference); false, and nothing set, past the operands.
    fn set_operand_to(&self, index: usize, value: Value<'c, '_>) -> bool;
    /// Sets attribute `name` to an integer of `bits` bits in the op's
    /// context (a walk's references give no `&Context` to build one with).
    fn set_int_attribute(&self, name: &str, bits: u32, value: i64);
    /// The sizes of the op's operand groups (`operandSegmentSizes`; empty
    /// for an op without groups).
    fn operand_segments(&self) -> Vec<usize>;
    /// Sets the sizes of the op's operand groups (`operandSegmentSizes`);
    /// the caller keeps them consistent with its operands.
    fn set_operand_segments(&self, segments: &[usize]);
    /// Sets every operand (their number may change) and the groups' sizes.
    fn set_operands_in_groups(&self, operands: &[Value<'c, '_>], segments: &[usize]) {
        self.set_all_operands(operands);
        self.set_operand_segments(segments);
    }
    /// Sets every operand; their number may change.
    fn set_all_operands(&self, operands: &[Value<'c, '_>]);
    /// Moves the op right before `other` (in any block of the same IR),
    /// through a walk's shared reference as `set_attribute_to` does.
    fn move_before_op(&self, other: OperationRef<'c, 'a>);
    /// A detached copy of the op (its regions too), for the caller to
    /// insert.
    fn cloned(&self) -> melior::ir::Operation<'c>;
    /// Whether the op is `other` or one of its ancestors (MLIR's
    /// `isAncestor`).
    fn is_ancestor_of(&self, other: OperationRef<'c, 'a>) -> bool;
    /// The next op in the block past allocations and constants (fresh
    /// buffers and values, which touch no existing buffer).
    fn next_past_fresh(&self) -> Option<OperationRef<'c, 'a>>;
    /// The next op in the block past constants, allocations and views
    /// (planned buffers), none of which touches an existing buffer.
    fn next_past_views(&self) -> Option<OperationRef<'c, 'a>>;
    /// The op's name, for messages ("?" where it is not UTF-8).
    fn name_text(&self) -> String;
    /// Moves the blocks of `source`'s region `from` into this op's region
    /// `into` (which must be empty).
    fn take_region_body(&self, into: usize, source: OperationRef<'c, 'a>, from: usize);
    /// Removes attribute `name`, if the op has it (as `set_attribute_to`,
    /// through a shared reference).
    fn remove_attribute_from(&self, name: &str);
    /// A `func.func`'s type (its `function_type` attribute).
    fn function_type(&self) -> Option<melior::ir::r#type::FunctionType<'c>> {
        let attribute = self.attribute_of("function_type")?;
        let ty = melior::ir::attribute::TypeAttribute::try_from(attribute).ok()?;
        melior::ir::r#type::FunctionType::try_from(ty.value()).ok()
    }
    /// Attribute `name`, if the op has it.
    fn attribute_of(&self, name: &str) -> Option<Attribute<'c>>;
}

impl<'c, 'a> OperationExt<'c, 'a> for OperationRef<'c, 'a> {
    fn remove_attribute_from(&self, name: &str) {
        // SAFETY: a live operation; the name is copied.
        unsafe {
            mlir_sys::mlirOperationRemoveAttributeByName(
                self.to_raw(),
                melior::StringRef::new(name).to_raw(),
            );
        }
    }

    fn attribute_of(&self, name: &str) -> Option<Attribute<'c>> {
        self.attribute(name).ok()
    }

    fn kind(&self) -> OpKind {
        OpKind::of_raw(self.to_raw())
    }

    fn dialect(&self) -> OpDialect {
        OpDialect::of_raw(self.to_raw())
    }

    fn first_block(&self) -> Option<BlockRef<'c, 'a>> {
        self.region(0).ok()?.first_block()
    }

    fn ancestor_in(&self, block: BlockRef<'c, 'a>) -> OperationRef<'c, 'a> {
        let mut anchor = *self;
        while anchor.block() != Some(block) {
            match anchor.parent_operation() {
                Some(parent) => anchor = parent,
                None => break,
            }
        }
        anchor
    }

    fn is_view_like(&self) -> bool {
        symm_dialects::is_view_like(*self)
    }

    fn is_effect_free_value(&self) -> bool {
        // SAFETY: an interface test on a live operation.
        unsafe { symm_dialects::ffi::symmOpIsEffectFreeValue(self.to_raw()) }
    }

    fn is_loop(&self) -> bool {
        // SAFETY: an interface test on a live operation.
        unsafe { symm_dialects::ffi::symmOperationIsLoop(self.to_raw()) }
    }

    fn is_l2_prefetch(&self) -> bool {
        // SAFETY: an op-class test on a live operation.
        unsafe { symm_dialects::ffi::symmOpIsL2Prefetch(self.to_raw()) }
    }

    fn is_grid_dependency_wait(&self) -> bool {
        // SAFETY: an op-class test on a live operation.
        unsafe { symm_dialects::ffi::symmOpIsGridDependencyWait(self.to_raw()) }
    }

    fn int_attribute(&self, name: &str) -> Option<i64> {
        let attribute = self.attribute(name).ok()?;
        IntegerAttribute::try_from(attribute)
            .ok()
            .map(|value| value.value())
    }

    fn symbol_or_string(&self, name: &str) -> Option<String> {
        attribute_text(self.attribute(name).ok()?)
    }

    fn descendants(&self) -> Vec<OperationRef<'c, 'a>> {
        let mut found = Vec::new();
        let mut pending: Vec<OperationRef<'c, 'a>> = Vec::new();
        let push_children = |op: &OperationRef<'c, 'a>, pending: &mut Vec<_>| {
            let mut children = Vec::new();
            for region in op.regions() {
                let mut block = region.first_block();
                while let Some(current) = block {
                    children.extend(current.ops());
                    block = current.next_in_region();
                }
            }
            // Popped in order: the first child first.
            pending.extend(children.into_iter().rev());
        };
        push_children(self, &mut pending);
        while let Some(op) = pending.pop() {
            found.push(op);
            push_children(&op, &mut pending);
        }
        found
    }

    fn set_attribute_to(&self, name: &str, value: Attribute<'c>) {
        let name = melior::StringRef::new(name);
        // SAFETY: a live operation and an attribute of its context; no
        // reference into its attribute dictionary is held across this.
        unsafe {
            mlir_sys::mlirOperationSetAttributeByName(self.to_raw(), name.to_raw(), value.to_raw())
        }
    }

    fn set_operand_to(&self, index: usize, value: Value<'c, '_>) -> bool {
        if index >= self.operand_count() {
            return false;
        }
        // SAFETY: a live operation, an operand it has, and a value of its IR.
        unsafe { mlir_sys::mlirOperationSetOperand(self.to_raw(), index as isize, value.to_raw()) };
        true
    }

    fn set_int_attribute(&self, name: &str, bits: u32, value: i64) {
        // SAFETY: the context of a live operation outlives it; the type and
        // attribute are uniqued in it.
        let attribute = unsafe {
            let context = mlir_sys::mlirOperationGetContext(self.to_raw());
            let ty = mlir_sys::mlirIntegerTypeGet(context, bits);
            Attribute::from_raw(mlir_sys::mlirIntegerAttrGet(ty, value))
        };
        self.set_attribute_to(name, attribute);
    }

    fn operand_segments(&self) -> Vec<usize> {
        let Some(sizes) = self
            .attribute("operandSegmentSizes")
            .ok()
            .and_then(|a| DenseI32ArrayAttribute::try_from(a).ok())
        else {
            return Vec::new();
        };
        (0..sizes.len())
            .map(|i| sizes.element(i).map_or(0, |n| n.max(0) as usize))
            .collect()
    }

    fn set_all_operands(&self, operands: &[Value<'c, '_>]) {
        let raw: Vec<_> = operands.iter().map(|v| v.to_raw()).collect();
        // SAFETY: a live operation and values of its IR; MLIR resizes the
        // operand list.
        unsafe {
            mlir_sys::mlirOperationSetOperands(self.to_raw(), raw.len() as isize, raw.as_ptr())
        };
    }

    fn move_before_op(&self, other: OperationRef<'c, 'a>) {
        // SAFETY: two live operations of one IR.
        unsafe { mlir_sys::mlirOperationMoveBefore(self.to_raw(), other.to_raw()) }
    }

    fn cloned(&self) -> melior::ir::Operation<'c> {
        // SAFETY: the clone of a live operation, owned by the caller.
        unsafe { melior::ir::Operation::from_raw(mlir_sys::mlirOperationClone(self.to_raw())) }
    }

    fn is_ancestor_of(&self, other: OperationRef<'c, 'a>) -> bool {
        std::iter::successors(Some(other), |op| op.parent_operation()).any(|op| op == *self)
    }

    fn next_past_fresh(&self) -> Option<OperationRef<'c, 'a>> {
        std::iter::successors(self.next_in_block(), |op| op.next_in_block())
            .find(|op| !op.isa(OpKind::MemrefAlloc) && !op.isa(OpKind::Constant))
    }

    fn next_past_views(&self) -> Option<OperationRef<'c, 'a>> {
        std::iter::successors(self.next_in_block(), |op| op.next_in_block()).find(|op| {
            !(op.isa(OpKind::Constant) || op.isa(OpKind::MemrefAlloc) || op.isa(OpKind::MemrefView))
        })
    }

    fn name_text(&self) -> String {
        self.name()
            .as_string_ref()
            .as_str()
            .unwrap_or("?")
            .to_owned()
    }

    fn take_region_body(&self, into: usize, source: OperationRef<'c, 'a>, from: usize) {
        // SAFETY: regions of two live operations of one IR; MLIR moves the
        // blocks.
        unsafe {
            mlir_sys::mlirRegionTakeBody(
                mlir_sys::mlirOperationGetRegion(self.to_raw(), into as isize),
                mlir_sys::mlirOperationGetRegion(source.to_raw(), from as isize),
            )
        }
    }

    fn set_operand_segments(&self, segments: &[usize]) {
        let sizes: Vec<i32> = segments.iter().map(|&n| n as i32).collect();
        // SAFETY: the context of a live operation outlives it.
        let attribute = unsafe {
            let context = mlir_sys::mlirOperationGetContext(self.to_raw());
            Attribute::from_raw(mlir_sys::mlirDenseI32ArrayGet(
                context,
                sizes.len() as isize,
                sizes.as_ptr(),
            ))
        };
        self.set_attribute_to("operandSegmentSizes", attribute);
    }
}

/// For an affine map attribute whose results are all plain dimensions:
/// the map's dimension count and each result's dimension position
/// (`(d0, d1) -> (d1)` is `(2, [1])`).
pub fn dim_projection(attribute: Attribute) -> Option<(usize, Vec<usize>)> {
    let raw = attribute.to_raw();
    // SAFETY: queries on a live attribute and the map it holds.
    unsafe {
        if !mlir_sys::mlirAttributeIsAAffineMap(raw) {
            return None;
        }
        let map = mlir_sys::mlirAffineMapAttrGetValue(raw);
        let results = (0..mlir_sys::mlirAffineMapGetNumResults(map))
            .map(|i| {
                let expr = mlir_sys::mlirAffineMapGetResult(map, i);
                mlir_sys::mlirAffineExprIsADim(expr)
                    .then(|| mlir_sys::mlirAffineDimExprGetPosition(expr) as usize)
            })
            .collect::<Option<Vec<usize>>>()?;
        Some((mlir_sys::mlirAffineMapGetNumDims(map) as usize, results))
    }
}

/// Whether a memref type has the identity layout (a ranked memref type;
/// false for other types).
pub fn has_identity_layout(ty: Type) -> bool {
    if !ty.is_mem_ref() {
        return false;
    }
    // SAFETY: the layout map of a live ranked memref type.
    unsafe { mlir_sys::mlirAffineMapIsIdentity(mlir_sys::mlirMemRefTypeGetAffineMap(ty.to_raw())) }
}

/// The strides and offset of a memref type's layout (`None` inside for a
/// dynamic one; `None` for a layout without strides).
pub fn strides_and_offset(ty: MemRefType) -> Option<(Vec<Option<i64>>, Option<i64>)> {
    let raw = ty.to_raw();
    // SAFETY: queries on a live memref type, into buffers of its rank.
    unsafe {
        let rank = mlir_sys::mlirShapedTypeGetRank(raw).max(0) as usize;
        let mut strides = vec![0i64; rank];
        let mut offset = 0i64;
        let result =
            mlir_sys::mlirMemRefTypeGetStridesAndOffset(raw, strides.as_mut_ptr(), &mut offset);
        if result.value == 0 {
            return None;
        }
        let known = |v: i64| (!mlir_sys::mlirShapedTypeIsDynamicStrideOrOffset(v)).then_some(v);
        Some((strides.into_iter().map(known).collect(), known(offset)))
    }
}

/// A type as text, lossily (melior's `Display` aborts on text that is
/// not UTF-8, which an input's types may hold).
pub fn type_text<'c>(ty: impl melior::ir::TypeLike<'c>) -> String {
    symm_dialects::type_text(ty.to_raw())
}

/// A function type's inputs and results.
pub fn function_io<'c>(ty: melior::ir::r#type::FunctionType<'c>) -> (Vec<Type<'c>>, Vec<Type<'c>>) {
    let inputs = (0..ty.input_count())
        .filter_map(|i| ty.input(i).ok())
        .collect();
    let results = (0..ty.result_count())
        .filter_map(|i| ty.result(i).ok())
        .collect();
    (inputs, results)
}

/// A melior reference to the live operation `raw`: the one way the crate
/// turns the C API's handles into melior's references (the pass
/// trampoline, the conversion driver's and the walk's callbacks, symbol
/// tables).
///
/// # Safety
/// `raw` is a live operation of IR that outlives `'a`, in a context that
/// outlives `'c`.
pub unsafe fn operation_at<'c, 'a>(raw: mlir_sys::MlirOperation) -> OperationRef<'c, 'a> {
    // SAFETY: as the caller promises.
    unsafe { OperationRef::from_raw(raw) }
}

/// A melior reference to the live block `raw`.
///
/// # Safety
/// As `operation_at`, for a block.
pub unsafe fn block_at<'c, 'a>(raw: mlir_sys::MlirBlock) -> BlockRef<'c, 'a> {
    // SAFETY: as the caller promises.
    unsafe { BlockRef::from_raw(raw) }
}

/// melior's rewriter over the pattern rewriter `raw` that MLIR's driver
/// passes a pattern.
///
/// # Safety
/// `raw` is the live rewriter of the pattern application in progress.
pub unsafe fn pattern_rewriter_at<'c, 'a>(
    raw: mlir_sys::MlirPatternRewriter,
) -> melior::RewriterBase<'c, 'a> {
    // SAFETY: as the caller promises.
    unsafe { melior::RewriterBase::from_raw(mlir_sys::mlirPatternRewriterAsBase(raw)) }
}

/// Runs `f` with `op`'s context as melior's `&Context`, the one place
/// the crate makes one from a reference. `ContextRef::to_ref` returns a
/// reference into the `ContextRef` itself, so a `ContextRef` dropped
/// before the uses (a temporary) leaves it dangling: here it lives until
/// `f` returns.
///
/// # Safety
/// `op`'s context outlives every use `f` makes of the reference.
pub unsafe fn with_context_of<'c, 'a, T>(
    op: OperationRef<'c, 'a>,
    f: impl FnOnce(&'c melior::Context) -> T,
) -> T {
    let context = op.context();
    // SAFETY: the caller's promise; `context` outlives the call of `f`.
    f(unsafe { context.to_ref() })
}

/// The element type of a shaped type (a vector's lanes).
pub fn shaped_element(ty: Type) -> Type {
    // SAFETY: a live shaped type; its element type is of the same context.
    unsafe { Type::from_raw(mlir_sys::mlirShapedTypeGetElementType(ty.to_raw())) }
}

/// The nested symbol `@root::@leaf`.
pub fn nested_symbol<'c>(context: &'c melior::Context, root: &str, leaf: &str) -> Attribute<'c> {
    let leaf = melior::ir::attribute::FlatSymbolRefAttribute::new(context, leaf);
    // SAFETY: a live context and an attribute of it; the root's text is
    // copied.
    unsafe {
        Attribute::from_raw(mlir_sys::mlirSymbolRefAttrGet(
            context.to_raw(),
            melior::StringRef::new(root).to_raw(),
            1,
            &leaf.to_raw(),
        ))
    }
}

/// A memref type of `shape` (`None`: dynamic) with a strided layout of
/// static `strides` and `offset`, in `memory_space`.
pub fn strided_memref_type<'c>(
    context: &'c melior::Context,
    shape: &[Option<i64>],
    element: melior::ir::Type<'c>,
    (strides, offset): (&[i64], i64),
    memory_space: Option<Attribute<'c>>,
) -> MemRefType<'c> {
    let shape: Vec<i64> = shape.iter().map(|d| d.unwrap_or(i64::MIN)).collect();
    // SAFETY: a live context; the strides are copied.
    let layout = unsafe {
        Attribute::from_raw(mlir_sys::mlirStridedLayoutAttrGet(
            context.to_raw(),
            offset,
            strides.len() as isize,
            strides.as_ptr(),
        ))
    };
    MemRefType::new(element, &shape, Some(layout), memory_space)
}

/// Bytes of one element of type `ty` in a buffer the kernels read
/// (`Scalar::bytes`).
pub fn element_bytes(ty: Type) -> Option<u64> {
    crate::ir::scalar::Scalar::of_type(ty)?.bytes()
}

/// The text of a flat symbol reference or string attribute, lossily
/// (melior's `value()` panics on bytes that are not UTF-8 and on an empty
/// string, which the input may hold).
pub fn attribute_text(attribute: Attribute) -> Option<String> {
    symm_dialects::symbol_value(attribute.to_raw())
        .or_else(|| symm_dialects::string_value(attribute.to_raw()))
}

/// What a block holds, as melior does not list it, and its arguments
/// changed in place.
pub trait BlockExt<'c, 'a> {
    /// The block's ops, in order.
    fn ops(&self) -> Vec<OperationRef<'c, 'a>>;
    /// A new argument of type `ty` at position `index`.
    fn insert_argument_at(
        &self,
        index: usize,
        ty: Type<'c>,
        location: melior::ir::Location<'c>,
    ) -> Value<'c, 'a>;
    /// Removes argument `index`, which must have no uses.
    fn erase_argument_at(&self, index: usize);
}

impl<'c, 'a> BlockExt<'c, 'a> for BlockRef<'c, 'a> {
    fn ops(&self) -> Vec<OperationRef<'c, 'a>> {
        std::iter::successors(self.first_operation(), |op| op.next_in_block()).collect()
    }

    fn insert_argument_at(
        &self,
        index: usize,
        ty: Type<'c>,
        location: melior::ir::Location<'c>,
    ) -> Value<'c, 'a> {
        // SAFETY: a live block, a type and location of its context; the
        // argument lives as long as the block.
        unsafe {
            Value::from_raw(mlir_sys::mlirBlockInsertArgument(
                self.to_raw(),
                index as isize,
                ty.to_raw(),
                location.to_raw(),
            ))
        }
    }

    fn erase_argument_at(&self, index: usize) {
        // SAFETY: a live block; the caller checked the argument is unused.
        unsafe { mlir_sys::mlirBlockEraseArgument(self.to_raw(), index as u32) }
    }
}

/// Queries on a value that melior does not offer directly.
pub trait ValueExt<'c, 'a> {
    /// The op that defines the value, if it is an op's result.
    fn defining_op(&self) -> Option<OperationRef<'c, 'a>>;
    /// The block whose argument the value is, if it is one.
    fn argument_of(&self) -> Option<BlockRef<'c, 'a>>;
    /// Every use, as (user, operand index), in MLIR's use-list order.
    fn uses(&self) -> Vec<(OperationRef<'c, 'a>, usize)>;
    /// Sets the value's type (the caller keeps the IR valid).
    fn set_type_to(&self, ty: Type<'c>);
    /// Replaces every use of the value with `with`.
    fn replace_uses_with(&self, with: Value<'c, '_>);
    /// The value's type as a ranked memref type, if it is one.
    fn memref_type(&self) -> Option<MemRefType<'c>>;
}

impl<'c, 'a> ValueExt<'c, 'a> for Value<'c, 'a> {
    fn defining_op(&self) -> Option<OperationRef<'c, 'a>> {
        OperationResult::try_from(*self)
            .ok()
            .map(|result| result.owner())
    }

    fn argument_of(&self) -> Option<BlockRef<'c, 'a>> {
        let argument = BlockArgument::try_from(*self).ok()?;
        // SAFETY: the owner of a live block argument is a live block of the
        // same IR.
        Some(unsafe { BlockRef::from_raw(mlir_sys::mlirBlockArgumentGetOwner(argument.to_raw())) })
    }

    fn uses(&self) -> Vec<(OperationRef<'c, 'a>, usize)> {
        let mut uses = Vec::new();
        // SAFETY: the use list of a live value; each use's owner is a live
        // operation of the same IR, which outlives `'a` as the value does.
        unsafe {
            let mut operand = mlir_sys::mlirValueGetFirstUse(self.to_raw());
            while !operand.ptr.is_null() {
                let owner = OperationRef::from_raw(mlir_sys::mlirOpOperandGetOwner(operand));
                let index = mlir_sys::mlirOpOperandGetOperandNumber(operand) as usize;
                uses.push((owner, index));
                operand = mlir_sys::mlirOpOperandGetNextUse(operand);
            }
        }
        uses
    }

    fn set_type_to(&self, ty: Type<'c>) {
        // SAFETY: a live value and a type of its context.
        unsafe { mlir_sys::mlirValueSetType(self.to_raw(), ty.to_raw()) }
    }

    fn replace_uses_with(&self, with: Value<'c, '_>) {
        // SAFETY: two live values of one IR.
        unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(self.to_raw(), with.to_raw()) }
    }

    fn memref_type(&self) -> Option<MemRefType<'c>> {
        MemRefType::try_from(self.r#type()).ok()
    }
}

/// A value's identity in its IR, as a map key (melior's values do not hash).
pub fn value_key(value: Value) -> usize {
    value.to_raw().ptr as usize
}

/// An op's identity in its IR, as a map key.
pub fn op_key(op: OperationRef) -> usize {
    op.to_raw().ptr as usize
}

/// Bytes of a statically shaped memref type (`None` for other types, a
/// dynamic size, or an element of no fixed width).
pub fn byte_size(ty: Type) -> Option<u64> {
    crate::memref_byte_size(MemRefType::try_from(ty).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use melior::ir::{BlockLike, Module, ShapedTypeLike, operation::OperationLike};

    fn first_function<'c, 'm>(module: &'m Module<'c>) -> OperationRef<'c, 'm> {
        module.body().first_operation().expect("a function")
    }

    #[test]
    fn uses_order_ancestors_and_defining_ops() {
        let context = symm_dialects::create_context();
        let module = Module::parse(
            &context,
            r#"
            func.func @f(%n: index) -> memref<8xf32> {
              %a = memref.alloc() : memref<8xf32>
              %v = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
              scf.for %i = %n to %n step %n {
                %c = arith.constant 0.0 : f32
                memref.store %c, %v[%i] : memref<4xf32, strided<[1]>>
              }
              return %a : memref<8xf32>
            }
            "#,
        )
        .expect("parses");
        let function = first_function(&module);
        let body = function.first_block().expect("a body");
        let (alloc, subview) = (body.ops()[0], body.ops()[1]);
        assert_eq!(body.ops().len(), 4, "alloc, subview, loop, return");
        let a: Value = alloc.result(0).expect("a result").into();
        let uses = ValueExt::uses(&a);
        assert_eq!(uses.len(), 2, "the subview and the return");
        assert!(
            uses.iter()
                .any(|(user, index)| user.isa(OpKind::MemrefSubview) && *index == 0)
        );
        assert!(alloc.is_before_in_block(subview));
        assert!(!subview.is_before_in_block(alloc));
        assert!(subview.is_view_like() && !alloc.is_view_like());
        let v: Value = subview.result(0).expect("a view").into();
        assert_eq!(v.defining_op(), Some(subview));
        let (store, _) = v.uses()[0];
        let in_body = store.ancestor_in(body);
        assert_eq!(in_body.block(), Some(body), "the loop that holds the store");
        assert!(subview.is_before_in_block(in_body));
        // Pre-order: the loop before the constant and the store it holds.
        let kinds: Vec<OpKind> = function.descendants().iter().map(|op| op.kind()).collect();
        let position = |kind| kinds.iter().position(|k| *k == kind).expect("listed");
        assert_eq!(kinds.len(), 7);
        assert!(position(OpKind::ScfFor) < position(OpKind::MemrefStore));
        assert_eq!(kinds[0], OpKind::MemrefAlloc);
        assert_eq!(byte_size(a.r#type()), Some(32));
        let n: Value = body.argument(0).expect("an argument").into();
        assert_eq!(n.argument_of(), Some(body));
        assert_eq!(n.defining_op(), None);
    }

    #[test]
    fn attributes_read_by_value() {
        let context = symm_dialects::create_context();
        let module = Module::parse(
            &context,
            r#"func.func private @g() attributes {k = 3 : i64, s = "x", r = @sym, e = ""}"#,
        )
        .expect("parses");
        let function = first_function(&module);
        assert_eq!(function.int_attribute("k"), Some(3));
        assert_eq!(function.symbol_or_string("s").as_deref(), Some("x"));
        assert_eq!(function.symbol_or_string("r").as_deref(), Some("sym"));
        assert_eq!(function.symbol_or_string("k"), None);
        assert_eq!(function.symbol_or_string("e").as_deref(), Some(""));
        assert_eq!(function.int_attribute("missing"), None);
        function.set_int_attribute("k", 32, 7);
        assert_eq!(function.int_attribute("k"), Some(7));
        assert!(
            function
                .attribute("k")
                .expect("set")
                .to_string()
                .ends_with(": i32")
        );
    }

    #[test]
    fn operand_groups_layouts_and_element_sizes() {
        let context = symm_dialects::create_context();
        let module = Module::parse(
            &context,
            r#"
            func.func @f(%n: index, %m: index) -> memref<?x4xf32> {
              %a = memref.alloc(%n) : memref<?x4xf32>
              %b = memref.alloc() : memref<4x4xbf16, strided<[8, 1]>>
              return %a : memref<?x4xf32>
            }
            "#,
        )
        .expect("parses");
        let function = first_function(&module);
        let body = function.first_block().expect("a body");
        let (alloc, strided) = (body.ops()[0], body.ops()[1]);
        assert_eq!(alloc.operand_segments(), vec![1, 0]);
        let m: Value = body.argument(1).expect("an argument").into();
        alloc.set_operands_in_groups(&[m], &[1, 0]);
        assert_eq!(alloc.operand(0).ok(), Some(m));
        assert!(function.to_string().contains("memref.alloc(%arg1)"));
        let a = alloc.result(0).expect("a result").r#type();
        let b = strided.result(0).expect("a result").r#type();
        assert!(has_identity_layout(a) && !has_identity_layout(b));
        assert!(!has_identity_layout(Type::index(&context)));
        assert_eq!(
            element_bytes(MemRefType::try_from(b).expect("a memref").element()),
            Some(2)
        );
        assert_eq!(element_bytes(Type::float32(&context)), Some(4));
        assert_eq!(function.operand_segments(), Vec::<usize>::new());
    }

    #[test]
    fn dim_projections_of_maps() {
        let context = symm_dialects::create_context();
        let map = |text: &str| Attribute::parse(&context, text).expect("parses");
        assert_eq!(
            dim_projection(map("affine_map<(d0, d1, d2) -> (d2, d0)>")),
            Some((3, vec![2, 0]))
        );
        assert_eq!(
            dim_projection(map("affine_map<(d0, d1) -> (d0 + d1)>")),
            None
        );
        assert_eq!(dim_projection(map("3 : i64")), None);
    }
}
