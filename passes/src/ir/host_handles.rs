//! Host-side IR that `convert-symm-mem-to-runtime` inserts: calls into the
//! runtime's `symm_rt_*` ABI, pointers of memrefs, memrefs over runtime
//! pointers, kernel launches.

use crate::PassError;
use crate::{
    ir::bridge::{ty as t, value as v},
    ir::builders::{At, Builder, CmpI, IntOp, func_call, func_declaration},
    ir::{Ctx, Op, Ty, Val},
};
use melior::{dialect::ods, ir::attribute::DenseI64ArrayAttribute};
use std::collections::BTreeMap;
use symm_protocol::abi::{Kind, RuntimeCall};

pub use super::host::KERNEL_MODULE;

/// The runtime functions a module calls, with their types, declared once
/// at the end of the conversion.
#[derive(Default)]
pub struct Declarations {
    functions: BTreeMap<String, (Vec<Ty>, Vec<Ty>)>,
}

impl Declarations {
    /// `func.func private` for each function called.
    pub fn emit(&self, ctx: Ctx, module_block: crate::ir::Blk, loc: mlir_sys::MlirLocation) {
        for (name, (inputs, results)) in &self.functions {
            let function_type = ctx.function_type(inputs, results);
            module_block.append(func_declaration(ctx, loc, name, function_type));
        }
    }
}

/// Builds host IR before one op, for one function whose runtime handle is
/// `runtime`.
pub struct Host<'d> {
    pub b: Builder,
    /// The function's `symm_runtime*`; none before the runtime conversion
    /// (symm-mem-expand-collectives builds host IR that calls nothing).
    pub runtime: Option<Val>,
    decls: &'d mut Declarations,
}

/// The refusal of a buffer whose byte count no 64-bit size holds.
pub fn too_many_bytes(ty: Ty) -> PassError {
    format!(
        "has more bytes than a 64-bit size holds ({}), which no device allocates",
        ty.print()
    )
    .into()
}

pub fn ptr_type(ctx: Ctx) -> Ty {
    ctx.llvm_ptr()
}

pub fn int_type(ctx: Ctx, bits: u32) -> Ty {
    ctx.int_type(bits)
}

impl<'d> Host<'d> {
    pub fn new(at: At, op: Op, runtime: Val, decls: &'d mut Declarations) -> Self {
        Self {
            b: Builder::new(op.ctx(), op.loc(), at),
            runtime: Some(runtime),
            decls,
        }
    }

    /// Host IR with no runtime calls.
    pub fn without_runtime(at: At, op: Op, decls: &'d mut Declarations) -> Self {
        Self {
            b: Builder::new(op.ctx(), op.loc(), at),
            runtime: None,
            decls,
        }
    }

    fn ctx(&self) -> Ctx {
        self.b.ctx
    }

    pub fn ptr(&self) -> Ty {
        ptr_type(self.ctx())
    }

    pub fn int(&mut self, bits: u32, value: i64) -> Val {
        let ty = int_type(self.ctx(), bits);
        self.b.int_constant(ty, value)
    }

    pub fn index(&mut self, value: i64) -> Val {
        self.b.index(value)
    }

    /// The MLIR type of an ABI value kind.
    fn kind_type(&self, kind: Kind) -> Ty {
        match kind {
            Kind::Ptr => self.ptr(),
            Kind::I32 => int_type(self.ctx(), 32),
            Kind::I64 => int_type(self.ctx(), 64),
        }
    }

    /// `func.call @symm_rt_...(runtime, args...)` of a runtime function of
    /// the ABI table (`symm_protocol::abi`), declared from the table on
    /// first use; its result, if it has one.
    pub fn call(&mut self, call: &RuntimeCall, args: &[Val]) -> Option<Val> {
        let ctx = self.ctx();
        let runtime = self
            .runtime
            .expect("internal: runtime calls are made only by the runtime conversion");
        let mut operands = vec![runtime];
        operands.extend_from_slice(args);
        let inputs: Vec<Ty> = call.params.iter().map(|k| self.kind_type(*k)).collect();
        let results: Vec<Ty> = call.result.iter().map(|k| self.kind_type(*k)).collect();
        assert!(
            operands.len() == inputs.len()
                && operands.iter().zip(&inputs).all(|(v, t)| v.ty() == *t),
            "internal: {} called against its ABI signature",
            call.name
        );
        self.decls
            .functions
            .entry(call.name.to_owned())
            .or_insert_with(|| (inputs, results.clone()));
        let op = func_call(self.b.loc, ctx.symbol(call.name), &operands, &results);
        self.b.insert(op).results().first().copied()
    }

