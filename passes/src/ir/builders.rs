//! Creation of the few ops the passes insert, at an insertion point.

use crate::ir::{Attr, Blk, Ctx, Op, OpBuilder, Ty, Val, index_constant};
use mlir_sys::MlirLocation;

/// `arith.cmpi` predicates (their I64EnumAttr values).
#[derive(Clone, Copy, Debug)]
pub enum CmpI {
    Eq = 0,
    Ne = 1,
    Ult = 6,
    Ule = 7,
}

/// Where new ops go. `After` advances past each op inserted, so ops come
/// out in creation order.
#[derive(Clone, Copy, Debug)]
pub enum At {
    Before(Op),
    After(Op),
    BlockStart(Blk),
}

/// Inserts ops at a point, with one location.
pub struct Builder {
    pub ctx: Ctx,
    pub loc: MlirLocation,
    at: At,
}

impl Builder {
    pub fn new(ctx: Ctx, loc: MlirLocation, at: At) -> Self {
        Self { ctx, loc, at }
    }

    /// Builds before `op`, with its location.
    pub fn before(op: Op) -> Self {
        Self::new(op.ctx(), op.loc(), At::Before(op))
    }

    pub fn insert(&mut self, op: Op) -> Op {
        match self.at {
            At::Before(anchor) => anchor.insert_before(op),
            At::After(anchor) => {
                anchor.insert_after(op);
                self.at = At::After(op);
            }
            At::BlockStart(block) => {
                match block.first_op() {
                    Some(first) => first.insert_before(op),
                    None => block.append(op),
                }
                self.at = At::After(op);
            }
        }
        op
    }

    fn one(&mut self, op: Op) -> Val {
        self.insert(op).result(0)
    }

    pub fn index(&mut self, value: i64) -> Val {
        let op = index_constant(self.ctx, self.loc, value);
        self.one(op)
    }

    /// `arith.constant value : ty` for an integer type `ty`.
    pub fn int_constant(&mut self, ty: Ty, value: i64) -> Val {
        self.constant_of(ty, self.ctx.int_attr(ty, value))
    }

    /// `arith.constant value : ty` for a float type `ty`.
    pub fn float_constant(&mut self, ty: Ty, value: f64) -> Val {
        self.constant_of(ty, self.ctx.float_attr(ty, value))
    }

    /// `arith.constant attr : ty`.
    pub fn constant_of(&mut self, ty: Ty, attr: Attr) -> Val {
        let op = OpBuilder::new("arith.constant", self.loc)
            .results(&[ty])
            .attr("value", attr)
            .build();
        self.one(op)
    }

    /// `arith.cmpi <predicate>, lhs, rhs`.
    pub fn cmpi(&mut self, predicate: CmpI, lhs: Val, rhs: Val) -> Val {
        let i1 = self.ctx.int_type(1);
        let predicate = self.ctx.i64(predicate as i64);
        let op = OpBuilder::new("arith.cmpi", self.loc)
            .operands(&[lhs, rhs])
            .results(&[i1])
            .attr("predicate", predicate)
            .build();
        self.one(op)
    }

    /// `scf.if %condition` without results: its then block (and else
    /// block, if asked for) holds only its `scf.yield`.
    pub fn if_then(&mut self, condition: Val, with_else: bool) -> Op {
        let op = OpBuilder::new("scf.if", self.loc)
            .operands(&[condition])
            .regions(1 + usize::from(with_else))
            .empty_regions(usize::from(!with_else))
            .build();
        for region in 0..op.num_regions() {
            for block in op.region_blocks(region) {
                block.append(OpBuilder::new("scf.yield", self.loc).build());
            }
        }
        self.insert(op)
    }

    pub fn dim(&mut self, source: Val, dim: usize) -> Val {
        let index = self.index(dim as i64);
        let op = OpBuilder::new("memref.dim", self.loc)
            .operands(&[source, index])
            .results(&[self.ctx.index_type()])
            .build();
        self.one(op)
    }

