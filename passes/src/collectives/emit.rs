//! Appends ops to a block through typed builders: melior's (`arith`, `scf`,
//! `llvm`, `func`, and the ODS-generated `gpu`), and the `symm_mem`
//! device-op builders that `melior::dialect!` generates from our ODS. The
//! kernels of `collectives` are written with it; no op is built from a
//! name or from text.
//!
//! Values are melior's, of the kernel module being built (`Val<'c>`):
//! every block an emitter fills ends up in that module, so a value lives as
//! long as the context, and nested regions use the values of the blocks
//! around them freely.

use crate::ir::builders::{GpuIndex, gpu_index};
use crate::ir::scalar::Scalar;
use melior::{
    Context,
    dialect::{
        arith::{self, CmpiPredicate},
        func, llvm,
        llvm::LoadStoreOptions,
        ods, scf,
    },
    ir::{
        Attribute, Block, BlockLike, BlockRef, Identifier, Location, Operation, OperationRef,
        Region, RegionLike, Type, Value, ValueLike,
        attribute::{
            DenseElementsAttribute, DenseI32ArrayAttribute, FlatSymbolRefAttribute, FloatAttribute,
            IntegerAttribute, StringAttribute, TypeAttribute,
        },
        operation::OperationMutLike,
        r#type::{FunctionType, IntegerType},
    },
};
use symm_dialects::symm_mem;

/// `llvm::AtomicOrdering::Monotonic` and `AtomicRMWBinOp::Add`, the LLVM
/// dialect's i64 enum attributes' values.
const MONOTONIC: i64 = 2;
const ATOMIC_ADD: i64 = 1;

/// NVPTX's shared address space (LLVM's numbering).
pub const SHARED: u32 = 3;

/// A value of the kernel module being built.
pub type Val<'c> = Value<'c, 'c>;

/// A block of the kernel module being built.
pub type Blk<'c> = BlockRef<'c, 'c>;

/// An op of the kernel module being built.
pub type Op<'c> = OperationRef<'c, 'c>;

/// A block being filled, and the context and location of what goes in it.
#[derive(Clone, Copy)]
pub struct Emitter<'c> {
    pub ctx: &'c Context,
    pub loc: Location<'c>,
    pub block: Blk<'c>,
}

/// A reference to a block being built (detached until its region goes
/// into the kernel module): the emitters' blocks all end up in that module.
pub fn building<'c>(block: &Block<'c>) -> Blk<'c> {
    // SAFETY: a live block; the caller puts it in a region of the module
    // being built before it drops, and uses no reference after that.
    unsafe { crate::ir::melior_ext::block_at(block.to_raw()) }
}

impl<'c> Emitter<'c> {
    pub fn new(ctx: &'c Context, loc: Location<'c>, block: Blk<'c>) -> Self {
        Self { ctx, loc, block }
    }

