//! CUDA graphs of compiled partitions: a partition (a whole function is
//! the case of one) run again with the same arguments replays what it
//! launched instead of launching it again.
//!
//! The first run with a set of arguments is eager (it also creates pools,
//! loads modules and sizes workspaces, none of which a capture may do),
//! the second is captured and launched as a graph, later ones replay it.
//! Graphs record device addresses, so the key is the arguments: other
//! buffers mean another graph. Every buffer the partition allocates is
//! the key's own (`buffer`): made on the eager run, the same address in
//! the capture and every replay, freed only when the key is forgotten.
//! This module holds the bookkeeping; the `symm_rt_graph_*` entry points
//! in `compiled` drive it.

use std::collections::HashMap;

/// Keys kept per partition (one per token count and set of buffers, as
/// vLLM keeps one graph per batch size); the least recently made goes
/// first, its buffers with it.
pub const GRAPHS_PER_FUNCTION: usize = 64;

/// What a run of a partition does.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Run the body eagerly.
    Run,
    /// Run the body under capture, then finish with `captured`.
    Capture,
    /// Replay the graph at this index of the partition's cache; skip the body.
    Replay(usize),
}

/// One key's state: its graph once captured, and its buffers.
struct Entry<G, B> {
    key: Vec<u64>,
    graph: Option<G>,
    buffers: Vec<Option<B>>,
}

struct FunctionGraphs<G, B> {
    /// Keys run once (eagerly) or captured, least recent first.
    entries: Vec<Entry<G, B>>,
    /// The entry of the run in progress.
    current: Option<usize>,
    capturing: bool,
}

impl<G, B> Default for FunctionGraphs<G, B> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            current: None,
            capturing: false,
        }
    }
}

/// Every partition's graphs and buffers, keyed by the partition's identity
/// (the address of a marker the compiler emits per partition and object).
/// `G` is a graph, `B` a device buffer (generic, so the bookkeeping is
/// tested without a GPU).
pub struct FunctionGraphCache<G, B> {
    functions: HashMap<u64, FunctionGraphs<G, B>>,
    /// Graphs captured, over every partition, since the start.
    captures: u64,
    /// Replays, over every partition, since the start.
    replays: u64,
}

impl<G, B> Default for FunctionGraphCache<G, B> {
    fn default() -> Self {
        Self {
            functions: HashMap::new(),
            captures: 0,
            replays: 0,
        }
    }
}

/// What `step` decided, and what it forgot to make room: buffers of a key
/// no longer kept, which the caller frees once queued work is done.
pub struct Stepped<B> {
    pub step: Step,
    pub evicted: Vec<B>,
}

impl<G, B> FunctionGraphCache<G, B> {
    /// What the run of `function` with `arguments` does next. Without
    /// `may_capture` (graphs off, or the application capturing the call
    /// itself) it runs eagerly, with the key's buffers all the same.
    pub fn step(&mut self, function: u64, arguments: &[u64], may_capture: bool) -> Stepped<B> {
        let state = self.functions.entry(function).or_default();
        state.capturing = false;
        let mut evicted = Vec::new();
        let at = match state.entries.iter().position(|e| e.key == arguments) {
            Some(at) => at,
            None => {
                if state.entries.len() == GRAPHS_PER_FUNCTION {
                    let oldest = state.entries.remove(0);
                    evicted.extend(oldest.buffers.into_iter().flatten());
                }
                state.entries.push(Entry {
                    key: arguments.to_vec(),
                    graph: None,
                    buffers: Vec::new(),
                });
                state.current = Some(state.entries.len() - 1);
                return Stepped {
                    step: Step::Run,
                    evicted,
                };
            }
        };
        state.current = Some(at);
        let step = match (&state.entries[at].graph, may_capture) {
            (Some(_), true) => {
                self.replays += 1;
                Step::Replay(at)
            }
            (None, true) => {
                state.capturing = true;
                Step::Capture
            }
            (_, false) => Step::Run,
        };
        Stepped { step, evicted }
    }

    /// Buffer `index` of the run in progress of `function`: the one made
    /// for its key, or `make(bytes)`'s. A buffer of another size under the
    /// same key is an error (the key fixes every size).
    pub fn buffer<E>(
        &mut self,
        function: u64,
        index: usize,
        bytes: usize,
        size_of: impl Fn(&B) -> usize,
        make: impl FnOnce(usize) -> Result<B, E>,
    ) -> Result<Option<&B>, E> {
        let Some(state) = self.functions.get_mut(&function) else {
            return Ok(None);
        };
        let Some(entry) = state.current.and_then(|at| state.entries.get_mut(at)) else {
            return Ok(None);
        };
        if entry.buffers.len() <= index {
            entry.buffers.resize_with(index + 1, || None);
        }
        let slot = &mut entry.buffers[index];
        match slot {
            Some(buffer) if size_of(buffer) != bytes => return Ok(None),
            Some(_) => {}
            None => *slot = Some(make(bytes)?),
        }
        Ok(slot.as_ref())
    }

    /// Graphs captured so far, over every partition.
    pub fn captures(&self) -> u64 {
        self.captures
    }

    /// Replays so far, over every partition.
    pub fn replays(&self) -> u64 {
        self.replays
    }

