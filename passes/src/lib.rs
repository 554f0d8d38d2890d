//! symm's MLIR passes, written in Rust on melior, and their registration
//! by name so that `symm-opt --pass-pipeline=...` reaches them next to the
//! upstream passes.
//!
//! One folder per stage of the pipeline, in the order `symm-to-llvm` runs
//! them; a stage imports only earlier stages and the shared `ir` and
//! `analysis` modules:
//!
//! - `ir`: what the passes build with, on melior's typed API (inserters,
//!   builders, extension queries, symbols, host-side runtime calls, MLIR's
//!   conversion driver and rewriter);
//! - `analysis`: facts about IR that several stages read (liveness after an
//!   op, group tables, token bounds, linalg and row-reduction matching,
//!   matmul groups, the all-reduce kernel model); no rewriting;
//! - `middle_end`: verify groups, to destination-passing style, fuse
//!   epilogues (and row reductions) into all-reduces, choose algorithms,
//!   split K, realize symmetric operands, plan pools;
//! - `cudagraph`: partition into capturable runs, hoist allocations;
//! - `collectives`: expand collectives into kernels built as IR;
//! - `matmul`: generated skinny matmul kernels;
//! - `to_runtime`: lower symm_mem to runtime calls and entry points;
//! - `gpu_codegen`: linalg to GPU kernels, symbol checks, PTX.
//!
//! `registration` lists them; `library_kernels` builds the runtime's
//! kernel library through the same pipeline.

pub mod analysis;
pub mod collectives;
pub mod cudagraph;
mod error;
pub mod gpu_codegen;
pub mod ir;
pub mod library_kernels;
pub mod matmul;
pub mod middle_end;
mod pass_def;
pub mod registration;
pub mod to_runtime;

pub use analysis::group_table::{GroupDecl, GroupTable};
pub use error::{PassError, Refusal};
pub use ir::memref_size::memref_byte_size;
pub use pass_def::{OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, TypedPass};
pub use registration::{PASSES, pipelines, register_passes};
