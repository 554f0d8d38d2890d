//! Which ops a CUDA graph can capture.
//!
//! Not capturable: host<->device copies and anything else touching host
//! memory (`#cudagraph.host`), host reads and writes of device memory
//! (`memref.load/store` outside kernels), host-side compute on values that
//! change per call, dynamically sized allocations, collective allocations
//! (`symm_mem.alloc`, which rendezvous with peers), frees, and calls to
//! functions not marked `cudagraph.capturable`. Unknown ops are not
//! capturable either.

use super::partitioning::OpClass;
use crate::{ir::Op, module::SymbolIndex};

/// Ops that compute a value fixed for the life of the process: they can be
/// cloned into a partition instead of becoming one of its inputs.
pub fn is_constant_like(op: Op) -> bool {
    op.num_operands() == 0
        && op.num_regions() == 0
        && matches!(
            op.name().as_str(),
            "arith.constant"
                | "symm_mem.get_global"
                | "symm_mem.rank"
                | "symm_mem.world_size"
                | "memref.get_global"
        )
}

fn touches_host_memory(op: Op) -> bool {
    op.operands()
        .into_iter()
        .chain(op.results())
        .any(|value| is_host(value.ty()))
}

fn is_host(ty: crate::ir::Ty) -> bool {
    ty.is_memref()
        && ty
            .memory_space()
            .is_some_and(|space| space.print() == "#cudagraph.host")
}

/// The class of one top-level op of a host function.
pub fn classify(op: Op, symbols: &SymbolIndex) -> OpClass {
    if touches_host_memory(op) {
        return OpClass::Fallback;
    }
    let name = op.name();
    if is_constant_like(op) {
        return OpClass::Capturable { work: false };
    }
    if name.starts_with("linalg.") {
        return OpClass::Capturable { work: true };
    }
    if name.starts_with("symm_mem.") && op.symmetric_operands().is_some() {
        return OpClass::Capturable { work: true };
    }
    match name.as_str() {
        "memref.copy" => OpClass::Capturable { work: true },
        "memref.alloc" if op.num_operands() == 0 => OpClass::Capturable { work: false },
        "memref.view"
        | "memref.subview"
        | "memref.cast"
        | "memref.reinterpret_cast"
        | "memref.collapse_shape"
        | "memref.expand_shape"
        | "memref.memory_space_cast" => {
            // A view computed from per-call scalars is host-side compute.
            if op
                .operands()
                .iter()
                .skip(1)
                .all(|v| v.def().is_some_and(is_constant_like))
            {
                OpClass::Capturable { work: false }
            } else {
                OpClass::Fallback
            }
        }
        "func.call" => {
            let capturable = op
                .attr("callee")
                .and_then(|callee| callee.symbol_or_string())
                .and_then(|callee| symbols.lookup(&callee))
                .is_some_and(|callee| callee.attr("cudagraph.capturable").is_some());
            if capturable {
                OpClass::Capturable { work: true }
            } else {
                OpClass::Fallback
            }
        }
        _ => OpClass::Fallback,
    }
}
