//! Entry points: each public function that returns nothing is lowered into
//! an asynchronous form, `NAME_async(runtime, stream, args...) -> i32`,
//! which enqueues on the caller's stream (NULL: the runtime's), does not
//! synchronize and returns 0 or -1 (`symm_status` then says why), and a
//! synchronizing `NAME(runtime, args...)` that calls it with the runtime's
//! stream, waits, and ends the process with the message on any failure.

use super::RUNTIME_HANDLE_ATTR;
use crate::PassError;
use crate::analysis::dynamic::{MAX_TOKENS_ATTR, declared_max_tokens};
use crate::ir::builders::{Side, func_op, put_beside};
use crate::ir::host::{Declarations, Host, int_type, ptr_type};
use crate::ir::melior_ext::{
    BlockExt, OperationExt, ValueExt, function_io, has_identity_layout, op_key, type_text,
};
use crate::ir::module::SymbolIndex;
use crate::ir::op_kind::OpKind;
use crate::ir::typed_builder::{Inserter, dims};
use melior::{
    Context,
    dialect::{func, ods},
    ir::{
        Attribute, BlockLike, OperationRef, Type, Value, ValueLike,
        attribute::{FlatSymbolRefAttribute, StringAttribute, TypeAttribute},
        operation::OperationLike,
        r#type::FunctionType,
    },
};
use symm_protocol::abi;

/// Unit attribute on each asynchronous entry point (it reaches the
/// `llvm.func`; symm-compile declares it in the header).
pub const ASYNC_ENTRY_ATTR: &str = "symm.async_entry";

/// The suffix of an asynchronous entry point's name.
pub const ASYNC_SUFFIX: &str = "_async";

