//! How a comparison is shown: an aligned table for people, or JSON
//! (`stampede.compare/1`, documented in docs/compare.md) for machines.

use std::fmt::Write;

use super::Comparison;
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
            "  {:<28} {:>12} {:>12} {:>9}  {:<20} verdict",
            "metric",
            "base",
            "candidate",
            "change",
            format!("{confidence}% CI"),
        );
        for m in &pair.metrics {
            let change = m.change.map(pct).unwrap_or_else(|| "–".to_owned());
            let ci =
                m.interval.map(|ci| format!("[{}, {}]", pct(ci.low), pct(ci.high))).unwrap_or_else(|| "–".to_owned());
            let _ = writeln!(
                out,
                "  {:<28} {:>12} {:>12} {:>9}  {:<20} {}",
                m.metric.title(),
                value(m.base_median),
                value(m.candidate_median),
                change,
                ci,
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
        "Medians of valid iterations; {confidence}% confidence interval of the change by percentile bootstrap ({} resamples, seed {}); a verdict needs {} valid iterations on each side.",
        comparison.resamples, comparison.seed, comparison.min_iterations
    );
    out
}
