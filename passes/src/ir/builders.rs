//! Creation of the ops the passes insert, at an insertion point: each op
//! one typed function, built with melior's ODS builders (and the ones
//! `melior::dialect!` generates for `symm_mem` and `cudagraph`), so that
//! passes name no op by string. The three ops melior's builders cannot
//! make are built by name here and nowhere else: `memref.view` (its
//! generator takes the result for inferred), the linalg named ops (their
//! bodies are filled from the name) and the GPU index ops (their unnamed
//! result is dropped).

use crate::ir::op_kind::OpKind;
use melior::{
    Context,
    dialect::ods,
    ir::{
        Block, BlockLike, Location, Operation, Region, RegionLike, Type, Value,
        attribute::{DenseI64ArrayAttribute, IntegerAttribute, StringAttribute, TypeAttribute},
        operation::{OperationBuilder, OperationMutLike},
        r#type::{IntegerType, MemRefType},
    },
};
use symm_dialects::symm_mem;

/// `arith.cmpi` predicates (their I64EnumAttr values).
#[derive(Clone, Copy, Debug)]
pub enum CmpI {
    Eq = 0,
    Ne = 1,
    Ult = 6,
    Ule = 7,
}

/// Binary integer arithmetic (`arith.addi`, ...), the result of the
/// operands' type.
#[derive(Clone, Copy, Debug)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    DivU,
    CeilDivU,
    RemU,
    MaxU,
    MinU,
    And,
    Or,
}

/// Binary float arithmetic (a row reduction's combining op, on f32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatOp {
    Add,
    Maximum,
    MaxNum,
    Minimum,
    MinNum,
}

/// A signless integer type of `bits`.
fn int<'c>(c: &'c Context, bits: u32) -> Type<'c> {
    IntegerType::new(c, bits).into()
}

/// An i64 attribute.
pub(super) fn i64_attr<'c>(c: &'c Context, value: i64) -> IntegerAttribute<'c> {
    IntegerAttribute::new(int(c, 64), value)
}

/// A region of one block that holds `terminator`.
fn region_ending<'c>(terminator: Operation<'c>) -> Region<'c> {
    let block = Block::new(&[]);
    block.append_operation(terminator);
    let region = Region::new();
    region.append_block(block);
    region
}

/// A region of one block without arguments or ops.
pub(super) fn region_of_empty_block<'c>() -> Region<'c> {
    let region = Region::new();
    region.append_block(Block::new(&[]));
    region
}

/// The casts `convert_op` builds.
#[derive(Clone, Copy, Debug)]
pub enum Cast {
    PtrToInt,
    Bitcast,
    ExtUi,
    ExtF,
    TruncF,
    IndexCast,
    /// `builtin.unrealized_conversion_cast`, for a later pass to resolve.
    Unrealized,
}

/// `func.func @name` of `function_type` with one empty block and the
/// attributes `extra`, detached.
pub fn func_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    name: &str,
    function_type: melior::ir::r#type::FunctionType<'c>,
    extra: &[(&str, melior::ir::Attribute<'c>)],
) -> Operation<'c> {
    use melior::ir::operation::OperationMutLike;
    let mut op: Operation = ods::func::FuncOperation::builder(c, l)
        .body(region_of_empty_block())
        .sym_name(StringAttribute::new(c, name))
        .function_type(TypeAttribute::new(function_type.into()))
        .build()
        .into();
    for (attribute, value) in extra {
        op.set_attribute(attribute, *value);
    }
    op
}

/// `func.func private @name` of `function_type`, a declaration, detached.
pub fn func_declaration_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    name: &str,
    function_type: melior::ir::r#type::FunctionType<'c>,
) -> Operation<'c> {
    ods::func::FuncOperation::builder(c, l)
        .body(Region::new())
        .sym_name(StringAttribute::new(c, name))
        .function_type(TypeAttribute::new(function_type.into()))
        .sym_visibility(StringAttribute::new(c, "private"))
        .build()
        .into()
}

