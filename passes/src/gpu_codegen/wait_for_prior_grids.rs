//! `symm-wait-for-prior-grids`: every kernel of the program's GPU modules
//! waits for the grids before it (`griddepcontrol.wait`) before it touches
//! memory, and each such module carries the marker global
//! `symm_protocol::WAITS_FOR_PRIOR_GRIDS`. The runtime then launches the
//! module's kernels with programmatic dependent launch (sm_90 and up): a
//! kernel's blocks may be scheduled while the grid before it drains, and
//! its launch and ramp overlap that grid's tail instead of following it.
//!
//! The wait precedes every memory access of the kernel, so each keeps the
//! stream's order, exactly as with an ordinary launch, whichever grid came
//! before (ours, cuBLAS's, the user's). Only L2 prefetches may come before
//! it (with the arithmetic that computes their addresses), when a kernel
//! opens with them: a prefetch yields no value and L2 is where the prior
//! grid's writes land, so no value read later can depend on it; the
//! generated GEMVs start their weight's first lines towards L2 that way
//! while the grid before them drains. What changes is only when the blocks get resident: kernels
//! that signal `griddepcontrol.launch_dependents` (the generated GEMVs,
//! once their loop is done) let the next grid's blocks be placed and wait
//! while they finish. The pass runs only for chips with `griddepcontrol`
//! (sm_90 and up): symm-compile leaves it out of the pipeline for older
//! chips, and a module without the marker is launched the ordinary way.

use crate::collectives::emit::Emitter;
use crate::ir::op_kind::OpKind;
use crate::{
    PassDescriptor, PassFailed, PassOptions, SymmPass,
    ir::{Blk, Op},
};
use melior::{
    dialect::{llvm, ods},
    ir::{
        attribute::{IntegerAttribute, StringAttribute},
        operation::OperationMutLike,
        r#type::IntegerType,
    },
};

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<WaitForPriorGrids>(
    c"symm-wait-for-prior-grids",
    c"SymmWaitForPriorGrids",
    c"Make every GPU kernel wait for the grids before it (griddepcontrol.wait), so the runtime may launch it programmatically",
    c"builtin.module",
    &[],
    file!(),
);

pub struct WaitForPriorGrids;

impl SymmPass for WaitForPriorGrids {
    fn run(module: Op, _options: &PassOptions) -> Result<(), PassFailed> {
        let Some(body) = module.entry_block() else {
            return Ok(());
        };
        for gpu_module in body
            .ops()
            .into_iter()
            .filter(|op| op.isa(OpKind::GpuModule))
        {
            let Some(contents) = gpu_module.entry_block() else {
                continue;
            };
            let kernels: Vec<Op> = contents
                .ops()
                .into_iter()
                .filter(|op| op.attr("gpu.kernel").is_some())
                .collect();
            if kernels.is_empty() {
                continue;
            }
            for kernel in &kernels {
                if let Some(entry) = kernel.entry_block() {
                    wait_first(*kernel, entry);
                }
            }
            mark(gpu_module, contents);
        }
        Ok(())
    }
}

/// Whether `op` touches no memory and holds no regions.
fn is_effect_free_value(op: Op) -> bool {
    // SAFETY: a live op.
    unsafe { symm_dialects::ffi::symmOpIsEffectFreeValue(op.raw()) }
}

/// Whether `op` is an L2 prefetch.
fn is_l2_prefetch(op: Op) -> bool {
    // SAFETY: a live op.
    unsafe { symm_dialects::ffi::symmOpIsL2Prefetch(op.raw()) }
}

/// `griddepcontrol.wait` first in the kernel's entry block (which holds at
/// least its `gpu.return`), or right after the L2 prefetches it opens
/// with: the op after the last prefetch of the entry's leading run of
/// prefetches and effect-free ops.
fn wait_first(kernel: Op, entry: Blk) {
    let Some(mut first) = entry.first_op() else {
        return;
    };
    let mut op = Some(first);
    while let Some(current) = op {
        let prefetch = is_l2_prefetch(current);
        if !prefetch && !is_effect_free_value(current) {
            break;
        }
        op = current.next();
        if prefetch && let Some(next) = op {
            first = next;
        }
    }
    Emitter::build_before(first, kernel, |e| {
        e.grid_dependency(false);
    });
}

/// The marker global (an i8 of 1, external so that it stays in the PTX)
/// first in the GPU module.
fn mark(gpu_module: Op, contents: Blk) {
    let Some(first) = contents.first_op() else {
        return;
    };
    Emitter::build_before(first, gpu_module, |e| {
        let i8: melior::ir::Type = IntegerType::new(e.ctx, 8).into();
        let mut global: melior::ir::Operation = ods::llvm::mlir_global(
            e.ctx,
            melior::ir::Region::new(),
            melior::ir::attribute::TypeAttribute::new(i8),
            StringAttribute::new(e.ctx, symm_protocol::WAITS_FOR_PRIOR_GRIDS),
            llvm::attributes::linkage(e.ctx, llvm::attributes::Linkage::External),
            e.loc,
        )
        .into();
        global.set_attribute("value", IntegerAttribute::new(i8, 1).into());
        global.set_attribute(
            "addr_space",
            IntegerAttribute::new(e.int_type(32), 1).into(),
        );
        e.push(global);
    });
}
