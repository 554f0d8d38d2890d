//! CUDA graphs of compiled partitions: a partition (a whole function is
//! the case of one) run again with the same arguments replays what it
//! launched instead of launching it again.
//!
//! The first run with a set of arguments is eager (it also creates pools,
//! loads modules and sizes workspaces, none of which a capture may do),
//! the second is captured and launched as a graph, later ones replay it.
//! Graphs record device addresses, so the key is the arguments: other
//! buffers mean another graph. Every buffer the partition allocates
//! (`buffer`) is made on a key's eager run and has the same address in its
//! capture and every replay. Keys of a partition share a buffer of the same
//! index and size: one partition's runs are ordered on the stream (its
//! symmetric pools are shared by every call already), and a partition's
//! planned arena has one size for every token count (Llama's MLP block:
//! one 100 MiB buffer). A buffer is freed when no key kept uses it. This
//! module holds the bookkeeping; the `symm_rt_graph_*` entry points in
//! `compiled` drive it.
//!
//! A model calls one compiled layer once per layer and step, each time with
//! that layer's weights: Llama-3-8B's 32 layers at 3 token counts are 96
//! keys, Llama-3-70B's 80 layers 80 at one count. A cache smaller than the
//! keys a step cycles through forgets each key before its next call, so
//! every call would run eagerly, allocate its buffers again and
//! synchronize the device to free the forgotten ones (session 25's cache,
//! 64 keys each with buffers of its own, ran such a model's MLP calls at
//! 226-403 µs instead of about 50: bench/results/2026-11-28-graph-cache-h200.md).
//! So the cache keeps many keys (`Limits`, set by the environment), forgets
//! the least recently used first, and reports the first time a partition
//! forgets one.

use crate::error::Error;
use std::collections::HashMap;

/// How much each partition keeps: at most `keys` keys, and the least
/// recently used keys go while the buffers they use exceed `bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub keys: usize,
    pub bytes: usize,
}

/// `SYMM_GRAPHS_PER_FUNCTION`: the keys kept per partition.
pub const KEYS_ENV: &str = "SYMM_GRAPHS_PER_FUNCTION";
/// `SYMM_GRAPH_BUFFERS_MB`: the MiB of buffers kept per partition.
pub const BYTES_ENV: &str = "SYMM_GRAPH_BUFFERS_MB";

/// `name`'s value in `lookup` (the environment) as a whole number of at
/// least 1, `default` where it is unset; an error names a malformed value.
fn positive_env(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &str,
    default: usize,
) -> crate::Result<usize> {
    let Some(text) = lookup(name) else {
        return Ok(default);
    };
    match text.trim().parse::<usize>() {
        Ok(value) if value > 0 => Ok(value),
        _ => Err(Error::Env(format!(
            "{name}={text:?}: expected a whole number of at least 1"
        ))),
    }
}

impl Limits {
    /// 1024 keys (a 128-layer model at 8 token counts), 1 GiB of buffers.
    pub const DEFAULT: Limits = Limits {
        keys: 1024,
        bytes: 1 << 30,
    };

    /// The limits `lookup` (the environment) sets, the defaults where it
    /// sets none; an error names a value that is not a positive whole
    /// number.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> crate::Result<Limits> {
        let megabytes = positive_env(&lookup, BYTES_ENV, Self::DEFAULT.bytes >> 20)?;
        Ok(Limits {
            keys: positive_env(&lookup, KEYS_ENV, Self::DEFAULT.keys)?,
            bytes: megabytes.checked_mul(1 << 20).ok_or_else(|| {
                Error::Env(format!(
                    "{BYTES_ENV}={megabytes}: more bytes than fit in a size"
                ))
            })?,
        })
    }
}

/// What a run of a partition does.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Run the body eagerly.
    Run,
    /// Run the body under capture, then finish with `captured`.
    Capture,
    /// Replay the key's graph (`graph`); skip the body.
    Replay,
}

/// One key's state: its graph once captured, the size of each buffer it
/// uses (by index), and when it was last used (the partition's `tick`).
struct Entry<G> {
    graph: Option<G>,
    buffers: Vec<Option<usize>>,
    used: u64,
}

/// A buffer of a partition, and how many kept keys use it.
struct Shared<B> {
    buffer: B,
    users: usize,
}

