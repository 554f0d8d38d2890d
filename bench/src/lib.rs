//! Inputs for the benchmarks.

pub mod graph;
pub mod rng;
