//! The percentile bootstrap for the change of a metric between base and
//! candidate. Each resample draws both sides again with replacement, takes
//! the ratio of their statistics, and the 2.5th and 97.5th percentiles of
//! those ratios bound the 95 % confidence interval. It assumes nothing about
//! the shape of the distribution, which suits benchmark numbers (skewed, few
//! samples). Two kinds of draw: iterations one by one (the statistic is their
//! median), or seconds in moving blocks (the statistic is a ratio of sums,
//! [`super::seconds`]): consecutive seconds of a run are correlated (a GC
//! cycle, a slow second spill into the next), and blocks keep that, where
//! seconds drawn one by one would make the interval too narrow. The
//! generator is ChaCha8 seeded explicitly, so the same inputs and seed give
//! the same interval on every machine.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::seconds::{self, Second};
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
        self.interval(|| {
            let mb = resampled_median(base, &mut scratch_b, &mut rng);
            let mc = resampled_median(candidate, &mut scratch_c, &mut rng);
            (mb != 0.0).then(|| mc / mb - 1.0)
        })
    }

    /// The interval of `S(candidate) / S(base) − 1`, S the ratio-of-sums
    /// statistic of seconds, by a moving-block bootstrap: each resample of a
    /// side is as many seconds as it has, made of blocks of `block`
    /// consecutive seconds drawn with replacement from every block inside
    /// one of its iterations (so iterations are pooled, and no block spans
    /// two server starts). `None` when a side has no whole block or the
    /// base's statistic is zero.
    pub fn block_change_interval(
        &self,
        base: &[Vec<Second>],
        candidate: &[Vec<Second>],
        block: usize,
    ) -> Option<Interval> {
        let base = Blocks::new(base, block)?;
        let candidate = Blocks::new(candidate, block)?;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        self.interval(|| {
            let sb = base.resample(&mut rng)?;
            let sc = candidate.resample(&mut rng)?;
            (sb != 0.0).then(|| sc / sb - 1.0)
        })
    }

    /// The percentile interval of the changes `draw` gives (`None`: a
    /// resample without a defined change, left out).
    fn interval(&self, mut draw: impl FnMut() -> Option<f64>) -> Option<Interval> {
        let mut changes: Vec<f64> = (0..self.resamples).filter_map(|_| draw()).collect();
        if changes.is_empty() {
            return None;
        }
        changes.sort_by(f64::total_cmp);
        let tail = (1.0 - self.confidence) / 2.0;
        Some(Interval { low: quantile_of_sorted(&changes, tail), high: quantile_of_sorted(&changes, 1.0 - tail) })
    }
}

/// Every block of consecutive seconds inside one iteration of a side.
struct Blocks<'a> {
    runs: &'a [Vec<Second>],
    /// (iteration, first second) of each block.
    starts: Vec<(usize, usize)>,
    len: usize,
    total: usize,
}

impl<'a> Blocks<'a> {
    fn new(runs: &'a [Vec<Second>], len: usize) -> Option<Blocks<'a>> {
        let len = len.max(1);
        let starts: Vec<(usize, usize)> = runs
            .iter()
            .enumerate()
            .flat_map(|(r, seconds)| (0..(seconds.len() + 1).saturating_sub(len)).map(move |s| (r, s)))
            .collect();
        (!starts.is_empty()).then(|| Blocks { runs, starts, len, total: seconds::count(runs) })
    }

    /// The statistic of one resample: blocks drawn until the side's number
    /// of seconds is reached, the last block cut short.
    fn resample(&self, rng: &mut ChaCha8Rng) -> Option<f64> {
        let (mut num, mut den) = (0.0, 0.0);
        let mut left = self.total;
        while left > 0 {
            let (run, start) = self.starts[rng.random_range(0..self.starts.len())];
            let take = self.len.min(left);
            for second in &self.runs[run][start..start + take] {
                num += second.num;
                den += second.den;
            }
            left -= take;
        }
        (den > 0.0).then(|| num / den)
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

    fn seconds(values: &[f64]) -> Vec<Second> {
        values.iter().map(|&v| Second { num: v, den: 1.0 }).collect()
    }

    #[test]
    fn blocks_of_seconds_see_a_clear_drop_and_not_noise() {
        let boot = Bootstrap::default();
        let base = [seconds(&[100.0, 103.0, 97.0, 101.0]), seconds(&[99.0, 102.0, 98.0, 100.0])];
        let same = boot.block_change_interval(&base, &base, 2).unwrap();
        assert!(same.low < 0.0 && same.high > 0.0, "{same:?}");
        let dropped: Vec<Vec<Second>> =
            base.iter().map(|run| run.iter().map(|s| Second { num: s.num * 0.8, den: 1.0 }).collect()).collect();
        let drop = boot.block_change_interval(&base, &dropped, 2).unwrap();
        assert!(drop.high < -0.15 && drop.low > -0.25, "{drop:?}");
        assert_eq!(boot.block_change_interval(&base, &dropped, 2), Some(drop), "seeded: the same interval again");
    }

    #[test]
    fn a_block_never_spans_two_iterations() {
        let runs = [seconds(&[1.0, 2.0, 3.0]), seconds(&[4.0, 5.0])];
        let blocks = Blocks::new(&runs, 2).unwrap();
        assert_eq!(blocks.starts, [(0, 0), (0, 1), (1, 0)]);
        assert!(Blocks::new(&runs, 4).is_none(), "no iteration holds a whole block");
    }

    #[test]
    fn constant_equal_sets_give_a_zero_interval() {
        let ci = Bootstrap::default().change_interval(&[5.0; 4], &[5.0; 4]).unwrap();
        assert_eq!((ci.low, ci.high), (0.0, 0.0));
        assert_eq!(Bootstrap::default().change_interval(&[], &[1.0]), None);
        assert_eq!(Bootstrap::default().change_interval(&[0.0], &[1.0]), None);
    }
}
