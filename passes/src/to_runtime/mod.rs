//! `convert-symm-mem-to-runtime`: the planned program's host side becomes
//! calls into the runtime's `symm_rt_*` ABI (`symm_protocol::abi`), ready
//! for the upstream GPU-to-LLVM passes.
//!
//! - Collectives were expanded into kernels and launches before
//!   (`symm-mem-expand-collectives`); their `symm_mem.pool_of` become the
//!   runtime's pool descriptors.
//! - Pools (`symm_mem.get_global`) become `symm_rt_global`, regular
//!   allocations `symm_rt_alloc`/`symm_rt_free`, copies `symm_rt_copy`,
//!   `linalg.matmul` `symm_rt_matmul` (cuBLAS), `linalg.batch_matmul`
//!   `symm_rt_batch_matmul` (strided slices, split-K), `all_gather_matmul_out`
//!   `symm_rt_all_gather_matmul` (the P2P ring in the runtime).
//! - Every public function that does any of this takes the runtime handle
//!   (`!llvm.ptr`, a `symm_runtime*`) as a new first argument, enters the
//!   runtime on entry and exits (synchronizes, checks peers) before each
//!   return. Comm-buffer memory spaces are dropped: pools are plain device
//!   memory to the rest of the pipeline.
//!
//! The ops of a function body go through MLIR's dialect conversion driver
//! (`ir::convert`, `applyPartialConversion` with pattern rollback off):
//! the ops this pass lowers are illegal, each is rewritten into runtime
//! calls before it and erased through the driver's rewriter, and the
//! driver checks that none is left; sibling matmuls become one batched call
//! at the second, which erases the first too. Returns are lowered before
//! it, with the function's entry and exit.
//! What it cannot lower yet it names, with the op's location.

mod entry;
mod graphs;
mod host_access;
mod kernel_choice;
mod strided_matmul;
mod tensor_map;
use crate::analysis::linalg::{OVERWRITES_ATTR, matmul_layout, zero_constant};
use crate::cudagraph::classify::is_host;
use crate::ir::builders::{Cast, IntOp};
use crate::ir::convert::{Rewrite, convert_typed};
use crate::ir::host::{Declarations, Host, ptr_type, too_many_bytes};
use crate::ir::melior_ext::{
    BlockExt, OperationExt, ValueExt, byte_size, element_bytes, function_io, has_identity_layout,
    op_key, type_text, value_key,
};
use crate::ir::module::{SymbolIndex, functions_with_bodies};
use crate::ir::op_kind::{OpDialect, OpKind};
use crate::ir::scalar::Scalar;
use crate::ir::typed_builder::{Inserter, dims, with_memory_space};
use crate::{
    GroupTable, OptionKind, PassDescriptor, PassError, PassFailed, PassOption, PassOptions,
    TypedPass,
};
pub use entry::{ASYNC_ENTRY_ATTR, ASYNC_SUFFIX};
use melior::{
    Context,
    ir::{
        Attribute, BlockLike, OperationRef, Type, Value, ValueLike,
        attribute::ArrayAttribute,
        operation::OperationLike,
        r#type::{MemRefType, ShapedTypeLike},
    },
};
use symm_protocol::abi::{self, LayoutCode, RuntimeCall};

/// Unit attribute on each function that gained the `symm_runtime*` first
/// argument; func-to-llvm carries it to the `llvm.func`, where symm-compile
/// reads it to write the header.
pub const RUNTIME_HANDLE_ATTR: &str = "symm.runtime_handle";

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<ConvertSymmMemToRuntime>(
    c"convert-symm-mem-to-runtime",
    c"ConvertSymmMemToRuntime",
    c"Lower pools, pool handles, allocations, copies, matmuls and entry points to runtime calls",
    c"builtin.module",
    &[PassOption::new(
        c"cuda-graphs",
        c"Let the runtime capture each CUDA-graph partition (cudagraph.launch; a whole function \
              is one) on its second run with the same arguments and replay it after; off, \
              partitions run inline, eagerly",
        OptionKind::Bool,
        c"true",
    )],
    file!(),
);

pub struct ConvertSymmMemToRuntime;

/// Ops whose presence means the program is not ready for this pass.
fn refusal(kind: OpKind) -> Option<&'static str> {
    Some(match kind {
        OpKind::SymmAlloc | OpKind::SymmDealloc => {
            "is not planned into a pool yet: run symm-mem-plan (or the symm-mem-middle-end pipeline) first"
        }
        OpKind::AllReduce | OpKind::AllGatherMatmul => {
            "allocates its result: run symm-mem-to-dps (or the symm-mem-middle-end pipeline) first"
        }
        OpKind::WithAllocator => "must be realized first: run symm-mem-realize",
        OpKind::AllReduceOut | OpKind::AllReduceEpilogueOut | OpKind::AllReduceRowsOut => {
            "must become kernels first: run symm-mem-expand-collectives"
        }
        _ => return None,
    })
}

