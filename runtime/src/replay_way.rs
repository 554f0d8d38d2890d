//! How a compiled partition's captured call replays: as its CUDA graph, or
//! as its kernels launched one by one (`launch_list`), chosen per graph by
//! measurement on its first replays.
//!
//! Launched one by one, the first kernel overlaps the drain of the work
//! before it, which a graph launch cannot; but the host then pays a launch
//! per kernel, where a graph costs one. So the list wins only while the
//! host stays ahead of the GPU. The first replays time both sides of that:
//! the graph's GPU time (events around a graph replay, read once done,
//! never waited for) and the host's time to launch the list. The list is
//! kept where launching it takes the host at most half the graph's GPU
//! time, which leaves the application the other half for its own work
//! per call; otherwise the graph. Each side is the least of `SAMPLES`
//! samples (a first launch pays the driver's set-up). Only a list whose
//! every launch after the first is programmatic is a candidate (the caller
//! checks `LaunchList::whole_grid_waits`): where a kernel waits for the
//! whole grid before it, a graph's node starts sooner than a launch, which
//! the host's time does not show (on 2x H200, lists with cuBLAS kernels ran
//! the decoder half-layer 4.9 µs slower at 128 rows;
//! bench/results/2026-11-28-replay-launches-h200x2.md). `SYMM_GRAPH_REPLAY`
//! forces either way.

use crate::error::Error;

/// `SYMM_GRAPH_REPLAY`: `graph`, `launches`, or `measured` (the default).
pub const ENV: &str = "SYMM_GRAPH_REPLAY";
/// Samples of each side before the choice.
pub const SAMPLES: usize = 3;
/// The list is kept where the host's launches take at most this share of
/// the graph's GPU time.
pub const HOST_SHARE: f64 = 0.5;

/// A way to replay a captured call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    Graph,
    Launches,
}

/// What the environment asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    Measured,
    Forced(Way),
}

/// `SYMM_GRAPH_REPLAY` read from `lookup` (the environment); an error names
/// a malformed value.
pub fn setting_from_env(lookup: impl Fn(&str) -> Option<String>) -> crate::Result<Setting> {
    match lookup(ENV).as_deref().map(str::trim) {
        None | Some("measured") => Ok(Setting::Measured),
        Some("graph") => Ok(Setting::Forced(Way::Graph)),
        Some("launches") => Ok(Setting::Forced(Way::Launches)),
        Some(other) => Err(Error::Env(format!(
            "{ENV}={other:?}: expected graph, launches or measured"
        ))),
    }
}

/// What the next replay of a graph does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Replay the graph between timing events.
    TimeGraph,
    /// Launch the list, timing the host.
    TimeLaunches,
    /// Replay this way (untimed).
    Replay(Way),
}

/// One graph's choice in progress, or made.
#[derive(Clone, Debug, Default)]
pub struct ReplayChoice {
    /// The graph's GPU time per replay, µs.
    gpu_us: Vec<f64>,
    /// The host's time to launch the list, µs.
    host_us: Vec<f64>,
    /// A timed graph replay whose events have not been read yet.
    pending: bool,
    chosen: Option<Way>,
}

impl ReplayChoice {
    /// What the next replay does.
    pub fn next(&self) -> Next {
        if let Some(way) = self.chosen {
            return Next::Replay(way);
        }
        if self.gpu_us.len() < SAMPLES {
            // One timed graph replay in flight at a time.
            return match self.pending {
                true => Next::Replay(Way::Graph),
                false => Next::TimeGraph,
            };
        }
        Next::TimeLaunches
    }

    /// A timed graph replay was enqueued; its time comes with `graph_timed`.
    pub fn graph_pending(&mut self) {
        self.pending = true;
    }

    /// Whether a timed graph replay's events wait to be read.
    pub fn is_pending(&self) -> bool {
        self.pending
    }

    /// A timed graph replay took `us` of GPU time.
    pub fn graph_timed(&mut self, us: f64) {
        self.pending = false;
        self.gpu_us.push(us);
    }

