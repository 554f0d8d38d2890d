//! `cudagraph.launch` lowered: each launch of a partition (from
//! `cudagraph-partition`; a function capturable as a whole is one) becomes
//! the partition's body in place, run under
//! `symm_rt_graph_begin(marker, key)`, so the runtime runs it eagerly,
//! captures it, or replays an earlier capture and skips it (see the
//! runtime's `function_graphs`). Fallback regions between launches stay
//! where they are, eager, in order, on the same stream.
//!
//! - The key is the launch's inputs: memrefs by address and dynamic sizes
//!   (a graph records device addresses and sizes), scalars by value.
//! - Every allocation of the partition becomes `symm_rt_graph_buffer`: the
//!   key's own buffer, made on its first run, the same address when the
//!   graph is captured and on every replay (seed 001 [4/5]: hoisted
//!   allocations are these). Frees of them go; the runtime frees a key's
//!   buffers with its graph. A buffer the function returns is copied out,
//!   so that the caller owns what it gets.
//! - Allocations, views and constants run before the graph (on the host,
//!   every call: they make the partition's results, which a replay does
//!   not); the work (kernels, copies, collectives, matmuls) runs in it.
//! - Symmetric buffers (`cudagraph.p2p`) are pool addresses, passed as
//!   they are: never copied into, nor allocated from, a graph's memory.
//!
//! The identity of a launch is the address of a private `memref.global`
//! marker, unique per launch and object.

use crate::PassError;
use crate::ir::builders::{At, Builder, Cast, CmpI, memref_global};
use crate::ir::convert::{Rewrite, Rewriter, convert};
use crate::ir::host_handles::{Declarations, Host, int_type};
use crate::ir::op_kind::OpKind;
use crate::ir::scalar::Scalar;
use crate::{
    ir::module::SymbolIndex,
    ir::{Op, Val, emit_remark},
};
use std::collections::HashSet;
use symm_protocol::abi;

/// Attributes on a `memref.alloc` that `lower_alloc` makes a graph buffer:
/// the marker's symbol (`GRAPH_MARKER_ATTR`) and the buffer's index in
/// the partition (`GRAPH_BUFFER_ATTR`).
pub const GRAPH_MARKER_ATTR: &str = "symm.graph_marker";
pub const GRAPH_BUFFER_ATTR: &str = "symm.graph_buffer";

/// Whether `function` returns values (then its status is its result, and
/// it gets no asynchronous entry point).
pub(super) fn returns_values(function: Op) -> bool {
    function
        .walk()
        .iter()
        .any(|op| op.isa(OpKind::Return) && op.num_operands() > 0)
}

/// Ops that compute on the host what the partition's results are made of,
/// and launch nothing: they run before the graph, every call.
fn makes_results(op: Op) -> bool {
    use crate::cudagraph::classify::{
        is_buffer_bookkeeping, is_constant_like, is_host_scalar_math,
    };
    let op = crate::ir::bridge::operation(op);
    is_constant_like(op) || is_host_scalar_math(op) || is_buffer_bookkeeping(op)
}

/// The type of a launch's marker, a private global whose address is the
/// launch's identity.
fn marker_type(ctx: crate::ir::Ctx) -> crate::ir::Ty {
    ctx.memref(&[Some(1)], ctx.int_type(8), None, None)
}

/// The address of marker `name`, as a pointer.
pub fn marker_ptr(host: &mut Host, name: &str) -> Val {
    let ctx = host.b.ctx;
    let ty = marker_type(ctx);
    let global = host.b.memref_get_global(name, ty);
    host.ptr_of(global)
}

/// Lowers every `cudagraph.launch` in `function` (an entry point whose
/// runtime handle is `runtime`). With `graphs` off, partitions run inline,
/// eagerly. Errors name the launch.
///
/// Through MLIR's conversion driver: every launch is illegal, and its
/// rewrite inlines the partition's body and erases the launch, and the
/// frees of the graph's buffers, through the rewriter (the copy of the
/// body it takes apart was never in the IR the driver walks).
pub fn lower_launches(
    function: Op,
    runtime: Val,
    symbols: &mut SymbolIndex,
    decls: &mut Declarations,
    graphs: bool,
) -> Result<(), (Op, PassError)> {
    let mut failure = None;
    let is_launch = |op: Op| op.isa(OpKind::GraphLaunch);
    let converted = convert(
        function,
        &is_launch,
        &mut |launch, rewriter| match lower_launch(
            function,
            launch,
            runtime,
            (symbols, decls),
            graphs,
            rewriter,
        ) {
            Ok(()) => Rewrite::Lowered,
            Err(message) => {
                failure.get_or_insert((launch, message));
                Rewrite::Refused
            }
        },
    );
    if let Some(failure) = failure {
        return Err(failure);
    }
    if !converted {
        return Err((
            function,
            PassError::Build(
                "internal: convert-symm-mem-to-runtime left a cudagraph.launch".to_owned(),
            ),
        ));
    }
    Ok(())
}

