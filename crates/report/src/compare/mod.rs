//! `stampede compare`: pairs the runs of two results files by app, knobs and
//! load profile, and for each metric says whether the candidate differs from
//! the base by more than the noise between server starts. Every iteration is
//! a server start and gives one figure per metric (the figure the summary
//! shows for it); the 95 % confidence interval of the change is Welch's t
//! interval on the logarithms of those figures ([`starts`], which says why
//! not a bootstrap of seconds). A change counts as significant when that
//! interval excludes zero. Each figure counts only from the iterations where
//! it is valid: closed-loop figures from runs whose measured load is valid,
//! latency from runs whose latency phase is too (`Metric::is_valid_in`).
//! `--fail-if` rules ([`threshold`]) turn a significant regression into exit
//! code 1.

mod render;
pub mod starts;
pub mod threshold;

#[cfg(test)]
mod calibration;

use serde::Serialize;

pub use self::render::{human, json};
pub use self::starts::{Interval, MIN_STARTS};
pub use self::threshold::FailIf;
use crate::schema::Results;
use crate::stats::median;
use crate::summary::{group, ConfigKey, ConfigRuns, Metric};

/// The confidence of every interval.
pub const CONFIDENCE: f64 = 0.95;

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
    /// Medians over the iterations where the figure is valid, as the summary shows them.
    pub base_median: Option<f64>,
    pub candidate_median: Option<f64>,
    /// Geometric means of the same figures: what `change` and `interval` are about.
    pub base_value: Option<f64>,
    pub candidate_value: Option<f64>,
    /// Iterations (server starts) behind each side's figures.
    pub base_samples: usize,
    pub candidate_samples: usize,
    /// Welch–Satterthwaite degrees of freedom of the interval.
    pub df: Option<f64>,
    /// `candidate_value / base_value − 1`.
    pub change: Option<f64>,
    pub interval: Option<Interval>,
    pub significant: bool,
    pub verdict: Verdict,
    /// The verdict in words for this metric: "faster", "slower", "less",
    /// "more", "no significant change", or what was too few
    /// ("too few valid iterations: base 1, candidate 2 (2 needed)").
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
    pub min_iterations: usize,
    pub pairs: Vec<Pair>,
    pub base_only: Vec<String>,
    pub candidate_only: Vec<String>,
    pub rules: Vec<RuleOutcome>,
    pub failed: bool,
}

pub const COMPARE_SCHEMA: &str = "stampede.compare/2";

/// The `method` of the whole comparison.
pub const METHOD: &str = "Welch's t interval of the ratio of geometric means of per-iteration figures: each \
                          iteration is one server start, so the interval holds the noise between starts";

/// Compares one metric of a configuration present in both files, over the
/// iterations where that figure is valid.
pub fn compare_configs(metric: Metric, base: &ConfigRuns<'_>, candidate: &ConfigRuns<'_>) -> MetricChange {
    compare_metric(metric, &base.values(metric), &candidate.values(metric))
}

/// Compares every configuration the two files share.
pub fn compare(base: &Results, candidate: &Results, rules: &[FailIf]) -> Comparison {
    let base_groups = group(base);
    let cand_groups = group(candidate);
    let mut pairs = Vec::new();
    let mut base_only = Vec::new();
    for b in &base_groups {
        let Some(c) = cand_groups.iter().find(|c| c.key == b.key) else {
            base_only.push(b.key.label());
            continue;
        };
        let metrics = Metric::COMPARED.iter().map(|&metric| compare_configs(metric, b, c)).collect();
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
        confidence: CONFIDENCE,
        min_iterations: MIN_STARTS,
        pairs,
        base_only,
        candidate_only,
        rules,
        failed,
    }
}

/// Compares one metric's per-iteration figures.
pub fn compare_metric(metric: Metric, base: &[f64], candidate: &[f64]) -> MetricChange {
    let found = starts::change(base, candidate, CONFIDENCE);
    let counted = |values: &[f64]| values.iter().filter(|v| v.is_finite() && **v > 0.0).count();
    let (base_samples, candidate_samples) = (counted(base), counted(candidate));
    let interval = found.map(|f| f.interval);
    let significant = interval.is_some_and(|ci| ci.excludes_zero());
    let verdict = match interval {
        None => Verdict::TooFewIterations,
        Some(_) if !significant => Verdict::NoSignificantChange,
        Some(ci) if (ci.low > 0.0) == metric.higher_is_better() => Verdict::Better,
        Some(_) => Verdict::Worse,
    };
    let (better, worse) = metric.verdict_words();
    let verdict_text = match verdict {
        Verdict::Better => better.to_owned(),
        Verdict::Worse => worse.to_owned(),
        Verdict::NoSignificantChange => "no significant change".to_owned(),
        Verdict::TooFewIterations => format!(
            "too few {}: base {base_samples}, candidate {candidate_samples} ({MIN_STARTS} needed)",
            metric.valid_iterations_words()
        ),
    };
    MetricChange {
        metric,
        base_median: median(base),
        candidate_median: median(candidate),
        base_value: found.map(|f| f.base),
        candidate_value: found.map(|f| f.candidate),
        base_samples,
        candidate_samples,
        df: found.map(|f| f.df),
        change: found.map(|f| f.change).or_else(|| match (median(base), median(candidate)) {
            (Some(b), Some(c)) if b != 0.0 => Some(c / b - 1.0),
            _ => None,
        }),
        interval,
        significant,
        verdict,
        verdict_text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_of_better_depends_on_the_metric() {
        let base = [10.0, 10.1, 9.9, 10.05, 9.95];
        let higher: Vec<f64> = base.iter().map(|v| v * 1.3).collect();
        let rps = compare_metric(Metric::Rps, &base, &higher);
        assert_eq!((rps.verdict, rps.verdict_text.as_str()), (Verdict::Better, "faster"));
        let p99 = compare_metric(Metric::P99, &base, &higher);
        assert_eq!((p99.verdict, p99.verdict_text.as_str()), (Verdict::Worse, "slower"));
        let rss = compare_metric(Metric::Rss, &base, &higher);
        assert_eq!(rss.verdict_text, "more");
    }

    #[test]
    fn one_iteration_gives_no_verdict_and_says_what_is_too_few() {
        let change = compare_metric(Metric::Rps, &[1.0], &[2.0, 2.0]);
        assert_eq!(change.verdict, Verdict::TooFewIterations);
        assert!(!change.significant);
        assert!((change.change.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(change.verdict_text, "too few valid iterations: base 1, candidate 2 (2 needed)");
        let p99 = compare_metric(Metric::P99, &[], &[2.0, 2.0]);
        assert_eq!(p99.verdict_text, "too few iterations with a valid latency phase: base 0, candidate 2 (2 needed)");
    }

    #[test]
    fn two_iterations_a_side_give_a_verdict() {
        let change = compare_metric(Metric::RpsPerCore, &[1000.0, 1010.0], &[800.0, 805.0]);
        assert_eq!(change.verdict, Verdict::Worse);
        assert_eq!((change.base_samples, change.candidate_samples), (2, 2));
    }
}
