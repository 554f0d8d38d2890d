//! Inserting ops at one place of a block through melior's typed builders,
//! for the passes written on melior's typed API: the ops the middle end
//! adds around the op it rewrites (allocations, copies, casts, sizes).

use super::builders::{self, Cast, CmpI, FloatOp, IntOp};
use super::melior_ext::OperationExt;
use melior::{
    Context,
    dialect::ods,
    ir::{
        Attribute, BlockLike, BlockRef, Location, Operation, OperationRef, Region, Type, Value,
        ValueLike,
        attribute::{
            ArrayAttribute, DenseI64ArrayAttribute, FlatSymbolRefAttribute, FloatAttribute,
            IntegerAttribute, StringAttribute, TypeAttribute,
        },
        operation::OperationLike,
        r#type::{DimSize, IntegerType, MemRefType, ShapedTypeLike},
    },
};

/// Where an `Inserter` puts the next op.
#[derive(Clone, Copy)]
enum At<'c, 'a> {
    Before(OperationRef<'c, 'a>),
    After(OperationRef<'c, 'a>),
    /// At the start of the block, then after each op inserted.
    Start,
}

/// Inserts ops at one place of a block (before an op, or after one and
/// then after each op it inserted), at a location.
pub struct Inserter<'c, 'a> {
    pub context: &'c Context,
    pub location: Location<'c>,
    block: BlockRef<'c, 'a>,
    at: At<'c, 'a>,
}

/// The static size of dimension `d` of `ty` (`None` where dynamic).
pub fn static_dim(ty: MemRefType, d: usize) -> Option<i64> {
    match ty.dim_size(d).ok()? {
        DimSize::Static(size) => i64::try_from(size).ok(),
        DimSize::Dynamic => None,
    }
}

/// `ty`'s shape, `None` for a dynamic size.
pub fn dims(ty: MemRefType) -> Vec<Option<i64>> {
    (0..ty.rank()).map(|d| static_dim(ty, d)).collect()
}

/// `ty`'s shape, dynamic sizes as MLIR's `kDynamic`.
pub fn shape_of(ty: MemRefType) -> Vec<i64> {
    (0..ty.rank())
        .map(|d| static_dim(ty, d).unwrap_or(i64::MIN))
        .collect()
}

impl<'c, 'a> Inserter<'c, 'a> {
    /// Before `op`, at its location. `None` for an op outside a block.
    pub fn before(context: &'c Context, op: OperationRef<'c, 'a>) -> Option<Self> {
        Some(Self {
            context,
            location: op.location(),
            block: op.block()?,
            at: At::Before(op),
        })
    }

    /// After `op` (and after each op inserted since), at its location.
    pub fn after(context: &'c Context, op: OperationRef<'c, 'a>) -> Option<Self> {
        Some(Self {
            at: At::After(op),
            ..Self::before(context, op)?
        })
    }

    /// At the start of `block` (then after each op inserted), at
    /// `location`.
    pub fn at_start(context: &'c Context, location: Location<'c>, block: BlockRef<'c, 'a>) -> Self {
        Self {
            context,
            location,
            block,
            at: At::Start,
        }
    }

    /// After `op` (and after each op inserted since), at `location`.
    /// `None` for an op outside a block.
    pub fn after_at(
        context: &'c Context,
        location: Location<'c>,
        op: OperationRef<'c, 'a>,
    ) -> Option<Self> {
        Some(Self {
            location,
            ..Self::after(context, op)?
        })
    }

    /// Before `op`, at `location`. `None` for an op outside a block.
    pub fn before_at(
        context: &'c Context,
        location: Location<'c>,
        op: OperationRef<'c, 'a>,
    ) -> Option<Self> {
        Some(Self {
            location,
            ..Self::before(context, op)?
        })
    }

    /// Inserts `op`.
    pub fn put(&mut self, op: Operation<'c>) -> OperationRef<'c, 'a> {
        match self.at {
            At::Before(anchor) => self.block.insert_operation_before(anchor, op),
            At::After(anchor) => {
                let inserted = self.block.insert_operation_after(anchor, op);
                self.at = At::After(inserted);
                inserted
            }
            At::Start => {
                let inserted = match self.block.first_operation() {
                    Some(first) => self.block.insert_operation_before(first, op),
                    None => self.block.append_operation(op),
                };
                self.at = At::After(inserted);
                inserted
            }
        }
    }

    /// Inserts `op`; its first result.
    pub fn value(&mut self, op: Operation<'c>) -> Value<'c, 'a> {
        self.put(op)
            .result(0)
            .expect("internal: a built op has its result")
            .into()
    }

