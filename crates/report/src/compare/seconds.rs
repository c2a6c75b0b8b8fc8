//! The per-second samples `compare` falls back on when a configuration has
//! too few iterations for the iterations to be the unit (the main job runs
//! two). Every run keeps one `SecondStats` per second of its measured load
//! (requests, errors, the p99 of that second), so two iterations of a few
//! seconds each are a dozen samples of the within-run noise.
//!
//! Each metric is a ratio of sums over the seconds drawn, so that a
//! resample of seconds gives the metric of those seconds directly:
//! - requests/s: requests over the seconds' measured time (the last second
//!   of a load is usually partial; its length comes from `duration_s`), from
//!   the closed-loop `load`, as the summary's requests/s;
//! - p99: the request-weighted mean of the per-second p99s, from the load
//!   the run's latency comes from ([`Run::latency_load`]). It is a p99 of
//!   seconds, not of requests: a timeline keeps each second's p99 but not
//!   its histogram, so the p99 of the pooled requests cannot be rebuilt. It
//!   tracks the run's p99 when seconds are alike and moves with a slow
//!   second in proportion to its requests (docs/compare.md).

use crate::schema::{LoadResult, Run};
use crate::summary::{ConfigRuns, Metric};

/// Fewer pooled seconds than this on either side give no per-second verdict:
/// below it the bootstrap has too few distinct resamples to show the noise.
pub const MIN_SECONDS: usize = 6;

/// One second of one run; a set of seconds has the metric `Σ num / Σ den`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Second {
    pub num: f64,
    pub den: f64,
}

/// The metrics that have per-second samples.
pub fn has_seconds(metric: Metric) -> bool {
    matches!(metric, Metric::Rps | Metric::P99)
}

/// The seconds of each valid iteration of a configuration (iterations
/// without a timeline left out), or `None` when the metric has no
/// per-second samples or fewer than [`MIN_SECONDS`] seconds were kept.
pub fn of(metric: Metric, group: &ConfigRuns<'_>) -> Option<Vec<Vec<Second>>> {
    let per_run = |run: &Run| -> Vec<Second> {
        match metric {
            Metric::Rps => run.load.as_ref().map(requests_per_second).unwrap_or_default(),
            Metric::P99 => run.latency_load().map(p99_per_second).unwrap_or_default(),
            _ => Vec::new(),
        }
    };
    if !has_seconds(metric) {
        return None;
    }
    let runs: Vec<Vec<Second>> = group.valid().map(per_run).filter(|s| !s.is_empty()).collect();
    (count(&runs) >= MIN_SECONDS).then_some(runs)
}

/// Pooled seconds.
pub fn count(runs: &[Vec<Second>]) -> usize {
    runs.iter().map(Vec::len).sum()
}

/// The metric over the given seconds, `None` when its denominator is zero.
pub fn statistic<'a>(seconds: impl IntoIterator<Item = &'a Second>) -> Option<f64> {
    let (num, den) = seconds.into_iter().fold((0.0, 0.0), |(n, d), s| (n + s.num, d + s.den));
    (den > 0.0).then(|| num / den)
}

/// The length of the moving blocks, in seconds: the cube root of the
/// iterations' mean length (the order that suits a bootstrap estimate of a
/// variance, Hall, Horowitz and Jing 1995), at least 1 and no longer than the
/// shortest iteration.
pub fn block_len(runs: &[Vec<Second>]) -> usize {
    let shortest = runs.iter().map(Vec::len).min().unwrap_or(1).max(1);
    let mean = count(runs) as f64 / runs.len().max(1) as f64;
    (mean.cbrt().round() as usize).clamp(1, shortest)
}

fn requests_per_second(load: &LoadResult) -> Vec<Second> {
    let n = load.timeline.len();
    load.timeline
        .iter()
        .enumerate()
        .map(|(i, s)| {
            // The last second is as long as what remains of the measured period.
            let partial = load.duration_s - (n - 1) as f64;
            let length = if i + 1 == n && partial > 0.0 && partial < 1.0 { partial } else { 1.0 };
            Second { num: s.requests as f64, den: length }
        })
        .collect()
}

fn p99_per_second(load: &LoadResult) -> Vec<Second> {
    load.timeline
        .iter()
        .map(|s| {
            let requests = if s.p99_us.is_finite() && s.p99_us > 0.0 { s.requests as f64 } else { 0.0 };
            Second { num: requests * s.p99_us / 1000.0, den: requests }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Results;
    use crate::summary::group;
    use stampede_schema::load::SecondStats;

    fn load(duration_s: f64, seconds: &[(u64, f64)]) -> LoadResult {
        LoadResult {
            duration_s,
            requests: 1,
            timeline: seconds
                .iter()
                .enumerate()
                .map(|(t, &(requests, p99_us))| SecondStats { t_s: t as u64, requests, errors: 0, p99_us })
                .collect(),
            ..LoadResult::default()
        }
    }

    #[test]
    fn the_partial_last_second_counts_for_its_length() {
        let seconds = requests_per_second(&load(2.5, &[(100, 1.0), (100, 1.0), (50, 1.0)]));
        assert_eq!(seconds[2].den, 0.5);
        assert_eq!(statistic(&seconds), Some(100.0));
    }

    #[test]
    fn p99_is_the_request_weighted_mean_of_the_seconds_p99s() {
        let seconds = p99_per_second(&load(3.0, &[(300, 1000.0), (100, 5000.0), (0, 0.0)]));
        assert_eq!(statistic(&seconds), Some(2.0));
        assert_eq!(seconds[2], Second { num: 0.0, den: 0.0 }, "a second without requests weighs nothing");
    }

    #[test]
    fn p99_comes_from_the_latency_phase_when_the_run_has_one() {
        let run = |latency: Option<LoadResult>| Run {
            app: "go".into(),
            load: Some(load(4.0, &[(100, 1000.0); 4])),
            latency,
            ..Run::default()
        };
        let results = Results {
            runs: vec![run(Some(load(4.0, &[(50, 90_000.0); 4]))), run(Some(load(4.0, &[(50, 90_000.0); 4])))],
            ..Results::default()
        };
        let groups = group(&results);
        let p99 = of(Metric::P99, &groups[0]).unwrap();
        assert_eq!(statistic(p99.iter().flatten()), Some(90.0));
        let rps = of(Metric::Rps, &groups[0]).unwrap();
        assert_eq!(statistic(rps.iter().flatten()), Some(100.0), "requests/s stays the closed loop's");
        assert_eq!(of(Metric::Cpu, &groups[0]), None);
    }

    #[test]
    fn too_few_seconds_give_none_and_blocks_fit_the_shortest_run() {
        let results = Results {
            runs: vec![Run { load: Some(load(2.0, &[(1, 1.0); 2])), ..Run::default() }],
            ..Results::default()
        };
        assert_eq!(of(Metric::Rps, &group(&results)[0]), None);
        let s = Second { num: 1.0, den: 1.0 };
        assert_eq!(block_len(&[vec![s; 4], vec![s; 4]]), 2);
        assert_eq!(block_len(&[vec![s; 30], vec![s; 30]]), 3);
        assert_eq!(block_len(&[vec![s; 30], vec![s; 1]]), 1);
    }
}