    /// A runtime call that returns a value.
    pub fn call_value(&mut self, call: &RuntimeCall, args: &[Val]) -> Val {
        self.call(call, args)
            .unwrap_or_else(|| panic!("internal: {} returns nothing", call.name))
    }

    /// A null `!llvm.ptr`.
    pub fn null_ptr(&mut self) -> Val {
        let ptr = self.ptr();
        self.b
            .put_one(|c, l| ods::llvm::mlir_zero(c, t(ptr), l).into())
    }

    /// Builds after `op` from now on.
    pub fn move_after(&mut self, op: Op) {
        self.b = Builder::new(self.ctx(), self.b.loc, At::After(op));
    }

    /// Builds before `op` from now on.
    pub fn move_before(&mut self, op: Op) {
        self.b = Builder::new(self.ctx(), self.b.loc, At::Before(op));
    }

    /// The address of a memref's first element as an i64 (identity
    /// layout, so the aligned pointer: `memref.view` folds offsets into it).
    pub fn address_of(&mut self, memref: Val) -> Val {
        let index = self.b.aligned_pointer(memref);
        self.cast(index, int_type(self.ctx(), 64))
    }

    /// The address of a memref's first element, as a pointer.
    pub fn ptr_of(&mut self, memref: Val) -> Val {
        let as_int = self.address_of(memref);
        self.int_to_ptr(as_int)
    }

    /// An i64 address as a pointer.
    pub fn int_to_ptr(&mut self, address: Val) -> Val {
        let ptr = self.ptr();
        self.b
            .put_one(|c, l| ods::llvm::inttoptr(c, t(ptr), v(address), l).into())
    }

    /// A memref of type `ty` over `ptr`: its LLVM descriptor, cast to the
    /// memref type (the cast folds away in the LLVM conversion). `sizes`
    /// are its dynamic sizes (index values), of which only the leading one
    /// may be: the strides stay static.
    pub fn memref_at(&mut self, ptr: Val, ty: Ty, sizes: &[Val]) -> Val {
        let ctx = self.ctx();
        let shape: Vec<Option<i64>> = ty.shape();
        let rank = shape.len();
        // The memref descriptor: allocated and aligned pointers, offset,
        // then (for rank > 0) sizes and strides.
        let (ptr_ty, i64_ty) = (ctx.llvm_ptr(), ctx.int_type(64));
        let mut field_types = vec![ptr_ty, ptr_ty, i64_ty];
        if rank > 0 {
            let array = ctx.llvm_array(i64_ty, rank as u32);
            field_types.extend([array, array]);
        }
        let struct_ty = ctx.llvm_struct(&field_types);
        let mut descriptor = self
            .b
            .put_one(|c, l| ods::llvm::mlir_poison(c, t(struct_ty), l).into());
        let mut strides = vec![1i64; rank];
        for dim in (0..rank.saturating_sub(1)).rev() {
            strides[dim] = strides[dim + 1] * shape[dim + 1].unwrap_or(1);
        }
        let zero = self.int(64, 0);
        let mut fields: Vec<(Vec<i64>, Val)> =
            vec![(vec![0], ptr), (vec![1], ptr), (vec![2], zero)];
        let mut dynamic = sizes.iter();
        let i64_ty = int_type(ctx, 64);
        for dim in 0..rank {
            let size = match shape[dim] {
                Some(size) => self.int(64, size),
                None => match dynamic.next() {
                    Some(size) => self.cast(*size, i64_ty),
                    None => self.int(64, 0),
                },
            };
            let stride = self.int(64, strides[dim]);
            fields.push((vec![3, dim as i64], size));
            fields.push((vec![4, dim as i64], stride));
        }
        for (position, value) in fields {
            let container = descriptor;
            descriptor = self.b.put_one(|c, l| {
                let position = DenseI64ArrayAttribute::new(c, &position).into();
                ods::llvm::insertvalue(c, t(struct_ty), v(container), v(value), position, l).into()
            });
        }
        self.b
            .convert(crate::ir::builders::Cast::Unrealized, descriptor, ty)
    }

    /// `lhs <op> rhs` on integers (i64s here).
    pub fn arith(&mut self, op: IntOp, lhs: Val, rhs: Val) -> Val {
        self.b.int_op(op, lhs, rhs)
    }

    /// Size `dim` of `memref`, as an i64.
    pub fn dim_i64(&mut self, memref: Val, dim: usize) -> Val {
        let size = self.b.dim(memref, dim);
        self.cast(size, int_type(self.ctx(), 64))
    }

    /// Size `dim` of `memref` as an i64: a constant when its type has it,
    /// else read with `memref.dim`.
    pub fn extent_i64(&mut self, memref: Val, dim: usize) -> Val {
        match memref.ty().shape()[dim] {
            Some(size) => self.int(64, size),
            None => self.dim_i64(memref, dim),
        }
    }