    /// `arith.constant value : index`.
    pub fn index(&mut self, value: i64) -> Value<'c, 'a> {
        let index = Type::index(self.context);
        let value = IntegerAttribute::new(index, value).into();
        self.value(ods::arith::constant(self.context, index, value, self.location).into())
    }

    /// `memref.dim source, at`.
    pub fn dim(&mut self, source: Value<'c, '_>, at: usize) -> Value<'c, 'a> {
        let at = self.index(at as i64);
        let index = Type::index(self.context);
        self.value(ods::memref::dim(self.context, index, source, at, self.location).into())
    }

    /// The dynamic sizes of `ty`, read from `like`, which has its shape.
    pub fn dynamic_sizes_of(&mut self, like: Value<'c, '_>, ty: MemRefType) -> Vec<Value<'c, 'a>> {
        (0..ty.rank())
            .filter(|&d| static_dim(ty, d).is_none())
            .map(|d| self.dim(like, d))
            .collect()
    }

    /// `memref.alloc(sizes) : ty`.
    pub fn alloc(&mut self, ty: MemRefType<'c>, sizes: &[Value<'c, '_>]) -> Value<'c, 'a> {
        self.alloc_with(ty, sizes, None)
    }

    /// `memref.alloc() {alignment}` of a statically shaped `ty`.
    pub fn aligned_alloc(&mut self, ty: MemRefType<'c>, alignment: i64) -> Value<'c, 'a> {
        self.alloc_with(ty, &[], Some(alignment))
    }

    /// `memref.alloc(sizes) : ty`, aligned where `alignment` says.
    fn alloc_with(
        &mut self,
        ty: MemRefType<'c>,
        sizes: &[Value<'c, '_>],
        alignment: Option<i64>,
    ) -> Value<'c, 'a> {
        let alloc = ods::memref::AllocOperation::builder(self.context, self.location)
            .memref(ty.into())
            .dynamic_sizes(sizes)
            .symbol_operands(&[]);
        let alloc: Operation = match alignment {
            Some(alignment) => alloc
                .alignment(self.i64_attribute(alignment))
                .build()
                .into(),
            None => alloc.build().into(),
        };
        let alloc = self.put(alloc);
        alloc.set_operand_segments(&[sizes.len(), 0]);
        alloc
            .result(0)
            .expect("internal: an alloc has its result")
            .into()
    }

    /// `memref.view pool[offset][sizes] : ty`: `ty` at byte `offset` of an
    /// `i8` pool, its dynamic sizes given in `sizes`.
    pub fn view(
        &mut self,
        pool: Value<'c, '_>,
        offset: u64,
        ty: MemRefType<'c>,
        sizes: &[Value<'c, '_>],
    ) -> Value<'c, 'a> {
        let offset = self.index(offset as i64);
        let location = self.location;
        self.value(super::builders::memref_view(
            location,
            pool,
            offset,
            ty.into(),
            sizes,
        ))
    }

    /// `symm_mem.global @name alignment(a) : ty`.
    pub fn symm_global(
        &mut self,
        name: &str,
        ty: MemRefType<'c>,
        alignment: i64,
    ) -> OperationRef<'c, 'a> {
        let (c, location) = (self.context, self.location);
        let global = self.put(
            symm_dialects::symm_mem::global(
                c,
                StringAttribute::new(c, name),
                TypeAttribute::new(ty.into()),
                location,
            )
            .into(),
        );
        global.set_attribute_to("alignment", self.i64_attribute(alignment).into());
        global
    }

    /// `memref.expand_shape` of a 1-D `source` into `ty` (every dimension
    /// from the one), the dynamic sizes of `ty` given in `sizes`.
    pub fn expand_flat(
        &mut self,
        source: Value<'c, '_>,
        ty: MemRefType<'c>,
        sizes: &[Value<'c, '_>],
    ) -> Value<'c, 'a> {
        let c = self.context;
        let i64_ty = IntegerType::new(c, 64).into();
        let group: Vec<Attribute> = (0..ty.rank())
            .map(|d| IntegerAttribute::new(i64_ty, d as i64).into())
            .collect();
        let reassociation = ArrayAttribute::new(c, &[ArrayAttribute::new(c, &group).into()]);
        let shape = DenseI64ArrayAttribute::new(c, &shape_of(ty)).into();
        let location = self.location;
        self.value(
            ods::memref::expand_shape(c, ty.into(), source, sizes, reassociation, shape, location)
                .into(),
        )
    }