/// Ops this pass rewrites in a function body.
fn lowers(kind: OpKind) -> bool {
    matches!(
        kind,
        OpKind::SymmGetGlobal
            | OpKind::AllGatherMatmulOut
            | OpKind::SymmRank
            | OpKind::SymmWorldSize
            | OpKind::SymmPoolOf
            | OpKind::MemrefAlloc
            | OpKind::MemrefDealloc
            | OpKind::MemrefCopy
            | OpKind::LinalgMatmul
            | OpKind::LinalgBatchMatmul
            | OpKind::GraphLaunch
            | OpKind::KernelRounds
            | OpKind::KernelVariant
            | OpKind::KernelVariantEnd
            | OpKind::TensorMap
    )
}

/// Stable across ranks and runs: FNV-1a of the pool's name.
fn pool_id(name: &str) -> i64 {
    crate::ir::stable_id::fnv1a(name) as i64
}

/// The runtime's code for an element type (`symm_protocol::abi`).
fn dtype_code(element: Type) -> Option<i64> {
    Scalar::of_type(element)?.dtype().map(|code| code as i64)
}

/// Replaces the uses of `op`'s result with `value`.
fn replace_result(op: OperationRef, value: Value) -> Result<(), PassError> {
    let result = op.result(0).map_err(|_| PassError::from("has no result"))?;
    Value::from(result).replace_uses_with(value);
    Ok(())
}

/// Operand `index` of `op`.
fn operand<'c, 'a>(op: OperationRef<'c, 'a>, index: usize) -> Result<Value<'c, 'a>, PassError> {
    op.operand(index)
        .map_err(|_| PassError::from(format!("has no operand #{index}")))
}