    /// Every buffer kept, over every partition and key.
    pub fn buffers(&self) -> impl Iterator<Item = &B> {
        self.functions
            .values()
            .flat_map(|state| &state.entries)
            .flat_map(|entry| entry.buffers.iter().flatten())
    }

    /// The graph at `index` of `function` (from `Step::Replay`).
    pub fn graph(&self, function: u64, index: usize) -> Option<&G> {
        self.functions
            .get(&function)
            .and_then(|state| state.entries.get(index))
            .and_then(|entry| entry.graph.as_ref())
    }

    /// Whether `function`'s body is being captured now.
    pub fn capturing(&self, function: u64) -> bool {
        self.functions
            .get(&function)
            .is_some_and(|state| state.capturing)
    }

    /// Stores the graph `capture` made of `function`'s capturing run; the
    /// graph is returned for its first launch.
    pub fn captured(&mut self, function: u64, graph: G) -> Option<&G> {
        let state = self.functions.get_mut(&function)?;
        if !std::mem::take(&mut state.capturing) {
            return None;
        }
        let entry = state.entries.get_mut(state.current?)?;
        self.captures += 1;
        entry.graph = Some(graph);
        entry.graph.as_ref()
    }

    /// Forgets a capture that failed.
    pub fn abandon(&mut self, function: u64) {
        if let Some(state) = self.functions.get_mut(&function) {
            state.capturing = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Cache = FunctionGraphCache<&'static str, Vec<u8>>;

    fn step(cache: &mut Cache, function: u64, key: &[u64]) -> Step {
        cache.step(function, key, true).step
    }

    fn buffer(cache: &mut Cache, function: u64, index: usize, bytes: usize) -> Option<Vec<u8>> {
        cache
            .buffer(function, index, bytes, Vec::len, |bytes| {
                Ok::<_, ()>(vec![index as u8; bytes])
            })
            .ok()
            .flatten()
            .cloned()
    }

    #[test]
    fn first_run_is_eager_second_captures_third_replays() {
        let mut cache = Cache::default();
        assert_eq!(step(&mut cache, 1, &[10, 20]), Step::Run);
        assert_eq!(step(&mut cache, 1, &[10, 20]), Step::Capture);
        assert!(cache.capturing(1));
        assert!(cache.captured(1, "graph").is_some());
        assert!(!cache.capturing(1));
        assert_eq!(step(&mut cache, 1, &[10, 20]), Step::Replay(0));
        assert_eq!(cache.graph(1, 0), Some(&"graph"));
        assert_eq!((cache.captures(), cache.replays()), (1, 1));
        // Other arguments or another partition start over.
        assert_eq!(step(&mut cache, 1, &[10, 21]), Step::Run);
        assert_eq!(step(&mut cache, 2, &[10, 20]), Step::Run);
    }

    #[test]
    fn a_failed_capture_is_retried() {
        let mut cache = Cache::default();
        step(&mut cache, 1, &[5]);
        assert_eq!(step(&mut cache, 1, &[5]), Step::Capture);
        cache.abandon(1);
        assert!(cache.captured(1, "late").is_none());
        assert_eq!(step(&mut cache, 1, &[5]), Step::Capture);
    }

    #[test]
    fn buffers_belong_to_the_key() {
        let mut cache = Cache::default();
        // No run in progress: no buffer.
        assert_eq!(buffer(&mut cache, 1, 0, 4), None);
        step(&mut cache, 1, &[7]);
        let first = buffer(&mut cache, 1, 0, 4);
        assert_eq!(first, Some(vec![0; 4]));
        assert_eq!(buffer(&mut cache, 1, 2, 8), Some(vec![2; 8]));
        // The capture and replays get the same buffers.
        step(&mut cache, 1, &[7]);
        assert_eq!(buffer(&mut cache, 1, 0, 4), first);
        // Another size under the same key is refused.
        assert_eq!(buffer(&mut cache, 1, 0, 5), None);
        // Another key has buffers of its own.
        step(&mut cache, 1, &[8]);
        assert_eq!(buffer(&mut cache, 1, 0, 6), Some(vec![0; 6]));
        assert_eq!(cache.buffers().count(), 3);
    }

    #[test]
    fn without_capture_the_key_still_owns_its_buffers() {
        let mut cache = Cache::default();
        for _ in 0..3 {
            assert_eq!(cache.step(4, &[1], false).step, Step::Run);
            assert_eq!(buffer(&mut cache, 4, 0, 16), Some(vec![0; 16]));
        }
        assert_eq!(cache.buffers().count(), 1);
        assert_eq!(cache.captures(), 0);
    }

    #[test]
    fn keys_are_bounded_and_the_oldest_gives_back_its_buffers() {
        let mut cache = Cache::default();
        for key in 0..GRAPHS_PER_FUNCTION as u64 {
            assert!(cache.step(7, &[key], true).evicted.is_empty());
            buffer(&mut cache, 7, 0, 1);
        }
        let stepped = cache.step(7, &[u64::MAX], true);
        assert_eq!(stepped.step, Step::Run);
        assert_eq!(stepped.evicted, vec![vec![0u8]]);
        // The oldest was forgotten: it runs eagerly again.
        assert_eq!(step(&mut cache, 7, &[0]), Step::Run);
        assert_eq!(step(&mut cache, 7, &[u64::MAX]), Step::Capture);
    }
}