/// One launch: its partition's body inline, as a graph or eagerly.
fn lower_launch(
    function: Op,
    launch: Op,
    runtime: Val,
    (symbols, decls): (&mut SymbolIndex, &mut Declarations),
    graphs: bool,
    rewriter: &mut Rewriter,
) -> Result<(), PassError> {
    let callee = launch
        .attr("callee")
        .and_then(|c| c.symbol_or_string())
        .unwrap_or_default();
    let partition = symbols
        .lookup(&callee)
        .filter(|p| p.entry_block().is_some())
        .ok_or_else(|| {
            PassError::Unsupported(format!(
                "'cudagraph.launch' runs @{callee}, which is not a function with a body \
                 in this module"
            ))
        })?;
    let body = Inlined::new(launch, partition);
    let why_eager = if graphs {
        body.why_not_captured(launch)
    } else {
        Some("CUDA graphs are off (cuda-graphs=false)".to_owned())
    };
    match why_eager {
        Some(why) => {
            if graphs {
                emit_remark(
                    launch.loc(),
                    &format!("partition @{callee} runs eagerly, without a CUDA graph: {why}"),
                );
            }
            body.inline_eagerly(launch, rewriter);
        }
        None => {
            let marker = symbols.fresh(&format!(
                "__symm_graph_{}",
                function.symbol_name().unwrap_or_default()
            ));
            let mut host = Host::new(At::Before(launch), launch, runtime, decls);
            body.inline_as_graph(&mut host, function, launch, &marker, rewriter);
        }
    }
    Ok(())
}

/// A copy of a partition's body, its arguments already the launch's
/// inputs, not yet placed anywhere.
struct Inlined {
    copy: Op,
    ops: Vec<Op>,
    results: Vec<Val>,
    /// The ops that run before the graph: those that make results, from
    /// values available there, in order.
    before: Vec<Op>,
    /// The same ops, to ask membership of (a program's partition may hold
    /// thousands).
    hoisted: HashSet<Op>,
}

impl Inlined {
    fn new(launch: Op, partition: Op) -> Self {
        let copy = partition.clone_op();
        let block = copy.entry_block().expect("partitions have a body");
        for (index, input) in launch.operands().into_iter().enumerate() {
            if index < block.num_args() {
                block.arg(index).replace_all_uses_with(input);
            }
        }
        let mut ops = block.ops();
        let results = ops.pop().map(|ret| ret.operands()).unwrap_or_default();
        let mut hoisted: HashSet<Op> = HashSet::new();
        let mut before = Vec::new();
        for &op in &ops {
            let ready = op.operands().iter().all(|v| {
                v.def()
                    .is_none_or(|def| hoisted.contains(&def) || !copy.is_ancestor_of(def))
            });
            if makes_results(op) && ready {
                hoisted.insert(op);
                before.push(op);
            }
        }
        Self {
            copy,
            ops,
            results,
            before,
            hoisted,
        }
    }

    /// Whether `op` is one of the copied body's.
    fn owns(&self, op: Op) -> bool {
        self.copy.is_ancestor_of(op)
    }

    /// Why the launch cannot be a graph: a result the work computes (a
    /// replay would skip it), an allocation that cannot run before the
    /// work, or an input the key cannot hold.
    fn why_not_captured(&self, launch: Op) -> Option<String> {
        let before = &self.hoisted;
        for (index, result) in self.results.iter().enumerate() {
            if let Some(def) = result.def()
                && self.owns(def)
                && !before.contains(&def)
            {
                return Some(format!(
                    "result #{index} is computed by '{}', which a replay would skip",
                    def.name()
                ));
            }
        }
        if let Some(alloc) = self
            .ops
            .iter()
            .find(|op| op.isa(OpKind::MemrefAlloc) && !before.contains(op))
        {
            return Some(format!(
                "an allocation's size is computed by '{}' in the work",
                alloc
                    .operands()
                    .iter()
                    .filter_map(|size| size.def())
                    .find(|def| !before.contains(def))
                    .map(|def| def.name())
                    .unwrap_or_default()
            ));
        }
        for (index, input) in launch.operands().into_iter().enumerate() {
            if let Err(why) = key_kind(input) {
                return Some(format!("input #{index} {why}"));
            }
        }
        None
    }

    fn inline_eagerly(self, launch: Op, rewriter: &mut Rewriter) {
        for &op in &self.ops {
            op.move_before(launch);
        }
        self.finish(launch, rewriter);
    }

