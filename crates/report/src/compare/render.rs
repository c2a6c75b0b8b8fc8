//! How a comparison is shown: an aligned table for people, or JSON
//! (`stampede.compare/2`, documented in docs/compare.md) for machines.

use std::fmt::Write;

use super::{Comparison, MetricChange};
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
            "  {:<28} {:>12} {:>12} {:>9}  {:<20} {:<14} verdict",
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
                "  {:<28} {:>12} {:>12} {:>9}  {:<20} {:<14} {}",
                m.metric.title(),
                value(m.base_value.or(m.base_median)),
                value(m.candidate_value.or(m.candidate_median)),
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
        "{confidence}% confidence interval of the change between server starts: each iteration is one start and\n\
         gives one figure; Welch's t interval on their logarithms (a verdict needs {} iterations a side where\n\
         the figure is valid). It holds the noise between starts as well as within them (docs/compare.md).",
        comparison.min_iterations
    );
    out
}

/// What a metric's interval was drawn from: `3+3 starts`.
fn source(m: &MetricChange) -> String {
    match m.interval {
        Some(_) => format!("{}+{} starts", m.base_samples, m.candidate_samples),
        None => "–".to_owned(),
    }
}
