//! Graph replays of calls on the legacy default stream, paced: before a
//! replay the host waits until at most `ahead` earlier replays are still
//! queued.
//!
//! A model calls a compiled layer once per layer, each time with its own
//! weights, so each call replays another graph. On torch's default stream
//! (the legacy default stream), with the host far ahead of the GPU, such
//! replays ran slower the more graphs were in turn (one H200, the Llama MLP
//! block at 16 rows: 53.6 µs a call for 1 graph, 63.9 for 32, 82.0 for 80,
//! 108.4 for 96; eager 52.1-53.5), while the same replays on a stream of
//! torch's own ran at 53.5-54.0. A probe of spin kernels showed the same
//! with nothing of ours in it (graphs captured on one stream and replayed on
//! the legacy one: 49.5 µs at 1 graph, 57.5 at 80, 60.8 at 128; on the
//! capture stream 49.2 throughout), and neither uploading each graph to the
//! legacy stream nor replaying it on the capture stream joined to the legacy
//! one by events helped. Holding the host a few calls ahead did. With this
//! pacer at its default of 4 replays ahead, 32, 80 and 96 graphs in turn
//! (the last 32 layers at 3 token counts) take 53.5, 53.5 and 53.0 µs a
//! call; 16 ahead took 54.3 at 80, and 64 ahead 72-75
//! (bench/results/2026-11-28-legacy-replay-h200.md). A call's wait returns
//! at once unless the host is that far ahead; 4 calls of a layer are still
//! about 200 microseconds of queued work.

use crate::cuda::{CUstream, Event, Stream};
use crate::error::Error;

/// `SYMM_LEGACY_GRAPHS_AHEAD`: the replays a caller on the legacy default
/// stream may have queued before the next one waits (0: no bound).
pub const AHEAD_ENV: &str = "SYMM_LEGACY_GRAPHS_AHEAD";
/// The default of [`AHEAD_ENV`].
pub const DEFAULT_AHEAD: usize = 4;
/// The largest bound [`AHEAD_ENV`] may set (an event each).
pub const MAX_AHEAD: usize = 1024;

/// The queued-replay bound the environment sets (or the default), None
/// for no bound; an error names a malformed value.
pub fn ahead_from_env(lookup: impl Fn(&str) -> Option<String>) -> crate::Result<Option<usize>> {
    let Some(text) = lookup(AHEAD_ENV) else {
        return Ok(Some(DEFAULT_AHEAD));
    };
    match text.trim().parse::<usize>() {
        Ok(0) => Ok(None),
        Ok(ahead) if ahead <= MAX_AHEAD => Ok(Some(ahead)),
        _ => Err(Error::Env(format!(
            "{AHEAD_ENV}={text:?}: expected a whole number from 0 (no bound) to {MAX_AHEAD}"
        ))),
    }
}

/// A point in a stream's work: recorded after a replay, waited for by the
/// host (a CUDA event; a plain type in the tests).
pub trait Mark {
    /// Marks the end of the work queued so far on the stream.
    fn mark(&self) -> crate::Result<()>;
    /// Waits (on the host) until the marked work has run; an error of that
    /// work (a faulted kernel) comes back here.
    fn reached(&self) -> crate::Result<()>;
}

/// A CUDA event recorded on the legacy default stream.
pub struct LegacyMark(Event);

impl LegacyMark {
    pub fn new() -> crate::Result<Self> {
        Ok(Self(Event::ordering()?))
    }
}

impl Mark for LegacyMark {
    fn mark(&self) -> crate::Result<()> {
        self.0
            .record(&Stream::borrowed(crate::cuda::LEGACY_STREAM as CUstream))
    }
    fn reached(&self) -> crate::Result<()> {
        self.0.synchronize()
    }
}

/// The marks of the last `ahead` replays, used in turn.
pub struct ReplayPacer<M> {
    marks: Vec<M>,
    made: usize,
}

impl<M: Mark> ReplayPacer<M> {
    /// A pacer of `marks.len()` replays ahead (at least one mark).
    pub fn new(marks: Vec<M>) -> Self {
        debug_assert!(!marks.is_empty());
        Self { marks, made: 0 }
    }

    /// Replays `replay` once the replay `ahead` before it has run, and
    /// marks its end.
    pub fn paced(&mut self, replay: impl FnOnce() -> crate::Result<()>) -> crate::Result<()> {
        let slot = self.made % self.marks.len();
        if self.made >= self.marks.len() {
            self.marks[slot].reached()?;
        }
        replay()?;
        self.marks[slot].mark()?;
        self.made += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A mark that logs "mark N" and "reached N" (N: its slot).
    struct Logged {
        slot: usize,
        log: Rc<RefCell<Vec<String>>>,
    }

    impl Mark for Logged {
        fn mark(&self) -> crate::Result<()> {
            self.log.borrow_mut().push(format!("mark {}", self.slot));
            Ok(())
        }
        fn reached(&self) -> crate::Result<()> {
            self.log.borrow_mut().push(format!("reached {}", self.slot));
            Ok(())
        }
    }

    fn pacer(ahead: usize) -> (ReplayPacer<Logged>, Rc<RefCell<Vec<String>>>) {
        let log = Rc::new(RefCell::new(Vec::new()));
        let marks = (0..ahead)
            .map(|slot| Logged {
                slot,
                log: log.clone(),
            })
            .collect();
        (ReplayPacer::new(marks), log)
    }

    #[test]
    fn waits_for_the_replay_ahead_before() {
        let (mut pacer, log) = pacer(2);
        for call in 0..5 {
            let log = log.clone();
            pacer
                .paced(|| {
                    log.borrow_mut().push(format!("replay {call}"));
                    Ok(())
                })
                .unwrap();
        }
        // Replays 0 and 1 wait for nothing; replay 2 waits for replay 0's
        // mark, 3 for 1's, 4 for 2's (slot 0 again).
        let want = "replay 0, mark 0, replay 1, mark 1, \
                    reached 0, replay 2, mark 0, reached 1, replay 3, mark 1, \
                    reached 0, replay 4, mark 0";
        assert_eq!(log.borrow().join(", "), want);
    }

    #[test]
    fn a_failed_replay_is_not_marked() {
        let (mut pacer, log) = pacer(1);
        let failed = pacer.paced(|| Err(crate::Error::InvalidArgument("launch failed".into())));
        assert!(failed.is_err());
        assert!(log.borrow().is_empty());
        // The next replay does not wait for the one that never ran.
        pacer.paced(|| Ok(())).unwrap();
        assert_eq!(*log.borrow(), ["mark 0"]);
    }

    #[test]
    fn the_environment_sets_the_bound() {
        assert_eq!(ahead_from_env(|_| None).unwrap(), Some(DEFAULT_AHEAD));
        assert_eq!(ahead_from_env(|_| Some(" 16 ".into())).unwrap(), Some(16));
        assert_eq!(ahead_from_env(|_| Some("0".into())).unwrap(), None);
        for bad in ["1025", "-1", "many", ""] {
            let error = ahead_from_env(|_| Some(bad.into()))
                .unwrap_err()
                .to_string();
            assert!(error.contains(AHEAD_ENV), "{error}");
        }
    }
}