    /// `memref.alloca() : ty` (a static shape).
    pub fn alloca(&mut self, ty: MemRefType<'c>) -> Value<'c, 'a> {
        let (c, l) = (self.context, self.location);
        self.value(builders::alloca_op(c, l, ty.into()))
    }

    /// `memref.get_global @name : ty`.
    pub fn memref_get_global(&mut self, name: &str, ty: MemRefType<'c>) -> Value<'c, 'a> {
        let name = FlatSymbolRefAttribute::new(self.context, name);
        let (c, l) = (self.context, self.location);
        self.value(ods::memref::get_global(c, ty.into(), name, l).into())
    }

    /// `memref.dealloc buffer`.
    pub fn dealloc(&mut self, buffer: Value<'c, '_>) -> OperationRef<'c, 'a> {
        self.put(ods::memref::dealloc(self.context, buffer, self.location).into())
    }

    /// `memref.copy source, target`.
    pub fn copy(&mut self, source: Value<'c, '_>, target: Value<'c, '_>) -> OperationRef<'c, 'a> {
        self.put(ods::memref::copy(self.context, source, target, self.location).into())
    }

    /// `memref.memory_space_cast source : to`.
    pub fn memory_space_cast(&mut self, source: Value<'c, '_>, to: Type<'c>) -> Value<'c, 'a> {
        let location = self.location;
        self.value(ods::memref::memory_space_cast(self.context, to, source, location).into())
    }

    /// `memref.cast source : to` (compatible layouts and shapes).
    pub fn cast(&mut self, source: Value<'c, '_>, to: Type<'c>) -> Value<'c, 'a> {
        self.value(ods::memref::cast(self.context, to, source, self.location).into())
    }

    /// `symm_mem.alloc(sizes) : ty`.
    pub fn symm_alloc(&mut self, ty: Type<'c>, sizes: &[Value<'c, '_>]) -> Value<'c, 'a> {
        let location = self.location;
        self.value(symm_dialects::symm_mem::alloc(self.context, ty, sizes, location).into())
    }

    /// `symm_mem.dealloc buffer`.
    pub fn symm_dealloc(&mut self, buffer: Value<'c, '_>) -> OperationRef<'c, 'a> {
        let location = self.location;
        self.put(symm_dialects::symm_mem::dealloc(self.context, buffer, location).into())
    }

    /// `symm_mem.get_global @name : ty`.
    pub fn get_global(&mut self, name: &str, ty: Type<'c>) -> Value<'c, 'a> {
        let name = FlatSymbolRefAttribute::new(self.context, name);
        let location = self.location;
        self.value(symm_dialects::symm_mem::get_global(self.context, ty, name, location).into())
    }
}

/// The attributes of a fused all-reduce (`symm_mem.all_reduce_epilogue_out`,
/// `symm_mem.all_reduce_rows_out`).
pub struct FusedAttributes<'c> {
    pub reduction: Attribute<'c>,
    pub group: FlatSymbolRefAttribute<'c>,
    /// Present where fixed (the default is `auto`).
    pub algorithm: Option<Attribute<'c>>,
    /// Rows only: the statistic's initial value (an f32 attribute).
    pub row_init: Option<FloatAttribute<'c>>,
    pub split_k_max_rows: Option<Attribute<'c>>,
}

impl<'c, 'a> Inserter<'c, 'a> {
    /// A fused all-reduce of `kind` over `operands`, grouped by `segments`
    /// as its ODS definition orders them, with empty regions (the caller
    /// moves the bodies in).
    pub fn fused_all_reduce(
        &mut self,
        kind: super::builders::FusedAllReduce,
        operands: &[Value<'c, '_>],
        segments: &[usize],
        attributes: &FusedAttributes<'c>,
    ) -> OperationRef<'c, 'a> {
        use super::builders::FusedAllReduce;
        use melior::ir::Region;
        use symm_dialects::symm_mem;
        let (c, l) = (self.context, self.location);
        let (Some(&input), Some(&last)) = (operands.first(), operands.last()) else {
            panic!("internal: a fused all-reduce has operands");
        };
        // Built with its first and last operands; the groups are set below.
        let built: Operation = match kind {
            FusedAllReduce::Epilogue => symm_mem::all_reduce_epilogue_out(
                c,
                input,
                &[],
                last,
                Region::new(),
                attributes.reduction,
                attributes.group,
                l,
            )
            .into(),
            FusedAllReduce::Rows => symm_mem::all_reduce_rows_out(
                c,
                input,
                &[],
                input,
                &[],
                last,
                Region::new(),
                Region::new(),
                Region::new(),
                attributes.reduction,
                attributes
                    .row_init
                    .expect("internal: a rows op has its f32 row_init"),
                attributes.group,
                l,
            )
            .into(),
        };
        let op = self.put(built);
        op.set_operands_in_groups(operands, segments);
        if let Some(algorithm) = attributes.algorithm {
            op.set_attribute_to("algorithm", algorithm);
        }
        if let Some(max_rows) = attributes.split_k_max_rows {
            op.set_attribute_to("split_k_max_rows", max_rows);
        }
        op
    }
}