    /// The dynamic sizes of `ty`, read from `like`, which has the same shape.
    pub fn dynamic_sizes_of(&mut self, like: Val, ty: Ty) -> Vec<Val> {
        ty.shape()
            .iter()
            .enumerate()
            .filter(|(_, size)| size.is_none())
            .map(|(dim, _)| self.dim(like, dim))
            .collect()
    }

    pub fn muli(&mut self, lhs: Val, rhs: Val) -> Val {
        self.binary("arith.muli", lhs, rhs)
    }

    pub fn minui(&mut self, lhs: Val, rhs: Val) -> Val {
        self.binary("arith.minui", lhs, rhs)
    }

    /// A binary arith op whose result has its operands' type.
    fn binary(&mut self, name: &str, lhs: Val, rhs: Val) -> Val {
        let op = OpBuilder::new(name, self.loc)
            .operands(&[lhs, rhs])
            .results(&[lhs.ty()])
            .build();
        self.one(op)
    }

    /// `memref.alloc(sizes) : ty`, optionally aligned.
    pub fn alloc(&mut self, ty: Ty, sizes: &[Val], alignment: Option<i64>) -> Val {
        let segments = self.ctx.segment_sizes(&[sizes.len(), 0]);
        let mut op = OpBuilder::new("memref.alloc", self.loc)
            .operands(sizes)
            .results(&[ty])
            .attr("operandSegmentSizes", segments);
        if let Some(alignment) = alignment {
            op = op.attr("alignment", self.ctx.i64(alignment));
        }
        self.one(op.build())
    }

    pub fn dealloc(&mut self, buffer: Val) -> Op {
        let op = OpBuilder::new("memref.dealloc", self.loc)
            .operands(&[buffer])
            .build();
        self.insert(op)
    }

    pub fn copy(&mut self, source: Val, target: Val) -> Op {
        let op = OpBuilder::new("memref.copy", self.loc)
            .operands(&[source, target])
            .build();
        self.insert(op)
    }

    pub fn memory_space_cast(&mut self, source: Val, to: Ty) -> Val {
        let op = OpBuilder::new("memref.memory_space_cast", self.loc)
            .operands(&[source])
            .results(&[to])
            .build();
        self.one(op)
    }

    /// `memref.cast` between compatible layouts and shapes.
    pub fn cast(&mut self, source: Val, to: Ty) -> Val {
        let op = OpBuilder::new("memref.cast", self.loc)
            .operands(&[source])
            .results(&[to])
            .build();
        self.one(op)
    }

    /// `memref.view %pool[%offset][sizes] : pool to ty` (`sizes`: the
    /// dynamic ones of `ty`).
    pub fn view(&mut self, pool: Val, offset: u64, ty: Ty, sizes: &[Val]) -> Val {
        let offset = self.index(offset as i64);
        let mut operands = vec![pool, offset];
        operands.extend_from_slice(sizes);
        let op = OpBuilder::new("memref.view", self.loc)
            .operands(&operands)
            .results(&[ty])
            .build();
        self.one(op)
    }

    /// A structured linalg op named `name` (`linalg.matmul`,
    /// `linalg.batch_matmul`) of `inputs` into `output`, on memrefs, with
    /// the body linalg defines for it.
    pub fn linalg_named(&mut self, name: &str, inputs: &[Val], output: Val) -> Op {
        let mut operands = inputs.to_vec();
        operands.push(output);
        let segments = self.ctx.segment_sizes(&[inputs.len(), 1]);
        let op = OpBuilder::new(name, self.loc)
            .operands(&operands)
            .attr("operandSegmentSizes", segments)
            .empty_regions(1)
            .build();
        // SAFETY: a live op of a named linalg kind with an empty region.
        unsafe { mlir_sys::mlirLinalgFillBuiltinNamedOpRegion(op.raw()) };
        self.insert(op)
    }

