//! symm's MLIR passes, written in Rust on melior, and their registration
//! by name so that `symm-opt --pass-pipeline=...` reaches them next to the
//! upstream passes.

mod builders;
pub mod check_gpu_symbols;
pub mod collectives;
pub mod cudagraph;
pub mod dynamic;
pub mod elementwise_to_gpu;
pub mod fuse_epilogue;
pub mod fuse_rows;
mod group_table;
pub mod ir;
pub mod libdevice;
pub mod linalg_gpu;
pub mod matmul;
mod memref_size;
mod module;
mod pass_def;
pub mod plan;
pub mod planning;
pub mod ptx;
pub mod read_after;
pub mod realize;
pub mod rows_to_gpu;

pub mod select_all_reduce;
pub mod split_k;
mod stable_id;
mod text;
pub mod to_dps;
pub mod to_runtime;
pub mod verify_groups;

pub use group_table::{GroupDecl, GroupTable};
pub use memref_size::memref_byte_size;
pub use pass_def::{OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, SymmPass};
pub mod registration;
pub use registration::{PASSES, pipelines, register_passes};