struct FunctionGraphs<G, B> {
    /// Keys run once (eagerly) or captured.
    entries: HashMap<Vec<u64>, Entry<G>>,
    /// The buffers, by index and size.
    shared: HashMap<(usize, usize), Shared<B>>,
    /// The buffers' bytes.
    bytes: usize,
    /// Counts the partition's runs: an entry's `used` orders the keys.
    tick: u64,
    /// The key of the run in progress.
    current: Option<Vec<u64>>,
    capturing: bool,
    /// Whether forgetting a key was reported.
    warned: bool,
}

impl<G, B> Default for FunctionGraphs<G, B> {
    fn default() -> Self {
        Self {
            entries: HashMap::new(),
            shared: HashMap::new(),
            bytes: 0,
            tick: 0,
            current: None,
            capturing: false,
            warned: false,
        }
    }
}

impl<G, B> FunctionGraphs<G, B> {
    /// Forgets the least recently used key, and the buffers no other key
    /// uses (into `evicted`).
    fn forget_oldest(&mut self, evicted: &mut Vec<B>) {
        let oldest = self
            .entries
            .iter()
            .min_by_key(|(_, entry)| entry.used)
            .map(|(key, _)| key.clone());
        let Some(entry) = oldest.and_then(|key| self.entries.remove(&key)) else {
            return;
        };
        for (index, bytes) in entry.buffers.into_iter().enumerate() {
            let Some(bytes) = bytes else { continue };
            let Some(shared) = self.shared.get_mut(&(index, bytes)) else {
                continue;
            };
            shared.users -= 1;
            if shared.users == 0
                && let Some(unused) = self.shared.remove(&(index, bytes))
            {
                self.bytes -= bytes;
                evicted.push(unused.buffer);
            }
        }
    }

    fn current_entry(&mut self) -> Option<&mut Entry<G>> {
        let key = self.current.as_ref()?;
        self.entries.get_mut(key)
    }
}

/// Every partition's graphs and buffers, keyed by the partition's identity
/// (the address of a marker the compiler emits per partition and object).
/// `G` is a graph, `B` a device buffer (generic, so the bookkeeping is
/// tested without a GPU).
pub struct FunctionGraphCache<G, B> {
    functions: HashMap<u64, FunctionGraphs<G, B>>,
    limits: Limits,
    /// Graphs captured, over every partition, since the start.
    captures: u64,
    /// Replays, over every partition, since the start.
    replays: u64,
}

impl<G, B> Default for FunctionGraphCache<G, B> {
    fn default() -> Self {
        Self {
            functions: HashMap::new(),
            limits: Limits::DEFAULT,
            captures: 0,
            replays: 0,
        }
    }
}

/// What `step` decided, and what it forgot to make room: buffers of keys
/// no longer kept, which the caller frees once queued work is done. The
/// first time a partition forgets a key, `thrashing` holds the partition's
/// keys and buffer bytes kept then, to report.
pub struct Stepped<B> {
    pub step: Step,
    pub evicted: Vec<B>,
    pub thrashing: Option<(usize, usize)>,
}

impl<G, B> FunctionGraphCache<G, B> {
    /// The limits of every partition from now on.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// What the run of `function` with `arguments` does next. Without
    /// `may_capture` (graphs off, or the application capturing the call
    /// itself) it runs eagerly, with the key's buffers all the same. A new
    /// key first makes room: the least recently used keys go while the
    /// partition holds `limits.keys` keys or more than `limits.bytes` of
    /// buffers.
    pub fn step(&mut self, function: u64, arguments: &[u64], may_capture: bool) -> Stepped<B> {
        let limits = self.limits;
        let state = self.functions.entry(function).or_default();
        state.capturing = false;
        state.tick += 1;
        let tick = state.tick;
        let mut evicted = Vec::new();
        let mut thrashing = None;
        let graph_kept = match state.entries.get_mut(arguments) {
            Some(entry) => {
                entry.used = tick;
                entry.graph.is_some()
            }
            None => {
                let kept = state.entries.len();
                while !state.entries.is_empty()
                    && (state.entries.len() >= limits.keys || state.bytes > limits.bytes)
                {
                    state.forget_oldest(&mut evicted);
                }
                if state.entries.len() < kept && !state.warned {
                    state.warned = true;
                    thrashing = Some((state.entries.len(), state.bytes));
                }
                state.entries.insert(
                    arguments.to_vec(),
                    Entry {
                        graph: None,
                        buffers: Vec::new(),
                        used: tick,
                    },
                );
                state.current = Some(arguments.to_vec());
                return Stepped {
                    step: Step::Run,
                    evicted,
                    thrashing,
                };
            }
        };
        if state.current.as_deref() != Some(arguments) {
            state.current = Some(arguments.to_vec());
        }
        let step = match (graph_kept, may_capture) {
            (true, true) => {
                self.replays += 1;
                Step::Replay
            }
            (false, true) => {
                state.capturing = true;
                Step::Capture
            }
            (_, false) => Step::Run,
        };
        Stepped {
            step,
            evicted,
            thrashing,
        }
    }