/// The memref type of `value`, or the refusal of one that is not.
fn memref_of<'c>(value: Value<'c, '_>) -> Result<MemRefType<'c>, PassError> {
    value
        .memref_type()
        .ok_or_else(|| format!("needs memrefs, got {}", type_text(value.r#type())).into())
}

/// State of one run over a module.
struct Conversion<'c> {
    context: &'c Context,
    groups: GroupTable,
    symbols: SymbolIndex,
    cuda_graphs: bool,
    decls: Declarations<'c>,
    failed: bool,
}

impl<'c> Conversion<'c> {
    fn error(&mut self, op: OperationRef, message: &str) {
        symm_dialects::emit_error(op.location(), message);
        self.failed = true;
    }

    fn lower_function<'a>(&mut self, function: OperationRef<'c, 'a>) {
        let Some((converts, public)) = lowering_of(function) else {
            return;
        };
        if !public && !converts {
            // Plain kernels of a helper: launched on their own streams.
            return;
        }
        if !public {
            self.error(
                function,
                "holds collectives or device memory but is private: only public functions \
                 (entry points) are lowered, since they receive the runtime handle",
            );
            return;
        }
        let Some(entry) = function.first_block() else {
            return;
        };
        let context = self.context;
        let location = function.location();
        let ptr = ptr_type(context);
        let returns_values = graphs::returns_values(function);
        // The body becomes the asynchronous entry point, which takes the
        // caller's stream second, unless it returns values (the status is
        // its result); a synchronizing wrapper keeps the function's name.
        let asynchronous = !returns_values;
        let runtime = entry.insert_argument_at(0, ptr, location);
        let stream = if asynchronous {
            let stream = entry.insert_argument_at(1, ptr, location);
            self.prepend_function_input(function, ptr);
            stream
        } else {
            let at = Inserter::at_start(context, location, entry);
            Host::new(at, runtime, &mut self.decls).null_ptr()
        };
        self.prepend_function_input(function, ptr);
        function.set_attribute_to(RUNTIME_HANDLE_ATTR, Attribute::unit(context));
        let first_argument = if asynchronous { 2 } else { 1 };
        // Partitions first, so that the arguments bound below and the
        // results returned are the body's as it will run.
        if let Err((op, message)) = graphs::lower_launches(
            context,
            function,
            runtime,
            &mut self.symbols,
            &mut self.decls,
            self.cuda_graphs,
        ) {
            self.error(op, &message.to_string());
            return;
        }
        // Its partitions are graphs now; what the mark told callers at
        // partitioning has been used.
        function.remove_attribute_from("cudagraph.capturable");

        let worlds: std::collections::BTreeSet<u64> = self
            .groups
            .iter()
            .filter_map(|(_, decl)| decl.world_size)
            .collect();
        let mut host = Host::new(
            Inserter::at_start(context, location, entry),
            runtime,
            &mut self.decls,
        );
        if !asynchronous {
            // The null stream made above must come first.
            if let Some(null) = stream.defining_op() {
                host.move_after(null);
            }
        }
        host.call(&abi::ENTER_ASYNC, &[stream]);
        let fingerprint = host.int(64, symm_protocol::PROTOCOL_FINGERPRINT as i64);
        host.call(&abi::CHECK_PROTOCOL, &[fingerprint]);
        for world in worlds {
            let world = host.int(64, world as i64);
            host.call(&abi::CHECK_WORLD, &[world]);
        }
        // The SMs its generated matmuls' grids were balanced over.
        let sms = function
            .parent_operation()
            .and_then(|module| module.int_attribute(crate::matmul::GEMV_SMS_ATTR));
        if let Some(sms) = sms {
            let sms = host.int(64, sms);
            host.call(&abi::CHECK_SMS, &[sms]);
        }
        if let Err(message) = entry::bind_arguments(&mut host, function, first_argument) {
            self.error(function, &message.to_string());
            return;
        }

        // What to rewrite, chosen before anything is erased: erasing an op
        // (a matmul) frees the ops of its regions, which the walk listed.
        let body_ops = function.descendants();
        let work: Vec<OperationRef<'c, 'a>> = fold_zero_fills(context, body_ops)
            .into_iter()
            .filter(|op| {
                (op.isa(OpKind::Return)
                    && op
                        .parent_operation()
                        .is_some_and(|p| op_key(p) == op_key(function)))
                    || (lowers(op.kind()) && !strided_matmul::left_to_loops(*op))
            })
            .collect();
        // Each pair's second op (its key), by the first.
        let pairs: std::collections::HashMap<usize, OperationRef<'c, 'a>> = sibling_matmuls(&work)
            .into_iter()
            .map(|(first, second)| (op_key(second), first))
            .collect();
        let firsts: std::collections::HashSet<usize> =
            pairs.values().map(|first| op_key(*first)).collect();
        // Returns are lowered here; every other op by the conversion below
        // (a sibling pair by its second matmul, the first legal until then).
        let mut converted = std::collections::HashSet::new();
        for op in work {
            if firsts.contains(&op_key(op)) {
                continue;
            }
            if op.isa(OpKind::Return) {
                let at = Inserter::before(context, op).expect("internal: a return in a block");
                let mut host = Host::new(at, runtime, &mut self.decls);
                let status = host.call_value(&abi::EXIT_ASYNC, &[]);
                if asynchronous {
                    entry::return_status(context, op, status);
                } else {
                    host.call(&abi::EXIT, &[]);
                }
            } else {
                converted.insert(op_key(op));
            }
        }
        // MLIR's conversion driver: the ops chosen above are illegal, each
        // is lowered to runtime calls before it and erased through the
        // driver's rewriter; one this pass cannot lower is an error at the
        // op and stays.
        let lowered = convert_typed(
            function,
            &|op| converted.contains(&op_key(op)),
            &mut |op, rewriter| {
                let lowered = match pairs.get(&op_key(op)) {
                    Some(&first) => {
                        let at =
                            Inserter::before(context, op).expect("internal: a matmul in a block");
                        let mut host = Host::new(at, runtime, &mut self.decls);
                        lower_matmul_pair(&mut host, first, op)
                            .map(|()| rewriter.erase_op(first))
                            .map_err(|error| error.of_op("linalg.matmul"))
                    }
                    None => self.lower_op(op, runtime),
                };
                match lowered {
                    Ok(()) => {
                        rewriter.erase_op(op);
                        Rewrite::Lowered
                    }
                    Err(error) => {
                        self.error(op, &error.to_string());
                        Rewrite::Refused
                    }
                }
            },
        );
        if !lowered && !self.failed {
            self.error(
                function,
                "internal: the runtime conversion left ops it was to lower",
            );
        }
        if asynchronous
            && let Err(message) =
                entry::split_async(context, function, &self.symbols, &mut self.decls)
        {
            self.error(function, &message.to_string());
        }
    }

    /// Adds `ty` as the first input of `function`'s type (and an empty
    /// entry to its argument attributes, when it has them).
    fn prepend_function_input(&mut self, function: OperationRef<'c, '_>, ty: Type<'c>) {
        let Some((inputs, results)) = function.function_type().map(function_io) else {
            return;
        };
        let inputs: Vec<Type> = std::iter::once(ty).chain(inputs).collect();
        entry::set_function_type(self.context, function, &inputs, &results);
        if let Some(arg_attrs) = function
            .attribute_of("arg_attrs")
            .and_then(|a| ArrayAttribute::try_from(a).ok())
        {
            // The new first argument has none.
            let empty = melior::ir::attribute::DictionaryAttribute::new(self.context, &[]).into();
            let attrs: Vec<Attribute> = std::iter::once(empty)
                .chain((0..arg_attrs.len()).filter_map(|i| arg_attrs.element(i).ok()))
                .collect();
            function.set_attribute_to(
                "arg_attrs",
                ArrayAttribute::new(self.context, &attrs).into(),
            );
        }
    }

    /// Lowers `op` to runtime calls before it (the caller erases it), or
    /// says why it cannot.
    fn lower_op<'a>(
        &mut self,
        op: OperationRef<'c, 'a>,
        runtime: Value<'c, 'a>,
    ) -> Result<(), PassError> {
        let world = self.groups.world_size_of_op(op);
        let at = Inserter::before(self.context, op).expect("internal: an op in a block");
        let mut host = Host::new(at, runtime, &mut self.decls);
        let name = op.name_text();
        let result = match op.kind() {
            OpKind::SymmGetGlobal => lower_get_global(&mut host, op, &self.symbols),
            OpKind::MemrefAlloc => lower_alloc(&mut host, op),
            OpKind::MemrefDealloc => {
                let ptr = host.ptr_of(operand(op, 0)?);
                host.call(&abi::FREE, &[ptr]);
                Ok(())
            }
            OpKind::MemrefCopy => lower_copy(&mut host, op),
            OpKind::LinalgMatmul => lower_matmul(&mut host, op),
            OpKind::LinalgBatchMatmul => strided_matmul::lower(&mut host, op),
            OpKind::KernelRounds | OpKind::KernelVariant | OpKind::KernelVariantEnd => {
                kernel_choice::lower(&mut host, op)
            }
            OpKind::TensorMap => tensor_map::lower(&mut host, op),
            OpKind::AllGatherMatmulOut => lower_all_gather_matmul(&mut host, op),
            OpKind::SymmRank => {
                let rank = host.call_value(&abi::RANK, &[]);
                let index_ty = Type::index(self.context);
                let index = host.at.convert(Cast::IndexCast, rank, index_ty);
                replace_result(op, index)
            }
            OpKind::SymmPoolOf => {
                let buffer = host.ptr_of(operand(op, 0)?);
                let pool = pool_of_pointer(&mut host, buffer);
                replace_result(op, pool)
            }
            OpKind::SymmWorldSize => match world {
                Some(world) => {
                    let value = host.index(world as i64);
                    replace_result(op, value)
                }
                None => Err("needs a group with a declared world_size".into()),
            },
            _ => Err(PassError::Build(format!(
                "is not lowered by this pass ({name})"
            ))),
        };
        result.map_err(|error| error.of_op(&name))
    }
}