/// The same memref type in memory space `space` (`None`: the default),
/// its shape, element and layout kept.
pub fn with_memory_space<'c>(ty: MemRefType<'c>, space: Option<Attribute<'c>>) -> MemRefType<'c> {
    MemRefType::new(ty.element(), &shape_of(ty), Some(ty.layout()), space)
}

/// The kernels' ops: arithmetic, control flow, memory and vector accesses,
/// and the launch (`gpu_codegen`'s lowerings of linalg generics).
impl<'c, 'a> Inserter<'c, 'a> {
    /// `lhs <op> rhs` on integers of one type.
    pub fn int_op(&mut self, op: IntOp, x: Value<'c, '_>, y: Value<'c, '_>) -> Value<'c, 'a> {
        let (c, l) = (self.context, self.location);
        self.value(builders::int_op(c, l, op, x, y))
    }

    /// `arith.cmpi <predicate>, x, y`.
    pub fn cmpi(&mut self, predicate: CmpI, x: Value<'c, '_>, y: Value<'c, '_>) -> Value<'c, 'a> {
        let (c, l) = (self.context, self.location);
        self.value(builders::cmpi_op(c, l, predicate, x, y))
    }

    /// `lhs <op> rhs` on floats of one type.
    pub fn float_op(&mut self, op: FloatOp, x: Value<'c, '_>, y: Value<'c, '_>) -> Value<'c, 'a> {
        let (c, l) = (self.context, self.location);
        self.value(builders::float_op(c, l, op, x, y))
    }

    /// `arith.constant value : f32`.
    pub fn f32_constant(&mut self, value: f32) -> Value<'c, 'a> {
        let f32 = Type::float32(self.context);
        let value = FloatAttribute::new(self.context, f32, f64::from(value)).into();
        self.value(ods::arith::constant(self.context, f32, value, self.location).into())
    }

    /// A one-operand conversion of `x` to `to`.
    pub fn convert(&mut self, cast: Cast, x: Value<'c, '_>, to: Type<'c>) -> Value<'c, 'a> {
        let (c, l) = (self.context, self.location);
        self.value(builders::convert_op(c, l, cast, x, to))
    }

    /// `scf.if %condition` without results, its branches holding only their
    /// `scf.yield`.
    pub fn if_then(&mut self, condition: Value<'c, '_>, with_else: bool) -> OperationRef<'c, 'a> {
        let (c, l) = (self.context, self.location);
        self.put(builders::if_op(c, l, condition, with_else))
    }