    /// Buffer `index` of the run in progress of `function`: the
    /// partition's buffer of that index and size (another key's too), or
    /// `make(bytes)`'s, which must be of `bytes` bytes. A buffer of another
    /// size under the same key is an error (the key fixes every size).
    pub fn buffer<E>(
        &mut self,
        function: u64,
        index: usize,
        bytes: usize,
        make: impl FnOnce(usize) -> Result<B, E>,
    ) -> Result<Option<&B>, E> {
        let Some(state) = self.functions.get_mut(&function) else {
            return Ok(None);
        };
        let Some(key) = state.current.as_ref() else {
            return Ok(None);
        };
        let Some(entry) = state.entries.get_mut(key) else {
            return Ok(None);
        };
        if entry.buffers.len() <= index {
            entry.buffers.resize_with(index + 1, || None);
        }
        match entry.buffers[index] {
            Some(held) if held != bytes => return Ok(None),
            Some(_) => {}
            None => {
                match state.shared.get_mut(&(index, bytes)) {
                    Some(shared) => shared.users += 1,
                    None => {
                        let buffer = make(bytes)?;
                        state
                            .shared
                            .insert((index, bytes), Shared { buffer, users: 1 });
                        state.bytes += bytes;
                    }
                }
                entry.buffers[index] = Some(bytes);
            }
        }
        Ok(state
            .shared
            .get(&(index, bytes))
            .map(|shared| &shared.buffer))
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
            .flat_map(|state| state.shared.values())
            .map(|shared| &shared.buffer)
    }