    /// Builds ops with an emitter at `loc_of`'s location, into a detached
    /// block, and moves them before `before` once `build` is done (so that
    /// what they are built from is never half in place).
    pub(crate) fn build_before(
        context: &'c Context,
        before: OperationRef<'c, '_>,
        loc_of: OperationRef<'c, '_>,
        build: impl FnOnce(&Emitter<'c>),
    ) {
        use crate::ir::melior_ext::{BlockExt, OperationExt};
        use melior::ir::operation::OperationLike;
        let loc = loc_of.location();
        let staging = Block::new(&[]);
        build(&Emitter::new(context, loc, building(&staging)));
        for op in building(&staging).ops() {
            op.move_before_op(before);
        }
    }

    /// The same context and location, appending to `block`.
    pub fn into_block(&self, block: Blk<'c>) -> Self {
        Self { block, ..*self }
    }

    /// Appends `op` and returns it.
    pub fn push(&self, op: Operation<'c>) -> Op<'c> {
        self.block.append_operation(op)
    }

    /// Appends `op` and returns its only result.
    pub(crate) fn one(&self, op: Operation<'c>) -> Val<'c> {
        self.push(op)
            .result(0)
            .expect("internal: a built op has its result")
            .into()
    }

    /// Argument `index` of the block being filled.
    pub fn arg(&self, index: usize) -> Val<'c> {
        self.block
            .argument(index)
            .expect("internal: a kernel block has its arguments")
            .into()
    }

    // Types.

    pub fn int_type(&self, bits: u32) -> Type<'c> {
        IntegerType::new(self.ctx, bits).into()
    }
    pub fn i64(&self) -> Type<'c> {
        self.int_type(64)
    }
    pub fn index(&self) -> Type<'c> {
        Type::index(self.ctx)
    }
    pub fn ptr(&self) -> Type<'c> {
        llvm::r#type::pointer(self.ctx, 0)
    }
    pub fn pool(&self) -> Type<'c> {
        symm_dialects::attributes::pool_type(self.ctx)
    }
    /// `f32`, `f16` or `bf16`.
    pub fn float(&self, scalar: Scalar) -> Option<Type<'c>> {
        Some(match scalar {
            Scalar::F32 => Type::float32(self.ctx),
            Scalar::F16 => Type::float16(self.ctx),
            Scalar::Bf16 => Type::bfloat16(self.ctx),
            _ => return None,
        })
    }
    pub fn vector(&self, lanes: u64, element: Type<'c>) -> Type<'c> {
        Type::vector(&[lanes], element)
    }

    // Constants and arithmetic.

    pub fn constant(&self, ty: Type<'c>, number: i64) -> Val<'c> {
        self.one(arith::constant(
            self.ctx,
            IntegerAttribute::new(ty, number).into(),
            self.loc,
        ))
    }
    pub fn c64(&self, number: i64) -> Val<'c> {
        self.constant(self.i64(), number)
    }
    pub fn c_index(&self, number: i64) -> Val<'c> {
        self.constant(self.index(), number)
    }
    pub fn add(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::addi(a, b, self.loc))
    }
    pub fn sub(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::subi(a, b, self.loc))
    }
    pub fn mul(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::muli(a, b, self.loc))
    }
    pub fn div(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::divui(a, b, self.loc))
    }
    pub fn rem(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::remui(a, b, self.loc))
    }
    pub fn min(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::minui(a, b, self.loc))
    }
    pub fn maxsi(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::maxsi(a, b, self.loc))
    }
    pub fn ceildivsi(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::ceildivsi(a, b, self.loc))
    }
    /// A vector of `lanes` integers of type `element`, each `number`.
    pub fn splat(&self, lanes: u64, element: Type<'c>, number: i64) -> Val<'c> {
        let ty = self.vector(lanes, element);
        let lane: Attribute = IntegerAttribute::new(element, number).into();
        let lanes = vec![lane; lanes as usize];
        let dense = DenseElementsAttribute::new(ty, &lanes).expect("a vector of integer lanes");
        self.one(arith::constant(self.ctx, dense.into(), self.loc))
    }
    /// `llvm.bitcast` (same bits, another type of the same width).
    pub fn bitcast(&self, v: Val<'c>, to: Type<'c>) -> Val<'c> {
        self.one(ods::llvm::bitcast(self.ctx, to, v, self.loc).into())
    }
    /// `arith.select`, lane by lane for vectors.
    pub fn select(&self, condition: Val<'c>, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::select(condition, a, b, self.loc))
    }
    pub fn and(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::andi(a, b, self.loc))
    }
    pub fn or(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::ori(a, b, self.loc))
    }
    pub fn xor(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::xori(a, b, self.loc))
    }
    pub fn cmp(&self, predicate: CmpiPredicate, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::cmpi(self.ctx, predicate, a, b, self.loc))
    }
    /// `arith.index_cast` (index <-> integer).
    pub fn cast(&self, v: Val<'c>, to: Type<'c>) -> Val<'c> {
        self.one(arith::index_cast(v, to, self.loc))
    }
    pub fn extui(&self, v: Val<'c>, to: Type<'c>) -> Val<'c> {
        self.one(arith::extui(v, to, self.loc))
    }
    pub fn extf(&self, v: Val<'c>, to: Type<'c>) -> Val<'c> {
        self.one(arith::extf(v, to, self.loc))
    }
    pub fn truncf(&self, v: Val<'c>, to: Type<'c>) -> Val<'c> {
        self.one(arith::truncf(v, to, self.loc))
    }
    pub fn addf(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::addf(a, b, self.loc))
    }
    pub fn maxnumf(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::maxnumf(a, b, self.loc))
    }
    pub fn minnumf(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(ods::arith::minnumf(self.ctx, a, b, self.loc).into())
    }

    pub fn trunci(&self, v: Val<'c>, to: Type<'c>) -> Val<'c> {
        self.one(arith::trunci(v, to, self.loc))
    }
    /// A relaxed (`monotonic`, system-scope) atomic load of `ty`.
    pub fn load_relaxed(&self, ptr: Val<'c>, ty: Type<'c>, align: u64) -> Val<'c> {
        let op = ods::llvm::LoadOperationBuilder::new(self.ctx, self.loc)
            .res(ty)
            .addr(ptr)
            .alignment(IntegerAttribute::new(self.i64(), align as i64))
            .ordering(self.ordering(MONOTONIC))
            .build();
        self.one(op.into())
    }
    /// A relaxed (`monotonic`, system-scope) atomic store.
    pub fn store_relaxed(&self, v: Val<'c>, ptr: Val<'c>, align: u64) {
        let op = ods::llvm::StoreOperationBuilder::new(self.ctx, self.loc)
            .value(v)
            .addr(ptr)
            .alignment(IntegerAttribute::new(self.i64(), align as i64))
            .ordering(self.ordering(MONOTONIC))
            .build();
        self.push(op.into());
    }
    /// `llvm.atomicrmw add` (relaxed), its old value discarded.
    pub fn atomic_add(&self, ptr: Val<'c>, v: Val<'c>) {
        let ty = v.r#type();
        self.push(
            ods::llvm::atomicrmw(
                self.ctx,
                ty,
                ptr,
                v,
                IntegerAttribute::new(self.i64(), ATOMIC_ADD).into(),
                self.ordering(MONOTONIC),
                self.loc,
            )
            .into(),
        );
    }
    /// `#llvm.atomic_ordering` (an i64 enum attribute) of `code`.
    fn ordering(&self, code: i64) -> Attribute<'c> {
        IntegerAttribute::new(self.i64(), code).into()
    }
    /// `llvm.ptrtoint`.
    pub fn ptr_to_int(&self, ptr: Val<'c>, to: Type<'c>) -> Val<'c> {
        self.one(ods::llvm::ptrtoint(self.ctx, to, ptr, self.loc).into())
    }
    /// An integer address as a generic `!llvm.ptr`.
    pub fn int_to_ptr(&self, address: Val<'c>) -> Val<'c> {
        self.one(ods::llvm::inttoptr(self.ctx, self.ptr(), address, self.loc).into())
    }

    pub fn mulf(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::mulf(a, b, self.loc))
    }
    pub fn divf(&self, a: Val<'c>, b: Val<'c>) -> Val<'c> {
        self.one(arith::divf(a, b, self.loc))
    }
    /// An f32 constant.
    pub fn cf32(&self, number: f32) -> Val<'c> {
        let f32 = Type::float32(self.ctx);
        self.one(arith::constant(
            self.ctx,
            FloatAttribute::new(self.ctx, f32, f64::from(number)).into(),
            self.loc,
        ))
    }
    /// `1 / sqrt(v)` for an f32, approximated (PTX `rsqrt.approx.f32`)
    /// through its NVVM intrinsic: `math.rsqrt` would call libdevice.
    pub fn rsqrt_approx(&self, v: Val<'c>) -> Val<'c> {
        let op = ods::llvm::CallIntrinsicOperationBuilder::new(self.ctx, self.loc)
            .results(v.r#type())
            .intrin(StringAttribute::new(self.ctx, "llvm.nvvm.rsqrt.approx.f"))
            .args(&[v])
            .op_bundle_operands(&[])
            .op_bundle_sizes(DenseI32ArrayAttribute::new(self.ctx, &[]))
            .build();
        let mut op: Operation = op.into();
        // melior's builder leaves the variadic operands' sizes at zero.
        op.set_attribute(
            "operandSegmentSizes",
            DenseI32ArrayAttribute::new(self.ctx, &[1, 0]).into(),
        );
        self.one(op)
    }
    /// `arith.uitofp`.
    pub fn uitofp(&self, v: Val<'c>, to: Type<'c>) -> Val<'c> {
        self.one(arith::uitofp(v, to, self.loc))
    }

    // Memory.

    fn aligned(&self, bytes: u64) -> LoadStoreOptions<'c> {
        LoadStoreOptions::new().align(Some(IntegerAttribute::new(self.i64(), bytes as i64)))
    }
    /// `ptr + index` elements of `element`, in `ptr`'s address space.
    pub fn gep(&self, ptr: Val<'c>, index: Val<'c>, element: Type<'c>) -> Val<'c> {
        self.one(llvm::get_element_ptr_dynamic(
            self.ctx,
            ptr,
            &[index],
            element,
            ptr.r#type(),
            self.loc,
        ))
    }
    pub fn load(&self, ptr: Val<'c>, ty: Type<'c>, align: u64) -> Val<'c> {
        self.one(llvm::load(self.ctx, ptr, ty, self.loc, self.aligned(align)))
    }
    pub fn store(&self, v: Val<'c>, ptr: Val<'c>, align: u64) {
        self.push(llvm::store(self.ctx, v, ptr, self.loc, self.aligned(align)));
    }
    /// The element type of a vector value.
    fn element_type(&self, vector: Val<'c>) -> Type<'c> {
        crate::ir::melior_ext::shaped_element(vector.r#type())
    }
    /// `llvm.mlir.zero`: zero of any type (all lanes of a vector).
    pub fn zero(&self, ty: Type<'c>) -> Val<'c> {
        self.one(llvm::zero(ty, self.loc))
    }
    pub fn poison(&self, ty: Type<'c>) -> Val<'c> {
        self.one(llvm::poison(ty, self.loc))
    }
    pub fn extract(&self, vector: Val<'c>, lane: u64) -> Val<'c> {
        let position = self.constant(self.int_type(32), lane as i64);
        let element = self.element_type(vector);
        self.one(ods::llvm::extractelement(self.ctx, element, vector, position, self.loc).into())
    }
    pub fn insert(&self, vector: Val<'c>, element: Val<'c>, lane: u64) -> Val<'c> {
        let position = self.constant(self.int_type(32), lane as i64);
        self.one(
            ods::llvm::insertelement(
                self.ctx,
                vector.r#type(),
                vector,
                element,
                position,
                self.loc,
            )
            .into(),
        )
    }
    /// `func.call @callee(args) -> result`.
    pub fn call(&self, callee: &str, args: &[Val<'c>], result: Type<'c>) -> Val<'c> {
        let args: Vec<Value> = args.to_vec();
        self.one(func::call(
            self.ctx,
            FlatSymbolRefAttribute::new(self.ctx, callee),
            &args,
            &[result],
            self.loc,
        ))
    }

    // Structure.

    /// `scf.for %i = lo to hi step step` (i64 bounds); `body` fills it.
    pub fn for_range(
        &self,
        lo: Val<'c>,
        hi: Val<'c>,
        step: Val<'c>,
        body: impl FnOnce(&Self, Val<'c>),
    ) {
        let block = Block::new(&[(lo.r#type(), self.loc)]);
        let inner = self.into_block(building(&block));
        body(&inner, inner.arg(0));
        inner.push(scf::r#yield(&[], self.loc));
        let region = Region::new();
        region.append_block(block);
        self.push(scf::r#for(lo, hi, step, region, self.loc));
    }

    /// `scf.for %i = lo to hi step step iter_args(%acc = init)`: `body`
    /// fills it from the index and the carried value and returns the next
    /// one; returns the last.
    pub fn for_range_carrying(
        &self,
        lo: Val<'c>,
        hi: Val<'c>,
        step: Val<'c>,
        init: Val<'c>,
        body: impl FnOnce(&Self, Val<'c>, Val<'c>) -> Val<'c>,
    ) -> Val<'c> {
        let carried = init.r#type();
        let block = Block::new(&[(lo.r#type(), self.loc), (carried, self.loc)]);
        let inner = self.into_block(building(&block));
        let next = body(&inner, inner.arg(0), inner.arg(1));
        inner.push(scf::r#yield(&[next], self.loc));
        let region = Region::new();
        region.append_block(block);
        self.one(
            ods::scf::r#for(
                self.ctx,
                &[carried],
                lo,
                hi,
                step,
                &[init],
                region,
                self.loc,
            )
            .into(),
        )
    }

    /// `scf.for` carrying several values: `body` gets the index and the
    /// carried values and returns the next ones; returns the last.
    pub fn for_range_carrying_many(
        &self,
        (lo, hi, step): (Val<'c>, Val<'c>, Val<'c>),
        inits: &[Val<'c>],
        body: impl FnOnce(&Self, Val<'c>, &[Val<'c>]) -> Vec<Val<'c>>,
    ) -> Vec<Val<'c>> {
        let types: Vec<Type> = inits.iter().map(|v| v.r#type()).collect();
        let mut arguments = vec![(lo.r#type(), self.loc)];
        arguments.extend(types.iter().map(|t| (*t, self.loc)));
        let block = Block::new(&arguments);
        let inner = self.into_block(building(&block));
        let carried: Vec<Val<'c>> = (1..=inits.len()).map(|i| inner.arg(i)).collect();
        let next = body(&inner, inner.arg(0), &carried);
        let next: Vec<Value> = next.to_vec();
        inner.push(scf::r#yield(&next, self.loc));
        let region = Region::new();
        region.append_block(block);
        let inits: Vec<Value> = inits.to_vec();
        let op = self
            .push(ods::scf::r#for(self.ctx, &types, lo, hi, step, &inits, region, self.loc).into());
        (0..types.len())
            .map(|i| {
                op.result(i)
                    .expect("internal: scf.for has its results")
                    .into()
            })
            .collect()
    }

    /// `scf.if condition` with no results and no else; `then` fills it.
    pub fn when(&self, condition: Val<'c>, then: impl FnOnce(&Self)) {
        let then_region = self.region_filled(then);
        self.push(scf::r#if(
            condition,
            &[],
            then_region,
            Region::new(),
            self.loc,
        ));
    }

    /// `scf.if condition` with no results: `then` fills its then-region,
    /// `otherwise` its else-region.
    pub fn if_else(
        &self,
        condition: Val<'c>,
        then: impl FnOnce(&Self),
        otherwise: impl FnOnce(&Self),
    ) {
        let then_region = self.region_filled(then);
        let else_region = self.region_filled(otherwise);
        self.push(scf::r#if(
            condition,
            &[],
            then_region,
            else_region,
            self.loc,
        ));
    }

    /// A one-block region that `fill` fills, ending in an empty yield.
    fn region_filled(&self, fill: impl FnOnce(&Self)) -> Region<'c> {
        let block = Block::new(&[]);
        let inner = self.into_block(building(&block));
        fill(&inner);
        inner.push(scf::r#yield(&[], self.loc));
        let region = Region::new();
        region.append_block(block);
        region
    }

    /// `scf.if condition -> ty`: `then`'s value where `condition` holds,
    /// else `otherwise`'s; each fills its own region.
    pub fn choose(
        &self,
        condition: Val<'c>,
        ty: Type<'c>,
        then: impl FnOnce(&Self) -> Val<'c>,
        otherwise: impl FnOnce(&Self) -> Val<'c>,
    ) -> Val<'c> {
        let then = self.region_yielding(then);
        let otherwise = self.region_yielding(otherwise);
        self.one(scf::r#if(condition, &[ty], then, otherwise, self.loc))
    }

    /// A one-block region that `fill` fills and that yields its value.
    fn region_yielding(&self, fill: impl FnOnce(&Self) -> Val<'c>) -> Region<'c> {
        let block = Block::new(&[]);
        let inner = self.into_block(building(&block));
        let result = fill(&inner);
        inner.push(scf::r#yield(&[result], self.loc));
        let region = Region::new();
        region.append_block(block);
        region
    }

    // GPU.

    fn dimension(&self, axis: &str) -> Attribute<'c> {
        let index = match axis {
            "x" => 0,
            "y" => 1,
            _ => 2,
        };
        // Our C API's (the gpu dialect's dimension enum has none upstream).
        symm_dialects::attributes::gpu_dimension(self.ctx, index)
    }
    /// `gpu.thread_id`, `gpu.block_id` or `gpu.grid_dim` along `axis`.
    fn index_op_along(&self, which: GpuIndex, axis: &str) -> Val<'c> {
        self.one(gpu_index(self.ctx, self.loc, which, self.dimension(axis)))
    }
    pub fn thread_id(&self) -> Val<'c> {
        self.index_op_along(GpuIndex::ThreadId, "x")
    }
    pub fn block_id(&self) -> Val<'c> {
        self.index_op_along(GpuIndex::BlockId, "x")
    }
    /// `gpu.block_id y`.
    pub fn block_id_y(&self) -> Val<'c> {
        self.index_op_along(GpuIndex::BlockId, "y")
    }
    pub fn grid_dim(&self) -> Val<'c> {
        self.index_op_along(GpuIndex::GridDim, "x")
    }
    /// `gpu.all_reduce add %v uniform`: the sum of `v` over the block's
    /// threads, the same bits in every thread (`symm-gpu-block-reduce`
    /// lowers it to warp butterflies and one exchange through shared
    /// memory). Every thread must reach it, and the kernel's block must be
    /// whole warps.
    pub fn block_sum(&self, v: Val<'c>) -> Val<'c> {
        let mut op: Operation = ods::gpu::all_reduce(self.ctx, v, Region::new(), self.loc).into();
        // Our C API's (the reduction enum has none upstream).
        let add = symm_dialects::attributes::gpu_all_reduce_operation(self.ctx, "add")
            .expect("`add` is a case of the gpu reduction enum");
        op.set_attribute("op", add);
        op.set_attribute("uniform", Attribute::unit(self.ctx));
        self.one(op)
    }
    /// `func.func private @name(inputs) -> result` with no body yet.
    pub fn declare_private_function(
        &self,
        name: &str,
        inputs: &[Type<'c>],
        result: Type<'c>,
    ) -> Op<'c> {
        let ty = FunctionType::new(self.ctx, inputs, &[result]);
        self.push(func::func(
            self.ctx,
            StringAttribute::new(self.ctx, name),
            TypeAttribute::new(ty.into()),
            Region::new(),
            &[(
                Identifier::new(self.ctx, "sym_visibility"),
                StringAttribute::new(self.ctx, "private").into(),
            )],
            self.loc,
        ))
    }
    /// `griddepcontrol.wait` (`launch_dependents` false): the grids before
    /// this one in the stream have completed and their memory is visible.
    /// A no-op unless the launch was programmatic (see
    /// `symm-wait-for-prior-grids`). `griddepcontrol.launch_dependents`
    /// (true): the next grid may be scheduled once every block of this one
    /// got here or exited.
    pub fn grid_dependency(&self, launch_dependents: bool) -> Op<'c> {
        let kind = symm_dialects::attributes::nvvm_grid_dep_action(self.ctx, launch_dependents);
        self.push(symm_dialects::nvvm::griddepcontrol(self.ctx, kind, self.loc).into())
    }
    /// `v` combined by `combine` over the lanes whose ids differ from this
    /// lane's only in the bits of `lanes` (a mask below 32), in each of
    /// them: `gpu.shuffle xor` by each of its bits, highest first, over the
    /// whole warp. Both partners of a step combine the same two values, so
    /// with a commutative `combine` every lane ends with the same bits.
    /// Every lane of the warp must reach it.
    pub fn xor_butterfly(
        &self,
        v: Val<'c>,
        lanes: u32,
        combine: impl Fn(&Self, Val<'c>, Val<'c>) -> Val<'c>,
    ) -> Val<'c> {
        let i32 = self.int_type(32);
        let xor = symm_dialects::attributes::gpu_shuffle_xor(self.ctx);
        let width = self.constant(i32, 32);
        let mut acc = v;
        for bit in (0..5).rev().filter(|bit| lanes & (1 << bit) != 0) {
            let other = self.one(
                ods::gpu::shuffle(
                    self.ctx,
                    v.r#type(),
                    IntegerType::new(self.ctx, 1).into(),
                    acc,
                    self.constant(i32, 1 << bit),
                    width,
                    xor,
                    self.loc,
                )
                .into(),
            );
            acc = combine(self, acc, other);
        }
        acc
    }
    /// `gpu.barrier`: the block's threads meet.
    pub fn sync_threads(&self) {
        self.push(ods::gpu::barrier(self.ctx, self.loc).into());
    }

    /// Appends `gpu.func @name(parameters) kernel` of `threads` threads
    /// per block, launched on at most `most_blocks` blocks, to `module` (a
    /// gpu.module's body); `fill` writes its body
    /// (the `gpu.return` follows), with the parameters as its block's
    /// arguments.
    pub fn kernel(
        &self,
        module: Blk<'c>,
        name: &str,
        parameters: &[Type<'c>],
        (threads, most_blocks): (u64, u64),
        fill: impl FnOnce(&Self),
    ) -> Op<'c> {
        let entry = Block::new(
            &parameters
                .iter()
                .map(|t| (*t, self.loc))
                .collect::<Vec<_>>(),
        );
        let body = self.into_block(building(&entry));
        fill(&body);
        body.push(ods::gpu::r#return(self.ctx, &[], self.loc).into());
        let region = Region::new();
        region.append_block(entry);
        let function_type = FunctionType::new(self.ctx, parameters, &[]);
        let mut func: Operation = ods::gpu::func(
            self.ctx,
            region,
            TypeAttribute::new(function_type.into()),
            self.loc,
        )
        .into();
        func.set_attribute("sym_name", StringAttribute::new(self.ctx, name).into());
        func.set_attribute("gpu.kernel", Attribute::unit(self.ctx));
        // What the C++ builder sets: passes that add workgroup memory (the
        // lowering of gpu.all_reduce) read it.
        func.set_attribute(
            "workgroup_attributions",
            IntegerAttribute::new(self.i64(), 0).into(),
        );
        let block = DenseI32ArrayAttribute::new(self.ctx, &[threads as i32, 1, 1]);
        func.set_attribute("gpu.known_block_size", block.into());
        // For ptxas (`.reqntid`, `.minnctapersm`): the block size, and the
        // blocks an SM must hold at once for a grid of `most_blocks` to run
        // in one wave, which bounds the registers.
        func.set_attribute("nvvm.reqntid", block.into());
        let per_sm = symm_protocol::blocks_per_sm(most_blocks as usize);
        func.set_attribute(
            "nvvm.minctasm",
            IntegerAttribute::new(self.int_type(32), i64::from(per_sm)).into(),
        );
        self.into_block(module).push(func)
    }

    // symm_mem device ops.

    pub fn pool_rank(&self, pool: Val<'c>) -> Val<'c> {
        self.one(symm_mem::pool_rank(self.ctx, self.index(), pool, self.loc).into())
    }
    pub fn pool_world_size(&self, pool: Val<'c>) -> Val<'c> {
        self.one(symm_mem::pool_world_size(self.ctx, self.index(), pool, self.loc).into())
    }
    pub fn peer_ptr(&self, pool: Val<'c>, peer: Val<'c>, local: Val<'c>) -> Val<'c> {
        self.one(symm_mem::peer_ptr(self.ctx, self.ptr(), pool, peer, local, self.loc).into())
    }
    pub fn staging_slot(&self, pool: Val<'c>, peer: Val<'c>, slot: Val<'c>) -> Val<'c> {
        self.one(symm_mem::staging_slot(self.ctx, self.ptr(), pool, peer, slot, self.loc).into())
    }
    /// Region `(slot, source)` of rank `peer`'s Lamport area.
    pub fn lamport_region(
        &self,
        pool: Val<'c>,
        peer: Val<'c>,
        slot: Val<'c>,
        source: Val<'c>,
    ) -> Val<'c> {
        self.one(
            symm_mem::lamport_region(self.ctx, self.ptr(), pool, peer, slot, source, self.loc)
                .into(),
        )
    }
    /// Whether `slices` slices of `elements` (an i64) 16-bit values each
    /// fit in one region of the pool's Lamport area, one after the other,
    /// within `symm_protocol::LAMPORT_SLICES_MAX` bytes (an i1). The same
    /// on every rank: pools and calls are. A split-K all-reduce then sends
    /// each slice on its own (rounded on its own), which the matmul that
    /// makes them can do itself as it writes them.
    pub fn lamport_slices_fit(&self, pool: Val<'c>, elements: Val<'c>, slices: u64) -> Val<'c> {
        let me = self.pool_rank(pool);
        let (zero, one) = (self.c_index(0), self.c_index(1));
        let i64 = self.i64();
        // Parity 1's first region follows parity 0's `world` regions.
        let first = self.ptr_to_int(self.lamport_region(pool, me, zero, zero), i64);
        let second = self.ptr_to_int(self.lamport_region(pool, me, one, zero), i64);
        let world = self.cast(self.pool_world_size(pool), i64);
        let needed = self.mul(elements, self.c64(2 * slices as i64));
        let region = self.div(self.sub(second, first), world);
        let room = self.min(region, self.c64(symm_protocol::LAMPORT_SLICES_MAX as i64));
        self.cmp(CmpiPredicate::Ule, needed, room)
    }
    /// What a Lamport sender stores: `value()` (16-bit floats, a vector of
    /// `lanes` or with `None` a scalar of `element`) with each lane that
    /// holds the sentinel (`symm_protocol::LAMPORT_SENTINEL`, -0.0) as +0.0.
    pub fn lamport_sendable(
        &self,
        lanes: Option<u64>,
        element: Type<'c>,
        value: impl FnOnce(&Self) -> Val<'c>,
    ) -> Val<'c> {
        let i16 = self.int_type(16);
        let sentinel_bits = symm_protocol::LAMPORT_SENTINEL as i16;
        let (ty, bits, sentinel) = match lanes {
            Some(lanes) => (
                self.vector(lanes, element),
                self.vector(lanes, i16),
                self.splat(lanes, i16, i64::from(sentinel_bits)),
            ),
            None => (element, i16, self.constant(i16, i64::from(sentinel_bits))),
        };
        let value = value(self);
        let is_sentinel = self.cmp(CmpiPredicate::Eq, self.bitcast(value, bits), sentinel);
        self.select(is_sentinel, self.zero(ty), value)
    }
    /// For a call whose counter holds `counter` (an i32): its parity (an
    /// index, 0 or 1: which of two slots or Lamport regions it takes) and
    /// the counter's value after it.
    pub fn parity_and_next(&self, counter: Val<'c>) -> (Val<'c>, Val<'c>) {
        let one = self.constant(self.int_type(32), 1);
        let parity = self.cast(self.extui(self.and(counter, one), self.i64()), self.index());
        (parity, self.add(counter, one))
    }
    /// Channel `channel`'s Lamport call counter in the pool's table of
    /// counters (`symm_protocol::LAMPORT_EPOCHS`).
    pub fn lamport_counter(&self, channel: Val<'c>) -> Val<'c> {
        self.add(channel, self.c_index(symm_protocol::LAMPORT_EPOCHS as i64))
    }
    /// Channel `channel`'s Lamport stamp in the pool's table of counters
    /// (`symm_protocol::LAMPORT_STAMPS`).
    pub fn lamport_stamp(&self, channel: Val<'c>) -> Val<'c> {
        self.add(channel, self.c_index(symm_protocol::LAMPORT_STAMPS as i64))
    }
    /// The `ty` (16-bit floats) at `address` once no lane is the sentinel.
    pub fn lamport_wait(&self, pool: Val<'c>, address: Val<'c>, ty: Type<'c>) -> Val<'c> {
        self.one(symm_mem::lamport_wait(self.ctx, ty, pool, address, self.loc).into())
    }
    pub fn barrier(&self, pool: Val<'c>, channel: Val<'c>) {
        self.push(symm_mem::barrier(self.ctx, pool, channel, self.loc).into());
    }
    pub fn add_counter(&self, pool: Val<'c>, peer: Val<'c>, channel: Val<'c>) {
        self.push(symm_mem::add_counter(self.ctx, pool, peer, channel, self.loc).into());
    }
    pub fn wait_counter(&self, pool: Val<'c>, peer: Val<'c>, channel: Val<'c>, target: Val<'c>) {
        self.push(symm_mem::wait_counter(self.ctx, pool, peer, channel, target, self.loc).into());
    }
    pub fn epoch(&self, pool: Val<'c>, channel: Val<'c>) -> Val<'c> {
        self.one(symm_mem::epoch(self.ctx, self.int_type(32), pool, channel, self.loc).into())
    }
    pub fn set_epoch(&self, pool: Val<'c>, channel: Val<'c>, epoch: Val<'c>) {
        self.push(symm_mem::set_epoch(self.ctx, pool, channel, epoch, self.loc).into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use melior::{dialect::DialectRegistry, ir::BlockLike, utility::register_all_dialects};

    #[test]
    fn a_gep_stays_in_its_base_pointers_address_space() {
        let registry = DialectRegistry::new();
        register_all_dialects(&registry);
        let context = Context::new();
        context.append_dialect_registry(&registry);
        context.load_all_available_dialects();
        let location = Location::unknown(&context);
        let shared = llvm::r#type::pointer(&context, SHARED);
        let generic = llvm::r#type::pointer(&context, 0);
        let block = Block::new(&[(shared, location), (generic, location)]);
        let e = Emitter::new(&context, location, building(&block));
        let byte = e.int_type(8);
        let at = e.constant(e.i64(), 16);
        let (in_shared, in_generic) = (
            block.argument(0).expect("argument").into(),
            block.argument(1).expect("argument").into(),
        );
        assert_eq!(e.gep(in_shared, at, byte).r#type(), shared);
        assert_eq!(e.gep(in_generic, at, byte).r#type(), generic);
    }
}
