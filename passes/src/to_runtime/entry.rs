//! Entry points: each public function that returns nothing is lowered into
//! an asynchronous form, `NAME_async(runtime, stream, args...) -> i32`,
//! which enqueues on the caller's stream (NULL: the runtime's), does not
//! synchronize and returns 0 or -1 (`symm_status` then says why), and a
//! synchronizing `NAME(runtime, args...)` that calls it with the runtime's
//! stream, waits, and ends the process with the message on any failure.

use super::RUNTIME_HANDLE_ATTR;
use crate::PassError;
use crate::ir::host_handles::{Declarations, Host, int_type, ptr_type};
use crate::ir::op_kind::OpKind;
use crate::{
    analysis::dynamic::{MAX_TOKENS_ATTR, max_tokens},
    ir::builders::At,
    ir::module::SymbolIndex,
    ir::{Op, Ty, Val},
};
use symm_protocol::abi;

/// Unit attribute on each asynchronous entry point (it reaches the
/// `llvm.func`; symm-compile declares it in the header).
pub const ASYNC_ENTRY_ATTR: &str = "symm.async_entry";

/// The suffix of an asynchronous entry point's name.
pub const ASYNC_SUFFIX: &str = "_async";

/// Replaces `ret` (a `func.return` of nothing) by one returning `status`.
pub fn return_status(ret: Op, status: Val) {
    let new = crate::ir::builders::func_return(ret.loc(), &[status]);
    ret.insert_before(new);
    crate::ir::rewrite::erase(ret);
}

/// Renames lowered `function` (runtime and stream first, returning the
/// status) to `NAME_async` and adds the synchronizing `NAME` after it.
pub fn split_async(
    function: Op,
    symbols: &SymbolIndex,
    decls: &mut Declarations,
) -> Result<(), PassError> {
    let ctx = function.ctx();
    let loc = function.loc();
    let name = function.symbol_name().unwrap_or_default();
    let async_name = format!("{name}{ASYNC_SUFFIX}");
    if symbols.lookup(&async_name).is_some() {
        return Err(format!(
            "its asynchronous entry point would be @{async_name}, which the module defines \
             already; rename one of them"
        )
        .into());
    }
    let (inputs, _) = function
        .attr("function_type")
        .map(Ty::from_type_attr)
        .and_then(Ty::function_io)
        .ok_or("has no function type")?;
    let i32_ty = int_type(ctx, 32);
    let async_type = ctx.function_type(&inputs, &[i32_ty]);
    function.set_attr("function_type", ctx.type_attr(async_type));
    function.set_attr("sym_name", ctx.string(&async_name));
    function.set_attr(ASYNC_ENTRY_ATTR, ctx.unit());

    // NAME(runtime, args...): the stream (input 1) is the runtime's.
    let sync_inputs: Vec<Ty> = inputs
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, t)| *t)
        .collect();
    let wrapper = crate::ir::builders::func(
        ctx,
        loc,
        &name,
        ctx.function_type(&sync_inputs, &[]),
        &[(RUNTIME_HANDLE_ATTR, ctx.unit())],
    );
    function.insert_after(wrapper);
    let body = wrapper.region_blocks(0)[0];
    let args: Vec<Val> = sync_inputs.iter().map(|t| body.add_arg(*t, loc)).collect();
    let runtime = args[0];
    let ret = crate::ir::builders::func_return(loc, &[]);
    body.append(ret);
    let mut host = Host::new(At::Before(ret), wrapper, runtime, decls);
    let stream = host.null_ptr();
    let mut operands = vec![runtime, stream];
    operands.extend_from_slice(&args[1..]);
    let call = crate::ir::builders::func_call(loc, ctx.symbol(&async_name), &operands, &[i32_ty]);
    host.b.insert(call);
    host.call(&abi::EXIT, &[]);
    debug_assert_eq!(ptr_type(ctx), runtime.ty());
    Ok(())
}