/// `memref.global "private" @name : ty = initial`, detached.
pub fn memref_global_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    name: &str,
    ty: Type<'c>,
    initial: melior::ir::Attribute<'c>,
) -> Operation<'c> {
    ods::memref::GlobalOperation::builder(c, l)
        .sym_name(StringAttribute::new(c, name))
        .sym_visibility(StringAttribute::new(c, "private"))
        .r#type(TypeAttribute::new(ty))
        .initial_value(initial)
        .build()
        .into()
}

/// `llvm.mlir.global <linkage> @name() {addr_space = ..., alignment = ...} : ty`
/// without an initializer region, detached: the GPU modules' shared arrays
/// and markers (`alignment` where one is asked for).
pub fn llvm_global_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    (name, ty): (&str, Type<'c>),
    linkage: melior::dialect::llvm::attributes::Linkage,
    address_space: u32,
    alignment: Option<i64>,
) -> Operation<'c> {
    let mut global: Operation = ods::llvm::mlir_global(
        c,
        Region::new(),
        TypeAttribute::new(ty),
        StringAttribute::new(c, name),
        melior::dialect::llvm::attributes::linkage(c, linkage),
        l,
    )
    .into();
    let i32: Type = IntegerType::new(c, 32).into();
    global.set_attribute(
        "addr_space",
        IntegerAttribute::new(i32, i64::from(address_space)).into(),
    );
    if let Some(alignment) = alignment {
        let i64: Type = IntegerType::new(c, 64).into();
        global.set_attribute("alignment", IntegerAttribute::new(i64, alignment).into());
    }
    global
}

/// The terminators `replace_terminator` puts in.
#[derive(Clone, Copy, Debug)]
pub enum Terminator {
    /// `func.return`.
    Return,
    /// `symm_mem.epilogue_yield` (one value).
    EpilogueYield,
}

/// Replaces `block`'s terminator with `terminator` of the same operands
/// (a region moving to a parent with another terminator).
pub fn replace_terminator<'c>(
    context: &'c Context,
    block: melior::ir::BlockRef<'c, '_>,
    terminator: Terminator,
) {
    if let Some(old) = put_terminator(context, block, terminator) {
        super::rewrite::erase(old);
    }
}

/// Puts `terminator` before `block`'s terminator, with its operands, and
/// returns the old one, still in place, for the caller to erase (a
/// conversion erases it through its rewriter).
pub fn put_terminator<'c, 'a>(
    context: &'c Context,
    block: melior::ir::BlockRef<'c, 'a>,
    terminator: Terminator,
) -> Option<melior::ir::OperationRef<'c, 'a>> {
    use melior::ir::operation::OperationLike;
    let old = block.terminator()?;
    let operands: Vec<Value> = old.operands().collect();
    let l = old.location();
    let new: Operation = match terminator {
        Terminator::Return => ods::func::r#return(context, &operands, l).into(),
        Terminator::EpilogueYield => {
            let [value] = operands[..] else {
                panic!("internal: an epilogue yields one value");
            };
            symm_mem::epilogue_yield(context, value, l).into()
        }
    };
    block.insert_operation_before(old, new);
    Some(old)
}

// Ops built on their own, for the caller to place.

/// The fused all-reduce ops (`symm_mem.all_reduce_epilogue_out`,
/// `symm_mem.all_reduce_rows_out`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FusedAllReduce {
    Epilogue,
    Rows,
}

impl FusedAllReduce {
    /// Which fused all-reduce `op` is, if it is one.
    /// Which fused all-reduce an op of `kind` is, if it is one.
    pub fn of_kind(kind: OpKind) -> Option<Self> {
        match kind {
            OpKind::AllReduceEpilogueOut => Some(Self::Epilogue),
            OpKind::AllReduceRowsOut => Some(Self::Rows),
            _ => None,
        }
    }
}

