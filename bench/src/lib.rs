//! Inputs for the benchmarks.

pub mod graph;
