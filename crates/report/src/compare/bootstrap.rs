//! The percentile bootstrap for the change of a median between two sets of
//! iterations. Each resample draws both sets again with replacement, takes
//! the ratio of their medians, and the 2.5th and 97.5th percentiles of those
//! ratios bound the 95 % confidence interval. It assumes nothing about the
//! shape of the distribution, which suits benchmark numbers (skewed, few
//! samples). The generator is ChaCha8 seeded explicitly, so the same inputs
//! and seed give the same interval on every machine.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::stats::{median, median_of_sorted, quantile_of_sorted};

/// A confidence interval of a relative change (0.05 = +5 %).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Whether the whole interval lies on one side of zero.
    pub fn excludes_zero(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// Settings of the bootstrap.
#[derive(Debug, Clone, Copy)]
pub struct Bootstrap {
    pub resamples: usize,
    pub confidence: f64,
    pub seed: u64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap { resamples: 10_000, confidence: 0.95, seed: DEFAULT_SEED }
    }
}

/// The seed used unless `--seed` says otherwise.
pub const DEFAULT_SEED: u64 = 42;

impl Bootstrap {
    /// The interval of `median(candidate) / median(base) − 1`, or `None`
    /// when either side is empty or the base median is zero.
    pub fn change_interval(&self, base: &[f64], candidate: &[f64]) -> Option<Interval> {
        let base_median = median(base)?;
        median(candidate)?;
        if base_median == 0.0 {
            return None;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut scratch_b = vec![0.0; base.len()];
        let mut scratch_c = vec![0.0; candidate.len()];
        let mut changes = Vec::with_capacity(self.resamples);
        for _ in 0..self.resamples {
            let mb = resampled_median(base, &mut scratch_b, &mut rng);
            let mc = resampled_median(candidate, &mut scratch_c, &mut rng);
            if mb != 0.0 {
                changes.push(mc / mb - 1.0);
            }
        }
        if changes.is_empty() {
            return None;
        }
        changes.sort_by(f64::total_cmp);
        let tail = (1.0 - self.confidence) / 2.0;
        Some(Interval { low: quantile_of_sorted(&changes, tail), high: quantile_of_sorted(&changes, 1.0 - tail) })
    }
}

fn resampled_median(values: &[f64], scratch: &mut [f64], rng: &mut ChaCha8Rng) -> f64 {
    for slot in scratch.iter_mut() {
        *slot = values[rng.random_range(0..values.len())];
    }
    scratch.sort_by(f64::total_cmp);
    median_of_sorted(scratch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_sets_include_zero() {
        let values = [100.0, 103.0, 98.0, 101.0, 99.0];
        let ci = Bootstrap::default().change_interval(&values, &values).unwrap();
        assert!(ci.low < 0.0 && ci.high > 0.0, "{ci:?}");
        assert!(!ci.excludes_zero());
    }

    #[test]
    fn a_clear_drop_excludes_zero() {
        let base = [100.0, 101.0, 99.0, 100.5, 99.5];
        let candidate: Vec<f64> = base.iter().map(|v| v * 0.8).collect();
        let ci = Bootstrap::default().change_interval(&base, &candidate).unwrap();
        assert!(ci.high < -0.15 && ci.low > -0.25, "{ci:?}");
    }

    #[test]
    fn same_seed_same_interval_other_seed_may_differ() {
        let base = [100.0, 90.0, 110.0, 95.0, 105.0];
        let candidate = [97.0, 88.0, 112.0, 99.0, 101.0];
        let boot = Bootstrap::default();
        assert_eq!(boot.change_interval(&base, &candidate), boot.change_interval(&base, &candidate));
    }

    #[test]
    fn constant_equal_sets_give_a_zero_interval() {
        let ci = Bootstrap::default().change_interval(&[5.0; 4], &[5.0; 4]).unwrap();
        assert_eq!((ci.low, ci.high), (0.0, 0.0));
        assert_eq!(Bootstrap::default().change_interval(&[], &[1.0]), None);
        assert_eq!(Bootstrap::default().change_interval(&[0.0], &[1.0]), None);
    }
}