/// The `!symm_mem.pool` of the pool holding device address `pointer`: the
/// runtime's descriptor, which convert-symm-mem-to-nvvm passes to kernels
/// where the pool was.
fn pool_of_pointer<'c, 'a>(host: &mut Host<'c, 'a, '_>, pointer: Value<'c, '_>) -> Value<'c, 'a> {
    let descriptor = host.call_value(&abi::POOL_DESCRIPTOR, &[pointer]);
    let pool = symm_dialects::attributes::pool_type(host.context());
    host.at.convert(Cast::Unrealized, descriptor, pool)
}

fn static_bytes(ty: MemRefType) -> Result<i64, PassError> {
    if !has_identity_layout(ty.into()) {
        return Err(format!(
            "needs an identity layout (a contiguous buffer), got {}",
            type_text(ty)
        )
        .into());
    }
    if dims(ty).iter().any(Option::is_none) {
        return Err("has a dynamic shape, which the GPU lowering does not support yet".into());
    }
    if element_bytes(ty.element()).is_none() {
        return Err(format!("has elements of no fixed size ({})", type_text(ty)).into());
    }
    byte_size(ty.into())
        .and_then(|bytes| i64::try_from(bytes).ok())
        .ok_or_else(|| too_many_bytes(ty))
}

fn lower_get_global<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    op: OperationRef<'c, 'a>,
    symbols: &SymbolIndex,
) -> Result<(), PassError> {
    let name = op.symbol_or_string("name").ok_or("names no pool")?;
    let global: OperationRef = symbols
        .lookup_op(&name)
        .ok_or_else(|| format!("refers to @{name}, which is not declared"))?;
    let ty = global
        .attribute_of("type")
        .and_then(|a| melior::ir::attribute::TypeAttribute::try_from(a).ok())
        .and_then(|a| MemRefType::try_from(a.value()).ok())
        .ok_or("refers to a pool without a type")?;
    let bytes = static_bytes(ty)?;
    let id = host.int(64, pool_id(&name));
    let size = host.int(64, bytes);
    let ptr = host.call_value(&abi::GLOBAL, &[id, size]);
    let result = memref_of(op.result(0).map_err(|_| "has no result")?.into())?;
    let memref = host.memref_at(ptr, with_memory_space(result, None), &[]);
    replace_result(op, memref)
}

