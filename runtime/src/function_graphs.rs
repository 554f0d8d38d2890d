//! CUDA graphs of compiled functions: a function called again with the
//! same arguments replays what it launched instead of launching it again.
//!
//! The first call with a set of arguments runs eagerly (it also creates
//! pools, loads modules and sizes workspaces, none of which a capture may
//! do), the second is captured and launched as a graph, later ones replay
//! it. Graphs record device addresses, so the key is the arguments: other
//! buffers mean another graph. This module holds the bookkeeping; the
//! `symm_rt_graph_*` entry points in `compiled` drive it.

use crate::cuda::Graph;
use std::collections::HashMap;

/// Graphs kept per function (one per token count and set of buffers, as
/// vLLM keeps one per batch size); the least recently made goes first.
const GRAPHS_PER_FUNCTION: usize = 64;

/// What a call to a compiled function does.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Run the body eagerly.
    Run,
    /// Run the body under capture, then finish with `captured`.
    Capture,
    /// Replay the graph at this index of the function's cache; skip the body.
    Replay(usize),
}

#[derive(Default)]
struct FunctionGraphs {
    /// Argument lists seen once (eagerly), most recent last.
    seen: Vec<Vec<u64>>,
    graphs: Vec<(Vec<u64>, Graph)>,
    capturing: Option<Vec<u64>>,
}

/// Every compiled function's graphs, keyed by the function's identity (the
/// address of a marker the compiler emits per function and object).
#[derive(Default)]
pub struct FunctionGraphCache {
    functions: HashMap<u64, FunctionGraphs>,
    /// Graphs captured, over every function, since the start.
    captures: u64,
    /// Replays, over every function, since the start.
    replays: u64,
}

impl FunctionGraphCache {
    /// What the call of `function` with `arguments` does next.
    pub fn step(&mut self, function: u64, arguments: &[u64]) -> Step {
        let state = self.functions.entry(function).or_default();
        if let Some(at) = state.graphs.iter().position(|(key, _)| key == arguments) {
            self.replays += 1;
            return Step::Replay(at);
        }
        if let Some(at) = state.seen.iter().position(|key| key == arguments) {
            state.seen.remove(at);
            state.capturing = Some(arguments.to_vec());
            return Step::Capture;
        }
        if state.seen.len() == GRAPHS_PER_FUNCTION {
            state.seen.remove(0);
        }
        state.seen.push(arguments.to_vec());
        Step::Run
    }

    /// Graphs captured so far, over every function.
    pub fn captures(&self) -> u64 {
        self.captures
    }

    /// Replays so far, over every function.
    pub fn replays(&self) -> u64 {
        self.replays
    }

    /// The graph at `index` of `function` (from `Step::Replay`).
    pub fn graph(&self, function: u64, index: usize) -> Option<&Graph> {
        self.functions
            .get(&function)
            .and_then(|state| state.graphs.get(index))
            .map(|(_, graph)| graph)
    }

    /// Whether `function`'s body is being captured now.
    pub fn capturing(&self, function: u64) -> bool {
        self.functions
            .get(&function)
            .is_some_and(|state| state.capturing.is_some())
    }

    /// Stores the graph `capture` made of `function`'s capturing call; the
    /// graph is returned for its first launch.
    pub fn captured(&mut self, function: u64, graph: Graph) -> Option<&Graph> {
        let state = self.functions.get_mut(&function)?;
        let key = state.capturing.take()?;
        self.captures += 1;
        if state.graphs.len() == GRAPHS_PER_FUNCTION {
            state.graphs.remove(0);
        }
        state.graphs.push((key, graph));
        state.graphs.last().map(|(_, graph)| graph)
    }

    /// Forgets a capture that failed.
    pub fn abandon(&mut self, function: u64) {
        if let Some(state) = self.functions.get_mut(&function) {
            state.capturing = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_call_runs_second_captures() {
        let mut cache = FunctionGraphCache::default();
        assert_eq!(cache.step(1, &[10, 20]), Step::Run);
        assert_eq!(cache.step(1, &[10, 20]), Step::Capture);
        assert!(cache.capturing(1));
        assert_eq!((cache.captures(), cache.replays()), (0, 0));
        // Other arguments or another function start over.
        assert_eq!(cache.step(1, &[10, 21]), Step::Run);
        assert_eq!(cache.step(2, &[10, 20]), Step::Run);
        cache.abandon(1);
        assert!(!cache.capturing(1));
        assert!(cache.graph(1, 0).is_none());
    }

    #[test]
    fn seen_arguments_are_bounded() {
        let mut cache = FunctionGraphCache::default();
        for key in 0..=GRAPHS_PER_FUNCTION as u64 {
            assert_eq!(cache.step(7, &[key]), Step::Run);
        }
        // The oldest was forgotten: it runs eagerly again.
        assert_eq!(cache.step(7, &[0]), Step::Run);
        assert_eq!(cache.step(7, &[GRAPHS_PER_FUNCTION as u64]), Step::Capture);
    }
}
