//! Which way a site of compiled code runs its matmuls: the kernel the
//! compiler generated for it (`symm-linalg-matmul-to-gpu`) or the library's
//! (cuBLAS and the element-wise kernels around it).
//!
//! Neither wins everywhere: the generated kernels stream the weight at the
//! bandwidth of a plain read and fuse the norm and the activation, which
//! pays at decode sizes; cuBLAS wins as the rows grow. So each (site, row
//! count) is timed on its first call outside a CUDA-graph capture (the
//! compiled entry points run a row count's first call eagerly): the site's
//! work runs `ROUNDS` times, in blocks of `REPEATS` back-to-back rounds of
//! one way, the ways taking turns, with events around each block; the
//! faster way is kept for the process (the first block of each way warms
//! up and is not counted). A block times a way as the layer runs it, after
//! other work: a generated GEMV is launched while the kernel before it
//! drains and prefetches its first weight lines meanwhile
//! (`symm-wait-for-prior-grids`), which a round timed alone between two
//! events cannot show (on 2x H200 the down projection at 4 to 16 rows was
//! timed slower than cuBLAS that way and ran the layer 3.7-4.1 µs faster:
//! bench/results/2026-11-26-session7-h200.md). The work overwrites its
//! outputs from its inputs, so the extra rounds change nothing. The ranks
//! then share their times and each way counts at its slowest rank's (a
//! tensor-parallel layer waits for the slowest), so every rank takes the
//! same way. `SYMM_LOG=info` prints each decision.
//!
//! `SYMM_MATMUL=generated` or `=library` forces a way (reproducible runs,
//! no measurement); `=measured` is the default.
//!
//! Known bias: the rounds read the same weight again and again, so a
//! weight that fits in L2 (o_proj's 16.8 MB at TP 2 on H200's 60 MB; every
//! site at TP 8) is timed partly from L2, where a model's call reads it
//! from memory. Both ways get that help, but not equally: on 2x H200 our
//! kernels gained 1-4 µs a layer from weights read the call before and
//! torch.compile's cuBLAS at most 1
//! (bench/results/2026-11-28-weight-copies-h200x2.md). Timing each round
//! on cold weights has not been tried.
//!
//! Each block's work waits behind a gate (`stream_gate`) until the host
//! has enqueued all of it, so a block times the GPU's work alone, as the
//! CUDA graphs that replay it later run it. Ungated, a host slower than
//! the GPU was timed instead: cuBLAS's launches cost the host more than a
//! generated kernel's, so a slow host turned choices towards the
//! generated kernel from process to process (on an H200, the decoder's
//! o_proj at 8 and 16 rows in 4 processes, the host idle or every core
//! busy: ungated, cuBLAS timed 7.0-13.0 µs and lost 3 of 8 choices; gated,
//! 6.8-7.0 and lost none: bench/results/2026-11-28-stream-gate-h200.md). The
//! warm-up blocks run ungated, since a way's first run may wait on the
//! host; a counted block whose gate gave up waiting
//! (`stream_gate::TIMEOUT`) is not counted.

use crate::choice::Choice;
use crate::cuda::{Event, Stream};
use crate::error::{Error, Result};
use crate::stream_gate::StreamGate;
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

/// Back-to-back rounds of one way, timed together.
pub const REPEATS: i64 = 3;
/// Blocks of a measurement: the ways take turns, the generated one first;
/// four of each way counted. With two counted, cuBLAS's best at a site
/// could still be an outlier: on 2x H200 the decoder's o_proj at 16 rows
/// took the generated kernel in 3 of 6 processes (cuBLAS timed 10.2-19.1
/// µs there, 6.9-9.6 in the others; that choice costs the decoder about 2
/// µs), against 0 of 6 with four (cuBLAS 6.9-9.0 µs), the other sites
/// unchanged (bench/results/2026-11-27-early-launch-rows-h200x2.md). The
/// extra rounds run once per site and row count.
const BLOCKS: i64 = 10;
/// Rounds of a measurement.
pub const ROUNDS: i64 = BLOCKS * REPEATS;
/// Blocks at the start that only warm up.
const WARM_UP: i64 = 2;

