//! `symm-check-gpu-symbols`: after `convert-gpu-to-nvvm`, every function a
//! kernel calls must be defined in its GPU module or come from a library
//! that `gpu-module-to-binary` links. Otherwise the PTX carries an
//! `.extern` that the driver cannot resolve, and the module fails to load
//! at run time (`CUDA_ERROR_INVALID_HANDLE` on every launch). This pass
//! makes that a compile-time error at each calling op, naming the function
//! and, for libdevice's, the `math` op it came from.

use crate::{
    PassDescriptor, PassFailed, PassOptions, TypedPass, gpu_codegen::libdevice,
    ir::melior_ext::OperationExt, ir::op_kind::OpKind,
};
use melior::{
    Context,
    ir::{
        OperationRef,
        operation::{OperationLike, WalkOrder, WalkResult},
    },
};
use std::collections::BTreeSet;
use symm_dialects::emit_error;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<CheckGpuSymbols>(
    c"symm-check-gpu-symbols",
    c"SymmCheckGpuSymbols",
    c"Refuse calls from GPU kernels to functions that neither the GPU module nor a linked library defines",
    c"builtin.module",
    &[crate::PassOption::new(
        c"libdevice",
        c"libdevice is linked into the kernels (it defines the __nv_* functions)",
        crate::OptionKind::Bool,
        c"false",
    )],
    file!(),
);

pub struct CheckGpuSymbols;

/// The prefix of every libdevice function.
pub const LIBDEVICE_PREFIX: &str = "__nv_";

/// The op that lowers to libdevice function `name` (`__nv_expf` →
/// `math.exp`), where it is one of the math ops; `None` otherwise.
pub fn math_op_of(name: &str) -> Option<String> {
    let base = name.strip_prefix(LIBDEVICE_PREFIX)?;
    // f32 functions end in 'f' (expf); f64 ones do not, and some end in
    // 'f' themselves (erf).
    let op = |base: &str| -> Option<String> {
        let op = match base {
            "pow" => "math.powf",
            "fabs" => "math.absf",
            "fmod" => "arith.remf",
            "exp" | "exp2" | "expm1" | "log" | "log2" | "log10" | "log1p" | "tanh" | "tan"
            | "sin" | "cos" | "sinh" | "cosh" | "asin" | "acos" | "atan" | "atan2" | "asinh"
            | "acosh" | "atanh" | "erf" | "erfc" | "rsqrt" | "sqrt" | "cbrt" | "ceil" | "floor"
            | "round" | "trunc" => return Some(format!("math.{base}")),
            _ => return None,
        };
        Some(op.to_owned())
    };
    base.strip_suffix('f').and_then(op).or_else(|| op(base))
}

/// Why a call to `name` cannot be resolved, or `None` when it can.
pub fn unresolved_reason(name: &str, libdevice_linked: bool) -> Option<String> {
    if name.starts_with(LIBDEVICE_PREFIX) {
        if libdevice_linked {
            return None;
        }
        let source = math_op_of(name).map_or_else(
            || format!("a call to {name}"),
            |op| format!("'{op}' (lowered to a call to {name})"),
        );
        return Some(format!(
            "{source} needs libdevice, which was not found: run ./dev setup, pass \
             --libdevice=PATH to symm-compile or set {}",
            libdevice::ENV
        ));
    }
    Some(format!(
        "calls {name}, which nothing defines for the GPU: kernels may call only functions \
         of their own module and libdevice's math"
    ))
}

/// Whether `op` is a function declaration (`llvm.func` without a body).
fn is_declaration(op: &OperationRef) -> bool {
    op.isa(OpKind::LlvmFunc) && op.first_block().is_none()
}

/// The names a GPU module declares without defining them.
fn declarations(gpu_module: &OperationRef) -> BTreeSet<String> {
    let mut declared = BTreeSet::new();
    gpu_module.walk(WalkOrder::PreOrder, |op| {
        if is_declaration(&op) {
            declared.extend(op.symbol_or_string("sym_name"));
        }
        WalkResult::Advance
    });
    declared
}

/// An error at each call of `gpu_module` to a function it only declares
/// and no linked library defines; whether there was one.
fn refuse_unresolved_calls(gpu_module: &OperationRef, linked: bool) -> bool {
    let declared = declarations(gpu_module);
    let mut failed = false;
    gpu_module.walk(WalkOrder::PreOrder, |op| {
        if let Some(callee) = op
            .isa(OpKind::LlvmCall)
            .then(|| op.symbol_or_string("callee"))
            .flatten()
            .filter(|callee| declared.contains(callee))
            && let Some(why) = unresolved_reason(&callee, linked)
        {
            emit_error(op.location(), &why);
            failed = true;
        }
        WalkResult::Advance
    });
    failed
}

impl TypedPass for CheckGpuSymbols {
    fn run_typed<'c>(
        _context: &'c Context,
        module: OperationRef<'c, '_>,
        options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let linked = options.flag("libdevice");
        let mut failed = false;
        module.walk(WalkOrder::PreOrder, |op| {
            if !op.isa(OpKind::GpuModule) {
                return WalkResult::Advance;
            }
            failed |= refuse_unresolved_calls(&op, linked);
            WalkResult::Skip
        });
        if failed { Err(PassFailed) } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libdevice_names_map_to_math_ops() {
        assert_eq!(math_op_of("__nv_expf").as_deref(), Some("math.exp"));
        assert_eq!(math_op_of("__nv_rsqrtf").as_deref(), Some("math.rsqrt"));
        assert_eq!(math_op_of("__nv_powf").as_deref(), Some("math.powf"));
        assert_eq!(math_op_of("__nv_erf").as_deref(), Some("math.erf"));
        assert_eq!(math_op_of("__nv_frexpf"), None);
        assert_eq!(math_op_of("memcpy"), None);
    }

    #[test]
    fn libdevice_calls_resolve_only_when_linked() {
        assert_eq!(unresolved_reason("__nv_tanhf", true), None);
        let why = unresolved_reason("__nv_tanhf", false).unwrap();
        assert!(why.starts_with("'math.tanh' (lowered to a call to __nv_tanhf) needs libdevice"));
        assert!(
            unresolved_reason("my_helper", true)
                .unwrap()
                .contains("calls my_helper")
        );
    }
}
