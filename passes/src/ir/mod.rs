//! Copyable handles over the MLIR C API for pass bodies that rewrite IR.
//!
//! melior's references carry lifetimes tied to their parent, which makes
//! "walk, collect, then rewrite" awkward. Inside a pass the IR outlives the
//! pass body, so these plain handles are sound as long as a handle is not
//! used after its op is erased, which the passes take care of.

pub mod bridge;
pub mod builders;
pub mod convert;
pub mod host;
pub mod melior_ext;
pub mod memref_size;
pub mod module;
pub mod op_kind;
pub mod patterns;
pub mod rewrite;
pub mod scalar;
pub mod stable_id;
pub mod text;
pub mod typed_builder;

use mlir_sys::*;
use std::ffi::CString;

fn string_ref(text: &str) -> MlirStringRef {
    MlirStringRef {
        data: text.as_ptr().cast(),
        length: text.len(),
    }
}

fn to_string(raw: MlirStringRef) -> String {
    if raw.data.is_null() {
        return String::new();
    }
    // SAFETY: MLIR string refs point at `length` valid bytes.
    let bytes = unsafe { std::slice::from_raw_parts(raw.data.cast::<u8>(), raw.length) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// Collects what an MLIR print callback writes.
fn print_with(print: impl FnOnce(MlirStringCallback, *mut std::ffi::c_void)) -> String {
    unsafe extern "C" fn append(chunk: MlirStringRef, data: *mut std::ffi::c_void) {
        // SAFETY: `data` is the String passed below.
        let out = unsafe { &mut *data.cast::<String>() };
        out.push_str(&to_string(chunk));
    }
    let mut out = String::new();
    print(Some(append), (&mut out as *mut String).cast());
    out
}

pub fn emit_error(loc: MlirLocation, message: &str) {
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: live location; the message is copied.
    unsafe { mlirEmitError(loc, message.as_ptr()) }
}

pub fn emit_warning(loc: MlirLocation, message: &str) {
    // SAFETY: a live location of the IR being rewritten.
    symm_dialects::emit_warning(unsafe { melior::ir::Location::from_raw(loc) }, message)
}

pub fn emit_remark(loc: MlirLocation, message: &str) {
    // SAFETY: a live location of the IR being rewritten.
    symm_dialects::emit_remark(unsafe { melior::ir::Location::from_raw(loc) }, message)
}

#[derive(Clone, Copy, Debug)]
pub struct Op(MlirOperation);

#[derive(Clone, Copy, Debug)]
pub struct Val(MlirValue);

#[derive(Clone, Copy, Debug)]
pub struct Blk(MlirBlock);

#[derive(Clone, Copy, Debug)]
pub struct Ty(MlirType);

#[derive(Clone, Copy, Debug)]
pub struct Attr(MlirAttribute);

#[derive(Clone, Copy, Debug)]
pub struct Ctx(MlirContext);

/// Handles compare and hash by identity (the pointer).
macro_rules! identity_handle {
    ($($handle:ident),*) => {$(
        impl PartialEq for $handle {
            fn eq(&self, other: &Self) -> bool {
                self.0.ptr == other.0.ptr
            }
        }
        impl Eq for $handle {}
        impl std::hash::Hash for $handle {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.0.ptr.hash(state)
            }
        }
    )*};
}
identity_handle!(Op, Val, Blk);

impl PartialEq for Ty {
    fn eq(&self, other: &Self) -> bool {
        // SAFETY: type comparison.
        unsafe { mlirTypeEqual(self.0, other.0) }
    }
}
impl PartialEq for Attr {
    fn eq(&self, other: &Self) -> bool {
        // SAFETY: attribute comparison.
        unsafe { mlirAttributeEqual(self.0, other.0) }
    }
}

// SAFETY (for every method below): handles are only created from live IR
// inside a pass run, and the C API calls only read or rewrite that IR.
impl Op {
    /// # Safety
    /// `raw` is a live handle of a context that outlives every use.
    pub unsafe fn from_raw(raw: MlirOperation) -> Self {
        Self(raw)
    }
    pub fn raw(self) -> MlirOperation {
        self.0
    }
    fn null(raw: MlirOperation) -> Option<Self> {
        (!raw.ptr.is_null()).then_some(Self(raw))
    }
    pub fn ctx(self) -> Ctx {
        Ctx(unsafe { mlirOperationGetContext(self.0) })
    }
    pub fn name(self) -> String {
        to_string(unsafe { mlirIdentifierStr(mlirOperationGetName(self.0)) })
    }
    pub fn loc(self) -> MlirLocation {
        unsafe { mlirOperationGetLocation(self.0) }
    }
    pub fn num_operands(self) -> usize {
        unsafe { mlirOperationGetNumOperands(self.0) as usize }
    }
    pub fn operand(self, index: usize) -> Val {
        Val(unsafe { mlirOperationGetOperand(self.0, index as isize) })
    }
    pub fn operands(self) -> Vec<Val> {
        (0..self.num_operands()).map(|i| self.operand(i)).collect()
    }
    /// Replaces every operand (the caller sets the groups' sizes of an op
    /// that has them).
    pub fn set_operands(self, values: &[Val]) {
        let raw: Vec<MlirValue> = values.iter().map(|v| v.0).collect();
        unsafe { mlir_sys::mlirOperationSetOperands(self.0, raw.len() as isize, raw.as_ptr()) }
    }
    pub fn num_results(self) -> usize {
        unsafe { mlirOperationGetNumResults(self.0) as usize }
    }
    pub fn result(self, index: usize) -> Val {
        Val(unsafe { mlirOperationGetResult(self.0, index as isize) })
    }
    pub fn results(self) -> Vec<Val> {
        (0..self.num_results()).map(|i| self.result(i)).collect()
    }
    pub fn attr(self, name: &str) -> Option<Attr> {
        let raw = unsafe { mlirOperationGetAttributeByName(self.0, string_ref(name)) };
        (!raw.ptr.is_null()).then_some(Attr(raw))
    }
    pub fn set_attr(self, name: &str, value: Attr) {
        unsafe { mlirOperationSetAttributeByName(self.0, string_ref(name), value.0) }
    }
    pub fn block(self) -> Option<Blk> {
        Blk::null(unsafe { mlirOperationGetBlock(self.0) })
    }
    pub fn parent(self) -> Option<Op> {
        Op::null(unsafe { mlirOperationGetParentOperation(self.0) })
    }
    pub fn next(self) -> Option<Op> {
        Op::null(unsafe { mlirOperationGetNextInBlock(self.0) })
    }
    /// The next op in the block past fresh allocations and constants,
    /// which touch no existing buffer.
    pub fn next_past_fresh(self) -> Option<Op> {
        melior_ext::OperationExt::next_past_fresh(&bridge::operation(self)).map(Op::from)
    }
    /// The next op in the block past constants, allocations and views
    /// (planned buffers), none of which touches an existing buffer.
    pub fn next_past_views(self) -> Option<Op> {
        melior_ext::OperationExt::next_past_views(&bridge::operation(self)).map(Op::from)
    }
    pub fn num_regions(self) -> usize {
        unsafe { mlirOperationGetNumRegions(self.0) as usize }
    }
    /// The blocks of region `index`, in order.
    pub fn region_blocks(self, index: usize) -> Vec<Blk> {
        let region = unsafe { mlirOperationGetRegion(self.0, index as isize) };
        let first = Blk::null(unsafe { mlirRegionGetFirstBlock(region) });
        std::iter::successors(first, |block| {
            Blk::null(unsafe { mlirBlockGetNextInRegion(block.0) })
        })
        .collect()
    }
    /// The entry block of the first region, if any.
    pub fn entry_block(self) -> Option<Blk> {
        if self.num_regions() == 0 {
            return None;
        }
        self.region_blocks(0).first().copied()
    }
    /// This op and everything nested in it, in pre-order.
    pub fn walk(self) -> Vec<Op> {
        let mut ops = Vec::new();
        self.walk_into(&mut ops);
        ops
    }
    fn walk_into(self, ops: &mut Vec<Op>) {
        ops.push(self);
        for region in 0..self.num_regions() {
            for block in self.region_blocks(region) {
                for op in block.ops() {
                    op.walk_into(ops);
                }
            }
        }
    }
    /// True if `self` is `other` or contains it.
    pub fn is_ancestor_of(self, other: Op) -> bool {
        melior_ext::OperationExt::is_ancestor_of(&bridge::operation(self), bridge::operation(other))
    }
    /// `self` or its ancestor that sits directly in `block`; the outermost
    /// ancestor when none does.
    pub fn ancestor_in(self, block: Option<Blk>) -> Op {
        let mut anchor = self;
        while anchor.block() != block {
            match anchor.parent() {
                Some(parent) => anchor = parent,
                None => break,
            }
        }
        anchor
    }
    /// Whether `self` comes before `other`, both in one block (MLIR keeps
    /// the order cached, so this is cheap to ask repeatedly).
    pub fn is_before_in_block(self, other: Op) -> bool {
        unsafe { mlirOperationIsBeforeInBlock(self.0, other.0) }
    }
    pub fn is_view_like(self) -> bool {
        unsafe { symm_dialects::ffi::symmMemOperationIsViewLike(self.0) }
    }
    pub fn insert_before(self, new: Op) {
        let block = self.block().expect("ops being rewritten sit in a block");
        unsafe { mlirBlockInsertOwnedOperationBefore(block.0, self.0, new.0) }
    }
    pub fn insert_after(self, new: Op) {
        let block = self.block().expect("ops being rewritten sit in a block");
        unsafe { mlirBlockInsertOwnedOperationAfter(block.0, self.0, new.0) }
    }
    pub fn move_before(self, other: Op) {
        unsafe { mlirOperationMoveBefore(self.0, other.0) }
    }
    /// The operand counts of each group of an op with variadic operand
    /// groups (`operandSegmentSizes`); empty when it has none.
    pub fn operand_segments(self) -> Vec<usize> {
        melior_ext::OperationExt::operand_segments(&bridge::operation(self))
    }
    /// Destroys an op that was never put into the IR (a clone whose
    /// region moved elsewhere, an op built for a test). An op in a block
    /// leaves through a rewriter instead (`rewrite::erase`,
    /// `rewrite::erase_collected`, a conversion's `Rewriter::erase`).
    pub fn destroy_detached(self) {
        assert!(
            self.block().is_none(),
            "internal: destroy_detached on an op inside a block"
        );
        unsafe { mlirOperationDestroy(self.0) }
    }
    pub fn print(self) -> String {
        print_with(|callback, data| unsafe { mlirOperationPrint(self.0, callback, data) })
    }
    fn as_ref<'c, 'a>(self) -> melior::ir::OperationRef<'c, 'a> {
        unsafe { melior::ir::OperationRef::from_raw(self.0) }
    }
    /// The `symm_mem.group` declarations in the body of this module op.
    pub fn group_table(self) -> crate::GroupTable {
        crate::GroupTable::from_module(self.as_ref())
    }
    /// Operands the op needs in symmetric memory (SymmetricOperandOpInterface).
    pub fn symmetric_operands(self) -> Option<Vec<usize>> {
        symm_dialects::symmetric_operands(self.as_ref())
    }
    /// The group of an op with symmetric operands.
    pub fn comm_group(self) -> Option<String> {
        symm_dialects::comm_group(self.as_ref())
    }
    /// The value of a `sym_name` attribute.
    pub fn symbol_name(self) -> Option<String> {
        self.attr("sym_name")?.symbol_or_string()
    }
}

impl Val {
    pub fn raw(self) -> MlirValue {
        self.0
    }
    /// # Safety
    /// `raw` is a live handle of a context that outlives every use.
    pub unsafe fn from_raw(raw: MlirValue) -> Self {
        Self(raw)
    }
    pub fn ty(self) -> Ty {
        Ty(unsafe { mlirValueGetType(self.0) })
    }
    pub fn loc(self) -> MlirLocation {
        unsafe { mlirValueGetLocation(self.0) }
    }
    /// The op that defines this value, or `None` for a block argument.
    pub fn def(self) -> Option<Op> {
        if unsafe { mlirValueIsAOpResult(self.0) } {
            Op::null(unsafe { mlirOpResultGetOwner(self.0) })
        } else {
            None
        }
    }
    /// Every use, as (user, operand index).
    pub fn uses(self) -> Vec<(Op, usize)> {
        let mut uses = Vec::new();
        let mut operand = unsafe { mlirValueGetFirstUse(self.0) };
        while !operand.ptr.is_null() {
            let owner = Op(unsafe { mlirOpOperandGetOwner(operand) });
            let index = unsafe { mlirOpOperandGetOperandNumber(operand) } as usize;
            uses.push((owner, index));
            operand = unsafe { mlirOpOperandGetNextUse(operand) };
        }
        uses
    }
    pub fn replace_all_uses_with(self, with: Val) {
        unsafe { mlirValueReplaceAllUsesOfWith(self.0, with.0) }
    }
    pub fn print(self) -> String {
        print_with(|callback, data| unsafe { mlirValuePrint(self.0, callback, data) })
    }
}

impl Blk {
    pub fn raw(self) -> MlirBlock {
        self.0
    }
    /// # Safety
    /// `raw` is a live handle of a context that outlives every use.
    pub unsafe fn from_raw(raw: MlirBlock) -> Self {
        Self(raw)
    }
    fn null(raw: MlirBlock) -> Option<Self> {
        (!raw.ptr.is_null()).then_some(Self(raw))
    }
    pub fn ops(self) -> Vec<Op> {
        std::iter::successors(self.first_op(), |op| op.next()).collect()
    }
    pub fn first_op(self) -> Option<Op> {
        Op::null(unsafe { mlirBlockGetFirstOperation(self.0) })
    }
    pub fn terminator(self) -> Option<Op> {
        Op::null(unsafe { mlirBlockGetTerminator(self.0) })
    }
    pub fn num_args(self) -> usize {
        unsafe { mlirBlockGetNumArguments(self.0) as usize }
    }
    pub fn arg(self, index: usize) -> Val {
        Val(unsafe { mlirBlockGetArgument(self.0, index as isize) })
    }
    /// Inserts `op` first in the block.
    pub fn prepend(self, op: Op) {
        unsafe { mlirBlockInsertOwnedOperation(self.0, 0, op.0) }
    }
    pub fn append(self, op: Op) {
        unsafe { mlirBlockAppendOwnedOperation(self.0, op.0) }
    }
}

impl Ty {
    pub fn raw(self) -> MlirType {
        self.0
    }
    /// # Safety
    /// `raw` is a live handle of a context that outlives every use.
    pub unsafe fn from_raw(raw: MlirType) -> Self {
        Self(raw)
    }
    pub fn is_memref(self) -> bool {
        unsafe { mlirTypeIsAMemRef(self.0) }
    }
    /// Shape of a ranked memref, with `None` for dynamic dimensions.
    pub fn shape(self) -> Vec<Option<i64>> {
        let rank = unsafe { mlirShapedTypeGetRank(self.0) };
        (0..rank)
            .map(|dim| {
                let size = unsafe { mlirShapedTypeGetDimSize(self.0, dim as isize) };
                (!unsafe { mlirShapedTypeIsDynamicSize(size) }).then_some(size)
            })
            .collect()
    }
    pub fn has_static_shape(self) -> bool {
        unsafe { mlirShapedTypeHasStaticShape(self.0) }
    }
    pub fn element(self) -> Ty {
        Ty(unsafe { mlirShapedTypeGetElementType(self.0) })
    }
    pub fn memory_space(self) -> Option<Attr> {
        let raw = unsafe { mlirMemRefTypeGetMemorySpace(self.0) };
        (!raw.ptr.is_null()).then_some(Attr(raw))
    }
    /// A ranked memref type's strides and offset in elements, `None` for
    /// dynamic ones; `None` when its layout is not strided.
    pub fn strides_and_offset(self) -> Option<(Vec<Option<i64>>, Option<i64>)> {
        melior::ir::r#type::MemRefType::try_from(bridge::ty(self))
            .ok()
            .and_then(melior_ext::strides_and_offset)
    }
    pub fn has_identity_layout(self) -> bool {
        melior_ext::has_identity_layout(bridge::ty(self))
    }
    /// The same ranked memref type in another memory space.
    pub fn with_memory_space(self, space: Option<Attr>) -> Ty {
        let memref = melior::ir::r#type::MemRefType::try_from(bridge::ty(self))
            .expect("internal: with_memory_space of a ranked memref type");
        let moved = typed_builder::with_memory_space(memref, space.map(bridge::attr));
        Ty::from(melior::ir::Type::from(moved))
    }
    pub fn print(self) -> String {
        print_with(|callback, data| unsafe { mlirTypePrint(self.0, callback, data) })
    }
    /// Bytes of a statically shaped memref type (see `memref_byte_size`);
    /// `None` for other types and dynamic shapes.
    pub fn byte_size(self) -> Option<u64> {
        let memref =
            melior::ir::r#type::MemRefType::try_from(unsafe { melior::ir::Type::from_raw(self.0) })
                .ok()?;
        crate::memref_byte_size(memref)
    }
    /// Bytes of one element of a memref type (f32: 4, bf16: 2), whatever
    /// its shape; `None` for other types and elements of no fixed width.
    pub fn element_bytes(self) -> Option<u64> {
        if !self.is_memref() {
            return None;
        }
        // SAFETY: the element type of a live memref type.
        let element = unsafe { melior::ir::Type::from_raw(self.element().0) };
        Some(crate::ir::memref_size::element_bits(element)?.div_ceil(8))
    }
    /// The allocator of a comm-buffer memref type.
    /// `!symm_mem.pool`: a kernel's handle to a symmetric pool.
    pub fn pool(ctx: Ctx) -> Ty {
        Ty(unsafe { symm_dialects::ffi::symmMemPoolTypeGet(ctx.raw()) })
    }
    pub fn allocator(self) -> Option<symm_dialects::Allocator> {
        symm_dialects::Allocator::of_type(unsafe { melior::ir::Type::from_raw(self.0) })
    }
    /// Inputs and results of a function type.
    pub fn function_io(self) -> Option<(Vec<Ty>, Vec<Ty>)> {
        unsafe {
            if !mlirTypeIsAFunction(self.0) {
                return None;
            }
            let inputs = (0..mlirFunctionTypeGetNumInputs(self.0))
                .map(|i| Ty(mlirFunctionTypeGetInput(self.0, i)))
                .collect();
            let results = (0..mlirFunctionTypeGetNumResults(self.0))
                .map(|i| Ty(mlirFunctionTypeGetResult(self.0, i)))
                .collect();
            Some((inputs, results))
        }
    }
}

impl Attr {
    pub fn raw(self) -> MlirAttribute {
        self.0
    }
    /// Whether this is `#cudagraph.host`, the memory space of host buffers.
    pub fn is_host_memory(self) -> bool {
        symm_dialects::is_host_memory(unsafe { melior::ir::Attribute::from_raw(self.0) })
    }
    /// Decodes an `#symm_mem.allocator`.
    pub fn allocator(self) -> Option<symm_dialects::Allocator> {
        symm_dialects::Allocator::from_attribute(unsafe { melior::ir::Attribute::from_raw(self.0) })
    }
    /// For an affine map attribute whose results are all plain dimensions:
    /// the map's dimension count and each result's dimension position
    /// (`(d0, d1) -> (d1)` is `(2, [1])`).
    pub fn dim_projection(self) -> Option<(usize, Vec<usize>)> {
        melior_ext::dim_projection(bridge::attr(self))
    }
    /// # Safety
    /// `raw` is a live handle of a context that outlives every use.
    pub unsafe fn from_raw(raw: MlirAttribute) -> Self {
        Self(raw)
    }
    /// The value of a flat symbol reference or string attribute.
    pub fn symbol_or_string(self) -> Option<String> {
        unsafe {
            if mlirAttributeIsAFlatSymbolRef(self.0) {
                Some(to_string(mlirFlatSymbolRefAttrGetValue(self.0)))
            } else if mlirAttributeIsAString(self.0) {
                Some(to_string(mlirStringAttrGetValue(self.0)))
            } else {
                None
            }
        }
    }
    pub fn int(self) -> Option<i64> {
        unsafe { mlirAttributeIsAInteger(self.0).then(|| mlirIntegerAttrGetValueInt(self.0)) }
    }
    pub fn print(self) -> String {
        print_with(|callback, data| unsafe { mlirAttributePrint(self.0, callback, data) })
    }
}

impl Ctx {
    pub fn raw(self) -> MlirContext {
        self.0
    }
    /// The context of a live location.
    pub fn of_location(loc: MlirLocation) -> Self {
        Self(unsafe { mlir_sys::mlirLocationGetContext(loc) })
    }
    pub fn index_type(self) -> Ty {
        Ty(unsafe { mlirIndexTypeGet(self.0) })
    }
    pub fn symbol(self, name: &str) -> Attr {
        Attr(unsafe { mlirFlatSymbolRefAttrGet(self.0, string_ref(name)) })
    }
    pub fn string(self, text: &str) -> Attr {
        Attr(unsafe { mlirStringAttrGet(self.0, string_ref(text)) })
    }
    /// An i32 integer attribute (what an `I32EnumAttr` holds).
    pub fn i32(self, value: i32) -> Attr {
        self.int_attr(self.int_type(32), i64::from(value))
    }
    pub fn i64(self, value: i64) -> Attr {
        self.int_attr(self.int_type(64), value)
    }
    pub fn index(self, value: i64) -> Attr {
        self.int_attr(self.index_type(), value)
    }
    pub fn unit(self) -> Attr {
        Attr(unsafe { mlirUnitAttrGet(self.0) })
    }
    /// An `operandSegmentSizes` value: the operand count of each group.
    pub fn segment_sizes(self, sizes: &[usize]) -> Attr {
        let sizes: Vec<i32> = sizes
            .iter()
            .map(|&n| i32::try_from(n).expect("an operand group fits in i32"))
            .collect();
        Attr(unsafe { mlirDenseI32ArrayGet(self.0, sizes.len() as isize, sizes.as_ptr()) })
    }
    // Types and attributes, built (never parsed from text).

    /// The signless integer type of `bits` bits (`i1`, `i32`, `i64`).
    pub fn int_type(self, bits: u32) -> Ty {
        Ty(unsafe { mlirIntegerTypeGet(self.0, bits) })
    }
    /// `vector<lanes x element>`.
    pub fn vector(self, lanes: i64, element: Ty) -> Ty {
        Ty(unsafe { mlirVectorTypeGet(1, &lanes, element.0) })
    }
    /// A memref of `shape` (`None`: a dynamic size), in `space` (`None`:
    /// the default), with `strides` and `offset` as its layout (`None`:
    /// the identity).
    pub fn memref(
        self,
        shape: &[Option<i64>],
        element: Ty,
        strides: Option<(&[i64], i64)>,
        space: Option<Attr>,
    ) -> Ty {
        let dynamic = unsafe { mlirShapedTypeGetDynamicSize() };
        let shape: Vec<i64> = shape.iter().map(|d| d.unwrap_or(dynamic)).collect();
        let layout = strides.map_or(
            MlirAttribute {
                ptr: std::ptr::null(),
            },
            |(strides, offset)| unsafe {
                mlirStridedLayoutAttrGet(self.0, offset, strides.len() as isize, strides.as_ptr())
            },
        );
        let space = space.map_or(
            MlirAttribute {
                ptr: std::ptr::null(),
            },
            |a| a.0,
        );
        Ty(unsafe {
            mlirMemRefTypeGet(
                element.0,
                shape.len() as isize,
                shape.as_ptr(),
                layout,
                space,
            )
        })
    }
    /// `[attrs...]`.
    pub fn array_attr(self, attrs: &[Attr]) -> Attr {
        let attrs: Vec<MlirAttribute> = attrs.iter().map(|a| a.0).collect();
        Attr(unsafe { mlirArrayAttrGet(self.0, attrs.len() as isize, attrs.as_ptr()) })
    }
    /// An integer attribute of integer or index type `ty`.
    pub fn int_attr(self, ty: Ty, value: i64) -> Attr {
        Attr(unsafe { mlirIntegerAttrGet(ty.0, value) })
    }
    /// `@root::@nested::...`.
    pub fn nested_symbol(self, root: &str, nested: &[&str]) -> Attr {
        let nested: Vec<MlirAttribute> = nested
            .iter()
            .map(|name| unsafe { mlirFlatSymbolRefAttrGet(self.0, string_ref(name)) })
            .collect();
        Attr(unsafe {
            mlirSymbolRefAttrGet(
                self.0,
                string_ref(root),
                nested.len() as isize,
                nested.as_ptr(),
            )
        })
    }
    /// `#gpu<all_reduce_op NAME>` (`None`: no such operation).
    pub fn gpu_all_reduce_operation(self, name: &str) -> Option<Attr> {
        let raw = unsafe {
            symm_dialects::ffi::symmGpuAllReduceOperationAttrGet(self.0, string_ref(name))
        };
        (!raw.ptr.is_null()).then_some(Attr(raw))
    }
    /// `{name = value, ...}`.
    pub fn dictionary(self, entries: &[(&str, Attr)]) -> Attr {
        let entries: Vec<MlirNamedAttribute> = entries
            .iter()
            .map(|(name, value)| unsafe {
                mlirNamedAttributeGet(mlirIdentifierGet(self.0, string_ref(name)), value.0)
            })
            .collect();
        Attr(unsafe { mlirDictionaryAttrGet(self.0, entries.len() as isize, entries.as_ptr()) })
    }
    pub fn function_type(self, inputs: &[Ty], results: &[Ty]) -> Ty {
        let inputs: Vec<MlirType> = inputs.iter().map(|t| t.0).collect();
        let results: Vec<MlirType> = results.iter().map(|t| t.0).collect();
        Ty(unsafe {
            mlirFunctionTypeGet(
                self.0,
                inputs.len() as isize,
                inputs.as_ptr(),
                results.len() as isize,
                results.as_ptr(),
            )
        })
    }
}
