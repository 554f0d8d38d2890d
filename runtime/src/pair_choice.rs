//! How the runtime runs two matmuls that share their left operand (a gate
//! and an up projection, `symm_rt_matmul_pair`): one batched GEMM over both
//! weights, or two GEMMs.
//!
//! The batched GEMM is one launch and wins at decode sizes, by 1.07-1.44x
//! on an H200 at K = 4096. But cuBLAS's heuristics for it have cliffs
//! that no rule on the shape separates: 0.63x at 128 rows of 14336 columns
//! per weight, 0.87x at 1024 rows of 7168, with wins on both sides
//! (bench/results/2026-11-23-split-k-rows-h200.md, gemm_pair_probe). So by
//! default each shape is measured once, on its first call outside a CUDA
//! graph capture (the compiled entry points run a token count's first call
//! eagerly), and the faster way is kept for the process. The batched GEMM
//! stays unless two GEMMs are faster by more than `MARGIN`, so that shapes
//! where both are alike keep one answer from run to run: at the first
//! shape of a process the two ways measured 5-9% apart in either order
//! (M = 1, batched against two GEMMs: 57.5 against 62.8 µs in one run, 65.2
//! against 62.0 in another), while two GEMMs win the cliffs by 13% and 37%.
//!
//! Both ways run each GEMM's measured kernel (`gemm_algos`): the 128-row
//! cliff at 14336 columns has a kernel in cuBLASLt's list (60.9 µs against
//! the default's 99.9 and two GEMMs' 67.9 on an H200,
//! bench/results/2026-11-29-gemm-algos-h200.md), so the batched GEMM wins
//! there now; the measurement stays for the cliffs no list covers.
//!
//! `SYMM_GEMM_PAIR=batched` or `=two` fixes the way (reproducible runs,
//! no measurement); `=measured` is the default.

use crate::choice::Choice;
use crate::error::{Error, Result};
use crate::library::GemmInputs;
use std::collections::HashMap;
use std::sync::Mutex;

/// One way to run a matmul pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairWay {
    /// One strided batched GEMM of batch 2.
    Batched,
    /// Two GEMMs, one per weight.
    Two,
}

/// How the way is picked (`SYMM_GEMM_PAIR`).
pub type PairPolicy = Choice<PairWay>;

/// Name of the environment variable that sets the policy.
pub const POLICY_ENV: &str = "SYMM_GEMM_PAIR";

/// Two GEMMs replace the batched one only when faster by more than this
/// fraction of the batched time.
pub const MARGIN: f64 = 0.10;

/// The ways' names in `SYMM_GEMM_PAIR`.
const WAYS: [(&str, PairWay); 2] = [("batched", PairWay::Batched), ("two", PairWay::Two)];

impl PairPolicy {
    /// The policy a value of `SYMM_GEMM_PAIR` names (unset: measured).
    pub fn parse_pair(value: Option<&str>) -> Result<Self> {
        Self::parse(POLICY_ENV, value, WAYS)
    }

    pub fn pair_from_env() -> Result<Self> {
        Self::from_env(POLICY_ENV, WAYS)
    }
}

/// The faster way from one measurement of each (µs), the batched one
/// unless two GEMMs win by more than `MARGIN`.
pub fn faster(batched_us: f64, two_us: f64) -> PairWay {
    if two_us < batched_us * (1.0 - MARGIN) {
        PairWay::Two
    } else {
        PairWay::Batched
    }
}

/// A pair's shape: element type and layout, and (m, k, n).
pub type PairShape = (GemmInputs, (usize, usize, usize));

/// The policy and, when measured, the way found for each shape.
pub struct PairChoices {
    policy: PairPolicy,
    found: Mutex<HashMap<PairShape, PairWay>>,
}

impl PairChoices {
    pub fn new(policy: PairPolicy) -> Self {
        Self {
            policy,
            found: Mutex::new(HashMap::new()),
        }
    }

