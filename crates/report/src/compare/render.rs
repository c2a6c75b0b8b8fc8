//! How a comparison is shown: an aligned table for people, or JSON
//! (`stampede.compare/1`, documented in docs/compare.md) for machines.

use std::fmt::Write;

use super::{Comparison, Method, MetricChange};
use crate::format::{pct, sig};

/// The comparison as JSON.
pub fn json(comparison: &Comparison) -> String {
    let mut text = serde_json::to_string_pretty(comparison).expect("comparison serialises");
    text.push('\n');
    text
}

fn value(v: Option<f64>) -> String {
    v.map(sig).unwrap_or_else(|| "–".to_owned())
}

/// The comparison as a plain-text table.
pub fn human(comparison: &Comparison) -> String {
    let mut out = String::new();
    let confidence = (comparison.confidence * 100.0).round();
    for pair in &comparison.pairs {
        let _ = writeln!(
            out,
            "{}  (valid iterations: base {}, candidate {})",
            pair.label, pair.base_iterations, pair.candidate_iterations
        );
        let _ = writeln!(
            out,
            "  {:<28} {:>12} {:>12} {:>9}  {:<20} {:<26} verdict",
            "metric",
            "base",
            "candidate",
            "change",
            format!("{confidence}% CI"),
            "from",
        );
        for m in &pair.metrics {
            let change = m.change.map(pct).unwrap_or_else(|| "–".to_owned());
            let ci =
                m.interval.map(|ci| format!("[{}, {}]", pct(ci.low), pct(ci.high))).unwrap_or_else(|| "–".to_owned());
            let _ = writeln!(
                out,
                "  {:<28} {:>12} {:>12} {:>9}  {:<20} {:<26} {}",
                m.metric.title(),
                value(m.base_value),
                value(m.candidate_value),
                change,
                ci,
                source(m),
                m.verdict_text
            );
        }
        out.push('\n');
    }
    for label in &comparison.base_only {
        let _ = writeln!(out, "only in base, not compared: {label}");
    }
    for label in &comparison.candidate_only {
        let _ = writeln!(out, "only in candidate, not compared: {label}");
    }
    for outcome in &comparison.rules {
        if outcome.failed {
            let _ = writeln!(out, "--fail-if {}: FAILED by {}", outcome.rule.expr, outcome.broken_by.join("; "));
        } else {
            let _ = writeln!(out, "--fail-if {}: passed", outcome.rule.expr);
        }
    }
    let _ = writeln!(
        out,
        "{confidence}% confidence interval of the change by percentile bootstrap ({} resamples, seed {}).\n\
         From iterations: medians of valid iterations, resampled (a verdict needs {} a side).\n\
         From seconds (fewer than {} iterations a side): the valid iterations' seconds pooled and resampled in\n\
         moving blocks; requests/s over those seconds, p99 the request-weighted mean of per-second p99s.\n\
         It holds the noise within runs, not the variation between server starts (docs/compare.md).",
        comparison.resamples, comparison.seed, comparison.min_iterations, comparison.preferred_iterations
    );
    out
}

/// What a metric's values and interval were drawn from: `5+5 iterations`, `8+8 seconds, 2 s blocks`.
fn source(m: &MetricChange) -> String {
    match (m.method, m.block_s) {
        (Some(Method::Seconds), Some(block)) => {
            format!("{}+{} seconds, {block} s blocks", m.base_samples, m.candidate_samples)
        }
        (Some(Method::Iterations), _) => format!("{}+{} iterations", m.base_samples, m.candidate_samples),
        _ => "–".to_owned(),
    }
}