/// The GPU index ops the kernels read.
#[derive(Clone, Copy, Debug)]
pub enum GpuIndex {
    ThreadId,
    BlockId,
    GridDim,
}

/// `gpu.thread_id`, `gpu.block_id` or `gpu.grid_dim` along `dimension`
/// (a `#gpu<dim>` attribute), for melior-built kernels. By name: melior's
/// generated builders drop these ops' result, which ODS leaves unnamed
/// (`Results<(outs Index)>`), and yield ops with none.
pub fn gpu_index<'c>(
    context: &'c Context,
    loc: Location<'c>,
    which: GpuIndex,
    dimension: melior::ir::Attribute<'c>,
) -> Operation<'c> {
    let name = match which {
        GpuIndex::ThreadId => "gpu.thread_id",
        GpuIndex::BlockId => "gpu.block_id",
        GpuIndex::GridDim => "gpu.grid_dim",
    };
    OperationBuilder::new(name, loc)
        .add_attributes(&[(melior::ir::Identifier::new(context, "dimension"), dimension)])
        .add_results(&[Type::index(context)])
        .build()
        .expect("internal: a gpu index op")
}

/// `memref.view pool[offset][sizes] : ty` (`sizes`: the dynamic ones of
/// `ty`). By name: melior's ODS builder for it takes the result type for
/// inferred, which it is not.
pub fn memref_view<'c>(
    location: Location<'c>,
    pool: melior::ir::Value<'c, '_>,
    offset: melior::ir::Value<'c, '_>,
    ty: Type<'c>,
    sizes: &[melior::ir::Value<'c, '_>],
) -> Operation<'c> {
    let mut operands = vec![pool, offset];
    operands.extend_from_slice(sizes);
    OperationBuilder::new("memref.view", location)
        .add_operands(&operands)
        .add_results(&[ty])
        .build()
        .expect("internal: memref.view of a pool")
}

// Ops built detached, for `typed_builder::Inserter`, `host::Host` and the
// kernel lowerings to put in place.

/// `lhs <op> rhs` on integers of one type.
pub fn int_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    op: IntOp,
    x: Value<'c, '_>,
    y: Value<'c, '_>,
) -> Operation<'c> {
    match op {
        IntOp::Add => ods::arith::addi(c, x, y, l).into(),
        IntOp::Sub => ods::arith::subi(c, x, y, l).into(),
        IntOp::Mul => ods::arith::muli(c, x, y, l).into(),
        IntOp::DivU => ods::arith::divui(c, x, y, l).into(),
        IntOp::CeilDivU => ods::arith::ceildivui(c, x, y, l).into(),
        IntOp::RemU => ods::arith::remui(c, x, y, l).into(),
        IntOp::MaxU => ods::arith::maxui(c, x, y, l).into(),
        IntOp::MinU => ods::arith::minui(c, x, y, l).into(),
        IntOp::And => ods::arith::andi(c, x, y, l).into(),
        IntOp::Or => ods::arith::ori(c, x, y, l).into(),
    }
}

/// `arith.cmpi <predicate>, x, y`.
pub fn cmpi_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    predicate: CmpI,
    x: Value<'c, '_>,
    y: Value<'c, '_>,
) -> Operation<'c> {
    let predicate = i64_attr(c, predicate as i64).into();
    ods::arith::cmpi(c, int(c, 1), x, y, predicate, l).into()
}

/// `x <op> y` on floats of one type (`arith.addf`, `arith.maximumf`, ...).
pub fn float_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    op: FloatOp,
    x: Value<'c, '_>,
    y: Value<'c, '_>,
) -> Operation<'c> {
    match op {
        FloatOp::Add => ods::arith::addf(c, x, y, l).into(),
        FloatOp::Maximum => ods::arith::maximumf(c, x, y, l).into(),
        FloatOp::MaxNum => ods::arith::maxnumf(c, x, y, l).into(),
        FloatOp::Minimum => ods::arith::minimumf(c, x, y, l).into(),
        FloatOp::MinNum => ods::arith::minnumf(c, x, y, l).into(),
    }
}

