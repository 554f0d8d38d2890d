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
//! while the grid before them drains. A kernel that already holds a wait
//! is left as it is: it placed its own, after reads that no grid before it
//! writes (the wgmma GEMV that fills its ring with weight while the GEMV
//! whose output it reads drains: `GemvTile::fills_before_wait`). What
//! changes is only when the blocks get resident: kernels that signal
//! `griddepcontrol.launch_dependents` (the generated GEMVs, once their
//! loop is done) let the next grid's blocks be placed and wait while they
//! finish. The pass runs only for chips with `griddepcontrol`
//! (sm_90 and up): symm-compile leaves it out of the pipeline for older
//! chips, and a module without the marker is launched the ordinary way.

use crate::{
    PassDescriptor, PassFailed, PassOptions, TypedPass,
    ir::melior_ext::{BlockExt, OperationExt},
    ir::op_kind::OpKind,
};
use melior::{
    Context,
    dialect::llvm,
    ir::{
        BlockLike, BlockRef, OperationRef,
        attribute::IntegerAttribute,
        operation::{OperationLike, OperationMutLike},
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

impl TypedPass for WaitForPriorGrids {
    fn run_typed<'c>(
        context: &'c Context,
        module: OperationRef<'c, '_>,
        _options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let Some(body) = module.first_block() else {
            return Ok(());
        };
        for gpu_module in body
            .ops()
            .into_iter()
            .filter(|op| op.isa(OpKind::GpuModule))
        {
            let Some(contents) = gpu_module.first_block() else {
                continue;
            };
            let kernels: Vec<OperationRef> = contents
                .ops()
                .into_iter()
                .filter(|op| op.has_attribute("gpu.kernel"))
                .collect();
            if kernels.is_empty() {
                continue;
            }
            for kernel in kernels {
                if places_own_wait(kernel) {
                    continue;
                }
                if let Some(entry) = kernel.first_block() {
                    wait_first(context, kernel, entry);
                }
            }
            mark(context, gpu_module, contents);
        }
        Ok(())
    }
}

/// Whether `kernel` already holds a `griddepcontrol.wait`: a kernel that
/// places its own (the wgmma GEMV that fills its ring with weight first,
/// `GemvTile::fills_before_wait`) answers for what it reads before it.
fn places_own_wait(kernel: OperationRef) -> bool {
    kernel
        .descendants()
        .into_iter()
        .any(|op| op.is_grid_dependency_wait())
}

/// `griddepcontrol.wait` first in the kernel's entry block (which holds at
/// least its `gpu.return`), or right after the L2 prefetches it opens
/// with: the op after the last prefetch of the entry's leading run of
/// prefetches and effect-free ops.
fn wait_first<'c>(context: &'c Context, kernel: OperationRef<'c, '_>, entry: BlockRef<'c, '_>) {
    let Some(mut first) = entry.first_operation() else {
        return;
    };
    let mut op = Some(first);
    while let Some(current) = op {
        let prefetch = current.is_l2_prefetch();
        if !prefetch && !current.is_effect_free_value() {
            break;
        }
        op = current.next_in_block();
        if prefetch && let Some(next) = op {
            first = next;
        }
    }
    let wait = symm_dialects::attributes::nvvm_grid_dep_action(context, false);
    entry.insert_operation_before(
        first,
        symm_dialects::nvvm::griddepcontrol(context, wait, kernel.location()).into(),
    );
}

/// The marker global (an i8 of 1, external so that it stays in the PTX)
/// first in the GPU module.
fn mark<'c>(context: &'c Context, gpu_module: OperationRef<'c, '_>, contents: BlockRef<'c, '_>) {
    let Some(first) = contents.first_operation() else {
        return;
    };
    let i8: melior::ir::Type = IntegerType::new(context, 8).into();
    // Global memory: address space 1.
    let mut global = crate::ir::builders::llvm_global_op(
        context,
        gpu_module.location(),
        (symm_protocol::WAITS_FOR_PRIOR_GRIDS, i8),
        llvm::attributes::Linkage::External,
        1,
        None,
    );
    global.set_attribute("value", IntegerAttribute::new(i8, 1).into());
    contents.insert_operation_before(first, global);
}