fn lower_alloc<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    op: OperationRef<'c, 'a>,
) -> Result<(), PassError> {
    let ty = memref_of(op.result(0).map_err(|_| "has no result")?.into())?;
    if symm_dialects::Allocator::of_type(ty.into()).is_some() {
        // Only a pool is symmetric; a plain allocation here would not be.
        return Err(format!(
            "allocates in symmetric memory ({}) but symm-mem-plan did not place it in a pool \
             (see its remark); run symm-mem-plan first, or keep the buffer from flowing where \
             the plan cannot follow it",
            type_text(ty)
        )
        .into());
    }
    if is_host(ty.into()) {
        return Err(
            "allocates host memory (#cudagraph.host), which compiled code does not: let the \
             application allocate it (pinned, cudaHostAlloc) and pass it in as an argument"
                .into(),
        );
    }
    let sizes: Vec<Value> = op.operands().collect();
    let bytes = if sizes.is_empty() {
        host.int(64, static_bytes(ty)?)
    } else {
        leading_only(ty)?;
        // The one dynamic size is the leading one.
        let i64_ty = host.int_type(64);
        let rows = host.cast(sizes[0], i64_ty);
        let row_bytes = host.int(64, row_bytes(ty)?);
        host.arith(IntOp::Mul, rows, row_bytes)
    };
    let ptr = match (
        op.symbol_or_string(graphs::GRAPH_MARKER_ATTR),
        op.int_attribute(graphs::GRAPH_BUFFER_ATTR),
    ) {
        (Some(marker), Some(index)) => {
            let marker = graphs::marker_ptr(host, &marker);
            let index = host.int(64, index);
            host.call_value(&abi::GRAPH_BUFFER, &[marker, index, bytes])
        }
        _ => host.call_value(&abi::ALLOC, &[bytes]),
    };
    let memref = host.memref_at(ptr, with_memory_space(ty, None), &sizes);
    replace_result(op, memref)
}

/// Fails unless `ty` is contiguous and static but for its leading size.
fn leading_only(ty: MemRefType) -> Result<(), PassError> {
    if !has_identity_layout(ty.into()) {
        return Err(format!(
            "needs an identity layout (a contiguous buffer), got {}",
            type_text(ty)
        )
        .into());
    }
    if dims(ty).iter().skip(1).any(Option::is_none) {
        return Err(format!(
            "has dynamic sizes beyond the leading dimension ({}), which the GPU lowering \
             does not support",
            type_text(ty)
        )
        .into());
    }
    Ok(())
}

/// Bytes of one leading index of `ty` (a row).
fn row_bytes(ty: MemRefType) -> Result<i64, PassError> {
    let element = element_bytes(ty.element()).ok_or("has elements of no fixed size")? as i64;
    dims(ty)
        .iter()
        .skip(1)
        .map(|d| d.unwrap_or(1))
        .try_fold(element, |acc, d| acc.checked_mul(d))
        .ok_or_else(|| too_many_bytes(ty))
}

fn lower_copy<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    op: OperationRef<'c, 'a>,
) -> Result<(), PassError> {
    let (source, target) = (operand(op, 0)?, operand(op, 1)?);
    leading_only(memref_of(source)?)?;
    leading_only(memref_of(target)?)?;
    let bytes = host.byte_count(source)?;
    let dst = host.ptr_of(target);
    let src = host.ptr_of(source);
    host.call(&abi::COPY, &[dst, src, bytes]);
    if is_host(target.r#type()) {
        // The host reads what it brought only once it is there.
        host.call(&abi::HOST_WAIT, &[]);
    }
    Ok(())
}

/// Shape (rows dynamic or static, columns static) and dtype code of a
/// matmul operand.
fn matrix(value: Value) -> Result<(Option<i64>, i64, i64), PassError> {
    let ty = memref_of(value)?;
    leading_only(ty)?;
    let element = ty.element();
    let code = dtype_code(element).ok_or_else(|| {
        format!(
            "has element type {}; f32, f16 and bf16 are supported",
            type_text(element)
        )
    })?;
    match dims(ty).as_slice() {
        [rows, Some(columns)] => Ok((*rows, *columns, code)),
        _ => Err("needs 2-D operands".into()),
    }
}

/// The i64 sizes (m, n, k), the dtype code, the accumulate flag and the
/// layout of a matmul call.
type MatmulCall<'c, 'a> = ([Value<'c, 'a>; 3], i64, Value<'c, 'a>, LayoutCode);

/// Whether `op` (a `linalg.matmul`) reads and writes whole contiguous
/// matrices (identity layouts), which `symm_rt_matmul` and
/// `symm_rt_matmul_pair` take by address alone; any other matmul is
/// strided (`strided_matmul`).
fn dense_operands(op: OperationRef) -> bool {
    op.operand_count() == 3
        && op.operands().all(|v| {
            v.memref_type()
                .is_some_and(|ty| has_identity_layout(ty.into()))
        })
}