/// `scf.if %condition` without results: its then block (and else block,
/// if asked for) holds only its `scf.yield`.
pub fn if_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    condition: Value<'c, '_>,
    with_else: bool,
) -> Operation<'c> {
    let branch = || region_ending(ods::scf::r#yield(c, &[], l).into());
    let otherwise = if with_else { branch() } else { Region::new() };
    ods::scf::IfOperation::builder(c, l)
        .results(&[])
        .condition(condition)
        .then_region(branch())
        .else_region(otherwise)
        .build()
        .into()
}

/// `memref.load memref[indices] : element`.
pub fn load_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    element: Type<'c>,
    memref: Value<'c, '_>,
    indices: &[Value<'c, '_>],
) -> Operation<'c> {
    ods::memref::load(c, element, memref, indices, l).into()
}

/// `memref.store value, memref[indices]`.
pub fn store_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    value: Value<'c, '_>,
    memref: Value<'c, '_>,
    indices: &[Value<'c, '_>],
) -> Operation<'c> {
    ods::memref::store(c, value, memref, indices, l).into()
}

/// The address of `memref`'s aligned pointer, as an index.
pub fn aligned_pointer_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    memref: Value<'c, '_>,
) -> Operation<'c> {
    ods::memref::extract_aligned_pointer_as_index(c, Type::index(c), memref, l).into()
}

/// A one-operand conversion of `x` to `to`.
pub fn convert_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    cast: Cast,
    x: Value<'c, '_>,
    to: Type<'c>,
) -> Operation<'c> {
    match cast {
        Cast::PtrToInt => ods::llvm::ptrtoint(c, to, x, l).into(),
        Cast::Bitcast => ods::arith::bitcast(c, to, x, l).into(),
        Cast::ExtUi => ods::arith::extui(c, to, x, l).into(),
        Cast::ExtF => ods::arith::extf(c, to, x, l).into(),
        Cast::TruncF => ods::arith::truncf(c, to, x, l).into(),
        Cast::IndexCast => ods::arith::index_cast(c, to, x, l).into(),
        Cast::Unrealized => ods::builtin::unrealized_conversion_cast(c, &[to], &[x], l).into(),
    }
}

/// An `operandSegmentSizes` value: the operand count of each group.
fn segment_sizes<'c>(c: &'c Context, sizes: &[usize]) -> melior::ir::Attribute<'c> {
    let sizes: Vec<i32> = sizes
        .iter()
        .map(|&n| i32::try_from(n).expect("internal: an operand group fits in i32"))
        .collect();
    melior::ir::attribute::DenseI32ArrayAttribute::new(c, &sizes).into()
}

/// `op` with its operand groups' sizes set (melior's ODS builders leave
/// them to the caller).
fn segmented<'c>(c: &'c Context, mut op: Operation<'c>, sizes: &[usize]) -> Operation<'c> {
    use melior::ir::operation::OperationMutLike;
    op.set_attribute("operandSegmentSizes", segment_sizes(c, sizes));
    op
}

/// A structured linalg op named `name` (`linalg.matmul`,
/// `linalg.batch_matmul`) of `inputs` into `output`, on memrefs, with the
/// body linalg defines for it. By name, for one function over the named
/// ops: linalg fills their bodies from the name.
pub fn linalg_named_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    name: &str,
    inputs: &[Value<'c, '_>],
    output: Value<'c, '_>,
) -> Operation<'c> {
    use melior::ir::operation::OperationLike;
    let mut operands = inputs.to_vec();
    operands.push(output);
    let op = OperationBuilder::new(name, l)
        .add_operands(&operands)
        .add_regions([Region::new()])
        .build()
        .expect("internal: a linalg named op");
    let op = segmented(c, op, &[inputs.len(), 1]);
    // SAFETY: a live op of a named linalg kind with an empty region.
    unsafe { mlir_sys::mlirLinalgFillBuiltinNamedOpRegion(op.to_raw()) };
    op
}