/// The ways' names in `SYMM_MATMUL`.
const WAYS: [(&str, Way); 2] = [("generated", Way::Generated), ("library", Way::Library)];

impl Policy {
    pub fn parse_matmul(value: Option<&str>) -> Result<Self> {
        Self::parse(POLICY_ENV, value, WAYS)
    }
}

/// The way of block `block` while measuring.
pub fn way_of_block(block: i64) -> Way {
    if block % 2 == 0 {
        Way::Generated
    } else {
        Way::Library
    }
}

/// The way of round `round` while measuring.
pub fn way_of_round(round: i64) -> Way {
    way_of_block(round / REPEATS)
}

/// How much faster than the library the generated tensor-core kernel (calls
/// of more than `GEMV_MAX_ROWS` rows) must measure to be taken. The rounds
/// run eagerly, launches included, while the calls that follow mostly
/// replay CUDA graphs: near a tie the order can flip there; a tie goes to
/// the library.
pub const GENERATED_MARGIN: f64 = 0.03;

/// How much slower than the library a generated GEMV (calls of up to
/// `GEMV_MAX_ROWS` rows) may measure and still be taken where its input
/// comes from a generated GEMV launched just before it (`after_gemv`, as
/// the down projection after the gate/up pair). There it launches while
/// that kernel drains and prefetches its first weight lines meanwhile;
/// timed in blocks of its own launches that gain is mostly hidden (its
/// blocks fill the SMs the next launch would take).
/// On 2x H200 the down projection at 16 rows measured 18.5-18.7 against
/// cuBLAS's 18.1-18.4 µs (1-3% slower, from process to process) and ran
/// the MLP block in 53.5-55.5 against 57.0-59.0 µs with cuBLAS
/// (bench/results/2026-11-26-session7-h200.md); o_proj (K = 2048), which
/// follows no GEMV, measured 9-45% slower, and at 8 rows 3% slower, where
/// the credit took it and the decoder ran 65.3 against 61.7-64.4 µs: a
/// site after no GEMV gets no credit.
pub const EARLY_LAUNCH_CREDIT: f64 = 0.05;

/// Each way's best time (µs per round) from the blocks' times (per block
/// index), the warm-up blocks left out; infinite for a way without one.
pub fn best_times(times: &[(i64, f64)]) -> (f64, f64) {
    let best = |way: Way| {
        times
            .iter()
            .filter(|(block, _)| *block >= WARM_UP && way_of_block(*block) == way)
            .map(|(_, us)| *us)
            .fold(f64::INFINITY, f64::min)
    };
    (best(Way::Generated), best(Way::Library))
}

/// The way to take from the ways' times at `rows` rows: a generated GEMV
/// after a GEMV (`after_gemv`) unless it is slower by
/// `EARLY_LAUNCH_CREDIT`, any other generated kernel only when it is
/// faster by `GENERATED_MARGIN`; the library when a way has no time.
pub fn faster(generated: f64, library: f64, rows: i64, after_gemv: bool) -> Way {
    let gemv = u64::try_from(rows).is_ok_and(|rows| rows <= symm_protocol::GEMV_MAX_ROWS);
    let factor = if gemv && after_gemv {
        1.0 + EARLY_LAUNCH_CREDIT
    } else {
        1.0 - GENERATED_MARGIN
    };
    if generated < library * factor {
        Way::Generated
    } else {
        Way::Library
    }
}

/// A site's measurement, done on this rank: its best times (µs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timed {
    pub site: i64,
    pub rows: i64,
    pub generated: f64,
    pub library: f64,
    /// The site's input comes from a generated GEMV launched just before.
    pub after_gemv: bool,
}

impl Timed {
    /// The two times as the ranks exchange them (little-endian f64s).
    pub fn to_bytes(self) -> Vec<u8> {
        let mut bytes = self.generated.to_le_bytes().to_vec();
        bytes.extend_from_slice(&self.library.to_le_bytes());
        bytes
    }