    /// `memref.reinterpret_cast` of `source` to `ty`, a strided memref type
    /// with static strides and offset: its sizes are `ty`'s, the dynamic
    /// ones given in `sizes`.
    pub fn reinterpret_cast(&mut self, source: Val, ty: Ty, sizes: &[Val]) -> Val {
        let (strides, offset) = ty
            .strides_and_offset()
            .expect("a strided memref type with static strides");
        let strides: Vec<i64> = strides.into_iter().map(|s| s.unwrap_or(i64::MIN)).collect();
        let shape: Vec<i64> = ty
            .shape()
            .into_iter()
            .map(|d| d.unwrap_or(i64::MIN))
            .collect();
        let segments = self.ctx.segment_sizes(&[1, 0, sizes.len(), 0]);
        let mut operands = vec![source];
        operands.extend_from_slice(sizes);
        let op = OpBuilder::new("memref.reinterpret_cast", self.loc)
            .operands(&operands)
            .results(&[ty])
            .attr("static_offsets", self.ctx.i64_array(&[offset.unwrap_or(0)]))
            .attr("static_sizes", self.ctx.i64_array(&shape))
            .attr("static_strides", self.ctx.i64_array(&strides))
            .attr("operandSegmentSizes", segments)
            .build();
        self.one(op)
    }

    /// `memref.expand_shape` of a 1-D `source` into `ty` (every dimension
    /// from the one), the dynamic sizes of `ty` given in `sizes`.
    pub fn expand_flat(&mut self, source: Val, ty: Ty, sizes: &[Val]) -> Val {
        let shape: Vec<i64> = ty
            .shape()
            .into_iter()
            .map(|d| d.unwrap_or(i64::MIN))
            .collect();
        // One group holding every dimension: [[0, 1, ..., rank - 1]].
        let i64_ty = self.ctx.int_type(64);
        let group: Vec<Attr> = (0..shape.len())
            .map(|d| self.ctx.int_attr(i64_ty, d as i64))
            .collect();
        let reassociation = self.ctx.array_attr(&[self.ctx.array_attr(&group)]);
        let output_shape = self.ctx.i64_array(&shape);
        let mut operands = vec![source];
        operands.extend_from_slice(sizes);
        let op = OpBuilder::new("memref.expand_shape", self.loc)
            .operands(&operands)
            .results(&[ty])
            .attr("reassociation", reassociation)
            .attr("static_output_shape", output_shape)
            .build();
        self.one(op)
    }

    pub fn symm_alloc(&mut self, ty: Ty, sizes: &[Val]) -> Val {
        let op = OpBuilder::new("symm_mem.alloc", self.loc)
            .operands(sizes)
            .results(&[ty])
            .build();
        self.one(op)
    }

    pub fn symm_dealloc(&mut self, buffer: Val) -> Op {
        let op = OpBuilder::new("symm_mem.dealloc", self.loc)
            .operands(&[buffer])
            .build();
        self.insert(op)
    }

    pub fn world_size(&mut self, group: Attr) -> Val {
        let op = OpBuilder::new("symm_mem.world_size", self.loc)
            .results(&[self.ctx.index_type()])
            .attr("group", group)
            .build();
        self.one(op)
    }

    /// `symm_mem.pool_of %buffer`: the kernel handle of the buffer's pool.
    pub fn pool_of(&mut self, buffer: Val) -> Val {
        let op = OpBuilder::new("symm_mem.pool_of", self.loc)
            .operands(&[buffer])
            .results(&[Ty::pool(self.ctx)])
            .build();
        self.one(op)
    }

    /// `symm_mem.with_allocator allocator -> types { }`, its block empty.
    pub fn with_allocator(&mut self, allocator: Attr, types: &[Ty]) -> Op {
        let op = OpBuilder::new("symm_mem.with_allocator", self.loc)
            .results(types)
            .attr("allocator", allocator)
            .regions(1)
            .build();
        self.insert(op)
    }

    /// `vector.load memref[at] : ty`, `alignment` bytes aligned.
    pub fn vector_load(&mut self, memref: Val, at: &[Val], ty: Ty, alignment: i64) -> Val {
        let operands: Vec<Val> = std::iter::once(memref).chain(at.iter().copied()).collect();
        let op = OpBuilder::new("vector.load", self.loc)
            .operands(&operands)
            .results(&[ty])
            .attr("alignment", self.ctx.i64(alignment))
            .build();
        self.one(op)
    }