    /// `scf.for %i = lower to upper step step iter_args(inits) -> results`,
    /// its body block without arguments yet.
    pub fn scf_for(
        &mut self,
        [lower, upper, step]: [Value<'c, '_>; 3],
        inits: &[Value<'c, '_>],
        results: &[Type<'c>],
    ) -> OperationRef<'c, 'a> {
        let for_op: Operation = ods::scf::ForOperation::builder(self.context, self.location)
            .results(results)
            .lower_bound(lower)
            .upper_bound(upper)
            .step(step)
            .init_args(inits)
            .region(builders::region_of_empty_block())
            .build()
            .into();
        self.put(for_op)
    }

    /// `scf.yield values...`.
    pub fn scf_yield(&mut self, values: &[Value<'c, '_>]) -> OperationRef<'c, 'a> {
        self.put(ods::scf::r#yield(self.context, values, self.location).into())
    }

    /// `memref.load memref[indices]`.
    pub fn load(&mut self, memref: Value<'c, '_>, indices: &[Value<'c, '_>]) -> Value<'c, 'a> {
        let element = MemRefType::try_from(memref.r#type())
            .expect("internal: a load from a memref")
            .element();
        let (c, l) = (self.context, self.location);
        self.value(builders::load_op(c, l, element, memref, indices))
    }

    /// `memref.store value, memref[indices]`.
    pub fn store(
        &mut self,
        value: Value<'c, '_>,
        memref: Value<'c, '_>,
        indices: &[Value<'c, '_>],
    ) -> OperationRef<'c, 'a> {
        let (c, l) = (self.context, self.location);
        self.put(builders::store_op(c, l, value, memref, indices))
    }

    /// `memref.extract_strided_metadata memref`: base, offset, sizes,
    /// strides.
    pub fn strided_metadata(&mut self, memref: Value<'c, '_>) -> OperationRef<'c, 'a> {
        let (c, l) = (self.context, self.location);
        self.put(ods::memref::extract_strided_metadata(c, memref, l).into())
    }

    /// The address of `memref`'s aligned pointer, as an index.
    pub fn aligned_pointer(&mut self, memref: Value<'c, '_>) -> Value<'c, 'a> {
        let (c, l) = (self.context, self.location);
        self.value(builders::aligned_pointer_op(c, l, memref))
    }

    /// `vector.load memref[at] : ty`, `alignment` bytes aligned.
    pub fn vector_load(
        &mut self,
        memref: Value<'c, '_>,
        at: &[Value<'c, '_>],
        ty: Type<'c>,
        alignment: i64,
    ) -> Value<'c, 'a> {
        let alignment = self.i64_attribute(alignment);
        let load: Operation = ods::vector::LoadOperation::builder(self.context, self.location)
            .result(ty)
            .base(memref)
            .indices(at)
            .alignment(alignment)
            .build()
            .into();
        self.value(load)
    }

    /// `vector.store vector, memref[at]`, `alignment` bytes aligned.
    pub fn vector_store(
        &mut self,
        vector: Value<'c, '_>,
        memref: Value<'c, '_>,
        at: &[Value<'c, '_>],
        alignment: i64,
    ) -> OperationRef<'c, 'a> {
        let alignment = self.i64_attribute(alignment);
        let store: Operation = ods::vector::StoreOperation::builder(self.context, self.location)
            .value_to_store(vector)
            .base(memref)
            .indices(at)
            .alignment(alignment)
            .build()
            .into();
        self.put(store)
    }

    /// `vector.extract vector[lane]`.
    pub fn vector_extract(&mut self, vector: Value<'c, '_>, lane: i64) -> Value<'c, 'a> {
        let position = DenseI64ArrayAttribute::new(self.context, &[lane]).into();
        let (c, l) = (self.context, self.location);
        self.value(ods::vector::extract(c, vector, &[], position, l).into())
    }

    /// `vector.from_elements elements : ty`.
    pub fn vector_from_elements(
        &mut self,
        elements: &[Value<'c, '_>],
        ty: Type<'c>,
    ) -> Value<'c, 'a> {
        let (c, l) = (self.context, self.location);
        self.value(ods::vector::from_elements(c, ty, elements, l).into())
    }

    /// `gpu.all_reduce kind %value uniform`, its body region empty.
    pub fn gpu_all_reduce(&mut self, value: Value<'c, '_>, kind: Attribute<'c>) -> Value<'c, 'a> {
        let all_reduce: Operation =
            ods::gpu::AllReduceOperation::builder(self.context, self.location)
                .value(value)
                .body(Region::new())
                .op(kind)
                .uniform(Attribute::unit(self.context))
                .build()
                .into();
        self.value(all_reduce)
    }

    /// `gpu.launch blocks(grid) threads(block)`, sizes x, y, z each; its
    /// body block without arguments yet.
    pub fn gpu_launch(
        &mut self,
        grid: [Value<'c, '_>; 3],
        block: [Value<'c, '_>; 3],
    ) -> OperationRef<'c, 'a> {
        let launch: Operation = ods::gpu::LaunchOperation::builder(self.context, self.location)
            .async_dependencies(&[])
            .grid_size_x(grid[0])
            .grid_size_y(grid[1])
            .grid_size_z(grid[2])
            .block_size_x(block[0])
            .block_size_y(block[1])
            .block_size_z(block[2])
            .body(builders::region_of_empty_block())
            .build()
            .into();
        let launch = self.put(launch);
        launch.set_operand_segments(&[0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]);
        launch
    }

    /// `gpu.terminator`.
    pub fn gpu_terminator(&mut self) -> OperationRef<'c, 'a> {
        self.put(ods::gpu::terminator(self.context, self.location).into())
    }

    fn i64_attribute(&self, value: i64) -> IntegerAttribute<'c> {
        builders::i64_attr(self.context, value)
    }
}
