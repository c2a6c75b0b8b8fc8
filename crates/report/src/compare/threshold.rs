//! `--fail-if` rules: `METRIC<-N%` fails when the metric is significantly
//! lower than the base by more than N % (the whole confidence interval is
//! below −N %), `METRIC>+N%` when it is significantly higher by more than N %.
//! Several rules may be given, repeated or separated by commas.

use serde::Serialize;

use super::MetricChange;
use crate::error::ReportError;
use crate::summary::Metric;

/// Which side of the threshold fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Direction {
    #[serde(rename = "<")]
    Below,
    #[serde(rename = ">")]
    Above,
}

/// One parsed rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailIf {
    pub expr: String,
    #[serde(serialize_with = "metric_name")]
    pub metric: Metric,
    pub direction: Direction,
    /// Relative change, 0.05 for 5 %.
    pub threshold: f64,
}

fn metric_name<S: serde::Serializer>(metric: &Metric, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(metric.name())
}

impl FailIf {
    /// Parses one or more comma-separated rules.
    pub fn parse_list(text: &str) -> Result<Vec<FailIf>, ReportError> {
        text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(FailIf::parse).collect()
    }

    /// Parses `rps<-5%`, `p99 > 10%`, `rss>+20%`.
    pub fn parse(text: &str) -> Result<FailIf, ReportError> {
        let bad = |reason: &str| ReportError::FailIf { expr: text.to_owned(), reason: reason.to_owned() };
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let (at, direction) = match (compact.find('<'), compact.find('>')) {
            (Some(i), None) => (i, Direction::Below),
            (None, Some(i)) => (i, Direction::Above),
            _ => return Err(bad("expected exactly one '<' or '>'")),
        };
        let name = &compact[..at];
        let metric = Metric::from_name(name)
            .filter(|m| Metric::COMPARED.contains(m))
            .ok_or_else(|| bad(&format!("unknown metric {name:?}")))?;
        let number = compact[at + 1..].strip_suffix('%').ok_or_else(|| bad("the threshold must end with '%'"))?;
        let percent: f64 = number.parse().map_err(|_| bad(&format!("{number:?} is not a number")))?;
        if !percent.is_finite() {
            return Err(bad("the threshold must be finite"));
        }
        Ok(FailIf { expr: text.trim().to_owned(), metric, direction, threshold: percent / 100.0 })
    }

    /// Whether a change breaks this rule: it must be significant and its
    /// whole confidence interval beyond the threshold.
    pub fn is_broken_by(&self, change: &MetricChange) -> bool {
        if change.metric != self.metric || !change.significant {
            return false;
        }
        let Some(ci) = change.interval else {
            return false;
        };
        match self.direction {
            Direction::Below => ci.high < self.threshold,
            Direction::Above => ci.low > self.threshold,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rules() {
        let rule = FailIf::parse("rps<-5%").unwrap();
        assert_eq!((rule.metric, rule.direction, rule.threshold), (Metric::Rps, Direction::Below, -0.05));
        let rule = FailIf::parse(" p99 > +10 % ").unwrap();
        assert_eq!((rule.metric, rule.direction, rule.threshold), (Metric::P99, Direction::Above, 0.10));
        assert_eq!(FailIf::parse_list("rps<-5%, rss>20%").unwrap().len(), 2);
    }

    #[test]
    fn rejects_bad_rules_with_a_reason() {
        for (text, reason) in [
            ("rps-5%", "'<' or '>'"),
            ("speed<-5%", "unknown metric"),
            ("rps<-5", "end with '%'"),
            ("rps<abc%", "not a number"),
            ("rps<>5%", "exactly one"),
        ] {
            let err = FailIf::parse(text).unwrap_err().to_string();
            assert!(err.contains(reason), "{text}: {err}");
            assert!(err.contains("--fail-if"), "{err}");
        }
    }
}
