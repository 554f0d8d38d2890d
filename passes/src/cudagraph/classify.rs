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
use crate::ir::melior_ext::OperationExt;
use crate::ir::module::SymbolIndex;
use crate::ir::op_kind::{OpDialect, OpKind};
use melior::ir::{OperationRef, Type, ValueLike, operation::OperationLike, r#type::MemRefType};

/// Ops that compute a value fixed for the life of the process: they can be
/// cloned into a partition instead of becoming one of its inputs.
pub fn is_constant_like(op: OperationRef) -> bool {
    op.operand_count() == 0
        && op.region_count() == 0
        && matches!(
            op.kind(),
            OpKind::Constant
                | OpKind::SymmGetGlobal
                | OpKind::SymmRank
                | OpKind::SymmWorldSize
                | OpKind::MemrefGetGlobal
        )
}

fn touches_host_memory(op: OperationRef) -> bool {
    op.operands()
        .map(|value| value.r#type())
        .chain(op.results().map(|value| value.r#type()))
        .any(is_host)
}

/// Whether `ty` is a memref in host memory (`#cudagraph.host`).
pub fn is_host(ty: Type) -> bool {
    MemRefType::try_from(ty)
        .ok()
        .and_then(|memref| memref.memory_space())
        .is_some_and(symm_dialects::is_host_memory)
}

/// Pure arithmetic on host scalars (`arith`, `index`, `affine.apply`).
pub fn is_host_scalar_math(op: OperationRef) -> bool {
    op.region_count() == 0
        && op.result_count() > 0
        && (matches!(op.dialect(), OpDialect::Arith | OpDialect::Index)
            || op.isa(OpKind::AffineApply))
}

/// Allocations, sizes and views: the host's descriptors of device memory,
/// which launch nothing.
pub fn is_buffer_bookkeeping(op: OperationRef) -> bool {
    op.region_count() == 0
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
pub fn classify(op: OperationRef, symbols: &SymbolIndex) -> OpClass {
    match verdict(op, symbols) {
        Ok(class) => class,
        Err(_) => OpClass::Fallback,
    }
}

/// Why `op` must run outside a CUDA graph, or its class when it need not.
pub fn verdict(op: OperationRef, symbols: &SymbolIndex) -> Result<OpClass, PassError> {
    let name = op.name_text();
    if touches_host_memory(op) {
        return Err(format!("'{name}' touches host memory (#cudagraph.host)").into());
    }
    if is_constant_like(op) {
        return Ok(OpClass::Capturable { work: false });
    }
    if op.dialect() == OpDialect::Linalg {
        return Ok(OpClass::Capturable { work: true });
    }
    if op.dialect() == OpDialect::SymmMem && symm_dialects::symmetric_operands(op).is_some() {
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
            let callee = op.symbol_or_string("callee").unwrap_or_default();
            let capturable = symbols
                .lookup_op(&callee)
                .is_some_and(|callee| callee.has_attribute("cudagraph.capturable"));
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
