//! symm's runtime: rendezvous (a TCP store), descriptor passing between
//! processes, the launcher, and (with a GPU) symmetric allocation, signal
//! pads, the all-reduce kernels and CUDA graphs, behind a C ABI. CUDA is
//! loaded at run time, so nothing CUDA is needed to build or to run the
//! CPU parts.

pub mod abi_types;
pub mod agmm;
pub mod capi;
pub mod choice;
pub mod collectives;
pub mod compiled_call;
pub mod cuda;
pub mod error;
pub mod fdpass;
pub mod function_graphs;
pub mod gemm_algos;
pub mod group;
pub mod kernel_choice;
mod kernel_facts;
pub mod launch_list;
pub mod launcher;
pub mod library;
pub use symm_log as logging;
pub mod mgpu;
pub mod nccl;
pub mod pair_choice;
pub mod programmatic_launch;
pub mod replay_pacer;
pub mod replay_way;
pub mod session;
pub mod store;
pub mod stream_gate;
pub mod symmetric;
pub mod tensor_maps;

pub use error::{Error, Result};