    /// Each way's slowest time over this rank's and the ranks' `parts`
    /// (`to_bytes` of each, in rank order).
    pub fn slowest_of(self, parts: &[Vec<u8>]) -> Result<Timed> {
        let mut slowest = self;
        for (rank, part) in parts.iter().enumerate() {
            let time = |at: usize| {
                part.get(at..at + 8)
                    .and_then(|b| b.try_into().ok())
                    .map(f64::from_le_bytes)
                    .ok_or_else(|| {
                        Error::Store(format!(
                            "rank {rank} sent malformed kernel times for matmul site {:#x}",
                            self.site
                        ))
                    })
            };
            slowest.generated = slowest.generated.max(time(0)?);
            slowest.library = slowest.library.max(time(8)?);
        }
        Ok(slowest)
    }
}

type Key = (i64, i64);

/// A site being measured: the block in progress and the times so far.
#[derive(Default)]
struct Measuring {
    /// The block in progress: its index, its start and the gate its work
    /// waits behind.
    started: Option<(i64, Event, Option<StreamGate>)>,
    blocks: Vec<(i64, Event, Event)>,
    after_gemv: bool,
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

    /// Rounds to run at `site` for `rows` rows. `after`: the site whose
    /// output is this site's input (0: none); where that site took its
    /// generated GEMV for these rows, it launches just before this one,
    /// whose GEMV the decision then credits (`EARLY_LAUNCH_CREDIT`). Where
    /// it took the library, or was not measured, nothing is credited.
    pub fn rounds(
        &mut self,
        site: i64,
        rows: i64,
        max_rows: i64,
        capturing: bool,
        after: i64,
    ) -> Result<i64> {
        let after_gemv = after != 0 && self.decided.get(&(after, rows)) == Some(&Way::Generated);
        if rows <= 0 || rows > max_rows {
            return Ok(1);
        }
        let measure = self.policy()? == Policy::Measured
            && !capturing
            && !self.decided.contains_key(&(site, rows));
        if !measure {
            // A measurement that a failed call left unfinished would
            // otherwise time this run's launches (under a capture, too) and
            // run the way of its round instead of the decided one.
            self.measuring.remove(&(site, rows));
        }
        if measure {
            self.measuring.insert(
                (site, rows),
                Measuring {
                    after_gemv,
                    ..Measuring::default()
                },
            );
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
            if round % REPEATS == 0 {
                // Only the counted blocks: a way's first run may wait on
                // the host for what it sets up (cuBLAS measuring a pair's
                // ways, `agmm::measure_pair`), which behind a gate would
                // wait for its timeout. Never in a capture, where a host
                // function would become a node of the graph.
                let counted = round / REPEATS >= WARM_UP;
                let gate = StreamGate::close_if(counted && !stream.is_capturing()?, stream)?;
                let start = Event::new()?;
                start.record(stream)?;
                measuring.started = Some((round / REPEATS, start, gate));
            }
            return Ok(way_of_round(round));
        }
        Ok(self
            .decided
            .get(&(site, rows))
            .copied()
            .unwrap_or(Way::Library))
    }

    /// Ends `round`; at the end of its block, the block's timing; after
    /// the last round, this rank's times, for `decide` once the ranks
    /// shared them.
    pub fn variant_end(
        &mut self,
        (site, rows): Key,
        round: i64,
        stream: &Stream,
    ) -> Result<Option<Timed>> {
        let Some(measuring) = self.measuring.get_mut(&(site, rows)) else {
            return Ok(None);
        };
        if round % REPEATS != REPEATS - 1 {
            return Ok(None);
        }
        let Some((started, start, gate)) = measuring.started.take() else {
            return Ok(None);
        };
        if started != round / REPEATS {
            return Err(Error::InvalidArgument(format!(
                "matmul site {site:#x}: round {round} ended block {}, but block {started} started",
                round / REPEATS
            )));
        }
        let end = Event::new()?;
        end.record(stream)?;
        if gate.is_none_or(StreamGate::open) {
            measuring.blocks.push((started, start, end));
        } else {
            tracing::warn!(
                "matmul site {site:#x}, {rows} rows: the host took over {:?} to enqueue timing block {started}; it is not counted",
                crate::stream_gate::TIMEOUT
            );
        }
        if round + 1 < ROUNDS {
            return Ok(None);
        }
        let Some(measuring) = self.measuring.remove(&(site, rows)) else {
            return Ok(None);
        };
        let mut times = Vec::new();
        for (block, start, end) in &measuring.blocks {
            let us = f64::from(start.elapsed_ms(end)?) * 1000.0;
            times.push((*block, us / REPEATS as f64));
        }
        let (generated, library) = best_times(&times);
        Ok(Some(Timed {
            site,
            rows,
            generated,
            library,
            after_gemv: measuring.after_gemv,
        }))
    }

