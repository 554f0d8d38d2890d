//! A gate on a stream: the stream's later work waits until the host opens
//! it, so that a timing between two events measures the GPU's work and
//! not the host's pace of enqueuing it.
//!
//! The runtime times ways of running a site on the site's first call
//! (`kernel_choice`, `agmm::measure_pair`). Without a gate the GPU starts
//! each timed block as soon as its first launch arrives, and when the host
//! takes longer to enqueue a launch than the GPU takes to run it, the
//! events count the host's time: a cuBLAS call costs the host several µs,
//! a generated kernel's launch about one. So a process whose host ran
//! slow (another rank's process on the same cores, a busy machine) timed
//! cuBLAS slower than it runs: on 2x H200 the decoder's o_proj at 16 rows
//! took the generated kernel in some processes (cuBLAS timed 10.2-19.1
//! µs) and cuBLAS in others (6.9-9.6), where its kernel took 7.1-7.8 µs in
//! every profile (bench/results/2026-11-27-early-launch-rows-h200x2.md,
//! 2026-11-28-oproj-split-h200x2.md); gated, it timed 6.8-7.0 in every
//! process, the host idle or busy (2026-11-28-stream-gate-h200.md).
//! Compiled calls replay CUDA graphs, where the host's pace is gone; the
//! gate makes the timing see the same. A caller leaves a way's first run
//! (a warm-up) ungated: what it sets up may wait on the host, which behind
//! a gate would wait for the timeout.
//!
//! The gate is a host function on the stream (`cuLaunchHostFunc`) that
//! blocks the driver's callback thread until `open` (or a drop) opens it,
//! or at most `TIMEOUT`: a caller that fails between closing and opening
//! cannot hang the stream, and a timed-out gate is reported
//! (`StreamGate::open` returns false) so that the timing is not trusted
//! silently. The stream must not be capturing: a host function in a graph
//! would run at every replay.

use crate::cuda::{Event, Stream, check};
use crate::error::Result;
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The longest a gate holds its stream: far above the host's time to
/// enqueue a measured block (a few launches: tens of µs, a millisecond on
/// a busy host), short enough that work which waits on the host behind a
/// gate (a synchronization) costs little more than the block.
pub const TIMEOUT: Duration = Duration::from_millis(100);

/// What the host function and the gate share.
#[derive(Default)]
struct State {
    /// Opened, and whether the host function had given up waiting by then.
    opened: Mutex<Opened>,
    changed: Condvar,
}

#[derive(Default, Clone, Copy)]
struct Opened {
    by_host: bool,
    timed_out: bool,
}

impl State {
    /// The host function's wait: until opened or `timeout` passed.
    fn hold(&self, timeout: Duration) {
        let Ok(opened) = self.opened.lock() else {
            return;
        };
        let Ok((mut opened, _)) = self
            .changed
            .wait_timeout_while(opened, timeout, |o| !o.by_host)
        else {
            return;
        };
        if !opened.by_host {
            opened.timed_out = true;
        }
    }

    /// Opens the gate; whether the host function was still waiting for it
    /// (or had not started), that is whether it did not time out.
    fn open(&self) -> bool {
        let Ok(mut opened) = self.opened.lock() else {
            return false;
        };
        opened.by_host = true;
        self.changed.notify_all();
        !opened.timed_out
    }
}

/// A closed gate on a stream; opens when `open` is called or when dropped.
pub struct StreamGate {
    state: Arc<State>,
}

/// The host function: holds the stream, then drops its share of the state.
unsafe extern "C" fn hold_stream(user_data: *mut c_void) {
    // SAFETY: `close` passed a pointer from `Arc::into_raw`, given to this
    // function exactly once.
    let state = unsafe { Arc::from_raw(user_data as *const State) };
    state.hold(TIMEOUT);
}

impl StreamGate {
    /// Closes a gate on `stream`: its work enqueued from now on waits until
    /// the gate opens.
    pub fn close(stream: &Stream) -> Result<Self> {
        let state = Arc::new(State::default());
        let shared = Arc::into_raw(Arc::clone(&state)) as *mut c_void;
        // SAFETY: a live stream; the host function takes the Arc share.
        let launched = check(
            unsafe { sys::cuLaunchHostFunc(stream.raw, Some(hold_stream), shared) },
            "cuLaunchHostFunc",
        );
        if launched.is_err() {
            // SAFETY: not launched, so the share is still ours to drop.
            drop(unsafe { Arc::from_raw(shared as *const State) });
        }
        launched.map(|()| Self { state })
    }

    /// A gate on `stream` where `wanted`, else none: for timings that gate
    /// only some of their runs (not the warm-ups, never in a capture).
    pub fn close_if(wanted: bool, stream: &Stream) -> Result<Option<Self>> {
        wanted.then(|| Self::close(stream)).transpose()
    }

    /// Opens the gate; false where it had already timed out, so that the
    /// work behind it may have waited for the host.
    pub fn open(self) -> bool {
        self.state.open()
    }
}

/// Two timing events that time blocks of work on a stream, each behind a
/// gate where it counts: the pattern of the runtime's measured choices.
pub struct GatedTimer {
    start: Event,
    end: Event,
}

impl GatedTimer {
    pub fn new() -> Result<Self> {
        Ok(Self {
            start: Event::new()?,
            end: Event::new()?,
        })
    }

    /// µs that `run`'s work took on `stream`, behind a gate if `counted`
    /// (a warm-up runs ungated: what it sets up may wait on the host);
    /// `f64::MAX` where the gate gave up waiting, so that a timing that
    /// counted the host's pace is never trusted.
    pub fn time(
        &self,
        stream: &Stream,
        counted: bool,
        run: impl FnOnce() -> Result<()>,
    ) -> Result<f64> {
        let gate = StreamGate::close_if(counted, stream)?;
        self.start.record(stream)?;
        run()?;
        self.end.record(stream)?;
        let held = gate.is_none_or(StreamGate::open);
        let us = f64::from(self.start.elapsed_ms(&self.end)?) * 1000.0;
        Ok(if held { us } else { f64::MAX })
    }
}

impl Drop for StreamGate {
    fn drop(&mut self) {
        self.state.open();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;
    use std::time::Instant;

    #[test]
    fn an_opened_gate_releases_its_holder_before_the_timeout() {
        let state = Arc::new(State::default());
        let holder = {
            let state = Arc::clone(&state);
            thread::spawn(move || {
                let start = Instant::now();
                state.hold(Duration::from_secs(30));
                start.elapsed()
            })
        };
        thread::sleep(Duration::from_millis(20));
        assert!(state.open(), "opened before the timeout");
        let held = holder.join().unwrap();
        assert!(held < Duration::from_secs(10), "held {held:?}");
    }

    #[test]
    fn a_gate_opened_before_its_holder_runs_does_not_hold() {
        let state = State::default();
        assert!(state.open());
        let start = Instant::now();
        state.hold(Duration::from_secs(30));
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_gate_never_opened_gives_up_and_says_so() {
        let state = State::default();
        let start = Instant::now();
        state.hold(Duration::from_millis(30));
        assert!(start.elapsed() >= Duration::from_millis(30));
        assert!(!state.open(), "the timeout is reported");
    }
}
