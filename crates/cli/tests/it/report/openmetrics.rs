//! `stampede report --format openmetrics`, read back by the reference parser
//! of the format (Python's `prometheus_client.openmetrics.parser`, installed
//! by scripts/deps.sh): every run's figures come back as numbers under the
//! labels that name the run, hostile label values intact, and the demo
//! results (valid, invalid and partial runs) parse whole.

use stampede_testkit::report;

use report::*;
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

const PARSER: &str = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = []
for f in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": f.name, "type": f.type, "unit": f.unit,
                "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]})
print(json.dumps(out))
"#;

/// The families the reference parser reads from `text`, or none (with a
/// SKIP line) when Python or prometheus_client is missing.
fn parse(text: &str) -> Option<Vec<Value>> {
    let probe = Command::new("python3").args(["-c", "import prometheus_client.openmetrics.parser"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        println!("SKIP openmetrics: python3 with prometheus_client is missing (scripts/deps.sh installs it)");
        return None;
    }
    let mut child = Command::new("python3")
        .args(["-c", PARSER])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the parser refused the text:\n{}\n{text}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap())
}

fn family<'a>(families: &'a [Value], name: &str) -> &'a Value {
    families.iter().find(|f| f["name"] == name).unwrap_or_else(|| panic!("no family {name}"))
}

#[test]
fn every_runs_figures_parse_back_under_its_labels() {
    let hostile = "go \"fast\" \\ \nnew";
    let results = results_json(&[(hostile, "2", &[1000.0, 1200.0]), ("node", "1", &[800.0])]);
    let dir = scratch("openmetrics");
    let path = write_json(&dir, "results.json", &results);
    let out = run(&["report", &path, "--format", "openmetrics"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.ends_with("# EOF\n"));
    let Some(families) = parse(&text) else { return };

    let rps = family(&families, "stampede_requests_per_second");
    assert_eq!(rps["type"], "gauge");
    let samples = rps["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3, "one per run");
    let second = samples.iter().find(|s| s["labels"]["app"] == hostile && s["labels"]["iteration"] == "2").unwrap();
    assert_eq!(second["value"], 1200.0);
    assert_eq!(second["labels"]["knobs"], "threads=2");
    assert_eq!(second["labels"]["profile"], "steady");

    let latency = family(&families, "stampede_latency_seconds");
    assert_eq!((latency["type"].as_str(), latency["unit"].as_str()), (Some("summary"), Some("seconds")));
    let p99 = latency["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["labels"]["app"] == "node" && s["labels"]["quantile"] == "0.99")
        .unwrap();
    assert!((p99["value"].as_f64().unwrap() - 0.0031).abs() < 1e-12, "{p99}");

    let errors = family(&families, "stampede_errors");
    assert_eq!(errors["type"], "counter");
    let categories: Vec<&str> =
        errors["samples"].as_array().unwrap().iter().filter_map(|s| s["labels"]["category"].as_str()).collect();
    assert!(categories.contains(&"socket_errors") && categories.contains(&"bad_responses"), "{categories:?}");
    let cpu = family(&families, "stampede_server_cpu_cores");
    assert!(cpu["samples"].as_array().unwrap().iter().all(|s| s["value"] == 1.0));
}

#[test]
fn the_demo_results_parse_whole() {
    let out = run(&["report", "--demo", "--format", "openmetrics", "-o", "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let Some(families) = parse(&stdout(&out)) else { return };
    assert!(families.len() >= 8, "{families:?}");
    let valid = family(&families, "stampede_run_valid");
    assert!(valid["samples"].as_array().unwrap().iter().any(|s| s["value"] == 0.0), "the demo's invalid run");
}