/// A matmul's sizes (m, n, k), dtype code, accumulate flag and layout,
/// after checking its operands are what cuBLAS is called with: dense, an
/// input transposed or not (`matmul_layout`).
fn matmul_call<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    op: OperationRef<'c, 'a>,
) -> Result<MatmulCall<'c, 'a>, PassError> {
    let layout = strided_matmul::cublas_layout(op)?;
    let (a_rows, a_columns, a_code) = matrix(operand(op, 0)?)?;
    let (b_rows, b_columns, b_code) = matrix(operand(op, 1)?)?;
    let (m2, n2, c_code) = matrix(operand(op, 2)?)?;
    if a_code != b_code || a_code != c_code {
        return Err("mixes element types; cuBLAS is called with one".into());
    }
    // (m, k) of a and (k, n) of b, as stored or transposed.
    let (m, k) = if layout.a_transposed() {
        (Some(a_columns), a_rows)
    } else {
        (a_rows, Some(a_columns))
    };
    let (k2, n) = if layout.b_transposed() {
        (Some(b_columns), b_rows)
    } else {
        (b_rows, Some(b_columns))
    };
    let (Some(k), Some(k2), Some(n)) = (k, k2, n) else {
        return Err(
            "has a dynamic k or n; only the rows of the left-hand side and the result may be \
             dynamic"
                .into(),
        );
    };
    let shown = |d: Option<i64>| d.map_or("?".to_owned(), |d| d.to_string());
    if k != k2 || n != n2 || (m.is_some() && m2.is_some() && m != m2) || m.is_some() != m2.is_some()
    {
        return Err(format!(
            "has shapes {}x{k} @ {k2}x{n} into {}x{n2} (m x k @ k x n, {}), which do not match",
            shown(m),
            shown(m2),
            layout.text()
        )
        .into());
    }
    // m from the output's rows, which a transposed a does not hold.
    let m = if layout.a_transposed() {
        host.extent_i64(operand(op, 2)?, 0)
    } else {
        host.extent_i64(operand(op, 0)?, 0)
    };
    let (n, k) = (host.int(64, n), host.int(64, k));
    // c = a @ b when a zero fill was folded in (cuBLAS beta = 0), else
    // c += a @ b (linalg.matmul's meaning).
    let accumulate = i64::from(op.attribute_of(OVERWRITES_ATTR).is_none());
    let accumulate = host.int(32, accumulate);
    Ok(([m, n, k], a_code, accumulate, layout))
}

/// A row-major matmul of dense operands as one `symm_rt_matmul`; any
/// other as a strided GEMM (`strided_matmul`).
fn lower_matmul<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    op: OperationRef<'c, 'a>,
) -> Result<(), PassError> {
    if !dense_operands(op) || matmul_layout(op) != Some(LayoutCode::RowMajor) {
        return strided_matmul::lower(host, op);
    }
    let (sizes, code, accumulate, _) = matmul_call(host, op)?;
    call_on_matrices(host, &abi::MATMUL, op, sizes, code, &[accumulate]);
    Ok(())
}

/// `second` and the `first` matmul before it (sharing its left operand;
/// see `sibling_matmuls`) as one `symm_rt_matmul_pair`, at `second`.
fn lower_matmul_pair<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    first: OperationRef<'c, 'a>,
    second: OperationRef<'c, 'a>,
) -> Result<(), PassError> {
    // `sibling_matmuls` matched the second's operand types, maps and
    // overwriting to the first's, so the first's checks and sizes hold
    // for both.
    let (sizes, code, accumulate, layout) = matmul_call(host, first)?;
    let mut args = vec![host.ptr_of(operand(first, 0)?)];
    for op in [first, second] {
        args.push(host.ptr_of(operand(op, 1)?));
        args.push(host.ptr_of(operand(op, 2)?));
    }
    args.extend(sizes);
    args.push(host.int(32, code));
    args.push(accumulate);
    args.push(host.int(32, layout as i64));
    host.call(&abi::MATMUL_PAIR, &args);
    Ok(())
}

/// Whether `function` is lowered (it converts ops, launches kernels or
/// takes memrefs) and if so, whether it converts ops and is public (an
/// entry point, which takes the runtime handle first).
fn lowering_of(function: OperationRef) -> Option<(bool, bool)> {
    let body_ops = function.descendants();
    let converts = body_ops.iter().any(|op| lowers(op.kind()));
    let launches = body_ops.iter().any(|op| op.dialect() == OpDialect::Linalg);
    let takes_memrefs = function.first_block().is_some_and(|b| {
        (0..b.argument_count()).any(|i| {
            b.argument(i)
                .is_ok_and(|a| Value::from(a).memref_type().is_some())
        })
    });
    if !converts && !launches && !takes_memrefs {
        return None;
    }
    Some((converts, is_public(function)))
}

/// Whether `function` is public (no visibility, or "public").
fn is_public(function: OperationRef) -> bool {
    function
        .symbol_or_string("sym_visibility")
        .is_none_or(|v| v == "public")
}