    /// `vector.extract vector[lane]`.
    pub fn vector_extract(&mut self, vector: Val, lane: i64) -> Val {
        let op = OpBuilder::new("vector.extract", self.loc)
            .operands(&[vector])
            .results(&[vector.ty().element()])
            .attr("static_position", self.ctx.i64_array(&[lane]))
            .build();
        self.one(op)
    }

    /// `memref.get_global @name : ty`.
    pub fn memref_get_global(&mut self, name: &str, ty: Ty) -> Val {
        let op = OpBuilder::new("memref.get_global", self.loc)
            .results(&[ty])
            .attr("name", self.ctx.symbol(name))
            .build();
        self.one(op)
    }

    /// `memref.alloca() : ty` (a static shape).
    pub fn alloca(&mut self, ty: Ty) -> Val {
        let op = OpBuilder::new("memref.alloca", self.loc)
            .results(&[ty])
            .attr("operandSegmentSizes", self.ctx.segment_sizes(&[0, 0]))
            .build();
        self.one(op)
    }

    /// `memref.store value, memref[indices]`.
    pub fn store(&mut self, value: Val, memref: Val, indices: &[Val]) -> Op {
        let mut operands = vec![value, memref];
        operands.extend_from_slice(indices);
        let op = OpBuilder::new("memref.store", self.loc)
            .operands(&operands)
            .build();
        self.insert(op)
    }

    /// A one-operand conversion to `to`.
    pub fn convert(&mut self, cast: Cast, value: Val, to: Ty) -> Val {
        let name = match cast {
            Cast::PtrToInt => "llvm.ptrtoint",
            Cast::Bitcast => "arith.bitcast",
            Cast::ExtUi => "arith.extui",
            Cast::IndexCast => "arith.index_cast",
            Cast::Unrealized => "builtin.unrealized_conversion_cast",
        };
        let op = OpBuilder::new(name, self.loc)
            .operands(&[value])
            .results(&[to])
            .build();
        self.one(op)
    }

    pub fn get_global(&mut self, name: &str, ty: Ty) -> Val {
        let op = OpBuilder::new("symm_mem.get_global", self.loc)
            .results(&[ty])
            .attr("name", self.ctx.symbol(name))
            .build();
        self.one(op)
    }

    /// `symm_mem.global @name alignment(a) : ty`.
    pub fn global(&mut self, name: &str, ty: Ty, alignment: Option<i64>) -> Op {
        let mut op = OpBuilder::new("symm_mem.global", self.loc)
            .attr("sym_name", self.ctx.string(name))
            .attr("type", self.ctx.type_attr(ty));
        if let Some(alignment) = alignment {
            op = op.attr("alignment", self.ctx.i64(alignment));
        }
        self.insert(op.build())
    }
}

/// The casts `Builder::convert` builds.
#[derive(Clone, Copy, Debug)]
pub enum Cast {
    PtrToInt,
    Bitcast,
    ExtUi,
    IndexCast,
    /// `builtin.unrealized_conversion_cast`, for a later pass to resolve.
    Unrealized,
}

/// `vector.store vector, memref[at]`, aligned as `alignment` says.
pub fn vector_store(
    loc: MlirLocation,
    vector: Val,
    memref: Val,
    at: &[Val],
    alignment: Attr,
) -> Op {
    let operands: Vec<Val> = [vector, memref]
        .into_iter()
        .chain(at.iter().copied())
        .collect();
    OpBuilder::new("vector.store", loc)
        .operands(&operands)
        .attr("alignment", alignment)
        .build()
}

/// `func.func @name` of `function_type` with one empty block and the
/// attributes `extra` (visibility, argument attributes, markers).
pub fn func(
    ctx: Ctx,
    loc: MlirLocation,
    name: &str,
    function_type: Ty,
    extra: &[(&str, Attr)],
) -> Op {
    let mut op = OpBuilder::new("func.func", loc)
        .attr("sym_name", ctx.string(name))
        .attr("function_type", ctx.type_attr(function_type))
        .regions(1);
    for (attr, value) in extra {
        op = op.attr(attr, *value);
    }
    op.build()
}

