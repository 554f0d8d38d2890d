//! Host code that reads or writes device memory through a pointer: a
//! `memref.load`/`store` (or a vector or affine one, or an atomic) in a
//! function body, outside any kernel, on a buffer in device memory (an
//! entry point's memref argument, an allocation, a pool). The host cannot
//! dereference device pointers, so such a program would fault at run time
//! (and run unordered with the stream it was called on); it is refused
//! here, at the op, instead.

use crate::cudagraph::classify::is_host;
use crate::ir::melior_ext::{OperationExt, ValueExt};
use crate::ir::op_kind::OpKind;
use melior::ir::{BlockLike, OperationRef, Value, ValueLike, operation::OperationLike};

/// What an access does to its buffer, and which operand the buffer is.
fn access(op: OperationRef) -> Option<(&'static str, usize)> {
    Some(match op.kind() {
        OpKind::MemrefLoad
        | OpKind::VectorLoad
        | OpKind::VectorTransferRead
        | OpKind::AffineLoad => ("reads", 0),
        OpKind::MemrefStore
        | OpKind::VectorStore
        | OpKind::VectorTransferWrite
        | OpKind::AffineStore => ("writes", 1),
        OpKind::MemrefAtomicRmw => ("updates", 1),
        OpKind::MemrefGenericAtomicRmw => ("updates", 0),
        _ => return None,
    })
}

/// Whether `op` runs on the GPU: inside a kernel, or in a parallel loop
/// that the GPU lowering maps to one.
fn in_kernel(op: OperationRef) -> bool {
    std::iter::successors(op.parent_operation(), |p| p.parent_operation()).any(|p| {
        matches!(
            p.kind(),
            OpKind::GpuModule | OpKind::GpuLaunch | OpKind::ScfParallel
        )
    })
}

/// Whether `buffer` is device memory for certain: it views (through any
/// chain of views and casts) a function's memref argument, a device
/// allocation or a pool, and is not in host memory.
fn in_device_memory<'c: 'a, 'a>(mut buffer: Value<'c, 'a>) -> bool {
    loop {
        if is_host(buffer.r#type()) {
            return false;
        }
        match buffer.defining_op() {
            Some(def) if def.is_view_like() && def.operand_count() > 0 => {
                let Ok(source) = def.operand(0) else {
                    return false;
                };
                buffer = source;
            }
            Some(def) => {
                return matches!(
                    def.kind(),
                    OpKind::MemrefAlloc | OpKind::SymmAlloc | OpKind::SymmGetGlobal
                );
            }
            None => {
                // A function's argument (its entry block's); other block
                // arguments (loop-carried buffers) are not followed.
                return buffer.argument_of().is_some_and(|block| {
                    block.parent_operation().is_some_and(|function| {
                        function.isa(OpKind::Func)
                            && function.first_block().is_some_and(|entry| entry == block)
                    })
                });
            }
        }
    }
}

/// Why `op` cannot run in host code, if it is a host access to device
/// memory.
pub fn refusal(op: OperationRef) -> Option<String> {
    let (verb, operand) = access(op)?;
    if operand >= op.operand_count() || in_kernel(op) {
        return None;
    }
    if !in_device_memory(op.operand(operand).ok()?) {
        return None;
    }
    Some(format!(
        "'{}' {verb} device memory from host code, which cannot dereference device pointers: \
         compute it in a linalg op (it becomes a kernel) or in a gpu.launch, or keep the buffer \
         in host memory (#cudagraph.host)",
        op.name_text()
    ))
}