    /// The way for `shape`: the policy's, the one found before, or the one
    /// `measure` finds now (kept). `measure` gives `None` when it cannot
    /// time (a capture in progress): the batched GEMM runs, and a later
    /// call measures.
    pub fn way(
        &self,
        shape: PairShape,
        measure: impl FnOnce() -> Result<Option<PairWay>>,
    ) -> Result<PairWay> {
        if let PairPolicy::Always(way) = self.policy {
            return Ok(way);
        }
        if let Some(way) = self.table()?.get(&shape) {
            return Ok(*way);
        }
        match measure()? {
            Some(way) => {
                self.table()?.insert(shape, way);
                Ok(way)
            }
            None => Ok(PairWay::Batched),
        }
    }

    fn table(&self) -> Result<std::sync::MutexGuard<'_, HashMap<PairShape, PairWay>>> {
        self.found
            .lock()
            .map_err(|_| Error::InvalidArgument("the matmul pair table was poisoned".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::Dtype;

    #[test]
    fn the_policy_comes_from_the_environment_value() {
        assert_eq!(PairPolicy::parse_pair(None).unwrap(), PairPolicy::Measured);
        assert_eq!(
            PairPolicy::parse_pair(Some("")).unwrap(),
            PairPolicy::Measured
        );
        assert_eq!(
            PairPolicy::parse_pair(Some(" two ")).unwrap(),
            PairPolicy::Always(PairWay::Two)
        );
        assert_eq!(
            PairPolicy::parse_pair(Some("batched")).unwrap(),
            PairPolicy::Always(PairWay::Batched)
        );
        let error = PairPolicy::parse_pair(Some("fast"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("SYMM_GEMM_PAIR=\"fast\""), "{error}");
        assert!(error.contains("batched, two or measured"), "{error}");
    }

    #[test]
    fn two_gemms_must_win_by_the_margin() {
        // The measured cliffs.
        assert_eq!(faster(101.87, 63.72), PairWay::Two);
        assert_eq!(faster(198.81, 173.19), PairWay::Two);
        // Wins of the batched GEMM, and near ties, stay batched.
        assert_eq!(faster(29.78, 36.41), PairWay::Batched);
        // Measurement noise at a process's first shape (M = 1).
        assert_eq!(faster(65.2, 62.0), PairWay::Batched);
        assert_eq!(faster(678.88, 661.39), PairWay::Batched);
        assert_eq!(faster(100.0, 100.0), PairWay::Batched);
    }

    #[test]
    fn a_shape_is_measured_once_and_a_capture_measures_nothing() {
        let choices = PairChoices::new(PairPolicy::Measured);
        let bf16 = GemmInputs::row_major(Dtype::Bf16);
        let shape = (bf16, (128, 4096, 14336));
        // Under a capture: batched, nothing kept.
        assert_eq!(choices.way(shape, || Ok(None)).unwrap(), PairWay::Batched);
        assert_eq!(
            choices.way(shape, || Ok(Some(PairWay::Two))).unwrap(),
            PairWay::Two
        );
        // Found: no second measurement.
        assert_eq!(
            choices.way(shape, || panic!("measured twice")).unwrap(),
            PairWay::Two
        );
        // Another shape is its own.
        let other = (bf16, (1, 4096, 14336));
        assert_eq!(
            choices.way(other, || Ok(Some(PairWay::Batched))).unwrap(),
            PairWay::Batched
        );
        // So are the same sizes with the weights stored transposed.
        let transposed = GemmInputs {
            layout: symm_protocol::abi::LayoutCode::TransposedB,
            ..bf16
        };
        assert_eq!(
            choices
                .way((transposed, (128, 4096, 14336)), || Ok(Some(
                    PairWay::Batched
                )))
                .unwrap(),
            PairWay::Batched
        );
        // A fixed policy never measures.
        let fixed = PairChoices::new(PairPolicy::Always(PairWay::Two));
        assert_eq!(
            fixed.way(shape, || panic!("measured")).unwrap(),
            PairWay::Two
        );
    }

    #[test]
    fn a_failed_measurement_is_an_error() {
        let choices = PairChoices::new(PairPolicy::Measured);
        let shape = (GemmInputs::row_major(Dtype::F32), (4, 8, 16));
        assert!(
            choices
                .way(shape, || Err(Error::Cuda("no".into())))
                .is_err()
        );
    }
}