/// Matmuls that read the same left operand with right operands and
/// outputs of the same types, one right after the other (past constants,
/// allocations and views, which touch no existing buffer), both
/// overwriting or both accumulating, the second reading nothing the first
/// writes: (first, second) pairs, run as one batched GEMM at the second
/// (a gate and an up projection: one launch over both weights).
fn sibling_matmuls<'c, 'a>(
    ops: &[OperationRef<'c, 'a>],
) -> Vec<(OperationRef<'c, 'a>, OperationRef<'c, 'a>)> {
    let mut pairs = Vec::new();
    let mut seconds = std::collections::HashSet::new();
    let is_matmul = |op: &OperationRef| op.isa(OpKind::LinalgMatmul) && dense_operands(*op);
    let operands = |op: &OperationRef<'c, 'a>| -> Vec<Value<'c, 'a>> { op.operands().collect() };
    for &first in ops {
        if !is_matmul(&first) || seconds.contains(&op_key(first)) {
            continue;
        }
        let Some(second) = first.next_past_views() else {
            continue;
        };
        if !is_matmul(&second) {
            continue;
        }
        let (one, two) = (operands(&first), operands(&second));
        let written = value_key(one[2]);
        let same_kind = |i: usize| one[i].r#type() == two[i].r#type();
        if second.attribute_of("indexing_maps") == first.attribute_of("indexing_maps")
            && value_key(two[0]) == value_key(one[0])
            && same_kind(1)
            && same_kind(2)
            && first.attribute_of(OVERWRITES_ATTR).is_some()
                == second.attribute_of(OVERWRITES_ATTR).is_some()
            && written != value_key(one[0])
            && written != value_key(one[1])
            && two.iter().all(|v| value_key(*v) != written)
        {
            pairs.push((first, second));
            seconds.insert(op_key(second));
        }
    }
    pairs
}

/// A `linalg.fill` of zero directly followed (past fresh allocations and
/// constants) by a `linalg.matmul` writing into the same buffer is folded into that matmul
/// (cuBLAS with beta = 0): one kernel less per matmul, and no read of the
/// zeros. Nothing runs between the two and the matmul writes every element,
/// so no later use, in any block, can see the zeros; only an operand of the
/// matmul that is a view of the buffer (or the buffer a view of it) could,
/// so such a fill stays. Views the planner placed in one allocation are
/// disjoint while both are live, as a matmul's operands are.
/// Returns `ops` without the folded fills, which are erased.
fn fold_zero_fills<'c, 'a>(
    context: &'c Context,
    ops: Vec<OperationRef<'c, 'a>>,
) -> Vec<OperationRef<'c, 'a>> {
    let mut folded = Vec::new();
    for &fill in &ops {
        if !fill.isa(OpKind::LinalgFill) || fill.operand_count() != 2 || fill.result_count() != 0 {
            continue;
        }
        let (Ok(value), Ok(buffer)) = (fill.operand(0), fill.operand(1)) else {
            continue;
        };
        if !zero_constant(value) {
            continue;
        }
        // The matmul must follow the fill directly (past fresh allocations
        // and constants), so nothing in between, a view of the buffer
        // included, can observe the zeros.
        let next = fill.next_past_fresh();
        let overlaps = |operand: Value| views_of(operand, buffer) || views_of(buffer, operand);
        if let Some(matmul) = next
            && matmul.isa(OpKind::LinalgMatmul)
            && matmul.operand_count() == 3
            && let (Ok(a), Ok(b), Ok(c)) = (matmul.operand(0), matmul.operand(1), matmul.operand(2))
            && value_key(c) == value_key(buffer)
            && !overlaps(a)
            && !overlaps(b)
        {
            matmul.set_attribute_to(OVERWRITES_ATTR, Attribute::unit(context));
            folded.push(fill);
        }
    }
    // The fills' own bodies (linalg.yield) go with them.
    let folded_set: std::collections::HashSet<usize> = folded.iter().map(|f| op_key(*f)).collect();
    let kept: Vec<OperationRef<'c, 'a>> = ops
        .into_iter()
        .filter(|op| {
            !folded_set.contains(&op_key(*op))
                && !op
                    .parent_operation()
                    .is_some_and(|p| folded_set.contains(&op_key(p)))
        })
        .collect();
    for fill in folded {
        crate::ir::rewrite::erase(fill);
    }
    kept
}

/// Whether `value` is `of` or reaches it through view-like ops.
fn views_of<'c: 'a, 'a>(mut value: Value<'c, 'a>, of: Value<'c, 'a>) -> bool {
    loop {
        if value_key(value) == value_key(of) {
            return true;
        }
        match value.defining_op() {
            Some(def) if def.is_view_like() && def.operand_count() > 0 => match def.operand(0) {
                Ok(source) => value = source,
                Err(_) => return false,
            },
            _ => return false,
        }
    }
}

/// `name(runtime, a, b, c, sizes..., dtype code, extra...)` on the op's
/// three matrix operands.
fn call_on_matrices<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    call: &RuntimeCall,
    op: OperationRef<'c, 'a>,
    sizes: [Value<'c, 'a>; 3],
    code: i64,
    extra: &[Value<'c, 'a>],
) {
    let operands: Vec<Value> = op.operands().collect();
    let mut args: Vec<Value> = operands.iter().take(3).map(|v| host.ptr_of(*v)).collect();
    args.extend(sizes);
    args.push(host.int(32, code));
    args.extend_from_slice(extra);
    host.call(call, &args);
}

