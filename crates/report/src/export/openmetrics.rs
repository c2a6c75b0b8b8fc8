//! A results file as OpenMetrics text (the Prometheus exposition format,
//! <https://prometheus.io/docs/specs/om/open_metrics_spec/>): each run's
//! request rate, latency quantiles, errors by category and CPU figures, with
//! the app, knobs, profile and iteration as labels, for a Pushgateway, a
//! textfile collector or anything else that reads the format. Written by hand
//! because the format is a few lines of text; the test reads it back with
//! the reference parser (Python's `prometheus_client`).

use super::Exporter;
use crate::error::ReportError;
use crate::schema::{Results, Run};
use crate::summary::ConfigKey;
use stampede_schema::ErrorCategory;
use std::fmt::Write;

pub struct OpenMetricsExporter;

/// One sample of a family: extra labels, the sample name's suffix, the value.
type Sample = (Vec<(&'static str, String)>, &'static str, f64);

/// A metric family: name, type, unit (empty for none), help, and its samples for one run.
struct Family {
    name: &'static str,
    kind: &'static str,
    unit: &'static str,
    help: &'static str,
    samples: fn(&Run) -> Vec<Sample>,
}

fn one(value: Option<f64>) -> Vec<Sample> {
    value.filter(|v| v.is_finite()).map(|v| (Vec::new(), "", v)).into_iter().collect()
}

const QUANTILES: [(&str, f64); 6] =
    [("0.5", 0.5), ("0.75", 0.75), ("0.9", 0.9), ("0.99", 0.99), ("0.999", 0.999), ("0.9999", 0.9999)];

const FAMILIES: [Family; 10] = [
    Family {
        name: "stampede_requests_per_second",
        kind: "gauge",
        unit: "",
        help: "Responses per second over the measured phase",
        samples: |r| one(r.load.as_ref().map(|l| l.rps)),
    },
    Family {
        name: "stampede_requests",
        kind: "counter",
        unit: "",
        help: "Responses in the measured phase",
        samples: |r| r.load.as_ref().map(|l| (Vec::new(), "_total", l.requests as f64)).into_iter().collect(),
    },
    Family {
        name: "stampede_errors",
        kind: "counter",
        unit: "",
        help: "Errors in the measured phase by category (socket_errors, bad_responses)",
        samples: |r| {
            let Some(l) = r.load.as_ref() else { return Vec::new() };
            ErrorCategory::ALL
                .iter()
                .map(|c| (vec![("category", c.key().to_string())], "_total", c.count(&l.errors) as f64))
                .collect()
        },
    },
    Family {
        name: "stampede_latency_seconds",
        kind: "summary",
        unit: "seconds",
        help: "Response latency (open loop: from the intended send time)",
        samples: |r| {
            let Some(l) = r.load.as_ref() else { return Vec::new() };
            let p = &l.latency_us;
            let values = [p.p50, p.p75, p.p90, p.p99, p.p999, p.p9999];
            let mut out: Vec<Sample> = QUANTILES
                .iter()
                .zip(values)
                .map(|((q, _), v)| (vec![("quantile", q.to_string())], "", v / 1e6))
                .collect();
            out.push((Vec::new(), "_sum", p.mean / 1e6 * l.requests as f64));
            out.push((Vec::new(), "_count", l.requests as f64));
            out
        },
    },
    Family {
        name: "stampede_latency_max_seconds",
        kind: "gauge",
        unit: "seconds",
        help: "The slowest response's latency",
        samples: |r| one(r.load.as_ref().map(|l| l.latency_us.max / 1e6)),
    },
    Family {
        name: "stampede_server_cpu_cores",
        kind: "gauge",
        unit: "",
        help: "The server's CPU use over the measured phase, in cores",
        samples: |r| one(Some(r.server.cpu_cores_avg)),
    },
    Family {
        name: "stampede_requests_per_server_core",
        kind: "gauge",
        unit: "",
        help: "Responses per second per core of server CPU",
        samples: |r| one(r.rps_per_core()),
    },
    Family {
        name: "stampede_loadgen_cpu_cores",
        kind: "gauge",
        unit: "",
        help: "The load generator's own CPU use, in cores",
        samples: |r| {
            let from_load = r.load.as_ref().map(|l| l.loadgen.cpu_cores).filter(|c| *c > 0.0);
            one(from_load.or(Some(r.loadgen.cpu_cores_avg)))
        },
    },
    Family {
        name: "stampede_server_rss_max_bytes",
        kind: "gauge",
        unit: "bytes",
        help: "The server's peak resident memory",
        samples: |r| one(Some(r.server.rss_max_mib * 1024.0 * 1024.0)),
    },
    Family {
        name: "stampede_run_valid",
        kind: "gauge",
        unit: "",
        help: "1 when the run is valid, 0 when it is not (see invalid_reason in the results)",
        samples: |r| one(Some(if r.valid { 1.0 } else { 0.0 })),
    },
];

impl Exporter for OpenMetricsExporter {
    fn export(&self, results: &Results) -> Result<Vec<u8>, ReportError> {
        let mut o = String::new();
        for f in &FAMILIES {
            let _ = writeln!(o, "# TYPE {} {}", f.name, f.kind);
            if !f.unit.is_empty() {
                let _ = writeln!(o, "# UNIT {} {}", f.name, f.unit);
            }
            let _ = writeln!(o, "# HELP {} {}", f.name, f.help);
            for run in &results.runs {
                let labels = run_labels(run);
                for (extra, suffix, value) in (f.samples)(run) {
                    let all = labels.iter().chain(&extra).map(|(k, v)| format!("{k}=\"{}\"", escape(v)));
                    let _ =
                        writeln!(o, "{}{suffix}{{{}}} {}", f.name, all.collect::<Vec<_>>().join(","), number(value));
                }
            }
        }
        o.push_str("# EOF\n");
        Ok(o.into_bytes())
    }
}

/// What tells runs apart: app, knobs (`threads=2 gc=server`, `-` for none),
/// profile, iteration.
fn run_labels(run: &Run) -> Vec<(&'static str, String)> {
    vec![
        ("app", run.app.clone()),
        ("knobs", ConfigKey::of(run).knobs_label()),
        ("profile", run.profile.clone()),
        ("iteration", run.iteration.to_string()),
    ]
}

/// A label value: backslash, double quote and line feed escaped (the spec's ABNF).
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// A value: Rust's shortest round-trip form, or the spec's words for the non-finite.
fn number(v: f64) -> String {
    match v {
        v if v.is_nan() => "NaN".into(),
        v if v == f64::INFINITY => "+Inf".into(),
        v if v == f64::NEG_INFINITY => "-Inf".into(),
        v => format!("{v}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped_and_the_text_ends_with_eof() {
        let text = r#"{"schema":"stampede.run/1","runs":[
          {"app":"a\"b\\c\nd","knobs":{"gc":"on"},"profile":"p","iteration":2,"valid":true,"load":{"rps":10.5,"requests":21}}]}"#;
        let out = String::from_utf8(OpenMetricsExporter.export(&crate::schema::parse(text).unwrap()).unwrap()).unwrap();
        assert!(out.ends_with("\n# EOF\n"));
        let want = r#"stampede_requests_per_second{app="a\"b\\c\nd",knobs="gc=on",profile="p",iteration="2"} 10.5"#;
        assert!(out.lines().any(|l| l == want), "{out}");
        assert!(out.contains(r#"stampede_errors_total{app="a\"b\\c\nd",knobs="gc=on",profile="p",iteration="2",category="socket_errors"} 0"#));
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(escape("x\ny"), "x\\ny");
    }
}
