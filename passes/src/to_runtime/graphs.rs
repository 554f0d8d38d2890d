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

use super::entry::own_returns;
use crate::PassError;
use crate::cudagraph::classify::{is_buffer_bookkeeping, is_constant_like, is_host_scalar_math};
use crate::ir::builders::{Cast, CmpI, Side, memref_global_op, put_beside};
use crate::ir::convert::{Rewrite, Rewriter, convert_typed};
use crate::ir::host::{Declarations, Host};
use crate::ir::melior_ext::{
    BlockExt, OperationExt, ValueExt, has_identity_layout, op_key, type_text,
};
use crate::ir::module::SymbolIndex;
use crate::ir::op_kind::OpKind;
use crate::ir::scalar::Scalar;
use crate::ir::typed_builder::{Inserter, dims};
use melior::{
    Context,
    ir::{
        Attribute, BlockLike, OperationRef, RegionLike, TypeLike, Value, ValueLike,
        attribute::FlatSymbolRefAttribute,
        operation::OperationLike,
        r#type::{IntegerType, MemRefType},
    },
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
pub(super) fn returns_values(function: OperationRef) -> bool {
    function
        .descendants()
        .iter()
        .any(|op| op.isa(OpKind::Return) && op.operand_count() > 0)
}

/// Ops that compute on the host what the partition's results are made of,
/// and launch nothing: they run before the graph, every call.
fn makes_results(op: OperationRef) -> bool {
    is_constant_like(op) || is_host_scalar_math(op) || is_buffer_bookkeeping(op)
}

/// The type of a launch's marker, a private global whose address is the
/// launch's identity.
fn marker_type(context: &Context) -> MemRefType<'_> {
    MemRefType::new(IntegerType::new(context, 8).into(), &[1], None, None)
}

/// The address of marker `name`, as a pointer.
pub fn marker_ptr<'c, 'a>(host: &mut Host<'c, 'a, '_>, name: &str) -> Value<'c, 'a> {
    let ty = marker_type(host.context());
    let global = host.at.memref_get_global(name, ty);
    host.ptr_of(global)
}