fn lower_all_gather_matmul<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    op: OperationRef<'c, 'a>,
) -> Result<(), PassError> {
    let static_rows = |value: Value| -> Result<(i64, i64, i64), PassError> {
        static_bytes(memref_of(value)?)?;
        match matrix(value)? {
            (Some(rows), columns, code) => Ok((rows, columns, code)),
            _ => Err("has a dynamic shape, which all_gather_matmul does not support yet".into()),
        }
    };
    let (m, k, code) = static_rows(operand(op, 0)?)?;
    let (_, n, _) = static_rows(operand(op, 1)?)?;
    static_rows(operand(op, 2)?)?;
    let sizes = [m, k, n].map(|size| host.int(64, size));
    call_on_matrices(host, &abi::ALL_GATHER_MATMUL, op, sizes, code, &[]);
    Ok(())
}

impl TypedPass for ConvertSymmMemToRuntime {
    fn run_typed<'c>(
        context: &'c Context,
        module: OperationRef<'c, '_>,
        options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let mut conversion = Conversion {
            context,
            groups: GroupTable::from_module(module),
            symbols: SymbolIndex::of(module),
            cuda_graphs: options.flag("cuda-graphs"),
            decls: Declarations::default(),
            failed: false,
        };
        for op in module.descendants() {
            let allocates_nothing = op.isa(OpKind::SymmAlloc)
                && op
                    .result(0)
                    .ok()
                    .and_then(|r| Value::from(r).memref_type())
                    .and_then(|ty| byte_size(ty.into()))
                    == Some(0);
            if allocates_nothing {
                let ty = op
                    .result(0)
                    .map(|r| type_text(r.r#type()))
                    .unwrap_or_default();
                conversion.error(
                    op,
                    &format!("'symm_mem.alloc' allocates no bytes ({ty}); remove it"),
                );
            } else if let Some(why) = refusal(op.kind()) {
                conversion.error(op, &format!("'{}' {why}", op.name_text()));
            } else if let Some(why) = host_access::refusal(op) {
                conversion.error(op, &why);
            } else if op.isa(OpKind::Call)
                && let Some(name) = op.symbol_or_string("callee")
                && let Some(callee) = conversion.symbols.lookup_op(&name)
                && callee.first_block().is_some()
                // Visibility first: a private helper's body is not walked
                // once per call.
                && is_public(callee)
                && lowering_of(callee).is_some()
            {
                conversion.error(
                    op,
                    &format!(
                        "'func.call' calls the entry point @{}, which becomes a C entry point \
                         taking the runtime handle (and its asynchronous form the stream): \
                         entry points do not call each other; inline it (symm-opt --inline) or \
                         call both from the application",
                        name
                    ),
                );
            }
        }
        // A process runs in one world: every entry point checks the world
        // size it was compiled for, so groups of two sizes could never run.
        let mut first_world: Option<(i64, String)> = None;
        let top_level = module.first_block().map(|b| b.ops()).unwrap_or_default();
        for group in &top_level {
            if !group.isa(OpKind::Group) {
                continue;
            }
            let (Some(world), Some(name)) = (
                group.int_attribute("world_size"),
                group.symbol_or_string("sym_name"),
            ) else {
                continue;
            };
            match &first_world {
                None => first_world = Some((world, name)),
                Some((first, first_name)) if *first != world => conversion.error(
                    *group,
                    &format!(
                        "'symm_mem.group' @{name} has world size {world}, but @{first_name} has \
                         {first}: the program runs in one world of processes (symm-launch -n), \
                         so its groups must have one world size"
                    ),
                ),
                Some(_) => {}
            }
        }
        if conversion.failed {
            return Err(PassFailed);
        }
        let (partitions, functions): (Vec<OperationRef>, Vec<OperationRef>) =
            functions_with_bodies(module)
                .into_iter()
                .partition(|f| f.attribute_of("cudagraph.partition").is_some());
        for function in functions {
            conversion.lower_function(function);
        }
        if conversion.failed {
            return Err(PassFailed);
        }
        // Every launch ran its partition's body in place.
        crate::ir::rewrite::erase_collected(module, &partitions);
        let Some(block) = module.first_block() else {
            return Ok(());
        };
        let declarations: Vec<OperationRef> = block
            .ops()
            .into_iter()
            .filter(|op| op.isa(OpKind::Group) || op.isa(OpKind::Global))
            .collect();
        crate::ir::rewrite::erase_collected(module, &declarations);
        // Comm buffers become plain device memory, in every function (helpers
        // included): a type conversion drops the `#symm_mem.allocator` memory
        // space (C++, DialectConversion).
        // SAFETY: the live module being converted.
        if !unsafe { symm_dialects::ffi::symmMemStripAllocatorMemorySpaces(module.to_raw()) } {
            symm_dialects::emit_error(
                module.location(),
                "comm buffers' types do not convert to plain memrefs",
            );
            return Err(PassFailed);
        }
        conversion.decls.emit(context, module.location(), block);
        module.set_attribute_to("gpu.container_module", Attribute::unit(context));
        Ok(())
    }
}
