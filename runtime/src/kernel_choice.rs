//! Which way a site of compiled code runs its matmuls: the kernel the
//! compiler generated for it (`symm-linalg-matmul-to-gpu`) or the library's
//! (cuBLAS and the element-wise kernels around it).
//!
//! Neither wins everywhere: the generated kernels stream the weight at the
//! bandwidth of a plain read and fuse the norm and the activation, which
//! pays at decode sizes; cuBLAS wins as the rows grow. So each (site, row
//! count) is timed on its first call outside a CUDA-graph capture (the
//! compiled entry points run a row count's first call eagerly): the site's
//! work runs `ROUNDS` times, taking turns, with events around each round,
//! and the faster way is kept for the process (the first round of each way
//! warms up and is not counted). The work overwrites its outputs from its
//! inputs, so the extra rounds change nothing. `SYMM_LOG=info` prints each
//! decision.
//!
//! `SYMM_MATMUL=generated` or `=library` forces a way (reproducible runs,
//! no measurement); `=measured` is the default.

use crate::choice::Choice;
use crate::cuda::{Event, Stream};
use crate::error::{Error, Result};
use std::collections::HashMap;

/// One way to run a site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    Generated,
    Library,
}

/// How the way is picked (`SYMM_MATMUL`).
pub type Policy = Choice<Way>;

pub const POLICY_ENV: &str = "SYMM_MATMUL";

/// Rounds of a measurement: the ways take turns, the generated one first.
pub const ROUNDS: i64 = 8;
/// Rounds at the start that only warm up.
const WARM_UP: i64 = 2;

/// The ways' names in `SYMM_MATMUL`.
const WAYS: [(&str, Way); 2] = [("generated", Way::Generated), ("library", Way::Library)];

impl Policy {
    pub fn parse_matmul(value: Option<&str>) -> Result<Self> {
        Self::parse(POLICY_ENV, value, WAYS)
    }
}

/// The way of round `round` while measuring.
pub fn way_of_round(round: i64) -> Way {
    if round % 2 == 0 {
        Way::Generated
    } else {
        Way::Library
    }
}

/// How much faster than the library the generated kernel must measure to
/// be taken. The rounds run eagerly, launches included, while the calls
/// that follow mostly replay CUDA graphs: near a tie the order can flip
/// there. On 2x H200 a 4-row down projection measured 19.4 against 19.7 µs
/// eagerly and ran 18.3 against cuBLAS's 16.5 in a graph
/// (bench/results/2026-11-26-gemv-h200x2.md); a tie goes to the library.
pub const GENERATED_MARGIN: f64 = 0.03;

/// The faster way from the rounds' times (µs, per round index), the warm-up
/// rounds left out: the generated kernel only when it is faster by
/// `GENERATED_MARGIN`; the library when a way has no time.
pub fn faster(times: &[(i64, f64)]) -> (Way, f64, f64) {
    let best = |way: Way| {
        times
            .iter()
            .filter(|(round, _)| *round >= WARM_UP && way_of_round(*round) == way)
            .map(|(_, us)| *us)
            .fold(f64::INFINITY, f64::min)
    };
    let (generated, library) = (best(Way::Generated), best(Way::Library));
    let way = if generated < library * (1.0 - GENERATED_MARGIN) {
        Way::Generated
    } else {
        Way::Library
    };
    (way, generated, library)
}

type Key = (i64, i64);

/// A site being measured: the round in progress and the times so far.
#[derive(Default)]
struct Measuring {
    started: Option<(i64, Event)>,
    rounds: Vec<(i64, Event, Event)>,
}

/// The policy and what each (site, rows) decided.
#[derive(Default)]
pub struct KernelChoices {
    policy: Option<Policy>,
    decided: HashMap<Key, Way>,
    measuring: HashMap<Key, Measuring>,
}

impl KernelChoices {
    fn policy(&mut self) -> Result<Policy> {
        if let Some(policy) = self.policy {
            return Ok(policy);
        }
        let policy = Policy::from_env(POLICY_ENV, WAYS)?;
        self.policy = Some(policy);
        Ok(policy)
    }

    /// Rounds to run at `site` for `rows` rows.
    pub fn rounds(&mut self, site: i64, rows: i64, max_rows: i64, capturing: bool) -> Result<i64> {
        if rows <= 0 || rows > max_rows {
            return Ok(1);
        }
        let measure = self.policy()? == Policy::Measured
            && !capturing
            && !self.decided.contains_key(&(site, rows));
        if measure {
            self.measuring.insert((site, rows), Measuring::default());
            return Ok(ROUNDS);
        }
        Ok(1)
    }