    /// The list's launches took the host `us`; returns the way chosen once
    /// every sample is in.
    pub fn launches_timed(&mut self, us: f64) -> Option<Way> {
        self.host_us.push(us);
        if self.host_us.len() < SAMPLES || self.gpu_us.len() < SAMPLES {
            return None;
        }
        let (gpu, host) = (least(&self.gpu_us), least(&self.host_us));
        let way = match host <= HOST_SHARE * gpu {
            true => Way::Launches,
            false => Way::Graph,
        };
        self.chosen = Some(way);
        Some(way)
    }

    /// The least GPU and host samples (µs), for the report.
    pub fn samples(&self) -> (f64, f64) {
        (least(&self.gpu_us), least(&self.host_us))
    }
}

fn least(samples: &[f64]) -> f64 {
    samples.iter().copied().fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a choice through its samples: GPU times, then host times.
    fn measured(gpu: &[f64], host: &[f64]) -> Option<Way> {
        let mut choice = ReplayChoice::default();
        let mut chosen = None;
        let (mut gpu, mut host) = (gpu.iter(), host.iter());
        for _ in 0..4 * SAMPLES {
            match choice.next() {
                Next::TimeGraph => {
                    choice.graph_pending();
                    // The events are read on a later replay.
                    assert_eq!(choice.next(), Next::Replay(Way::Graph));
                    choice.graph_timed(*gpu.next().unwrap());
                }
                Next::TimeLaunches => chosen = choice.launches_timed(*host.next().unwrap()),
                Next::Replay(way) => {
                    assert_eq!(Some(way), chosen);
                    break;
                }
            }
        }
        chosen
    }

    #[test]
    fn the_list_is_kept_while_the_host_stays_well_ahead() {
        // The decoder's five kernels: about 10 µs to launch, 59 of GPU.
        assert_eq!(
            measured(&[61.0, 59.4, 60.0], &[30.0, 10.2, 11.0]),
            Some(Way::Launches)
        );
        // A layer of short kernels: launching them takes the host longer
        // than half the graph's GPU time.
        assert_eq!(
            measured(&[12.0, 11.0, 11.5], &[9.0, 7.5, 8.0]),
            Some(Way::Graph)
        );
        // The least samples decide: one slow first launch does not.
        assert_eq!(
            measured(&[20.0, 20.0, 20.0], &[400.0, 10.0, 10.0]),
            Some(Way::Launches)
        );
    }

    #[test]
    fn graph_samples_come_first_one_in_flight_at_a_time() {
        let mut choice = ReplayChoice::default();
        assert_eq!(choice.next(), Next::TimeGraph);
        choice.graph_pending();
        assert!(choice.is_pending());
        assert_eq!(choice.next(), Next::Replay(Way::Graph));
        choice.graph_timed(50.0);
        assert!(!choice.is_pending());
        assert_eq!(choice.next(), Next::TimeGraph);
        // Host samples before the GPU's are complete decide nothing.
        assert_eq!(choice.launches_timed(5.0), None);
    }

    #[test]
    fn the_setting_is_read_and_a_malformed_one_named() {
        let env = |value: Option<&'static str>| move |_: &str| value.map(str::to_owned);
        assert_eq!(setting_from_env(env(None)).unwrap(), Setting::Measured);
        assert_eq!(
            setting_from_env(env(Some("measured"))).unwrap(),
            Setting::Measured
        );
        assert_eq!(
            setting_from_env(env(Some("graph"))).unwrap(),
            Setting::Forced(Way::Graph)
        );
        assert_eq!(
            setting_from_env(env(Some(" launches "))).unwrap(),
            Setting::Forced(Way::Launches)
        );
        let error = setting_from_env(env(Some("fast"))).unwrap_err().to_string();
        assert!(error.contains("SYMM_GRAPH_REPLAY=\"fast\""), "{error}");
    }
}