/// `scf.for %i = lower to upper step step iter_args(inits) -> results`,
/// its body block without arguments yet.
pub fn scf_for(
    loc: MlirLocation,
    [lower, upper, step]: [Val; 3],
    inits: &[Val],
    results: &[Ty],
) -> Op {
    let mut operands = vec![lower, upper, step];
    operands.extend_from_slice(inits);
    OpBuilder::new("scf.for", loc)
        .operands(&operands)
        .results(results)
        .regions(1)
        .build()
}

/// `gpu.all_reduce kind %value uniform : result`.
pub fn gpu_all_reduce(ctx: Ctx, loc: MlirLocation, value: Val, result: Ty, kind: Attr) -> Op {
    OpBuilder::new("gpu.all_reduce", loc)
        .operands(&[value])
        .results(&[result])
        .attr("op", kind)
        .attr("uniform", ctx.unit())
        .empty_regions(1)
        .build()
}

/// `gpu.launch blocks(grid) threads(block)`, sizes x, y, z each; its body
/// block without arguments yet.
pub fn gpu_launch(ctx: Ctx, loc: MlirLocation, grid: [Val; 3], block: [Val; 3]) -> Op {
    let segments = ctx.segment_sizes(&[0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]);
    let operands: Vec<Val> = grid.into_iter().chain(block).collect();
    OpBuilder::new("gpu.launch", loc)
        .operands(&operands)
        .attr("operandSegmentSizes", segments)
        .regions(1)
        .build()
}

/// `symm_mem.all_reduce_epilogue_out` of `operands` grouped by
/// `segments`, with an empty region for the epilogue.
pub fn all_reduce_epilogue_out(
    loc: MlirLocation,
    operands: &[Val],
    segments: Attr,
    [reduction, group, algorithm]: [Attr; 3],
) -> Op {
    OpBuilder::new("symm_mem.all_reduce_epilogue_out", loc)
        .operands(operands)
        .attr("operandSegmentSizes", segments)
        .attr("reduction", reduction)
        .attr("group", group)
        .attr("algorithm", algorithm)
        .empty_regions(1)
        .build()
}

/// `symm_mem.yield operands...`.
pub fn symm_yield(loc: MlirLocation, operands: &[Val]) -> Op {
    OpBuilder::new("symm_mem.yield", loc)
        .operands(operands)
        .build()
}

/// `memref.global "private" @name : ty = initial` (module level).
pub fn memref_global(ctx: Ctx, loc: MlirLocation, name: &str, ty: Ty, initial: Attr) -> Op {
    OpBuilder::new("memref.global", loc)
        .attr("sym_name", ctx.string(name))
        .attr("sym_visibility", ctx.string("private"))
        .attr("type", ctx.type_attr(ty))
        .attr("initial_value", initial)
        .build()
}

/// Replaces `block`'s terminator with an op `name` of the same operands
/// (a region moving to a parent with another terminator).
pub fn replace_terminator(block: Blk, name: &str) {
    if let Some(old) = block.terminator() {
        let new = OpBuilder::new(name, old.loc())
            .operands(&old.operands())
            .build();
        old.insert_before(new);
        old.erase();
    }
}

// Ops built on their own, for the caller to place: one typed function per
// op, so that passes name no op by string.

/// `func.return operands...`.
pub fn func_return(loc: MlirLocation, operands: &[Val]) -> Op {
    OpBuilder::new("func.return", loc)
        .operands(operands)
        .build()
}

/// `func.call @callee(operands) : results`.
pub fn func_call(loc: MlirLocation, callee: Attr, operands: &[Val], results: &[Ty]) -> Op {
    OpBuilder::new("func.call", loc)
        .operands(operands)
        .results(results)
        .attr("callee", callee)
        .build()
}

/// `cudagraph.launch @callee(operands) : results`.
pub fn cudagraph_launch(loc: MlirLocation, callee: Attr, operands: &[Val], results: &[Ty]) -> Op {
    OpBuilder::new("cudagraph.launch", loc)
        .operands(operands)
        .results(results)
        .attr("callee", callee)
        .build()
}
