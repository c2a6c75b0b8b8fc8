//! `stampede compare`: pairs the runs of two results files by app, knobs and
//! load profile, and for each metric says whether the candidate differs from
//! the base by more than the noise. With enough iterations (5 a side) the
//! iterations are the unit: the change is the ratio of medians. With fewer,
//! requests/s and p99 fall back on the seconds every run keeps
//! ([`seconds`]), so the main job's two iterations still give a verdict. The
//! 95 % confidence interval comes from a seeded percentile bootstrap
//! ([`bootstrap`]); a change counts as significant when that interval
//! excludes zero. `--fail-if` rules ([`threshold`]) turn a significant
//! regression into exit code 1.

pub mod bootstrap;
mod render;
pub mod seconds;
pub mod threshold;

use serde::Serialize;

pub use self::bootstrap::{Bootstrap, Interval, DEFAULT_SEED};
pub use self::render::{human, json};
pub use self::threshold::FailIf;
use crate::schema::Results;
use crate::stats::median;
use crate::summary::{group, ConfigKey, ConfigRuns, Metric};

/// Fewer valid iterations than this on either side give no verdict by iterations.
pub const MIN_ITERATIONS: usize = 3;

/// With this many valid iterations on both sides the iterations are the
/// unit even when per-second samples exist: they also hold the variation
/// between server starts, which seconds of one start cannot show.
pub const PREFERRED_ITERATIONS: usize = 5;

/// What a metric's verdict was drawn from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Medians of valid iterations, iterations resampled.
    Iterations,
    /// The seconds of the valid iterations pooled, resampled in moving blocks.
    Seconds,
}

/// What the comparison concluded for one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    NoSignificantChange,
    TooFewIterations,
}

/// One metric of one pair.
#[derive(Debug, Clone, Serialize)]
pub struct MetricChange {
    #[serde(serialize_with = "metric_name")]
    pub metric: Metric,
    /// Medians over valid iterations, as the summary shows them.
    pub base_median: Option<f64>,
    pub candidate_median: Option<f64>,
    /// `None` when there were too few samples for a verdict.
    pub method: Option<Method>,
    /// The figures `change` and `interval` are about: the medians (method
    /// iterations) or the statistic over the pooled seconds (method seconds).
    pub base_value: Option<f64>,
    pub candidate_value: Option<f64>,
    /// Iterations or seconds behind each value.
    pub base_samples: usize,
    pub candidate_samples: usize,
    /// Method seconds: the length of the moving blocks.
    pub block_s: Option<usize>,
    /// `candidate_value / base_value − 1`.
    pub change: Option<f64>,
    pub interval: Option<Interval>,
    pub significant: bool,
    pub verdict: Verdict,
    /// The verdict in words for this metric: "faster", "slower", "less",
    /// "more", "no significant change" or "too few iterations".
    pub verdict_text: String,
}

fn metric_name<S: serde::Serializer>(metric: &Metric, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(metric.name())
}

/// A configuration present in both files.
#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    pub key: ConfigKey,
    pub label: String,
    pub base_iterations: usize,
    pub candidate_iterations: usize,
    pub metrics: Vec<MetricChange>,
}

/// A `--fail-if` rule and the pairs that broke it.
#[derive(Debug, Clone, Serialize)]
pub struct RuleOutcome {
    pub rule: FailIf,
    pub failed: bool,
    pub broken_by: Vec<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema: &'static str,
    pub method: &'static str,
    pub confidence: f64,
    pub resamples: usize,
    pub seed: u64,
    pub min_iterations: usize,
    pub preferred_iterations: usize,
    pub min_seconds: usize,
    pub pairs: Vec<Pair>,
    pub base_only: Vec<String>,
    pub candidate_only: Vec<String>,
    pub rules: Vec<RuleOutcome>,
    pub failed: bool,
}

pub const COMPARE_SCHEMA: &str = "stampede.compare/1";

/// The `method` of the whole comparison; each metric says which side of it it took.
pub const METHOD: &str = "percentile bootstrap of the ratio: of medians over iterations, or of \
                          per-second statistics over moving blocks of seconds when a side has \
                          fewer than preferred_iterations";

/// Compares one metric of a configuration present in both files: by
/// iterations when both sides have [`PREFERRED_ITERATIONS`], else by seconds
/// when the metric has them ([`seconds::of`]), else by iterations (a verdict
/// from [`MIN_ITERATIONS`]).
pub fn compare_configs(
    metric: Metric,
    base: &ConfigRuns<'_>,
    candidate: &ConfigRuns<'_>,
    boot: &Bootstrap,
) -> MetricChange {
    let (b, c) = (base.values(metric), candidate.values(metric));
    if b.len().min(c.len()) < PREFERRED_ITERATIONS {
        if let (Some(bs), Some(cs)) = (seconds::of(metric, base), seconds::of(metric, candidate)) {
            return compare_seconds(metric, (median(&b), median(&c)), &bs, &cs, boot);
        }
    }
    compare_metric(metric, &b, &c, boot)
}

/// Compares one metric's pooled seconds (`medians`: the iterations' medians, shown beside).
pub fn compare_seconds(
    metric: Metric,
    medians: (Option<f64>, Option<f64>),
    base: &[Vec<seconds::Second>],
    candidate: &[Vec<seconds::Second>],
    boot: &Bootstrap,
) -> MetricChange {
    let block = seconds::block_len(base).min(seconds::block_len(candidate));
    let (base_value, candidate_value) =
        (seconds::statistic(base.iter().flatten()), seconds::statistic(candidate.iter().flatten()));
    let interval = boot.block_change_interval(base, candidate, block);
    judge(
        metric,
        MetricChange {
            metric,
            base_median: medians.0,
            candidate_median: medians.1,
            method: interval.map(|_| Method::Seconds),
            base_value,
            candidate_value,
            base_samples: seconds::count(base),
            candidate_samples: seconds::count(candidate),
            block_s: Some(block),
            change: ratio(base_value, candidate_value),
            interval,
            significant: false,
            verdict: Verdict::TooFewIterations,
            verdict_text: String::new(),
        },
    )
}