    /// The way of `round` at `site`; while measuring, starts its timing.
    pub fn variant(
        &mut self,
        (site, rows): Key,
        round: i64,
        max_rows: i64,
        stream: &Stream,
    ) -> Result<Way> {
        if rows <= 0 || rows > max_rows {
            return Ok(Way::Library);
        }
        if let Policy::Always(way) = self.policy()? {
            return Ok(way);
        }
        if let Some(measuring) = self.measuring.get_mut(&(site, rows)) {
            let start = Event::new()?;
            start.record(stream)?;
            measuring.started = Some((round, start));
            return Ok(way_of_round(round));
        }
        Ok(self
            .decided
            .get(&(site, rows))
            .copied()
            .unwrap_or(Way::Library))
    }

    /// Ends `round`'s timing; after the last round, decides.
    pub fn variant_end(&mut self, (site, rows): Key, round: i64, stream: &Stream) -> Result<()> {
        let Some(measuring) = self.measuring.get_mut(&(site, rows)) else {
            return Ok(());
        };
        let Some((started, start)) = measuring.started.take() else {
            return Ok(());
        };
        if started != round {
            return Err(Error::InvalidArgument(format!(
                "matmul site {site:#x}: round {round} ended, but round {started} started"
            )));
        }
        let end = Event::new()?;
        end.record(stream)?;
        measuring.rounds.push((round, start, end));
        if round + 1 < ROUNDS {
            return Ok(());
        }
        let Some(measuring) = self.measuring.remove(&(site, rows)) else {
            return Ok(());
        };
        let mut times = Vec::new();
        for (round, start, end) in &measuring.rounds {
            times.push((*round, f64::from(start.elapsed_ms(end)?) * 1000.0));
        }
        let (way, generated, library) = faster(&times);
        tracing::info!(
            "matmul site {site:#x}, {rows} rows: generated kernel {generated:.1} us, library (cuBLAS) {library:.1} us: takes the {}",
            match way {
                Way::Generated => "generated kernel",
                Way::Library => "library",
            }
        );
        self.decided.insert((site, rows), way);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_parses_and_refuses_unknown_values() {
        assert_eq!(Policy::parse_matmul(None).unwrap(), Policy::Measured);
        assert_eq!(
            Policy::parse_matmul(Some("generated")).unwrap(),
            Policy::Always(Way::Generated)
        );
        assert_eq!(
            Policy::parse_matmul(Some(" library ")).unwrap(),
            Policy::Always(Way::Library)
        );
        let error = Policy::parse_matmul(Some("cublas"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("SYMM_MATMUL"), "{error}");
    }

    #[test]
    fn the_faster_way_wins_without_its_warm_up() {
        // Round 0 (generated, warm-up) is slow and must not count.
        let times = [
            (0, 900.0),
            (1, 60.0),
            (2, 45.0),
            (3, 61.0),
            (4, 47.0),
            (5, 59.0),
        ];
        let (way, generated, library) = faster(&times);
        assert_eq!(way, Way::Generated);
        assert_eq!((generated, library), (45.0, 59.0));
        let (way, ..) = faster(&[(0, 1.0), (1, 2.0), (2, 70.0), (3, 60.0)]);
        assert_eq!(way, Way::Library);
        // No timed round of a way: the library.
        assert_eq!(faster(&[(0, 1.0), (1, 2.0)]).0, Way::Library);
        // Within the margin, a tie: the library.
        let near = [(0, 1.0), (1, 1.0), (2, 19.4), (3, 19.7)];
        assert_eq!(faster(&near).0, Way::Library);
        let clear = [(0, 1.0), (1, 1.0), (2, 19.0), (3, 19.7)];
        assert_eq!(faster(&clear).0, Way::Generated);
    }

    #[test]
    fn rows_above_the_bound_take_the_library_without_measuring() {
        let mut choices = KernelChoices {
            policy: Some(Policy::Measured),
            ..KernelChoices::default()
        };
        assert_eq!(choices.rounds(7, 17, 16, false).unwrap(), 1);
        assert_eq!(choices.rounds(7, 0, 16, false).unwrap(), 1);
        assert_eq!(choices.rounds(7, 16, 16, true).unwrap(), 1);
        assert_eq!(choices.rounds(7, 16, 16, false).unwrap(), ROUNDS);
    }
}
