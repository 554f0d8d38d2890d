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

mod batch_matmul;
mod entry;
mod host_access;
mod kernel_choice;
mod tensor_map;
use crate::PassError;
use crate::ir::op_kind::{OpDialect, OpKind};
pub use entry::{ASYNC_ENTRY_ATTR, ASYNC_SUFFIX};
use symm_protocol::abi::{self, RuntimeCall};
mod graphs;
use crate::analysis::linalg::{OVERWRITES_ATTR, has_default_maps, is_zero_constant};
use crate::cudagraph::classify::is_host;
use crate::ir::builders::IntOp;
use crate::ir::convert::{Rewrite, convert};
use crate::ir::host_handles::{Declarations, Host, int_type, ptr_type, too_many_bytes};
use crate::{
    OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, SymmPass,
    ir::builders::{At, Cast},
    ir::module::{SymbolIndex, defined_functions},
    ir::{Attr, Ctx, Op, Ty, Val, emit_error},
};

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
fn dtype_code(element: Ty) -> Option<i64> {
    element.scalar()?.dtype().map(|code| code as i64)
}

/// State of one run over a module.
struct Conversion {
    ctx: Ctx,
    groups: crate::GroupTable,
    symbols: SymbolIndex,
    cuda_graphs: bool,
    decls: Declarations,
    failed: bool,
}

impl Conversion {
    fn error(&mut self, op: Op, message: &str) {
        emit_error(op.loc(), message);
        self.failed = true;
    }