    /// The graph of `function`'s run in progress (after `Step::Replay`),
    /// to replay and update its replay choice.
    pub fn graph_mut(&mut self, function: u64) -> Option<&mut G> {
        let state = self.functions.get_mut(&function)?;
        let key = state.current.as_ref()?;
        state.entries.get_mut(key)?.graph.as_mut()
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
        let entry = state.current_entry()?;
        entry.graph = Some(graph);
        self.captures += 1;
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
            .buffer(function, index, bytes, |bytes| {
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
        assert_eq!(step(&mut cache, 1, &[10, 20]), Step::Replay);
        assert_eq!(cache.graph_mut(1), Some(&mut "graph"));
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
    fn keys_share_the_buffers_of_an_index_and_size() {
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
        // Another size at that index is another buffer; the same index
        // and size is the same buffer.
        step(&mut cache, 1, &[8]);
        assert_eq!(buffer(&mut cache, 1, 0, 6), Some(vec![0; 6]));
        assert_eq!(cache.buffers().count(), 3);
        step(&mut cache, 1, &[9]);
        assert_eq!(buffer(&mut cache, 1, 2, 8), Some(vec![2; 8]));
        assert_eq!(cache.buffers().count(), 3);
        // Another partition has buffers of its own.
        step(&mut cache, 2, &[7]);
        buffer(&mut cache, 2, 0, 4);
        assert_eq!(cache.buffers().count(), 4);
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

    /// Runs `function` with `key` as a compiled call does: a buffer of
    /// `bytes` and, when captured, a graph.
    fn call(cache: &mut Cache, function: u64, key: &[u64], bytes: usize) -> Stepped<Vec<u8>> {
        let stepped = cache.step(function, key, true);
        buffer(cache, function, 0, bytes);
        if stepped.step == Step::Capture {
            cache.captured(function, "graph");
        }
        stepped
    }

    #[test]
    fn keys_are_bounded_and_the_least_recently_used_gives_back_its_buffers() {
        let mut cache = Cache::default();
        cache.set_limits(Limits {
            keys: 3,
            bytes: usize::MAX,
        });
        for key in 0..3 {
            assert!(call(&mut cache, 7, &[key], 1).evicted.is_empty());
        }
        // Key 0 is used again, so key 1 is now the least recent.
        call(&mut cache, 7, &[0], 1);
        let stepped = cache.step(7, &[u64::MAX], true);
        assert_eq!(stepped.step, Step::Run);
        // The keys share their one buffer: it stays.
        assert!(stepped.evicted.is_empty());
        // The first key forgotten is reported, with what is kept.
        assert_eq!(stepped.thrashing, Some((2, 1)));
        // Key 0 kept its graph; key 1 starts over.
        assert_eq!(step(&mut cache, 7, &[0]), Step::Replay);
        let stepped = cache.step(7, &[1], true);
        assert_eq!(stepped.step, Step::Run);
        assert_eq!(stepped.thrashing, None);
    }

    #[test]
    fn buffers_past_the_byte_limit_make_the_oldest_keys_go() {
        let mut cache = Cache::default();
        cache.set_limits(Limits {
            keys: 100,
            bytes: 10,
        });
        call(&mut cache, 3, &[1], 6);
        call(&mut cache, 3, &[2], 7);
        // 13 bytes kept: the next key first forgets key 1 and its 6 bytes.
        let stepped = call(&mut cache, 3, &[3], 8);
        assert_eq!(stepped.evicted, vec![vec![0u8; 6]]);
        assert_eq!(cache.buffers().count(), 2);
        // 15: key 2 goes, and 8 bytes are kept.
        let stepped = call(&mut cache, 3, &[4], 64);
        assert_eq!(stepped.evicted, vec![vec![0u8; 7]]);
        // A key over the limit by itself is kept while it runs; the next
        // key makes every other go.
        let stepped = call(&mut cache, 3, &[5], 1);
        assert_eq!(stepped.evicted.len(), 2);
        assert_eq!(cache.buffers().count(), 1);
    }

    #[test]
    fn a_model_cycling_its_layers_at_several_token_counts_replays_every_call() {
        // Llama-3-70B: 80 layers, each its own weights, at 3 token counts in
        // turn: 240 keys, each call in a cycle of 240.
        let mut cache = Cache::default();
        let keys: Vec<[u64; 2]> = (0..3).flat_map(|m| (0..80).map(move |l| [l, m])).collect();
        for _ in 0..2 {
            for key in &keys {
                call(&mut cache, 9, key, 1 << 16);
            }
        }
        for key in &keys {
            let stepped = call(&mut cache, 9, key, 1 << 16);
            assert_eq!(stepped.step, Step::Replay);
            assert!(stepped.evicted.is_empty() && stepped.thrashing.is_none());
        }
        assert_eq!(cache.captures(), 240);
        // One buffer, whatever the keys.
        assert_eq!(cache.buffers().count(), 1);
    }

    #[test]
    fn a_cycle_of_more_keys_than_kept_is_reported_once() {
        let mut cache = Cache::default();
        cache.set_limits(Limits {
            keys: 2,
            bytes: usize::MAX,
        });
        let mut reports = Vec::new();
        for _ in 0..4 {
            for key in 0..3u64 {
                if let Some(report) = call(&mut cache, 5, &[key], 8).thrashing {
                    reports.push(report);
                }
            }
        }
        // A cycle of 3 keys through room for 2 never replays, and says so once.
        assert_eq!(reports, vec![(1, 8)]);
        assert_eq!(cache.captures(), 0);
        assert_eq!(cache.replays(), 0);
    }

    #[test]
    fn limits_come_from_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| value.to_string())
            }
        };
        assert_eq!(Limits::from_env(env(&[])).unwrap(), Limits::DEFAULT);
        assert_eq!(
            Limits::from_env(env(&[(KEYS_ENV, "4096"), (BYTES_ENV, " 256 ")])).unwrap(),
            Limits {
                keys: 4096,
                bytes: 256 << 20
            }
        );
        for (name, value) in [(KEYS_ENV, "0"), (KEYS_ENV, "many"), (BYTES_ENV, "-1")] {
            let pairs: &'static [(&str, &str)] = Box::leak(Box::new([(name, value)]));
            let error = Limits::from_env(env(pairs)).unwrap_err().to_string();
            assert!(
                error.contains(name) && error.contains("at least 1"),
                "{error}"
            );
        }
        let error = Limits::from_env(env(&[(BYTES_ENV, "18446744073709551615")]))
            .unwrap_err()
            .to_string();
        assert!(error.contains("more bytes than fit"), "{error}");
    }
}