/// Lowers every `cudagraph.launch` in `function` (an entry point whose
/// runtime handle is `runtime`). With `graphs` off, partitions run inline,
/// eagerly. Errors name the launch.
///
/// Through MLIR's conversion driver: every launch is illegal, and its
/// rewrite inlines the partition's body and erases the launch, and the
/// frees of the graph's buffers, through the rewriter (the copy of the
/// body it takes apart is erased at once: the driver never saw it).
pub fn lower_launches<'c, 'a>(
    context: &'c Context,
    function: OperationRef<'c, 'a>,
    runtime: Value<'c, 'a>,
    symbols: &mut SymbolIndex,
    decls: &mut Declarations<'c>,
    graphs: bool,
) -> Result<(), (OperationRef<'c, 'a>, PassError)> {
    let mut failure = None;
    let is_launch = |op: OperationRef| op.isa(OpKind::GraphLaunch);
    let converted = convert_typed(
        function,
        &is_launch,
        &mut |launch, rewriter| match lower_launch(
            context,
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
fn lower_launch<'c, 'a>(
    context: &'c Context,
    function: OperationRef<'c, 'a>,
    launch: OperationRef<'c, 'a>,
    runtime: Value<'c, 'a>,
    (symbols, decls): (&mut SymbolIndex, &mut Declarations<'c>),
    graphs: bool,
    rewriter: &mut Rewriter,
) -> Result<(), PassError> {
    let callee = launch.symbol_or_string("callee").unwrap_or_default();
    let partition: OperationRef<'c, 'a> = symbols
        .lookup_op(&callee)
        .filter(|p: &OperationRef| p.first_block().is_some())
        .ok_or_else(|| {
            PassError::Unsupported(format!(
                "'cudagraph.launch' runs @{callee}, which is not a function with a body \
                 in this module"
            ))
        })?;
    let body = Inlined::new(function, launch, partition);
    let why_eager = if graphs {
        body.why_not_captured(launch)
    } else {
        Some("CUDA graphs are off (cuda-graphs=false)".to_owned())
    };
    match why_eager {
        Some(why) => {
            if graphs {
                symm_dialects::emit_remark(
                    launch.location(),
                    &format!("partition @{callee} runs eagerly, without a CUDA graph: {why}"),
                );
            }
            body.inline_eagerly(launch, rewriter);
        }
        None => {
            let marker = symbols.fresh(&format!(
                "__symm_graph_{}",
                function.symbol_or_string("sym_name").unwrap_or_default()
            ));
            let at = Inserter::before(context, launch).expect("internal: a launch in a block");
            let mut host = Host::new(at, runtime, decls);
            body.inline_as_graph(&mut host, function, launch, &marker, rewriter);
        }
    }
    Ok(())
}

/// A copy of a partition's body, its arguments already the launch's
/// inputs, placed before the function being lowered until its ops have
/// moved into it (the conversion of that function never visits it).
struct Inlined<'c, 'a> {
    copy: OperationRef<'c, 'a>,
    ops: Vec<OperationRef<'c, 'a>>,
    results: Vec<Value<'c, 'a>>,
    /// The ops that run before the graph: those that make results, from
    /// values available there, in order.
    before: Vec<OperationRef<'c, 'a>>,
    /// The same ops (their keys), to ask membership of (a program's
    /// partition may hold thousands).
    hoisted: HashSet<usize>,
}

impl<'c, 'a> Inlined<'c, 'a> {
    fn new(
        function: OperationRef<'c, 'a>,
        launch: OperationRef<'c, 'a>,
        partition: OperationRef<'c, 'a>,
    ) -> Self {
        let copy = put_beside(function, Side::Before, partition.cloned());
        let block = copy.first_block().expect("partitions have a body");
        for (index, input) in launch.operands().enumerate() {
            if let Ok(argument) = block.argument(index) {
                Value::from(argument).replace_uses_with(input);
            }
        }
        let mut ops = block.ops();
        let results = ops
            .pop()
            .map(|ret| ret.operands().collect())
            .unwrap_or_default();
        let mut hoisted: HashSet<usize> = HashSet::new();
        let mut before = Vec::new();
        for &op in &ops {
            let ready = op.operands().all(|v| {
                v.defining_op()
                    .is_none_or(|def| hoisted.contains(&op_key(def)) || !copy.is_ancestor_of(def))
            });
            if makes_results(op) && ready {
                hoisted.insert(op_key(op));
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
    fn owns(&self, op: OperationRef<'c, 'a>) -> bool {
        self.copy.is_ancestor_of(op)
    }

    fn is_hoisted(&self, op: OperationRef) -> bool {
        self.hoisted.contains(&op_key(op))
    }

    /// Why the launch cannot be a graph: a result the work computes (a
    /// replay would skip it), an allocation that cannot run before the
    /// work, or an input the key cannot hold.
    fn why_not_captured(&self, launch: OperationRef) -> Option<String> {
        for (index, result) in self.results.iter().enumerate() {
            if let Some(def) = result.defining_op()
                && self.owns(def)
                && !self.is_hoisted(def)
            {
                return Some(format!(
                    "result #{index} is computed by '{}', which a replay would skip",
                    def.name_text()
                ));
            }
        }
        if let Some(alloc) = self
            .ops
            .iter()
            .find(|op| op.isa(OpKind::MemrefAlloc) && !self.is_hoisted(**op))
        {
            return Some(format!(
                "an allocation's size is computed by '{}' in the work",
                alloc
                    .operands()
                    .filter_map(|size| size.defining_op())
                    .find(|def| !self.is_hoisted(*def))
                    .map(|def| def.name_text())
                    .unwrap_or_default()
            ));
        }
        for (index, input) in launch.operands().enumerate() {
            if let Err(why) = key_kind(input) {
                return Some(format!("input #{index} {why}"));
            }
        }
        None
    }

    fn inline_eagerly(self, launch: OperationRef<'c, 'a>, rewriter: &mut Rewriter) {
        for &op in &self.ops {
            op.move_before_op(launch);
        }
        self.finish(launch, rewriter);
    }

    /// `symm_rt_graph_begin(marker, key)`, the buffers and views before
    /// the graph, then `scf.if` (run) { work; `symm_rt_graph_end` }.
    fn inline_as_graph(
        self,
        host: &mut Host<'c, 'a, '_>,
        function: OperationRef<'c, 'a>,
        launch: OperationRef<'c, 'a>,
        marker: &str,
        rewriter: &mut Rewriter,
    ) {
        let context = host.context();
        let location = launch.location();
        let uninitialized = Attribute::unit(context);
        let global = memref_global_op(
            context,
            location,
            marker,
            marker_type(context).into(),
            uninitialized,
        );
        put_beside(function, Side::Before, global);
        let marker_ptr = marker_ptr(host, marker);
        let inputs: Vec<Value> = launch.operands().collect();
        let key = key_words(host, &inputs);
        let run = host.call_value(&abi::GRAPH_BEGIN, &[marker_ptr, key.0, key.1]);

        let mut buffers = 0;
        for &op in &self.before {
            op.move_before_op(launch);
            if op.isa(OpKind::MemrefAlloc) {
                op.set_attribute_to(
                    GRAPH_MARKER_ATTR,
                    FlatSymbolRefAttribute::new(context, marker).into(),
                );
                op.set_int_attribute(GRAPH_BUFFER_ATTR, 64, buffers);
                buffers += 1;
            }
        }
        let zero = host.int(32, 0);
        host.move_before(launch);
        let go = host.at.cmpi(CmpI::Ne, run, zero);
        let branch = host.at.if_then(go, false);
        let Some(yield_op) = branch
            .region(0)
            .ok()
            .and_then(|r| r.first_block())
            .and_then(|b| b.terminator())
        else {
            return;
        };
        for op in self.ops.iter().filter(|op| !self.is_hoisted(**op)) {
            op.move_before_op(yield_op);
        }
        host.move_before(yield_op);
        host.call(&abi::GRAPH_END, &[marker_ptr]);
        let allocs: Vec<OperationRef<'c, 'a>> = self
            .before
            .iter()
            .copied()
            .filter(|op| op.isa(OpKind::MemrefAlloc))
            .collect();
        self.finish(launch, rewriter);
        // The key's buffers are the runtime's: nobody frees them, and a
        // caller gets a copy of its own.
        for alloc in &allocs {
            let Ok(buffer) = alloc.result(0) else {
                continue;
            };
            for (user, _) in Value::from(buffer).uses() {
                if user.isa(OpKind::MemrefDealloc) {
                    rewriter.erase_op(user);
                }
            }
        }
        copy_out_returned(context, function, &allocs);
    }

    /// The launch's results are the body's; the launch goes through the
    /// rewriter, and the emptied copy, which the conversion never saw, at
    /// once.
    fn finish(self, launch: OperationRef<'c, 'a>, rewriter: &mut Rewriter) {
        for (result, value) in launch.results().zip(&self.results) {
            Value::from(result).replace_uses_with(*value);
        }
        rewriter.erase_op(launch);
        crate::ir::rewrite::erase(self.copy);
    }
}

/// How an input enters the key: a memref by its address and dynamic sizes
/// (identity layout: a view at a per-call offset is not keyed), a scalar
/// by its bits.
fn key_kind(value: Value) -> Result<(), PassError> {
    let ty = value.r#type();
    if ty.is_mem_ref() {
        return if has_identity_layout(ty) {
            Ok(())
        } else {
            Err(format!(
                "is a strided view ({}) computed outside the partition",
                type_text(ty)
            )
            .into())
        };
    }
    match Scalar::of_type(ty).and_then(Scalar::key_bits) {
        Some(_) => Ok(()),
        None => Err(format!("is {}, which a graph's key cannot hold", type_text(ty)).into()),
    }
}

/// The key of `inputs` as i64 words in a stack array: (pointer, count).
fn key_words<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    inputs: &[Value<'c, 'a>],
) -> (Value<'c, 'a>, Value<'c, 'a>) {
    let i64_ty = host.int_type(64);
    let mut words = Vec::new();
    for &input in inputs {
        if let Some(ty) = input.memref_type() {
            words.push(host.address_of(input));
            for (dim, size) in dims(ty).into_iter().enumerate() {
                if size.is_none() {
                    words.push(host.dim_i64(input, dim));
                }
            }
            continue;
        }
        let scalar = Scalar::of_type(input.r#type());
        let word = match scalar {
            Some(Scalar::Index) => host.cast(input, i64_ty),
            Some(Scalar::Ptr) => host.at.convert(Cast::PtrToInt, input, i64_ty),
            _ => {
                let bits = scalar.and_then(Scalar::key_bits).unwrap_or(64);
                let int = if matches!(scalar, Some(Scalar::Int(_))) {
                    input
                } else {
                    let int_ty = host.int_type(bits);
                    host.at.convert(Cast::Bitcast, input, int_ty)
                };
                if bits == 64 {
                    int
                } else {
                    host.at.convert(Cast::ExtUi, int, i64_ty)
                }
            }
        };
        words.push(word);
    }
    let key_ty = MemRefType::new(i64_ty, &[words.len().max(1) as i64], None, None);
    let key = host.at.alloca(key_ty);
    for (index, word) in words.iter().enumerate() {
        let at = host.index(index as i64);
        host.at.store(*word, key, &[at]);
    }
    let count = host.int(64, words.len() as i64);
    (host.ptr_of(key), count)
}

/// A graph buffer (one of `buffers`, allocations) that `function` returns
/// goes back as a fresh copy: the next call overwrites the buffer.
fn copy_out_returned<'c>(
    context: &'c Context,
    function: OperationRef<'c, '_>,
    buffers: &[OperationRef<'c, '_>],
) {
    for ret in own_returns(function) {
        let operands: Vec<Value> = ret.operands().collect();
        for (index, value) in operands.into_iter().enumerate() {
            let Some(def) = value.defining_op() else {
                continue;
            };
            if !buffers.iter().any(|b| op_key(*b) == op_key(def)) {
                continue;
            }
            let Some(ty) = value.memref_type() else {
                continue;
            };
            let mut at = Inserter::before(context, ret).expect("internal: a return in a block");
            let sizes: Vec<Value> = def.operands().collect();
            let fresh = at.alloc(ty, &sizes);
            at.copy(value, fresh);
            ret.set_operand_to(index, fresh);
        }
    }
}