    /// `arith.index_cast` of `value` to `ty` (index <-> integer).
    pub fn cast(&mut self, value: Val, ty: Ty) -> Val {
        self.b
            .convert(crate::ir::builders::Cast::IndexCast, value, ty)
    }

    /// Bytes of `memref` (static, or its leading size times the rest).
    pub fn byte_count(&mut self, memref: Val) -> Result<Val, PassError> {
        let ty = memref.ty();
        let Some(element) = ty.element_bytes() else {
            return Err(format!("has elements of no fixed size ({})", ty.print()).into());
        };
        let too_many = || too_many_bytes(ty);
        if ty.has_static_shape() {
            let bytes = ty.byte_size().and_then(|b| i64::try_from(b).ok());
            return Ok(self.int(64, bytes.ok_or_else(too_many)?));
        }
        // Bytes of one leading index: the rest of the shape is static.
        let mut row_bytes = element as i64;
        for size in ty.shape().iter().skip(1) {
            let Some(size) = size else {
                return Err(format!(
                    "has dynamic sizes beyond the leading dimension ({}), which the GPU \
                     lowering does not support",
                    ty.print()
                )
                .into());
            };
            row_bytes = row_bytes.checked_mul(*size).ok_or_else(too_many)?;
        }
        let rows = self.dim_i64(memref, 0);
        let row_bytes = self.int(64, row_bytes);
        Ok(self.arith(IntOp::Mul, rows, row_bytes))
    }

    /// Thread blocks for `vectors` (an i64) split `divisor` ways, as
    /// `AllReduceKernel::grid_blocks` computes them, of `threads`-thread
    /// blocks, at run time (an index).
    pub fn grid_blocks(&mut self, vectors: Val, divisor: u64, threads: u64, most: u64) -> Val {
        let ceil_div = |host: &mut Self, value: Val, by: u64| {
            let by = host.int(64, by as i64);
            let one = host.int(64, 1);
            let bump = host.arith(IntOp::Sub, by, one);
            let sum = host.arith(IntOp::Add, value, bump);
            host.arith(IntOp::DivU, sum, by)
        };
        let per_rank = ceil_div(self, vectors, divisor);
        let blocks = ceil_div(self, per_rank, threads);
        let one = self.int(64, 1);
        let most = self.int(64, most as i64);
        let blocks = self.arith(IntOp::MaxU, blocks, one);
        let blocks = self.arith(IntOp::MinU, blocks, most);
        let index = self.ctx().index_type();
        self.cast(blocks, index)
    }

    /// Runs `emit` for the first of `items` whose `limit` is at least
    /// `value` (an i64; the last item takes the rest): nested `scf.if`s,
    /// or `emit` alone for one item.
    pub fn dispatch<T>(
        &mut self,
        value: Val,
        items: &[T],
        limit: impl Fn(&T) -> u64 + Copy,
        emit: &mut impl FnMut(&mut Self, &T),
    ) {
        let Some((first, rest)) = items.split_first() else {
            return;
        };
        if rest.is_empty() {
            emit(self, first);
            return;
        }
        let ctx = self.ctx();
        let loc = self.b.loc;
        let bound = self.int(64, limit(first) as i64);
        let fits = self.b.cmpi(CmpI::Ule, value, bound);
        let branch = self.b.if_then(fits, true);
        let after = std::mem::replace(&mut self.b, Builder::new(ctx, loc, At::After(branch)));
        for (region, items) in [(0, std::slice::from_ref(first)), (1, rest)] {
            let Some(end) = branch.region_blocks(region)[0].terminator() else {
                continue;
            };
            self.b = Builder::new(ctx, loc, At::Before(end));
            self.dispatch(value, items, limit, emit);
        }
        self.b = after;
    }

    /// `gpu.launch_func @symm_kernels::@kernel` on a 1-D grid.
    pub fn launch(&mut self, kernel: &str, blocks: u64, threads: u64, args: &[Val]) {
        let grid = self.index(blocks as i64);
        self.launch_on(kernel, grid, threads, args);
    }

    /// The same with the grid size as an index value.
    pub fn launch_on(&mut self, kernel: &str, grid: Val, threads: u64, args: &[Val]) {
        let ctx = self.ctx();
        let block = self.index(threads as i64);
        let one = self.index(1);
        let grid = [grid, one, one];
        let symbol = ctx.nested_symbol(KERNEL_MODULE, &[kernel]);
        let op = crate::ir::builders::gpu_launch_func(
            self.b.loc,
            symbol,
            [grid, [block, one, one]],
            None,
            args,
        );
        self.b.insert(op);
    }
}