/// `memref.reinterpret_cast` of `source` to `ty`, a strided memref type
/// with static strides and offset: its sizes are `ty`'s, the dynamic ones
/// given in `sizes`.
pub fn reinterpret_cast_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    source: Value<'c, '_>,
    ty: MemRefType<'c>,
    sizes: &[Value<'c, '_>],
) -> Operation<'c> {
    let (strides, offset) = super::melior_ext::strides_and_offset(ty)
        .expect("internal: a strided memref type with static strides");
    let strides: Vec<i64> = strides.into_iter().map(|s| s.unwrap_or(i64::MIN)).collect();
    let shape = super::typed_builder::shape_of(ty);
    let op = ods::memref::reinterpret_cast(
        c,
        ty.into(),
        source,
        &[],
        sizes,
        &[],
        DenseI64ArrayAttribute::new(c, &[offset.unwrap_or(0)]).into(),
        DenseI64ArrayAttribute::new(c, &shape).into(),
        DenseI64ArrayAttribute::new(c, &strides).into(),
        l,
    )
    .into();
    segmented(c, op, &[1, 0, sizes.len(), 0])
}

/// `gpu.launch_func @kernel blocks(grid) threads(block) [dynamic shared
/// memory] args(...)`, the kernel named by a nested symbol
/// (`@module::@kernel`).
pub fn gpu_launch_func_op<'c>(
    c: &'c Context,
    l: Location<'c>,
    kernel: melior::ir::Attribute<'c>,
    [grid, block]: [[Value<'c, '_>; 3]; 2],
    shared_bytes: Option<Value<'c, '_>>,
    args: &[Value<'c, '_>],
) -> Operation<'c> {
    // melior's builder appends operands in the order they are given, so
    // they go in ODS order: the shared memory size before the arguments.
    let launch = ods::gpu::LaunchFuncOperation::builder(c, l)
        .async_dependencies(&[])
        .grid_size_x(grid[0])
        .grid_size_y(grid[1])
        .grid_size_z(grid[2])
        .block_size_x(block[0])
        .block_size_y(block[1])
        .block_size_z(block[2]);
    let op: Operation = match shared_bytes {
        Some(bytes) => launch
            .dynamic_shared_memory_size(bytes)
            .kernel_operands(args)
            .kernel(kernel)
            .build()
            .into(),
        None => launch.kernel_operands(args).kernel(kernel).build().into(),
    };
    // The operand groups: no async dependencies, the grid and block sizes,
    // no cluster, the dynamic shared memory size if any, the arguments, no
    // async object.
    let shared = usize::from(shared_bytes.is_some());
    segmented(
        c,
        op,
        &[0, 1, 1, 1, 1, 1, 1, 0, 0, 0, shared, args.len(), 0],
    )
}

/// `memref.alloca() : ty` (a static shape), detached.
pub fn alloca_op<'c>(c: &'c Context, l: Location<'c>, ty: Type<'c>) -> Operation<'c> {
    segmented(c, ods::memref::alloca(c, ty, &[], &[], l).into(), &[0, 0])
}

/// Which side of its anchor `put_beside` puts an op on.
#[derive(Clone, Copy, Debug)]
pub enum Side {
    Before,
    After,
}

/// Puts `op` right before or after `anchor`, in its block; the op put.
pub fn put_beside<'c, 'a>(
    anchor: melior::ir::OperationRef<'c, 'a>,
    side: Side,
    op: Operation<'c>,
) -> melior::ir::OperationRef<'c, 'a> {
    use melior::ir::operation::OperationLike;
    let block = anchor.block().expect("internal: an op in a block");
    match side {
        Side::Before => block.insert_operation_before(anchor, op),
        Side::After => block.insert_operation_after(anchor, op),
    }
}
