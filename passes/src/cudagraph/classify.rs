//! Which ops a CUDA graph can capture.
//!
//! Not capturable: host<->device copies and anything else touching host
//! memory (`#cudagraph.host`), host reads and writes of device memory
//! (`memref.load/store` outside kernels), host control flow, collective
//! allocations (`symm_mem.alloc`, which rendezvous with peers), frees, and
//! calls to functions not marked `cudagraph.capturable`. Unknown ops are
//! not capturable either. Host arithmetic, sizes, allocations and views
//! are: they follow from the partition's inputs, and the inputs key the
//! graph (`convert-symm-mem-to-runtime` runs them before it, every call).

use super::runs::OpClass;
use crate::PassError;
use crate::ir::op_kind::{OpDialect, OpKind};
use crate::{ir::Op, ir::module::SymbolIndex};

/// Ops that compute a value fixed for the life of the process: they can be
/// cloned into a partition instead of becoming one of its inputs.
pub fn is_constant_like(op: Op) -> bool {
    op.num_operands() == 0
        && op.num_regions() == 0
        && matches!(
            op.kind(),
            OpKind::Constant
                | OpKind::SymmGetGlobal
                | OpKind::SymmRank
                | OpKind::SymmWorldSize
                | OpKind::MemrefGetGlobal
        )
}

fn touches_host_memory(op: Op) -> bool {
    op.operands()
        .into_iter()
        .chain(op.results())
        .any(|value| is_host(value.ty()))
}

/// Whether `ty` is a memref in host memory (`#cudagraph.host`).
pub fn is_host(ty: crate::ir::Ty) -> bool {
    ty.is_memref()
        && ty
            .memory_space()
            .is_some_and(crate::ir::Attr::is_host_memory)
}

/// Pure arithmetic on host scalars (`arith`, `index`, `affine.apply`).
pub fn is_host_scalar_math(op: Op) -> bool {
    op.num_regions() == 0
        && op.num_results() > 0
        && (matches!(op.dialect(), OpDialect::Arith | OpDialect::Index)
            || op.isa(OpKind::AffineApply))
}

/// Allocations, sizes and views: the host's descriptors of device memory,
/// which launch nothing.
pub fn is_buffer_bookkeeping(op: Op) -> bool {
    op.num_regions() == 0
        && matches!(
            op.kind(),
            OpKind::MemrefAlloc
                | OpKind::MemrefDim
                | OpKind::MemrefView
                | OpKind::MemrefSubview
                | OpKind::MemrefCast
                | OpKind::MemrefReinterpretCast
                | OpKind::MemrefCollapseShape
                | OpKind::MemrefExpandShape
                | OpKind::MemrefMemorySpaceCast
        )
}

/// The class of one top-level op of a host function.
pub fn classify(op: Op, symbols: &SymbolIndex) -> OpClass {
    match verdict(op, symbols) {
        Ok(class) => class,
        Err(_) => OpClass::Fallback,
    }
}

/// Why `op` must run outside a CUDA graph, or its class when it need not.
pub fn verdict(op: Op, symbols: &SymbolIndex) -> Result<OpClass, PassError> {
    let name = op.name();
    if touches_host_memory(op) {
        return Err(format!("'{name}' touches host memory (#cudagraph.host)").into());
    }
    if is_constant_like(op) {
        return Ok(OpClass::Capturable { work: false });
    }
    if op.dialect() == OpDialect::Linalg {
        return Ok(OpClass::Capturable { work: true });
    }
    if op.dialect() == OpDialect::SymmMem && op.symmetric_operands().is_some() {
        return Ok(OpClass::Capturable { work: true });
    }
    match op.kind() {
        OpKind::MemrefCopy => Ok(OpClass::Capturable { work: true }),
        // Host arithmetic, sizes, allocations and views: what they compute
        // follows from the partition's inputs, which key its graph (a
        // graph per token count), so a partition may hold them.
        _ if is_host_scalar_math(op) || is_buffer_bookkeeping(op) => {
            Ok(OpClass::Capturable { work: false })
        }
        OpKind::MemrefDealloc => {
            Err("'memref.dealloc' frees a buffer the graph did not allocate".into())
        }
        OpKind::Call => {
            let callee = op
                .attr("callee")
                .and_then(|callee| callee.symbol_or_string())
                .unwrap_or_default();
            let capturable = symbols
                .lookup(&callee)
                .is_some_and(|callee| callee.attr("cudagraph.capturable").is_some());
            if capturable {
                Ok(OpClass::Capturable { work: true })
            } else {
                Err(format!("it calls @{callee}, which is not marked cudagraph.capturable").into())
            }
        }
        OpKind::GraphLaunch => {
            Err("'cudagraph.launch' runs a partition, a graph of its own".into())
        }
        OpKind::SymmAlloc => {
            Err("'symm_mem.alloc' allocates collectively, a rendezvous with every peer".into())
        }
        _ => Err(format!("'{name}' runs on the host").into()),
    }
}
