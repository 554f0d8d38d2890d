//! Host-side IR on melior's typed API: calls into the runtime's `symm_rt_*`
//! ABI, pointers of memrefs, memrefs over runtime pointers, kernel
//! launches, inserted at one place (`typed_builder::Inserter`).
//! `symm-mem-expand-collectives` builds launches with it (no runtime
//! calls); `convert-symm-mem-to-runtime` the calls too.

use super::builders::{self, Cast, CmpI, IntOp};
use super::melior_ext::{ValueExt, nested_symbol, type_text};
use super::typed_builder::{Inserter, static_dim};
use crate::PassError;
use melior::{
    Context,
    dialect::{func, llvm, ods},
    ir::{
        Attribute, BlockLike, BlockRef, Location, OperationRef, RegionLike, Type, TypeLike, Value,
        ValueLike,
        attribute::{DenseI64ArrayAttribute, FlatSymbolRefAttribute, IntegerAttribute},
        operation::OperationLike,
        r#type::{FunctionType, IntegerType, MemRefType, ShapedTypeLike},
    },
};
use std::collections::BTreeMap;
use symm_protocol::abi::{Kind, RuntimeCall};

/// The gpu.module that holds the collectives' kernels, which host-side
/// launches name.
pub const KERNEL_MODULE: &str = "symm_kernels";

/// The runtime functions a module calls, with their types, declared once
/// at the end of the conversion.
#[derive(Default)]
pub struct Declarations<'c> {
    functions: BTreeMap<String, (Vec<Type<'c>>, Vec<Type<'c>>)>,
}

impl<'c> Declarations<'c> {
    /// `func.func private` for each function called, appended to
    /// `module_body`.
    pub fn emit(
        &self,
        context: &'c Context,
        location: Location<'c>,
        module_body: BlockRef<'c, '_>,
    ) {
        for (name, (inputs, results)) in &self.functions {
            let function_type = FunctionType::new(context, inputs, results);
            module_body.append_operation(builders::func_declaration_op(
                context,
                location,
                name,
                function_type,
            ));
        }
    }
}

/// The refusal of a buffer whose byte count no 64-bit size holds.
pub fn too_many_bytes<'c>(ty: impl TypeLike<'c>) -> PassError {
    format!(
        "has more bytes than a 64-bit size holds ({}), which no device allocates",
        type_text(ty)
    )
    .into()
}

/// `!llvm.ptr`.
pub fn ptr_type(context: &Context) -> Type<'_> {
    llvm::r#type::pointer(context, 0)
}

/// A signless integer type of `bits`.
pub fn int_type(context: &Context, bits: u32) -> Type<'_> {
    IntegerType::new(context, bits).into()
}

/// Builds host IR at one place, for one function whose runtime handle is
/// `runtime` (none before the runtime conversion:
/// symm-mem-expand-collectives builds host IR that calls nothing).
pub struct Host<'c, 'a, 'd> {
    pub at: Inserter<'c, 'a>,
    calls: Option<(Value<'c, 'a>, &'d mut Declarations<'c>)>,
}

impl<'c, 'a, 'd> Host<'c, 'a, 'd> {
    pub fn new(
        at: Inserter<'c, 'a>,
        runtime: Value<'c, 'a>,
        decls: &'d mut Declarations<'c>,
    ) -> Self {
        Self {
            at,
            calls: Some((runtime, decls)),
        }
    }

    /// Host IR with no runtime calls.
    pub fn without_runtime(at: Inserter<'c, 'a>) -> Self {
        Self { at, calls: None }
    }

