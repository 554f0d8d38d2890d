//! `symm-check-gpu-symbols`: after `convert-gpu-to-nvvm`, every function a
//! kernel calls must be defined in its GPU module or come from a library
//! that `gpu-module-to-binary` links. Otherwise the PTX carries an
//! `.extern` that the driver cannot resolve, and the module fails to load
//! at run time (`CUDA_ERROR_INVALID_HANDLE` on every launch). This pass
//! makes that a compile-time error at each calling op, naming the function
//! and, for libdevice's, the `math` op it came from.

use crate::ir::op_kind::OpKind;
use crate::{
    PassDescriptor, PassFailed, PassOptions, SymmPass,
    gpu_codegen::libdevice,
    ir::{Op, emit_error},
};
use melior::ir::{
    AttributeLike, OperationRef, RegionLike,
    operation::{OperationLike, WalkOrder, WalkResult},
};
use std::collections::BTreeSet;

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
    OpKind::of_raw(op.to_raw()) == OpKind::LlvmFunc
        && op.region(0).ok().and_then(|r| r.first_block()).is_none()
}

/// The names a GPU module declares without defining them, and its calls
/// (callee, location).
fn declarations_and_calls(
    gpu_module: &OperationRef,
) -> (BTreeSet<String>, Vec<(String, mlir_sys::MlirLocation)>) {
    let mut declared = BTreeSet::new();
    let mut calls = Vec::new();
    gpu_module.walk(WalkOrder::PreOrder, |op| {
        let attribute = |name: &str| op.attribute(name).ok().map(|a| a.to_raw());
        if is_declaration(&op) {
            declared.extend(attribute("sym_name").and_then(symm_dialects::string_value));
        } else if OpKind::of_raw(op.to_raw()) == OpKind::LlvmCall
            && let Some(callee) = attribute("callee").and_then(symm_dialects::symbol_value)
        {
            calls.push((callee, op.location().to_raw()));
        }
        WalkResult::Advance
    });
    (declared, calls)
}

impl SymmPass for CheckGpuSymbols {
    fn run(module: Op, options: &PassOptions) -> Result<(), PassFailed> {
        let module = crate::ir::bridge::operation(module);
        let linked = options.flag("libdevice");
        let mut failed = false;
        module.walk(WalkOrder::PreOrder, |op| {
            if OpKind::of_raw(op.to_raw()) != OpKind::GpuModule {
                return WalkResult::Advance;
            }
            let (declared, calls) = declarations_and_calls(&op);
            for (callee, at) in calls {
                if !declared.contains(&callee) {
                    continue;
                }
                if let Some(why) = unresolved_reason(&callee, linked) {
                    emit_error(at, &why);
                    failed = true;
                }
            }
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