    /// `symm_rt_graph_begin(marker, key)`, the buffers and views before
    /// the graph, then `scf.if` (run) { work; `symm_rt_graph_end` }.
    fn inline_as_graph(
        self,
        host: &mut Host,
        function: Op,
        launch: Op,
        marker: &str,
        rewriter: &mut Rewriter,
    ) {
        let ctx = host.b.ctx;
        let loc = launch.loc();
        let (marker_ty, uninitialized) = (marker_type(ctx), ctx.unit());
        function.insert_before(memref_global(ctx, loc, marker, marker_ty, uninitialized));
        let marker_ptr = marker_ptr(host, marker);
        let key = key_words(host, &launch.operands());
        let run = host.call_value(&abi::GRAPH_BEGIN, &[marker_ptr, key.0, key.1]);

        let before = &self.before;
        let mut buffers = 0;
        for &op in before {
            op.move_before(launch);
            if op.isa(OpKind::MemrefAlloc) {
                op.set_attr(GRAPH_MARKER_ATTR, ctx.symbol(marker));
                op.set_attr(GRAPH_BUFFER_ATTR, ctx.i64(buffers));
                buffers += 1;
            }
        }
        let zero = host.int(32, 0);
        host.move_before(launch);
        let go = host.b.cmpi(CmpI::Ne, run, zero);
        let branch = host.b.if_then(go, false);
        let Some(yield_op) = branch.entry_block().and_then(|b| b.terminator()) else {
            return;
        };
        for op in self.ops.iter().filter(|op| !self.hoisted.contains(op)) {
            op.move_before(yield_op);
        }
        host.move_before(yield_op);
        host.call(&abi::GRAPH_END, &[marker_ptr]);
        let allocs: Vec<Op> = before
            .iter()
            .copied()
            .filter(|op| op.isa(OpKind::MemrefAlloc))
            .collect();
        self.finish(launch, rewriter);
        // The key's buffers are the runtime's: nobody frees them, and a
        // caller gets a copy of its own.
        for alloc in &allocs {
            for (user, _) in alloc.result(0).uses() {
                if user.isa(OpKind::MemrefDealloc) {
                    rewriter.erase(user);
                }
            }
        }
        copy_out_returned(function, &allocs);
    }

    /// The launch's results are the body's; the launch goes through the
    /// rewriter, and the emptied copy, which was never in the IR, at once.
    fn finish(self, launch: Op, rewriter: &mut Rewriter) {
        for (result, value) in launch.results().into_iter().zip(&self.results) {
            result.replace_all_uses_with(*value);
        }
        rewriter.erase(launch);
        self.copy.destroy_detached();
    }
}

/// How an input enters the key: a memref by its address and dynamic sizes
/// (identity layout: a view at a per-call offset is not keyed), a scalar
/// by its bits.
fn key_kind(value: Val) -> Result<(), PassError> {
    let ty = value.ty();
    if ty.is_memref() {
        return if ty.has_identity_layout() {
            Ok(())
        } else {
            Err(format!(
                "is a strided view ({}) computed outside the partition",
                ty.print()
            )
            .into())
        };
    }
    match ty.scalar().and_then(Scalar::key_bits) {
        Some(_) => Ok(()),
        None => Err(format!("is {}, which a graph's key cannot hold", ty.print()).into()),
    }
}

/// The key of `inputs` as i64 words in a stack array: (pointer, count).
fn key_words(host: &mut Host, inputs: &[Val]) -> (Val, Val) {
    let ctx = host.b.ctx;
    let i64_ty = int_type(ctx, 64);
    let mut words = Vec::new();
    for &input in inputs {
        let ty = input.ty();
        if ty.is_memref() {
            words.push(host.address_of(input));
            for (dim, size) in ty.shape().into_iter().enumerate() {
                if size.is_none() {
                    words.push(host.dim_i64(input, dim));
                }
            }
            continue;
        }
        let scalar = ty.scalar();
        let word = match scalar {
            Some(Scalar::Index) => host.cast(input, i64_ty),
            Some(Scalar::Ptr) => host.b.convert(Cast::PtrToInt, input, i64_ty),
            _ => {
                let bits = scalar.and_then(Scalar::key_bits).unwrap_or(64);
                let int = if matches!(scalar, Some(Scalar::Int(_))) {
                    input
                } else {
                    host.b.convert(Cast::Bitcast, input, int_type(ctx, bits))
                };
                if bits == 64 {
                    int
                } else {
                    host.b.convert(Cast::ExtUi, int, i64_ty)
                }
            }
        };
        words.push(word);
    }
    let key_ty = ctx.memref(
        &[Some(words.len().max(1) as i64)],
        ctx.int_type(64),
        None,
        None,
    );
    let key = host.b.alloca(key_ty);
    for (index, word) in words.iter().enumerate() {
        let at = host.index(index as i64);
        host.b.store(*word, key, &[at]);
    }
    let count = host.int(64, words.len() as i64);
    (host.ptr_of(key), count)
}

/// A graph buffer (one of `buffers`, allocations) that `function` returns
/// goes back as a fresh copy: the next call overwrites the buffer.
fn copy_out_returned(function: Op, buffers: &[Op]) {
    let returns: Vec<Op> = function
        .walk()
        .into_iter()
        .filter(|op| op.isa(OpKind::Return) && op.parent() == Some(function))
        .collect();
    for ret in returns {
        for (index, value) in ret.operands().into_iter().enumerate() {
            let Some(def) = value.def() else { continue };
            if !buffers.contains(&def) {
                continue;
            }
            let mut b = Builder::before(ret);
            let fresh = b.alloc(value.ty(), &def.operands(), None);
            b.copy(value, fresh);
            ret.set_operand(index, fresh);
        }
    }
}