/// Sets `function`'s type.
pub fn set_function_type<'c>(
    context: &'c Context,
    function: OperationRef<'c, '_>,
    inputs: &[Type<'c>],
    results: &[Type<'c>],
) {
    let ty = FunctionType::new(context, inputs, results);
    function.set_attribute_to("function_type", TypeAttribute::new(ty.into()).into());
}

/// The returns of `function` itself (not of functions nested in it).
pub fn own_returns<'c, 'a>(function: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    function
        .descendants()
        .into_iter()
        .filter(|op| {
            op.isa(OpKind::Return)
                && op
                    .parent_operation()
                    .is_some_and(|parent| op_key(parent) == op_key(function))
        })
        .collect()
}

/// Replaces `ret` (a `func.return` of nothing) by one returning `status`.
pub fn return_status<'c>(context: &'c Context, ret: OperationRef<'c, '_>, status: Value<'c, '_>) {
    let mut at = Inserter::before(context, ret).expect("internal: a return in a block");
    let location = at.location;
    at.put(ods::func::r#return(context, &[status], location).into());
    crate::ir::rewrite::erase(ret);
}

/// Renames lowered `function` (runtime and stream first, returning the
/// status) to `NAME_async` and adds the synchronizing `NAME` after it.
pub fn split_async<'c>(
    context: &'c Context,
    function: OperationRef<'c, '_>,
    symbols: &SymbolIndex,
    decls: &mut Declarations<'c>,
) -> Result<(), PassError> {
    let location = function.location();
    let name = function.symbol_or_string("sym_name").unwrap_or_default();
    let async_name = format!("{name}{ASYNC_SUFFIX}");
    if symbols.defines(&async_name) {
        return Err(format!(
            "its asynchronous entry point would be @{async_name}, which the module defines \
             already; rename one of them"
        )
        .into());
    }
    let (inputs, _) = function_io(function.function_type().ok_or("has no function type")?);
    let i32_ty = int_type(context, 32);
    set_function_type(context, function, &inputs, &[i32_ty]);
    function.set_attribute_to(
        "sym_name",
        StringAttribute::new(context, &async_name).into(),
    );
    function.set_attribute_to(ASYNC_ENTRY_ATTR, Attribute::unit(context));

    // NAME(runtime, args...): the stream (input 1) is the runtime's.
    let sync_inputs: Vec<Type> = inputs
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, t)| *t)
        .collect();
    let wrapper = put_beside(
        function,
        Side::After,
        func_op(
            context,
            location,
            &name,
            FunctionType::new(context, &sync_inputs, &[]),
            &[(RUNTIME_HANDLE_ATTR, Attribute::unit(context))],
        ),
    );
    let body = wrapper
        .first_block()
        .expect("internal: a new function has its block");
    let args: Vec<Value> = sync_inputs
        .iter()
        .map(|t| body.add_argument(*t, location))
        .collect();
    let runtime = args[0];
    let ret = body.append_operation(ods::func::r#return(context, &[], location).into());
    let at = Inserter::before_at(context, location, ret).expect("internal: a return in a block");
    let mut host = Host::new(at, runtime, decls);
    let stream = host.null_ptr();
    let mut operands = vec![runtime, stream];
    operands.extend_from_slice(&args[1..]);
    let callee = FlatSymbolRefAttribute::new(context, &async_name);
    host.at
        .put(func::call(context, callee, &operands, &[i32_ty], location));
    host.call(&abi::EXIT, &[]);
    debug_assert_eq!(ptr_type(context), runtime.r#type());
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
pub fn bind_arguments<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    function: OperationRef<'c, 'a>,
    first: usize,
) -> Result<(), PassError> {
    let Some(entry) = function.first_block() else {
        return Ok(());
    };
    let context = host.context();
    let argument = |i: usize| -> Value<'c, 'a> {
        entry
            .argument(i)
            .expect("internal: an argument of the entry block")
            .into()
    };
    let memrefs: Vec<usize> = (first..entry.argument_count())
        .filter(|i| argument(*i).memref_type().is_some())
        .collect();
    let mut dynamic = false;
    for &i in &memrefs {
        let ty = argument(i)
            .memref_type()
            .expect("internal: a memref argument");
        if dims(ty).iter().skip(1).any(Option::is_none) || !has_identity_layout(ty.into()) {
            return Err(format!(
                "takes {} (argument #{}): an entry point's memrefs have the default layout and \
                 static sizes but for the leading one (the token count)",
                type_text(ty),
                i - first
            )
            .into());
        }
        dynamic |= dims(ty).iter().any(Option::is_none);
    }
    let location = function.location();
    let ptr = ptr_type(context);
    let tokens = if dynamic {
        let Some(bound) = declared_max_tokens(function) else {
            return Err(format!(
                "takes memrefs of dynamic size; declare the largest token count it takes with \
                 `attributes {{{MAX_TOKENS_ATTR} = N : i64}}`"
            )
            .into());
        };
        let tokens = entry.insert_argument_at(first, Type::index(context), location);
        let as_i64 = host.cast(tokens, int_type(context, 64));
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
        let arg = argument(i + shift);
        let ty = arg.memref_type().expect("internal: a memref argument");
        let uses = arg.uses();
        arg.set_type_to(ptr);
        let index = host.int(64, (i - first) as i64);
        host.call(&abi::CHECK_ALIGNED, &[arg, index, alignment]);
        let sizes: Vec<Value> = if dims(ty).iter().all(Option::is_some) {
            Vec::new()
        } else {
            tokens.into_iter().collect()
        };
        let memref = host.memref_at(arg, ty, &sizes);
        for (user, operand) in uses {
            user.set_operand_to(operand, memref);
        }
    }
    let (_, mut results) = function_io(function.function_type().ok_or("has no function type")?);
    for ret in own_returns(function) {
        let operands: Vec<Value> = ret.operands().collect();
        for (index, value) in operands.into_iter().enumerate() {
            if value.memref_type().is_some() {
                host.move_before(ret);
                let pointer = host.ptr_of(value);
                ret.set_operand_to(index, pointer);
                results[index] = ptr;
            }
        }
    }
    let inputs: Vec<Type> = (0..entry.argument_count())
        .map(|i| argument(i).r#type())
        .collect();
    set_function_type(context, function, &inputs, &results);
    // What argument attributes said about the memrefs (`symm_mem.symmetric`)
    // served the middle end; on pointers they would not verify.
    if memrefs_converted {
        function.remove_attribute_from("arg_attrs");
    }
    Ok(())
}
