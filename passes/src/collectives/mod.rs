//! The collectives' kernels, written once as IR: what decides each one
//! (`all_reduce`), the typed-builder shorthand they are written with
//! (`emit`), the kernels themselves, built from the symm_mem device ops
//! (`kernel_ir`), which kernel each message size takes (`segments`), and
//! the pass that puts them and their launches in a program (`expand`).

pub mod emit;
pub mod expand;
pub(crate) mod kernel_ir;
pub mod prologue;
mod segments;

use crate::PassError;
use crate::analysis::all_reduce::AllReduceKernel;
use crate::ir::melior_ext::{BlockExt, OperationExt};
use crate::ir::scalar::Scalar;
use emit::{Emitter, building};
use melior::{
    Context,
    dialect::ods,
    ir::{
        Block, BlockLike, BlockRef, Location, OperationRef, Region, RegionLike,
        attribute::StringAttribute,
    },
};

/// On the split-K matmul that feeds a Lamport all-reduce kernel
/// (`symm-mem-expand-collectives`): the elements of the product per channel
/// of that kernel (i64). A generated kernel for the matmul may then send
/// the product into the pool's Lamport areas itself (`symm-linalg-matmul-to-gpu`).
pub const LAMPORT_SEND_ATTR: &str = "symm.lamport_send";
/// On that all-reduce kernel's launch, the first after the matmul in its
/// block: it takes data a matmul sent (the kernel reads the stamps).
pub const LAMPORT_RECEIVER_ATTR: &str = "symm.lamport_receiver";
/// On a rows kernel's launch (an all-reduce with a row statistic, whose
/// rows a matmul reads next) whose kernel lets the next grid launch as it
/// starts for calls of at most this many rows (i64;
/// `symm-mem-expand-collectives`' launch-dependents-rows): a generated
/// matmul right behind it may prefetch its weight there while the
/// all-reduce waits on its peers (`symm-linalg-matmul-to-gpu`).
pub const LAUNCHES_DEPENDENTS_ATTR: &str = "symm.launches_dependents";

/// An epilogue function the kernels call per element: its name, its
/// parameters' element types and its result's.
pub struct EpilogueDecl {
    pub function: String,
    pub elements: Vec<Scalar>,
    pub result: Scalar,
}

/// Appends `gpu.module @name` to `parent` (a module's body), holding a
/// private declaration of each epilogue function and every kernel (the
/// rows kernels letting the next grid launch as they start for calls of at
/// most `early_rows` rows: `AllReduceKernel::build`); returns the
/// gpu.module.
pub fn emit_kernel_module<'c, 'a, 'k>(
    context: &'c Context,
    parent: BlockRef<'c, 'a>,
    name: &str,
    epilogues: impl IntoIterator<Item = &'k EpilogueDecl>,
    kernels: impl IntoIterator<Item = &'k AllReduceKernel>,
    early_rows: u64,
) -> Result<OperationRef<'c, 'a>, PassError> {
    emit_gpu_module(context, parent, name, |e| {
        for epilogue in epilogues {
            let types = epilogue
                .elements
                .iter()
                .map(|element| {
                    e.float(*element).ok_or_else(|| {
                        PassError::Build(format!("no epilogue of element type {element}"))
                    })
                })
                .collect::<Result<Vec<_>, PassError>>()?;
            let result = e
                .float(epilogue.result)
                .ok_or_else(|| format!("no epilogue of result type {}", epilogue.result))?;
            e.declare_private_function(&epilogue.function, &types, result);
        }
        for kernel in kernels {
            kernel.build(e, e.block, early_rows)?;
        }
        Ok(())
    })
}

/// The op of `parent` (a module's body) that already defines symbol
/// `name`: the program took the name a gpu.module of generated kernels
/// needs, and adding it would leave the module invalid (a redefinition).
pub fn name_taken<'c, 'a>(parent: BlockRef<'c, 'a>, name: &str) -> Option<OperationRef<'c, 'a>> {
    parent
        .ops()
        .into_iter()
        .find(|op| op.symbol_or_string("sym_name").as_deref() == Some(name))
}

/// The error at a symbol that `name_taken` found.
pub fn taken_message(name: &str, taken: OperationRef) -> String {
    format!(
        "'{}' @{name} takes the name of the gpu.module that holds the generated kernels; \
         rename it",
        taken.name_text()
    )
}

/// Puts `gpu.module @name` first in `parent` (a module's body), its body
/// written by `fill` (an emitter on it, located at the module's name);
/// returns the gpu.module. Passes that add it to a program check
/// `name_taken` first, to report a clash at the symbol that causes it.
///
/// First, because upstream looks a `gpu.launch_func`'s kernel module up by
/// a linear scan of the module body (`SymbolTable::lookupSymbolIn`, in the
/// `gpu.container_module` verifier and in gpu-to-llvm): behind N entry
/// points at the end, that was O(N^2) (4,000 entry points: 10.0 s against
/// 7.1 s, bench/compile_time).
pub fn emit_gpu_module<'c, 'a>(
    context: &'c Context,
    parent: BlockRef<'c, 'a>,
    name: &str,
    fill: impl FnOnce(&Emitter<'c>) -> Result<(), PassError>,
) -> Result<OperationRef<'c, 'a>, PassError> {
    let loc = Location::name(context, name, Location::unknown(context));
    let body = Block::new(&[]);
    fill(&Emitter::new(context, loc, building(&body)))?;
    let region = Region::new();
    region.append_block(body);
    let module: melior::ir::Operation =
        ods::gpu::module(context, region, StringAttribute::new(context, name), loc).into();
    Ok(match parent.first_operation() {
        Some(first) => parent.insert_operation_before(first, module),
        None => parent.append_operation(module),
    })
}
