//! Compiled functions as CUDA graphs: the body of an eligible entry point
//! moves under `scf.if symm_rt_graph_begin(...)`, so the runtime can run it
//! eagerly, capture it, or replay an earlier capture and skip it (see the
//! runtime's `function_graphs`). The key is the function's arguments (a
//! graph records device addresses); the identity is the address of a
//! private `memref.global` marker, unique per function and object.

use super::host::{Host, int_type};
use crate::builders::CmpI;
use crate::{
    ir::{Op, OpBuilder, Val},
    module::SymbolIndex,
};
use symm_protocol::abi;

/// Why `function` cannot become a graph, if it cannot: its body must be
/// one block; it must return nothing (a replay cannot hand back what the
/// body computed on the host); its arguments, the graph's key, must be
/// memrefs, indices or i64s; and a call may do anything unless its callee
/// is marked `cudagraph.capturable`. (The all-gather + matmul ring forks
/// onto streams of its own and joins them with events, which a capture
/// follows: symm-gpu-tests replays a captured ring.)
pub fn ineligible(function: Op, symbols: &SymbolIndex) -> Option<String> {
    let blocks = function.region_blocks(0);
    if blocks.len() != 1 {
        return Some("it has more than one block".into());
    }
    let entry = blocks[0];
    for index in 0..entry.num_args() {
        let ty = entry.arg(index).ty();
        let text = ty.print();
        if !ty.is_memref() && text != "index" && text != "i64" {
            return Some(format!(
                "argument #{index} is {text}; a graph's key takes memrefs, indices and i64s"
            ));
        }
    }
    if returns_values(function) {
        return Some("it returns values".into());
    }
    for op in function.walk() {
        if !op.is("func.call") {
            continue;
        }
        let callee = op.attr("callee").and_then(|c| c.symbol_or_string());
        let capturable = callee
            .as_deref()
            .and_then(|name| symbols.lookup(name))
            .is_some_and(|f| f.attr("cudagraph.capturable").is_some());
        if !capturable {
            return Some(format!(
                "it calls @{}, which is not marked cudagraph.capturable",
                callee.unwrap_or_default()
            ));
        }
    }
    None
}

/// Moves `body` (the entry block's ops, in order, without the terminator)
/// under `scf.if symm_rt_graph_begin(marker, arguments)`, ended by
/// `symm_rt_graph_end(marker)`. `host` builds before the terminator;
/// `arguments` are the function's own (memrefs).
pub fn wrap_body(host: &mut Host, function: Op, body: &[Op], arguments: &[Val]) {
    let ctx = host.b.ctx;
    let loc = function.loc();
    let name = format!(
        "__symm_graph_{}",
        function.symbol_name().unwrap_or_default()
    );
    let (Some(marker_ty), Some(key_ty), Some(uninitialized), Some(segments)) = (
        ctx.ty("memref<1xi8>"),
        ctx.ty(&format!("memref<{}xi64>", arguments.len().max(1))),
        ctx.attr("unit"),
        ctx.attr("array<i32: 0, 0>"),
    ) else {
        return;
    };
    let global = OpBuilder::new("memref.global", loc)
        .attr("sym_name", ctx.string(&name))
        .attr("sym_visibility", ctx.string("private"))
        .attr("type", ctx.type_attr(marker_ty))
        .attr("initial_value", uninitialized)
        .build();
    function.insert_before(global);

    let marker = OpBuilder::new("memref.get_global", loc)
        .results(&[marker_ty])
        .attr("name", ctx.symbol(&name))
        .build();
    let marker = host.b.insert(marker).result(0);
    let marker = host.ptr_of(marker);
    let key = OpBuilder::new("memref.alloca", loc)
        .results(&[key_ty])
        .attr("operandSegmentSizes", segments)
        .build();
    let key = host.b.insert(key).result(0);
    let i64_ty = int_type(ctx, 64);
    for (index, &argument) in arguments.iter().enumerate() {
        // Memrefs and pointers by address; an index as its i64 value (a
        // token count: a graph per size); an i64 as it is.
        let address = if argument.ty().is_memref() {
            host.address_of(argument)
        } else if argument.ty() == host.ptr() {
            let cast = OpBuilder::new("llvm.ptrtoint", loc)
                .operands(&[argument])
                .results(&[i64_ty])
                .build();
            host.b.insert(cast).result(0)
        } else if argument.ty().print() == "index" {
            let cast = OpBuilder::new("arith.index_cast", loc)
                .operands(&[argument])
                .results(&[i64_ty])
                .build();
            host.b.insert(cast).result(0)
        } else {
            argument
        };
        let at = host.index(index as i64);
        let store = OpBuilder::new("memref.store", loc)
            .operands(&[address, key, at])
            .build();
        host.b.insert(store);
    }
    let key = host.ptr_of(key);
    let count = host.int(64, arguments.len() as i64);
    let run = host.call_value(&abi::GRAPH_BEGIN, &[marker, key, count]);
    let zero = host.int(32, 0);
    let go = host.b.cmpi(CmpI::Ne, run, zero);
    let branch = host.b.if_then(go, false);
    let Some(yield_op) = branch.entry_block().and_then(|b| b.terminator()) else {
        return;
    };
    for &op in body {
        op.move_before(yield_op);
    }
    host.move_before(yield_op);
    host.call(&abi::GRAPH_END, &[marker]);
}

/// Whether `function` returns values (then its status is its result, and
/// it gets no asynchronous entry point or graph).
pub(super) fn returns_values(function: Op) -> bool {
    function
        .walk()
        .iter()
        .any(|op| op.is("func.return") && op.num_operands() > 0)
}
