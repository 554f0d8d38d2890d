//! `symm-gpu-wait-grid-dependencies`: every kernel begins by waiting for the
//! grids it depends on (`nvvm.griddepcontrol wait`), and each GPU module
//! gets the marker global `symm_protocol::abi::GRID_DEPENDENCY_MARKER`.
//! The runtime launches the kernels of a marked module with programmatic
//! dependent launch (PDL): the driver may start their blocks while the
//! kernel before them on the stream is finishing, instead of after it has
//! ended and its memory has been flushed, which hides most of the gap
//! between two kernels (on H200 about half a microsecond each, at a handful
//! of kernels per decode-sized layer). The wait comes before anything else
//! in the kernel, so no load sees data the previous kernel has not
//! finished writing; launched without PDL (an older runtime), it returns at
//! once.

use crate::{
    PassDescriptor, PassFailed, PassOptions, SymmPass,
    ir::{Op, OpBuilder},
};
use symm_protocol::abi::GRID_DEPENDENCY_MARKER;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<WaitGridDependencies>(
    c"symm-gpu-wait-grid-dependencies",
    c"SymmGpuWaitGridDependencies",
    c"Start every GPU kernel with griddepcontrol.wait and mark its module for programmatic dependent launch",
    c"builtin.module",
    &[],
    file!(),
);

pub struct WaitGridDependencies;

/// The marker's name, as the compiler writes it.
pub fn marker() -> &'static str {
    GRID_DEPENDENCY_MARKER
        .to_str()
        .expect("the marker's name is ASCII")
}

fn is_kernel(op: Op) -> bool {
    op.is("gpu.func") && op.attr("gpu.kernel").is_some()
}

/// `nvvm.griddepcontrol wait`, first in `kernel`'s entry block.
fn wait_first(kernel: Op) -> Result<(), String> {
    let ctx = kernel.ctx();
    let Some(entry) = kernel.entry_block() else {
        return Err("kernel without a body".into());
    };
    let kind = ctx
        .attr("#nvvm<grid_dep_action wait>")
        .ok_or("the NVVM dialect is not loaded")?;
    let wait = OpBuilder::new("nvvm.griddepcontrol", kernel.loc())
        .attr("kind", kind)
        .build();
    entry.prepend(wait);
    Ok(())
}

/// `llvm.mlir.global external constant @marker(1 : i32) {addr_space = 1}`,
/// first in `gpu_module`.
fn mark(gpu_module: Op) -> Result<(), String> {
    let ctx = gpu_module.ctx();
    let Some(body) = gpu_module.entry_block() else {
        return Err("GPU module without a body".into());
    };
    let i32_type = ctx.ty("i32").ok_or("i32 does not parse")?;
    let linkage = ctx
        .attr("#llvm.linkage<external>")
        .ok_or("the LLVM dialect is not loaded")?;
    let attr = |text: &str| ctx.attr(text).ok_or(format!("{text} does not parse"));
    let global = OpBuilder::new("llvm.mlir.global", gpu_module.loc())
        .attr("sym_name", ctx.string(marker()))
        .attr("global_type", ctx.type_attr(i32_type))
        .attr("linkage", linkage)
        .attr("constant", ctx.unit())
        .attr("value", attr("1 : i32")?)
        .attr("addr_space", attr("1 : i32")?)
        .empty_regions(1)
        .build();
    body.prepend(global);
    Ok(())
}

impl SymmPass for WaitGridDependencies {
    fn run(module: Op, _options: &PassOptions) -> Result<(), PassFailed> {
        let mut failed = false;
        let mut report = |op: Op, result: Result<(), String>| {
            if let Err(why) = result {
                crate::ir::emit_error(op.loc(), &why);
                failed = true;
            }
        };
        for gpu_module in module.walk().into_iter().filter(|op| op.is("gpu.module")) {
            let kernels: Vec<Op> = gpu_module
                .walk()
                .into_iter()
                .filter(|op| is_kernel(*op))
                .collect();
            if kernels.is_empty() {
                continue;
            }
            let marked = gpu_module.entry_block().is_some_and(|body| {
                body.ops()
                    .iter()
                    .any(|op| op.symbol_name().as_deref() == Some(marker()))
            });
            if marked {
                continue;
            }
            for kernel in kernels {
                report(kernel, wait_first(kernel));
            }
            report(gpu_module, mark(gpu_module));
        }
        if failed { Err(PassFailed) } else { Ok(()) }
    }
}