    /// Decides a measured site from its times (each way's slowest over the
    /// ranks, `ranks` of them).
    pub fn decide(&mut self, timed: Timed, ranks: usize) -> Way {
        let Timed {
            site,
            rows,
            generated,
            library,
            after_gemv,
        } = timed;
        let way = faster(generated, library, rows, after_gemv);
        tracing::info!(
            "matmul site {site:#x}, {rows} rows: generated kernel {generated:.1} us, library (cuBLAS) {library:.1} us (the slowest of {ranks} rank(s)): takes the {}",
            match way {
                Way::Generated => "generated kernel",
                Way::Library => "library",
            }
        );
        self.decided.insert((site, rows), way);
        way
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
    fn a_measurement_a_failed_call_left_is_dropped_when_the_site_runs_unmeasured() {
        let mut choices = KernelChoices {
            policy: Some(Policy::Measured),
            ..KernelChoices::default()
        };
        assert_eq!(choices.rounds(7, 16, 16, false, 0).unwrap(), ROUNDS);
        assert!(choices.measuring.contains_key(&(7, 16)));
        // The call failed before its last round; the site's next run is
        // under the application's capture: one round, nothing measuring.
        assert_eq!(choices.rounds(7, 16, 16, true, 0).unwrap(), 1);
        assert!(choices.measuring.is_empty());
        // Outside a capture the site is measured afresh.
        assert_eq!(choices.rounds(7, 16, 16, false, 0).unwrap(), ROUNDS);
        assert!(choices.measuring.contains_key(&(7, 16)));
    }

    #[test]
    fn rounds_run_in_blocks_of_one_way() {
        let ways: Vec<Way> = (0..ROUNDS).map(way_of_round).collect();
        for (block, rounds) in ways.chunks(REPEATS as usize).enumerate() {
            let way = way_of_block(block as i64);
            assert!(
                rounds.iter().all(|w| *w == way),
                "block {block}: {rounds:?}"
            );
        }
        assert_eq!(way_of_round(0), Way::Generated);
        assert_eq!(way_of_round(REPEATS), Way::Library);
        // Each way has timed blocks after its warm-up.
        for way in [Way::Generated, Way::Library] {
            assert!((WARM_UP..BLOCKS).any(|b| way_of_block(b) == way));
        }
    }

    #[test]
    fn the_faster_way_wins_without_its_warm_up() {
        // Block 0 (generated, warm-up) is slow and must not count.
        let times = [
            (0, 900.0),
            (1, 60.0),
            (2, 45.0),
            (3, 61.0),
            (4, 47.0),
            (5, 59.0),
        ];
        let (generated, library) = best_times(&times);
        assert_eq!((generated, library), (45.0, 59.0));
        assert_eq!(faster(generated, library, 32, false), Way::Generated);
        let (generated, library) = best_times(&[(0, 1.0), (1, 2.0), (2, 70.0), (3, 60.0)]);
        assert_eq!(faster(generated, library, 32, false), Way::Library);
        assert_eq!(faster(generated, library, 4, true), Way::Library);
        // No timed block of a way: the library.
        let (generated, library) = best_times(&[(0, 1.0), (1, 2.0)]);
        assert_eq!(faster(generated, library, 4, true), Way::Library);
        // Near a tie: the tensor-core kernel (more than 16 rows), and a GEMV
        // after no GEMV, must win by the margin; a GEMV after a GEMV (up to
        // 16 rows) keeps its credit.
        assert_eq!(faster(19.4, 19.7, 32, true), Way::Library);
        assert_eq!(faster(19.0, 19.7, 32, false), Way::Generated);
        assert_eq!(faster(18.6, 18.4, 16, true), Way::Generated);
        assert_eq!(faster(18.6, 18.4, 16, false), Way::Library);
        assert_eq!(faster(18.6, 18.4, 17, true), Way::Library);
        assert_eq!(faster(9.8, 9.5, 8, false), Way::Library);
        assert_eq!(faster(9.4, 7.2, 4, true), Way::Library);
    }

    #[test]
    fn the_ranks_decide_on_each_ways_slowest_time() {
        let timed = |generated, library| Timed {
            site: 7,
            rows: 16,
            generated,
            library,
            after_gemv: true,
        };
        let mine = timed(18.5, 18.4);
        let parts = vec![mine.to_bytes(), timed(18.9, 18.1).to_bytes()];
        let slowest = mine.slowest_of(&parts).unwrap();
        assert_eq!((slowest.generated, slowest.library), (18.9, 18.4));
        // A way one rank could not time counts as never faster.
        let parts = vec![mine.to_bytes(), timed(f64::INFINITY, 18.0).to_bytes()];
        assert_eq!(mine.slowest_of(&parts).unwrap().generated, f64::INFINITY);
        let error = mine.slowest_of(&[vec![1, 2, 3]]).unwrap_err().to_string();
        assert!(error.contains("rank 0 sent malformed"), "{error}");
    }

    #[test]
    fn a_decision_is_kept_for_its_site_and_rows() {
        let mut choices = KernelChoices {
            policy: Some(Policy::Measured),
            ..KernelChoices::default()
        };
        let timed = Timed {
            site: 7,
            rows: 4,
            generated: 17.0,
            library: 18.5,
            after_gemv: false,
        };
        assert_eq!(choices.decide(timed, 2), Way::Generated);
        assert_eq!(choices.rounds(7, 4, 16, false, 0).unwrap(), 1);
        assert_eq!(choices.decided.get(&(7, 4)), Some(&Way::Generated));
    }

    /// A site after another site's GEMV gets the early-launch credit at
    /// the row counts where that site took its generated kernel, not where
    /// it took the library (its GEMV then does not run before this one).
    #[test]
    fn the_early_launch_credit_follows_the_site_before() {
        let mut choices = KernelChoices {
            policy: Some(Policy::Measured),
            ..KernelChoices::default()
        };
        let before = |rows, generated, library| Timed {
            site: 3,
            rows,
            generated,
            library,
            after_gemv: false,
        };
        assert_eq!(choices.decide(before(4, 30.0, 34.0), 1), Way::Generated);
        assert_eq!(choices.decide(before(16, 40.0, 34.0), 1), Way::Library);
        // This site's generated GEMV is 3% slower than the library alone.
        let mut credited_at = |rows| {
            assert_eq!(choices.rounds(9, rows, 16, false, 3).unwrap(), ROUNDS);
            let measuring = choices.measuring.remove(&(9, rows)).expect("measuring");
            let way = faster(18.5, 18.0, rows, measuring.after_gemv);
            (measuring.after_gemv, way)
        };
        assert_eq!(credited_at(4), (true, Way::Generated));
        assert_eq!(credited_at(16), (false, Way::Library));
        // Rows the site before never measured: no credit either.
        assert_eq!(credited_at(8), (false, Way::Library));
    }

    #[test]
    fn rows_above_the_bound_take_the_library_without_measuring() {
        let mut choices = KernelChoices {
            policy: Some(Policy::Measured),
            ..KernelChoices::default()
        };
        assert_eq!(choices.rounds(7, 17, 16, false, 0).unwrap(), 1);
        assert_eq!(choices.rounds(7, 0, 16, false, 0).unwrap(), 1);
        assert_eq!(choices.rounds(7, 16, 16, true, 0).unwrap(), 1);
        assert_eq!(choices.rounds(7, 16, 16, false, 0).unwrap(), ROUNDS);
    }
}
