//! `symm-wait-for-prior-grids`: every kernel of the program's GPU modules
//! waits for the grids before it (`griddepcontrol.wait`) before it touches
//! memory, and each such module carries the marker global
//! `symm_protocol::WAITS_FOR_PRIOR_GRIDS`. The runtime then launches the
//! module's kernels with programmatic dependent launch (sm_90 and up): a
//! kernel's blocks may be scheduled while the grid before it drains, and
//! its launch and ramp overlap that grid's tail instead of following it.
//!
//! The wait is each kernel's first op, so nothing a kernel does precedes
//! it: every memory access keeps the stream's order, exactly as with an
//! ordinary launch, whichever grid came before (ours, cuBLAS's, the
//! user's). What changes is only when the blocks get resident: kernels
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

/// `griddepcontrol.wait` as the first op of the kernel's entry block
/// (which holds at least its `gpu.return`).
fn wait_first(kernel: Op, entry: Blk) {
    let Some(first) = entry.first_op() else {
        return;
    };
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
