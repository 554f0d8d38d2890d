//! The GPU code generation after `to_runtime`: linalg generics to kernels
//! (row reductions a block per row, element-wise ops), the check that
//! every call in a kernel resolves, the kernels' wait for the grids before
//! them (programmatic dependent launch), libdevice and PTX.

pub mod block_reduce;
pub mod check_gpu_symbols;
pub mod chip;
pub mod elementwise_to_gpu;
pub mod libdevice;
pub mod linalg_gpu;
pub mod ptx;
pub mod rows_to_gpu;
pub mod wait_for_prior_grids;
