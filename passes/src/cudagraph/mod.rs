//! CUDA-graph partitioning: which ops a graph can capture, how they split
//! into partitions, and the two passes that rewrite the IR.

pub mod classify;
pub mod hoist_allocs;
pub mod partition;
pub mod runs;