/// An entry point takes each memref as the pointer to its data (the C
/// ABI of the header): inside, a memref over that pointer stands in for
/// the argument. Memrefs of dynamic leading size (the token count) share
/// one `index` argument before them (inserted at `first`), checked against
/// the bound the function declares, so each becomes a memref of that many
/// rows. Each pointer is checked to start on a `VECTOR_ALIGNMENT` boundary
/// (the kernels move 16-byte vectors): a view that starts mid-vector is an
/// error of the call, not a misaligned-address fault in a kernel. A memref
/// the function returns is returned as its pointer too.
pub fn bind_arguments(host: &mut Host, function: Op, first: usize) -> Result<(), PassError> {
    let Some(entry) = function.entry_block() else {
        return Ok(());
    };
    let memrefs: Vec<usize> = (first..entry.num_args())
        .filter(|i| entry.arg(*i).ty().is_memref())
        .collect();
    let mut dynamic = false;
    for &i in &memrefs {
        let ty = entry.arg(i).ty();
        if ty.shape().iter().skip(1).any(Option::is_none) || !ty.has_identity_layout() {
            return Err(format!(
                "takes {} (argument #{}): an entry point's memrefs have the default layout and \
                 static sizes but for the leading one (the token count)",
                ty.print(),
                i - first
            )
            .into());
        }
        dynamic |= !ty.has_static_shape();
    }
    let ctx = function.ctx();
    let loc = function.loc();
    let ptr = ptr_type(ctx);
    let tokens = if dynamic {
        let Some(bound) = max_tokens(function) else {
            return Err(format!(
                "takes memrefs of dynamic size; declare the largest token count it takes with \
                 `attributes {{{MAX_TOKENS_ATTR} = N : i64}}`"
            )
            .into());
        };
        let tokens = entry.insert_arg(first, ctx.index_type(), loc);
        let as_i64 = host.cast(tokens, int_type(ctx, 64));
        let bound = host.int(64, bound as i64);
        host.call(&abi::CHECK_TOKENS, &[as_i64, bound]);
        Some(tokens)
    } else {
        None
    };
    let shift = usize::from(dynamic);
    let memrefs_converted = !memrefs.is_empty();
    let alignment = host.int(64, symm_protocol::VECTOR_ALIGNMENT as i64);
    for i in memrefs {
        let arg = entry.arg(i + shift);
        let ty = arg.ty();
        let uses = arg.uses();
        arg.set_ty(ptr);
        let index = host.int(64, (i - first) as i64);
        host.call(&abi::CHECK_ALIGNED, &[arg, index, alignment]);
        let sizes: Vec<Val> = if ty.has_static_shape() {
            Vec::new()
        } else {
            tokens.into_iter().collect()
        };
        let memref = host.memref_at(arg, ty, &sizes);
        for (user, operand) in uses {
            user.set_operand(operand, memref);
        }
    }
    let mut results = function
        .attr("function_type")
        .map(Ty::from_type_attr)
        .and_then(Ty::function_io)
        .ok_or("has no function type")?
        .1;
    for ret in function
        .walk()
        .into_iter()
        .filter(|op| op.isa(OpKind::Return) && op.parent() == Some(function))
    {
        for (index, value) in ret.operands().into_iter().enumerate() {
            if value.ty().is_memref() {
                host.move_before(ret);
                let pointer = host.ptr_of(value);
                ret.set_operand(index, pointer);
                results[index] = ptr;
            }
        }
    }
    let inputs: Vec<Ty> = (0..entry.num_args()).map(|i| entry.arg(i).ty()).collect();
    function.set_attr(
        "function_type",
        ctx.type_attr(ctx.function_type(&inputs, &results)),
    );
    // What argument attributes said about the memrefs (`symm_mem.symmetric`)
    // served the middle end; on pointers they would not verify.
    if memrefs_converted {
        function.remove_attr("arg_attrs");
    }
    Ok(())
}