    fn lower_function(&mut self, function: Op) {
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
        let Some(entry) = function.entry_block() else {
            return;
        };
        let ptr = ptr_type(self.ctx);
        let returns_values = graphs::returns_values(function);
        // The body becomes the asynchronous entry point, which takes the
        // caller's stream second, unless it returns values (the status is
        // its result); a synchronizing wrapper keeps the function's name.
        let asynchronous = !returns_values;
        let runtime = entry.insert_arg(0, ptr, function.loc());
        let stream = if asynchronous {
            let stream = entry.insert_arg(1, ptr, function.loc());
            self.prepend_function_input(function, ptr);
            stream
        } else {
            let mut host = Host::new(At::BlockStart(entry), function, runtime, &mut self.decls);
            host.null_ptr()
        };
        self.prepend_function_input(function, ptr);
        function.set_attr(RUNTIME_HANDLE_ATTR, self.ctx.unit());
        let first_argument = if asynchronous { 2 } else { 1 };
        // Partitions first, so that the arguments bound below and the
        // results returned are the body's as it will run.
        if let Err((op, message)) = graphs::lower_launches(
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
        function.remove_attr("cudagraph.capturable");

        let mut host = Host::new(At::BlockStart(entry), function, runtime, &mut self.decls);
        if !asynchronous {
            // The null stream made above must come first.
            if let Some(null) = stream.def() {
                host.move_after(null);
            }
        }
        host.call(&abi::ENTER_ASYNC, &[stream]);
        let worlds: std::collections::BTreeSet<u64> = self
            .groups
            .iter()
            .filter_map(|(_, decl)| decl.world_size)
            .collect();
        for world in worlds {
            let world = host.int(64, world as i64);
            host.call(&abi::CHECK_WORLD, &[world]);
        }
        if let Err(message) = entry::bind_arguments(&mut host, function, first_argument) {
            self.error(function, &message.to_string());
            return;
        }

        // What to rewrite, chosen before anything is erased: erasing an op
        // (a matmul) frees the ops of its regions, which the walk listed.
        let body_ops: Vec<Op> = function.walk().into_iter().skip(1).collect();
        let work: Vec<Op> = fold_zero_fills(body_ops)
            .into_iter()
            .filter(|op| {
                (op.isa(OpKind::Return) && op.parent() == Some(function))
                    || (lowers(op.kind()) && !batch_matmul::left_to_loops(*op))
            })
            .collect();
        // Each pair's second op, by the first.
        let pairs: std::collections::HashMap<Op, Op> = sibling_matmuls(&work)
            .into_iter()
            .map(|(first, second)| (second, first))
            .collect();
        let firsts: std::collections::HashSet<Op> = pairs.values().copied().collect();
        // Returns are lowered here; every other op by the conversion below
        // (a sibling pair by its second matmul, the first legal until then).
        let mut converted = std::collections::HashSet::new();
        for op in work {
            if firsts.contains(&op) {
                continue;
            }
            if op.isa(OpKind::Return) {
                let mut host = Host::new(At::Before(op), op, runtime, &mut self.decls);
                let status = host.call_value(&abi::EXIT_ASYNC, &[]);
                if asynchronous {
                    entry::return_status(op, status);
                } else {
                    host.call(&abi::EXIT, &[]);
                }
            } else {
                converted.insert(op);
            }
        }
        // MLIR's conversion driver: the ops chosen above are illegal, each
        // is lowered to runtime calls before it and erased through the
        // driver's rewriter; one this pass cannot lower is an error at the
        // op and stays.
        let lowered = convert(
            function,
            &|op| converted.contains(&op),
            &mut |op, rewriter| {
                let lowered = match pairs.get(&op) {
                    Some(&first) => {
                        let mut host = Host::new(At::Before(op), op, runtime, &mut self.decls);
                        lower_matmul_pair(&mut host, first, op)
                            .map(|()| rewriter.erase(first))
                            .map_err(|error| error.of_op("linalg.matmul"))
                    }
                    None => self.lower_op(op, runtime),
                };
                match lowered {
                    Ok(()) => {
                        rewriter.erase(op);
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
            && let Err(message) = entry::split_async(function, &self.symbols, &mut self.decls)
        {
            self.error(function, &message.to_string());
        }
    }

    /// Adds `ty` as the first input of `function`'s type (and an empty
    /// entry to its argument attributes, when it has them).
    fn prepend_function_input(&mut self, function: Op, ty: Ty) {
        let Some((inputs, results)) = function
            .attr("function_type")
            .map(Ty::from_type_attr)
            .and_then(Ty::function_io)
        else {
            return;
        };
        let inputs: Vec<Ty> = std::iter::once(ty).chain(inputs).collect();
        let function_type = self.ctx.function_type(&inputs, &results);
        function.set_attr("function_type", self.ctx.type_attr(function_type));
        if let Some(arg_attrs) = function.attr("arg_attrs") {
            // The new first argument has none.
            let attrs: Vec<Attr> = std::iter::once(self.ctx.dictionary(&[]))
                .chain((0..arg_attrs.array_len()).filter_map(|i| arg_attrs.array_element(i)))
                .collect();
            function.set_attr("arg_attrs", self.ctx.array_attr(&attrs));
        }
    }

    /// Lowers `op` to runtime calls before it (the caller erases it), or
    /// says why it cannot.
    fn lower_op(&mut self, op: Op, runtime: Val) -> Result<(), PassError> {
        let world = self.groups.world_size_of(op);
        let mut host = Host::new(At::Before(op), op, runtime, &mut self.decls);
        let name = op.name();
        let result = match op.kind() {
            OpKind::SymmGetGlobal => lower_get_global(&mut host, op, &self.symbols),
            OpKind::MemrefAlloc => lower_alloc(&mut host, op),
            OpKind::MemrefDealloc => {
                let ptr = host.ptr_of(op.operand(0));
                host.call(&abi::FREE, &[ptr]);
                Ok(())
            }
            OpKind::MemrefCopy => lower_copy(&mut host, op),
            OpKind::LinalgMatmul => lower_matmul(&mut host, op),
            OpKind::LinalgBatchMatmul => batch_matmul::lower(&mut host, op),
            OpKind::KernelRounds | OpKind::KernelVariant | OpKind::KernelVariantEnd => {
                kernel_choice::lower(&mut host, op)
            }
            OpKind::TensorMap => tensor_map::lower(&mut host, op),
            OpKind::AllGatherMatmulOut => lower_all_gather_matmul(&mut host, op),
            OpKind::SymmRank => {
                let rank = host.call_value(&abi::RANK, &[]);
                let index_ty = host.b.ctx.index_type();
                let index = host.b.convert(Cast::IndexCast, rank, index_ty);
                op.result(0).replace_all_uses_with(index);
                Ok(())
            }
            OpKind::SymmPoolOf => {
                let buffer = host.ptr_of(op.operand(0));
                let pool = pool_of_pointer(&mut host, buffer);
                op.result(0).replace_all_uses_with(pool);
                Ok(())
            }
            OpKind::SymmWorldSize => match world {
                Some(world) => {
                    let value = host.index(world as i64);
                    op.result(0).replace_all_uses_with(value);
                    Ok(())
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
fn pool_of_pointer(host: &mut Host, pointer: Val) -> Val {
    let descriptor = host.call_value(&abi::POOL_DESCRIPTOR, &[pointer]);
    let pool = Ty::pool(host.b.ctx);
    host.b.convert(Cast::Unrealized, descriptor, pool)
}

fn static_bytes(ty: Ty) -> Result<i64, PassError> {
    if !ty.has_identity_layout() {
        return Err(format!(
            "needs an identity layout (a contiguous buffer), got {}",
            ty.print()
        )
        .into());
    }
    if !ty.has_static_shape() {
        return Err("has a dynamic shape, which the GPU lowering does not support yet".into());
    }
    if ty.element_bytes().is_none() {
        return Err(format!("has elements of no fixed size ({})", ty.print()).into());
    }
    ty.byte_size()
        .and_then(|bytes| i64::try_from(bytes).ok())
        .ok_or_else(|| too_many_bytes(ty))
}

fn lower_get_global(host: &mut Host, op: Op, symbols: &SymbolIndex) -> Result<(), PassError> {
    let name = op
        .attr("name")
        .and_then(Attr::symbol_or_string)
        .ok_or("names no pool")?;
    let global = symbols
        .lookup(&name)
        .ok_or_else(|| format!("refers to @{name}, which is not declared"))?;
    let ty = global
        .attr("type")
        .map(Ty::from_type_attr)
        .ok_or("refers to a pool without a type")?;
    let bytes = static_bytes(ty)?;
    let id = host.int(64, pool_id(&name));
    let size = host.int(64, bytes);
    let ptr = host.call_value(&abi::GLOBAL, &[id, size]);
    let memref = host.memref_at(ptr, op.result(0).ty().with_memory_space(None), &[]);
    op.result(0).replace_all_uses_with(memref);
    Ok(())
}

fn lower_alloc(host: &mut Host, op: Op) -> Result<(), PassError> {
    let ty = op.result(0).ty();
    if ty.allocator().is_some() {
        // Only a pool is symmetric; a plain allocation here would not be.
        return Err(format!(
            "allocates in symmetric memory ({}) but symm-mem-plan did not place it in a pool \
             (see its remark); run symm-mem-plan first, or keep the buffer from flowing where \
             the plan cannot follow it",
            ty.print()
        )
        .into());
    }
    if is_host(crate::ir::bridge::ty(ty)) {
        return Err(
            "allocates host memory (#cudagraph.host), which compiled code does not: let the \
             application allocate it (pinned, cudaHostAlloc) and pass it in as an argument"
                .into(),
        );
    }
    let sizes = op.operands();
    let bytes = if sizes.is_empty() {
        host.int(64, static_bytes(ty)?)
    } else {
        leading_only(ty)?;
        // The one dynamic size is the leading one.
        let rows = host.cast(sizes[0], int_type(host.b.ctx, 64));
        let row_bytes = host.int(64, row_bytes(ty)?);
        host.arith(IntOp::Mul, rows, row_bytes)
    };
    let ptr = match (
        op.attr(graphs::GRAPH_MARKER_ATTR)
            .and_then(Attr::symbol_or_string),
        op.attr(graphs::GRAPH_BUFFER_ATTR).and_then(Attr::int),
    ) {
        (Some(marker), Some(index)) => {
            let marker = graphs::marker_ptr(host, &marker);
            let index = host.int(64, index);
            host.call_value(&abi::GRAPH_BUFFER, &[marker, index, bytes])
        }
        _ => host.call_value(&abi::ALLOC, &[bytes]),
    };
    let memref = host.memref_at(ptr, ty.with_memory_space(None), &sizes);
    op.result(0).replace_all_uses_with(memref);
    Ok(())
}

/// Fails unless `ty` is contiguous and static but for its leading size.
fn leading_only(ty: Ty) -> Result<(), PassError> {
    if !ty.has_identity_layout() {
        return Err(format!(
            "needs an identity layout (a contiguous buffer), got {}",
            ty.print()
        )
        .into());
    }
    if ty.shape().iter().skip(1).any(Option::is_none) {
        return Err(format!(
            "has dynamic sizes beyond the leading dimension ({}), which the GPU lowering \
             does not support",
            ty.print()
        )
        .into());
    }
    Ok(())
}

/// Bytes of one leading index of `ty` (a row).
fn row_bytes(ty: Ty) -> Result<i64, PassError> {
    let element = ty.element_bytes().ok_or("has elements of no fixed size")? as i64;
    ty.shape()
        .iter()
        .skip(1)
        .map(|d| d.unwrap_or(1))
        .try_fold(element, |acc, d| acc.checked_mul(d))
        .ok_or_else(|| too_many_bytes(ty))
}

fn lower_copy(host: &mut Host, op: Op) -> Result<(), PassError> {
    let (source, target) = (op.operand(0), op.operand(1));
    leading_only(source.ty())?;
    leading_only(target.ty())?;
    let bytes = host.byte_count(source)?;
    let dst = host.ptr_of(target);
    let src = host.ptr_of(source);
    host.call(&abi::COPY, &[dst, src, bytes]);
    if is_host(crate::ir::bridge::ty(target.ty())) {
        // The host reads what it brought only once it is there.
        host.call(&abi::HOST_WAIT, &[]);
    }
    Ok(())
}

/// Shape (rows dynamic or static, columns static) and dtype code of a
/// matmul operand.
fn matrix(value: Val) -> Result<(Option<i64>, i64, i64), PassError> {
    let ty = value.ty();
    leading_only(ty)?;
    let shape = ty.shape();
    let element = ty.element();
    let code = dtype_code(element).ok_or_else(|| {
        format!(
            "has element type {}; f32, f16 and bf16 are supported",
            element.print()
        )
    })?;
    match shape.as_slice() {
        [rows, Some(columns)] => Ok((*rows, *columns, code)),
        _ => Err("needs 2-D operands".into()),
    }
}

/// A matmul's sizes (m, n, k), dtype code and accumulate flag, after
/// checking its operands are what cuBLAS is called with.
fn matmul_call(host: &mut Host, op: Op) -> Result<([Val; 3], i64, Val), PassError> {
    if op.num_operands() != 3 || op.num_results() != 0 {
        return Err("must work on memrefs (bufferize first)".into());
    }
    if !has_default_maps(op) {
        return Err("has transposed or broadcast indexing maps, which the cuBLAS lowering does not support yet".into());
    }
    let (m, k, a_code) = matrix(op.operand(0))?;
    let (k2, n, b_code) = matrix(op.operand(1))?;
    let (m2, n2, c_code) = matrix(op.operand(2))?;
    if a_code != b_code || a_code != c_code {
        return Err("mixes element types; cuBLAS is called with one".into());
    }
    let Some(k2) = k2 else {
        return Err(
            "has a right-hand side of dynamic size; only the rows of the left-hand side \
                    and the result may be dynamic"
                .into(),
        );
    };
    let shown = |d: Option<i64>| d.map_or("?".to_owned(), |d| d.to_string());
    if k != k2 || n != n2 || (m.is_some() && m2.is_some() && m != m2) || m.is_some() != m2.is_some()
    {
        return Err(format!(
            "has shapes {}x{k} @ {k2}x{n} into {}x{n2}, which do not match",
            shown(m),
            shown(m2)
        )
        .into());
    }
    let m = host.extent_i64(op.operand(0), 0);
    let (n, k) = (host.int(64, n), host.int(64, k));
    // c = a @ b when a zero fill was folded in (cuBLAS beta = 0), else
    // c += a @ b (linalg.matmul's meaning).
    let accumulate = i64::from(op.attr(OVERWRITES_ATTR).is_none());
    let accumulate = host.int(32, accumulate);
    Ok(([m, n, k], a_code, accumulate))
}

fn lower_matmul(host: &mut Host, op: Op) -> Result<(), PassError> {
    let (sizes, code, accumulate) = matmul_call(host, op)?;
    call_on_matrices(host, &abi::MATMUL, op, sizes, code, &[accumulate]);
    Ok(())
}

/// `second` and the `first` matmul before it (sharing its left operand;
/// see `sibling_matmuls`) as one `symm_rt_matmul_pair`, at `second`.
fn lower_matmul_pair(host: &mut Host, first: Op, second: Op) -> Result<(), PassError> {
    // `sibling_matmuls` matched the second's operand types, maps and
    // overwriting to the first's, so the first's checks and sizes hold
    // for both.
    let (sizes, code, accumulate) = matmul_call(host, first)?;
    let mut args = vec![host.ptr_of(first.operand(0))];
    for op in [first, second] {
        args.push(host.ptr_of(op.operand(1)));
        args.push(host.ptr_of(op.operand(2)));
    }
    args.extend(sizes);
    args.push(host.int(32, code));
    args.push(accumulate);
    host.call(&abi::MATMUL_PAIR, &args);
    Ok(())
}

/// Whether `function` is lowered (it converts ops, launches kernels or
/// takes memrefs) and if so, whether it converts ops and is public (an
/// entry point, which takes the runtime handle first).
fn lowering_of(function: Op) -> Option<(bool, bool)> {
    let body_ops: Vec<Op> = function.walk().into_iter().skip(1).collect();
    let converts = body_ops.iter().any(|op| lowers(op.kind()));
    let launches = body_ops.iter().any(|op| op.dialect() == OpDialect::Linalg);
    let takes_memrefs = function
        .entry_block()
        .is_some_and(|b| (0..b.num_args()).any(|i| b.arg(i).ty().is_memref()));
    if !converts && !launches && !takes_memrefs {
        return None;
    }
    Some((converts, is_public(function)))
}

/// Whether `function` is public (no visibility, or "public").
fn is_public(function: Op) -> bool {
    function
        .attr("sym_visibility")
        .and_then(|v| v.symbol_or_string())
        .is_none_or(|v| v == "public")
}

/// Matmuls that read the same left operand with right operands and
/// outputs of the same types, one right after the other (past constants,
/// allocations and views, which touch no existing buffer), both
/// overwriting or both accumulating, the second reading nothing the first
/// writes: (first, second) pairs, run as one batched GEMM at the second
/// (a gate and an up projection: one launch over both weights).
fn sibling_matmuls(ops: &[Op]) -> Vec<(Op, Op)> {
    let mut pairs: Vec<(Op, Op)> = Vec::new();
    let mut seconds = std::collections::HashSet::new();
    for &first in ops {
        if !first.isa(OpKind::LinalgMatmul) || first.num_operands() != 3 || seconds.contains(&first)
        {
            continue;
        }
        let Some(second) = first.next_past_views() else {
            continue;
        };
        let written = first.operand(2);
        let same_kind = |i: usize| first.operand(i).ty() == second.operand(i).ty();
        if second.isa(OpKind::LinalgMatmul)
            && second.num_operands() == 3
            && second.attr("indexing_maps") == first.attr("indexing_maps")
            && second.operand(0) == first.operand(0)
            && same_kind(1)
            && same_kind(2)
            && first.attr(OVERWRITES_ATTR).is_some() == second.attr(OVERWRITES_ATTR).is_some()
            && written != first.operand(0)
            && written != first.operand(1)
            && (0..3).all(|i| second.operand(i) != written)
        {
            pairs.push((first, second));
            seconds.insert(second);
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
fn fold_zero_fills(ops: Vec<Op>) -> Vec<Op> {
    let mut folded = Vec::new();
    for &fill in &ops {
        if !fill.isa(OpKind::LinalgFill) || fill.num_operands() != 2 || fill.num_results() != 0 {
            continue;
        }
        if !is_zero_constant(fill.operand(0)) {
            continue;
        }
        let buffer = fill.operand(1);
        // The matmul must follow the fill directly (past fresh allocations
        // and constants), so nothing in between, a view of the buffer
        // included, can observe the zeros.
        let next = fill.next_past_fresh();
        let overlaps = |operand: Val| views_of(operand, buffer) || views_of(buffer, operand);
        if let Some(matmul) = next
            && matmul.isa(OpKind::LinalgMatmul)
            && matmul.num_operands() == 3
            && matmul.operand(2) == buffer
            && !overlaps(matmul.operand(0))
            && !overlaps(matmul.operand(1))
        {
            matmul.set_attr(OVERWRITES_ATTR, matmul.ctx().unit());
            folded.push(fill);
        }
    }
    // The fills' own bodies (linalg.yield) go with them.
    let folded_set: std::collections::HashSet<Op> = folded.iter().copied().collect();
    let kept: Vec<Op> = ops
        .into_iter()
        .filter(|op| {
            !folded_set.contains(op) && !op.parent().is_some_and(|p| folded_set.contains(&p))
        })
        .collect();
    for fill in folded {
        crate::ir::rewrite::erase(fill);
    }
    kept
}

/// Whether `value` is `of` or reaches it through view-like ops.
fn views_of(mut value: Val, of: Val) -> bool {
    loop {
        if value == of {
            return true;
        }
        match value.def() {
            Some(def) if def.is_view_like() && def.num_operands() > 0 => value = def.operand(0),
            _ => return false,
        }
    }
}

/// `name(runtime, a, b, c, sizes..., dtype code, extra...)` on the op's
/// three matrix operands.
fn call_on_matrices(
    host: &mut Host,
    call: &RuntimeCall,
    op: Op,
    sizes: [Val; 3],
    code: i64,
    extra: &[Val],
) {
    let mut args: Vec<Val> = (0..3).map(|i| host.ptr_of(op.operand(i))).collect();
    args.extend(sizes);
    args.push(host.int(32, code));
    args.extend_from_slice(extra);
    host.call(call, &args);
}

fn lower_all_gather_matmul(host: &mut Host, op: Op) -> Result<(), PassError> {
    let static_rows = |value: Val| -> Result<(i64, i64, i64), PassError> {
        static_bytes(value.ty())?;
        match matrix(value)? {
            (Some(rows), columns, code) => Ok((rows, columns, code)),
            _ => Err("has a dynamic shape, which all_gather_matmul does not support yet".into()),
        }
    };
    let (m, k, code) = static_rows(op.operand(0))?;
    let (_, n, _) = static_rows(op.operand(1))?;
    static_rows(op.operand(2))?;
    let sizes = [m, k, n].map(|size| host.int(64, size));
    call_on_matrices(host, &abi::ALL_GATHER_MATMUL, op, sizes, code, &[]);
    Ok(())
}

impl SymmPass for ConvertSymmMemToRuntime {
    fn run(module: Op, options: &PassOptions) -> Result<(), PassFailed> {
        let mut conversion = Conversion {
            ctx: module.ctx(),
            groups: module.group_table(),
            symbols: SymbolIndex::new(module),
            cuda_graphs: options.flag("cuda-graphs"),
            decls: Declarations::default(),
            failed: false,
        };
        for op in module.walk() {
            if op.isa(OpKind::SymmAlloc) && op.result(0).ty().byte_size() == Some(0) {
                let ty = op.result(0).ty().print();
                conversion.error(
                    op,
                    &format!("'symm_mem.alloc' allocates no bytes ({ty}); remove it"),
                );
            } else if let Some(why) = refusal(op.kind()) {
                conversion.error(op, &format!("'{}' {why}", op.name()));
            } else if let Some(why) = host_access::refusal(op) {
                conversion.error(op, &why);
            } else if op.isa(OpKind::Call)
                && let Some(name) = op.attr("callee").and_then(|c| c.symbol_or_string())
                && let Some(callee) = conversion.symbols.lookup(&name)
                && callee.entry_block().is_some()
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
        for group in module.entry_block().map(|b| b.ops()).unwrap_or_default() {
            if !group.isa(OpKind::Group) {
                continue;
            }
            let (Some(world), Some(name)) = (
                group.attr("world_size").and_then(|a| a.int()),
                group.symbol_name(),
            ) else {
                continue;
            };
            match &first_world {
                None => first_world = Some((world, name)),
                Some((first, first_name)) if *first != world => conversion.error(
                    group,
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
        let (partitions, functions): (Vec<Op>, Vec<Op>) = defined_functions(module)
            .into_iter()
            .partition(|f| f.attr("cudagraph.partition").is_some());
        for function in functions {
            conversion.lower_function(function);
        }
        if conversion.failed {
            return Err(PassFailed);
        }
        // Every launch ran its partition's body in place.
        crate::ir::rewrite::erase_collected(module, &partitions);
        let Some(block) = module.entry_block() else {
            return Ok(());
        };
        let declarations: Vec<Op> = block
            .ops()
            .into_iter()
            .filter(|op| op.isa(OpKind::Group) || op.isa(OpKind::Global))
            .collect();
        crate::ir::rewrite::erase_collected(module, &declarations);
        // Comm buffers become plain device memory, in every function (helpers
        // included): a type conversion drops the `#symm_mem.allocator` memory
        // space (C++, DialectConversion).
        // SAFETY: the live module being converted.
        if !unsafe { symm_dialects::ffi::symmMemStripAllocatorMemorySpaces(module.raw()) } {
            crate::ir::emit_error(
                module.loc(),
                "comm buffers' types do not convert to plain memrefs",
            );
            return Err(PassFailed);
        }
        conversion.decls.emit(conversion.ctx, block, module.loc());
        module.set_attr("gpu.container_module", conversion.ctx.unit());
        Ok(())
    }
}