    pub fn context(&self) -> &'c Context {
        self.at.context
    }

    pub fn ptr(&self) -> Type<'c> {
        ptr_type(self.context())
    }

    pub fn int_type(&self, bits: u32) -> Type<'c> {
        int_type(self.context(), bits)
    }

    /// `arith.constant value : i<bits>`.
    pub fn int(&mut self, bits: u32, value: i64) -> Value<'c, 'a> {
        let ty = self.int_type(bits);
        self.constant_of(ty, IntegerAttribute::new(ty, value).into())
    }

    /// `arith.constant value : ty`.
    pub fn constant_of(&mut self, ty: Type<'c>, value: Attribute<'c>) -> Value<'c, 'a> {
        let (c, l) = (self.context(), self.at.location);
        self.at.value(ods::arith::constant(c, ty, value, l).into())
    }

    pub fn index(&mut self, value: i64) -> Value<'c, 'a> {
        self.at.index(value)
    }

    /// The MLIR type of an ABI value kind.
    fn kind_type(&self, kind: Kind) -> Type<'c> {
        match kind {
            Kind::Ptr => self.ptr(),
            Kind::I32 => self.int_type(32),
            Kind::I64 => self.int_type(64),
        }
    }

    /// `func.call @symm_rt_...(runtime, args...)` of a runtime function of
    /// the ABI table (`symm_protocol::abi`), declared from the table on
    /// first use; its result, if it has one.
    pub fn call(&mut self, call: &RuntimeCall, args: &[Value<'c, '_>]) -> Option<Value<'c, 'a>> {
        let inputs: Vec<Type> = call.params.iter().map(|k| self.kind_type(*k)).collect();
        let results: Vec<Type> = call.result.iter().map(|k| self.kind_type(*k)).collect();
        let Some((runtime, decls)) = self.calls.as_mut() else {
            panic!("internal: runtime calls are made only by the runtime conversion");
        };
        let mut operands: Vec<Value<'c, '_>> = vec![*runtime];
        operands.extend_from_slice(args);
        assert!(
            operands.len() == inputs.len()
                && operands.iter().zip(&inputs).all(|(v, t)| v.r#type() == *t),
            "internal: {} called against its ABI signature",
            call.name
        );
        decls
            .functions
            .entry(call.name.to_owned())
            .or_insert_with(|| (inputs, results.clone()));
        let (c, l) = (self.at.context, self.at.location);
        let callee = FlatSymbolRefAttribute::new(c, call.name);
        let op = self.at.put(func::call(c, callee, &operands, &results, l));
        op.result(0).ok().map(Into::into)
    }

    /// A runtime call that returns a value.
    pub fn call_value(&mut self, call: &RuntimeCall, args: &[Value<'c, '_>]) -> Value<'c, 'a> {
        self.call(call, args)
            .unwrap_or_else(|| panic!("internal: {} returns nothing", call.name))
    }

    /// A null `!llvm.ptr`.
    pub fn null_ptr(&mut self) -> Value<'c, 'a> {
        let (c, l, ptr) = (self.context(), self.at.location, self.ptr());
        self.at.value(ods::llvm::mlir_zero(c, ptr, l).into())
    }

    /// Builds after `op` from now on (at the same location).
    pub fn move_after(&mut self, op: OperationRef<'c, 'a>) {
        self.at = Inserter::after_at(self.at.context, self.at.location, op)
            .expect("internal: host IR goes next to an op in a block");
    }

    /// Builds before `op` from now on (at the same location).
    pub fn move_before(&mut self, op: OperationRef<'c, 'a>) {
        self.at = Inserter::before_at(self.at.context, self.at.location, op)
            .expect("internal: host IR goes next to an op in a block");
    }

    /// The address of a memref's first element as an i64 (identity
    /// layout, so the aligned pointer: `memref.view` folds offsets into it).
    pub fn address_of(&mut self, memref: Value<'c, '_>) -> Value<'c, 'a> {
        let index = self.at.aligned_pointer(memref);
        let i64_ty = self.int_type(64);
        self.cast(index, i64_ty)
    }

    /// The address of the first element of a strided memref, as a
    /// pointer: its aligned pointer moved by its static offset (a view
    /// into a larger buffer); an error where the offset is dynamic or the
    /// type is not strided.
    pub fn strided_ptr_of(&mut self, memref: Value<'c, '_>) -> Result<Value<'c, 'a>, PassError> {
        let ty = memref
            .memref_type()
            .ok_or_else(|| PassError::from("needs a memref"))?;
        let (_, offset) = super::melior_ext::strides_and_offset(ty)
            .ok_or_else(|| format!("needs a strided layout, got {}", type_text(ty)))?;
        let offset =
            offset.ok_or_else(|| format!("needs a static offset, got {}", type_text(ty)))?;
        let bytes =
            super::melior_ext::element_bytes(melior::ir::r#type::ShapedTypeLike::element(&ty))
                .and_then(|bytes| offset.checked_mul(bytes as i64))
                .ok_or_else(|| {
                    format!(
                        "has an offset of more bytes than 64 bits count: {}",
                        type_text(ty)
                    )
                })?;
        let base = self.address_of(memref);
        let address = if bytes == 0 {
            base
        } else {
            let shift = self.int(64, bytes);
            self.arith(IntOp::Add, base, shift)
        };
        Ok(self.int_to_ptr(address))
    }

    /// The address of a memref's first element, as a pointer.
    pub fn ptr_of(&mut self, memref: Value<'c, '_>) -> Value<'c, 'a> {
        let as_int = self.address_of(memref);
        self.int_to_ptr(as_int)
    }

    /// An i64 address as a pointer.
    pub fn int_to_ptr(&mut self, address: Value<'c, '_>) -> Value<'c, 'a> {
        let (c, l, ptr) = (self.context(), self.at.location, self.ptr());
        self.at
            .value(ods::llvm::inttoptr(c, ptr, address, l).into())
    }

    /// `symm_mem.pool_of %buffer`: the kernel handle of the buffer's pool.
    pub fn pool_of(&mut self, buffer: Value<'c, '_>) -> Value<'c, 'a> {
        let (c, l) = (self.context(), self.at.location);
        let pool = symm_dialects::attributes::pool_type(c);
        self.at
            .value(symm_dialects::symm_mem::pool_of(c, pool, buffer, l).into())
    }

    /// A memref of type `ty` over `ptr`: its LLVM descriptor, cast to the
    /// memref type (the cast folds away in the LLVM conversion). `sizes`
    /// are its dynamic sizes (index values), of which only the leading one
    /// may be: the strides stay static.
    pub fn memref_at(
        &mut self,
        ptr: Value<'c, '_>,
        ty: MemRefType<'c>,
        sizes: &[Value<'c, '_>],
    ) -> Value<'c, 'a> {
        let c = self.context();
        let rank = ty.rank();
        let shape: Vec<Option<i64>> = (0..rank).map(|d| static_dim(ty, d)).collect();
        // The memref descriptor: allocated and aligned pointers, offset,
        // then (for rank > 0) sizes and strides.
        let (ptr_ty, i64_ty) = (self.ptr(), self.int_type(64));
        let mut field_types = vec![ptr_ty, ptr_ty, i64_ty];
        if rank > 0 {
            let array = llvm::r#type::array(i64_ty, rank as u32);
            field_types.extend([array, array]);
        }
        let struct_ty = llvm::r#type::r#struct(c, &field_types, false);
        let location = self.at.location;
        let mut descriptor = self
            .at
            .value(ods::llvm::mlir_poison(c, struct_ty, location).into());
        let mut strides = vec![1i64; rank];
        for dim in (0..rank.saturating_sub(1)).rev() {
            strides[dim] = strides[dim + 1] * shape[dim + 1].unwrap_or(1);
        }
        let zero = self.int(64, 0);
        let mut fields: Vec<(Vec<i64>, Value)> =
            vec![(vec![0], ptr), (vec![1], ptr), (vec![2], zero)];
        let mut dynamic = sizes.iter();
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
            let position = DenseI64ArrayAttribute::new(c, &position).into();
            descriptor = self.at.value(
                ods::llvm::insertvalue(c, struct_ty, descriptor, value, position, location).into(),
            );
        }
        self.at.convert(Cast::Unrealized, descriptor, ty.into())
    }

    /// `lhs <op> rhs` on integers (i64s here).
    pub fn arith(&mut self, op: IntOp, lhs: Value<'c, '_>, rhs: Value<'c, '_>) -> Value<'c, 'a> {
        self.at.int_op(op, lhs, rhs)
    }

    /// Size `dim` of `memref`, as an i64.
    pub fn dim_i64(&mut self, memref: Value<'c, '_>, dim: usize) -> Value<'c, 'a> {
        let size = self.at.dim(memref, dim);
        let i64_ty = self.int_type(64);
        self.cast(size, i64_ty)
    }

    /// Size `dim` of `memref` as an i64: a constant when its type has it,
    /// else read with `memref.dim`.
    pub fn extent_i64(&mut self, memref: Value<'c, '_>, dim: usize) -> Value<'c, 'a> {
        let static_size = memref.memref_type().and_then(|ty| static_dim(ty, dim));
        match static_size {
            Some(size) => self.int(64, size),
            None => self.dim_i64(memref, dim),
        }
    }

    /// `arith.index_cast` of `value` to `ty` (index <-> integer).
    pub fn cast(&mut self, value: Value<'c, '_>, ty: Type<'c>) -> Value<'c, 'a> {
        self.at.convert(Cast::IndexCast, value, ty)
    }

    /// Bytes of `memref` (static, or its leading size times the rest).
    pub fn byte_count(&mut self, memref: Value<'c, '_>) -> Result<Value<'c, 'a>, PassError> {
        let ty = memref
            .memref_type()
            .ok_or_else(|| PassError::from("needs a memref"))?;
        let Some(element) = super::melior_ext::element_bytes(ty.element()) else {
            return Err(format!("has elements of no fixed size ({})", type_text(ty)).into());
        };
        let too_many = || too_many_bytes(ty);
        if ty.has_static_shape() {
            let bytes = crate::memref_byte_size(ty).and_then(|b| i64::try_from(b).ok());
            return Ok(self.int(64, bytes.ok_or_else(too_many)?));
        }
        // Bytes of one leading index: the rest of the shape is static.
        let mut row_bytes = element as i64;
        for dim in 1..ty.rank() {
            let Some(size) = static_dim(ty, dim) else {
                return Err(format!(
                    "has dynamic sizes beyond the leading dimension ({}), which the GPU \
                     lowering does not support",
                    type_text(ty)
                )
                .into());
            };
            row_bytes = row_bytes.checked_mul(size).ok_or_else(too_many)?;
        }
        let rows = self.dim_i64(memref, 0);
        let row_bytes = self.int(64, row_bytes);
        Ok(self.arith(IntOp::Mul, rows, row_bytes))
    }

    /// Thread blocks for `vectors` (an i64) split `divisor` ways, as
    /// `AllReduceKernel::grid_blocks` computes them, of `threads`-thread
    /// blocks, at run time (an index).
    pub fn grid_blocks(
        &mut self,
        vectors: Value<'c, '_>,
        divisor: u64,
        threads: u64,
        most: u64,
    ) -> Value<'c, 'a> {
        let ceil_div = |host: &mut Self, value: Value<'c, '_>, by: u64| {
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
        let index = Type::index(self.context());
        self.cast(blocks, index)
    }

    /// Runs `emit` for the first of `items` whose `limit` is at least
    /// `value` (an i64; the last item takes the rest): nested `scf.if`s,
    /// or `emit` alone for one item.
    pub fn dispatch<T>(
        &mut self,
        value: Value<'c, 'a>,
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
        let (c, l) = (self.at.context, self.at.location);
        let bound = self.int(64, limit(first) as i64);
        let fits = self.at.cmpi(CmpI::Ule, value, bound);
        let branch = self.at.if_then(fits, true);
        let after = Inserter::after_at(c, l, branch).expect("internal: scf.if in a block");
        for (region, items) in [(0, std::slice::from_ref(first)), (1, rest)] {
            let Some(end) = branch
                .region(region)
                .ok()
                .and_then(|r| r.first_block())
                .and_then(|b| b.terminator())
            else {
                continue;
            };
            self.at = Inserter::before_at(c, l, end).expect("internal: a branch's yield");
            self.dispatch(value, items, limit, emit);
        }
        self.at = after;
    }

    /// `gpu.launch_func @symm_kernels::@kernel` on a 1-D grid of `grid`
    /// blocks (an index value) of `threads` threads.
    pub fn launch_on(
        &mut self,
        kernel: &str,
        grid: Value<'c, '_>,
        threads: u64,
        args: &[Value<'c, '_>],
    ) -> OperationRef<'c, 'a> {
        let (c, l) = (self.at.context, self.at.location);
        let block = self.index(threads as i64);
        let one = self.index(1);
        let symbol = nested_symbol(c, KERNEL_MODULE, kernel);
        self.at.put(builders::gpu_launch_func_op(
            c,
            l,
            symbol,
            [[grid, one, one], [block, one, one]],
            None,
            args,
        ))
    }
}