fn ratio(base: Option<f64>, candidate: Option<f64>) -> Option<f64> {
    match (base, candidate) {
        (Some(b), Some(c)) if b != 0.0 => Some(c / b - 1.0),
        _ => None,
    }
}

/// Compares every configuration the two files share.
pub fn compare(base: &Results, candidate: &Results, boot: &Bootstrap, rules: &[FailIf]) -> Comparison {
    let base_groups = group(base);
    let cand_groups = group(candidate);
    let mut pairs = Vec::new();
    let mut base_only = Vec::new();
    for b in &base_groups {
        let Some(c) = cand_groups.iter().find(|c| c.key == b.key) else {
            base_only.push(b.key.label());
            continue;
        };
        let metrics = Metric::COMPARED.iter().map(|&metric| compare_configs(metric, b, c, boot)).collect();
        pairs.push(Pair {
            key: b.key.clone(),
            label: b.key.label(),
            base_iterations: b.valid().count(),
            candidate_iterations: c.valid().count(),
            metrics,
        });
    }
    let candidate_only =
        cand_groups.iter().filter(|c| !base_groups.iter().any(|b| b.key == c.key)).map(|c| c.key.label()).collect();
    let rules: Vec<RuleOutcome> = rules
        .iter()
        .map(|rule| {
            let broken_by: Vec<String> = pairs
                .iter()
                .filter(|p| p.metrics.iter().any(|m| rule.is_broken_by(m)))
                .map(|p| p.label.clone())
                .collect();
            RuleOutcome { rule: rule.clone(), failed: !broken_by.is_empty(), broken_by }
        })
        .collect();
    let failed = rules.iter().any(|r| r.failed);
    Comparison {
        schema: COMPARE_SCHEMA,
        method: METHOD,
        confidence: boot.confidence,
        resamples: boot.resamples,
        seed: boot.seed,
        min_iterations: MIN_ITERATIONS,
        preferred_iterations: PREFERRED_ITERATIONS,
        min_seconds: seconds::MIN_SECONDS,
        pairs,
        base_only,
        candidate_only,
        rules,
        failed,
    }
}

/// Compares one metric's iterations.
pub fn compare_metric(metric: Metric, base: &[f64], candidate: &[f64], boot: &Bootstrap) -> MetricChange {
    let base_median = median(base);
    let candidate_median = median(candidate);
    let enough = base.len() >= MIN_ITERATIONS && candidate.len() >= MIN_ITERATIONS;
    let interval = if enough { boot.change_interval(base, candidate) } else { None };
    judge(
        metric,
        MetricChange {
            metric,
            base_median,
            candidate_median,
            method: interval.map(|_| Method::Iterations),
            base_value: base_median,
            candidate_value: candidate_median,
            base_samples: base.len(),
            candidate_samples: candidate.len(),
            block_s: None,
            change: ratio(base_median, candidate_median),
            interval,
            significant: false,
            verdict: Verdict::TooFewIterations,
            verdict_text: String::new(),
        },
    )
}

/// Fills in significance and the verdict from the interval.
fn judge(metric: Metric, change: MetricChange) -> MetricChange {
    let interval = change.interval;
    let significant = interval.is_some_and(|ci| ci.excludes_zero());
    let verdict = match interval {
        None => Verdict::TooFewIterations,
        Some(_) if !significant => Verdict::NoSignificantChange,
        Some(ci) => {
            let increased = ci.low > 0.0;
            if increased == metric.higher_is_better() {
                Verdict::Better
            } else {
                Verdict::Worse
            }
        }
    };
    let (better, worse) = metric.verdict_words();
    let verdict_text = match verdict {
        Verdict::Better => better,
        Verdict::Worse => worse,
        Verdict::NoSignificantChange => "no significant change",
        Verdict::TooFewIterations => "too few iterations",
    }
    .to_owned();
    MetricChange { significant, verdict, verdict_text, ..change }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_of_better_depends_on_the_metric() {
        let boot = Bootstrap::default();
        let base = [10.0, 10.1, 9.9, 10.05, 9.95];
        let higher: Vec<f64> = base.iter().map(|v| v * 1.3).collect();
        let rps = compare_metric(Metric::Rps, &base, &higher, &boot);
        assert_eq!((rps.verdict, rps.verdict_text.as_str()), (Verdict::Better, "faster"));
        let p99 = compare_metric(Metric::P99, &base, &higher, &boot);
        assert_eq!((p99.verdict, p99.verdict_text.as_str()), (Verdict::Worse, "slower"));
        let rss = compare_metric(Metric::Rss, &base, &higher, &boot);
        assert_eq!(rss.verdict_text, "more");
    }

    #[test]
    fn two_iterations_give_no_verdict() {
        let change = compare_metric(Metric::Rps, &[1.0, 1.0], &[2.0, 2.0], &Bootstrap::default());
        assert_eq!(change.verdict, Verdict::TooFewIterations);
        assert!(!change.significant);
        assert!((change.change.unwrap() - 1.0).abs() < 1e-12);
    }
}
