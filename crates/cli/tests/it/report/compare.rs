//! `stampede compare` through the real binary: identical inputs, a clear
//! 20 % drop, ±3 % noise, determinism, bad input, and the main job's shape
//! (three server starts a row whose figures differ more between starts than
//! within them), with validity per figure.

use stampede_testkit::report;

use report::*;
use serde_json::Value;

const BASE: [f64; 5] = [10_000.0, 10_150.0, 9_900.0, 10_050.0, 9_950.0];

fn scaled(factors: &[f64]) -> Vec<f64> {
    BASE.iter().zip(factors).map(|(v, f)| v * f).collect()
}

fn rps_metric(json: &Value) -> &Value {
    json["pairs"][0]["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == "rps").unwrap()
}

#[test]
fn identical_inputs_give_no_significant_change() {
    let dir = scratch("compare-identical");
    let base = write_json(&dir, "base.json", &results_json(&[("go", "1", &BASE), ("node", "1", &BASE)]));
    let out = run(&["compare", &base, &base, "--fail-if", "rps<-5%"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.matches("no significant change").count(), 12, "{text}");
    assert!(!text.contains("slower") && !text.contains("faster"), "{text}");
    assert!(text.contains("--fail-if rps<-5%: passed"), "{text}");
}

#[test]
fn a_clear_20_percent_rps_drop_is_slower_and_fails_ci() {
    let dir = scratch("compare-drop");
    let base = write_json(&dir, "base.json", &results_json(&[("go", "1", &BASE)]));
    let dropped = scaled(&[0.80, 0.79, 0.81, 0.80, 0.805]);
    let cand = write_json(&dir, "cand.json", &results_json(&[("go", "1", &dropped)]));

    let out = run(&["compare", &base, &cand, "--fail-if", "rps<-5%"]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let rps_line = text.lines().find(|l| l.trim_start().starts_with("requests/s ")).unwrap();
    assert!(rps_line.ends_with("slower"), "{rps_line}");
    assert!(text.contains("--fail-if rps<-5%: FAILED by go threads=1 (steady)"), "{text}");

    let out = run(&["compare", &base, &cand, "--json", "--fail-if", "rps<-5%"]);
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["schema"], "stampede.compare/2");
    assert_eq!(json["failed"], true);
    let rps = rps_metric(&json);
    assert_eq!(rps["verdict"], "worse");
    assert_eq!(rps["verdict_text"], "slower");
    let change = rps["change"].as_f64().unwrap();
    assert!((change + 0.2).abs() < 0.01, "{change}");
    assert!(rps["interval"]["high"].as_f64().unwrap() < -0.05);

    // The same drop without --fail-if reports but does not fail.
    let out = run(&["compare", &base, &cand]);
    assert_eq!(out.status.code(), Some(0));
    // A rule on another metric is not broken by an RPS drop.
    let out = run(&["compare", &base, &cand, "--fail-if", "p99>+10%"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn three_percent_noise_does_not_fail_ci() {
    let dir = scratch("compare-noise");
    let base = write_json(&dir, "base.json", &results_json(&[("go", "1", &BASE)]));
    let noisy = scaled(&[1.03, 0.97, 1.01, 0.98, 1.02]);
    let cand = write_json(&dir, "cand.json", &results_json(&[("go", "1", &noisy)]));
    let out = run(&["compare", &base, &cand, "--fail-if", "rps<-5%", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rps_metric(&json)["verdict"], "no_significant_change");
    assert_eq!(json["failed"], false);
}

#[test]
fn the_same_inputs_give_the_same_output() {
    let dir = scratch("compare-seed");
    let base = write_json(&dir, "base.json", &results_json(&[("go", "1", &BASE)]));
    let cand = write_json(&dir, "cand.json", &results_json(&[("go", "1", &scaled(&[1.03, 0.97, 1.01, 0.98, 1.02]))]));
    let first = run(&["compare", &base, &cand, "--json"]);
    let second = run(&["compare", &base, &cand, "--json"]);
    assert_eq!(first.stdout, second.stdout);
}

#[test]
fn unpaired_runs_are_listed_and_nothing_to_pair_is_an_error() {
    let dir = scratch("compare-unpaired");
    let base = write_json(&dir, "base.json", &results_json(&[("go", "1", &BASE), ("node", "1", &BASE)]));
    let cand = write_json(&dir, "cand.json", &results_json(&[("go", "1", &BASE), ("go", "2", &BASE)]));
    let out = run(&["compare", &base, &cand]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("only in base, not compared: node threads=1 (steady)"), "{text}");
    assert!(text.contains("only in candidate, not compared: go threads=2 (steady)"), "{text}");

    let other = write_json(&dir, "other.json", &results_json(&[("rust", "1", &BASE)]));
    let out = run(&["compare", &base, &other]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no run in"), "{}", stderr(&out));
}

#[test]
fn too_few_iterations_give_no_verdict_say_what_is_too_few_and_never_fail() {
    let dir = scratch("compare-few");
    let base = write_json(&dir, "base.json", &results_json(&[("go", "1", &[10_000.0])]));
    let cand = write_json(&dir, "cand.json", &results_json(&[("go", "1", &[5_000.0, 5_100.0])]));
    let out = run(&["compare", &base, &cand, "--fail-if", "rps<-5%"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("too few valid iterations: base 1, candidate 2 (2 needed)"), "{text}");
    assert!(!text.contains("slower") && !text.contains("no significant change"), "{text}");
}

#[test]
fn a_bad_fail_if_rule_names_the_flag_and_exits_2() {
    let dir = scratch("compare-bad");
    let base = write_json(&dir, "base.json", &results_json(&[("go", "1", &BASE)]));
    for rule in ["rps<-5", "speed<-5%", "rps=5%"] {
        let out = run(&["compare", &base, &base, "--fail-if", rule]);
        assert_eq!(out.status.code(), Some(2), "{rule}");
        let err = stderr(&out);
        assert!(err.starts_with("stampede: error: invalid --fail-if"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    let out = run(&["compare", &base, "missing.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("missing.json"));
}

#[test]
fn json_output_matches_the_documented_schema() {
    let dir = scratch("compare-schema");
    let base = write_json(&dir, "base.json", &results_json(&[("go", "1", &BASE)]));
    let out = run(&["compare", &base, &base, "--json", "--fail-if", "rps<-5%"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut documented = documented_fields("compare.md", "### `stampede.compare/2`");
    documented.sort();
    assert_eq!(keys(&json), documented, "docs/compare.md and --json disagree");
    assert_eq!(keys(&json["pairs"][0]), ["base_iterations", "candidate_iterations", "key", "label", "metrics"]);
    assert_eq!(
        keys(&json["pairs"][0]["metrics"][0]),
        [
            "base_median",
            "base_samples",
            "base_value",
            "candidate_median",
            "candidate_samples",
            "candidate_value",
            "change",
            "df",
            "interval",
            "metric",
            "significant",
            "verdict",
            "verdict_text"
        ]
    );
    assert_eq!(keys(&json["rules"][0]), ["broken_by", "failed", "rule"]);
}

#[test]
fn profiled_pairs_get_a_differential_flame_graph() {
    let dir = scratch("compare-flame");
    std::fs::write(dir.join("base.folded"), "server;main;work 80\nserver;main;io 20\n").unwrap();
    std::fs::write(dir.join("cand.folded"), "server;main;work 20\nserver;main;io 80\n").unwrap();
    let with_profile = |folded: &str| {
        let mut doc = results_json(&[("go", "1", &BASE)]);
        for run in doc["runs"].as_array_mut().unwrap() {
            run["cpu_profile"] = serde_json::json!({"folded": folded, "top": []});
        }
        doc
    };
    let base = write_json(&dir, "base.json", &with_profile("base.folded"));
    let cand = write_json(&dir, "cand.json", &with_profile("cand.folded"));
    let out = run(&["compare", &base, &cand]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let svg: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("flame-diff-"))
        .collect();
    assert_eq!(svg.len(), 1, "{}", stderr(&out));
    let text = std::fs::read_to_string(&svg[0]).unwrap();
    assert!(text.starts_with("<?xml") && text.contains("work") && text.contains("io"), "an SVG of both frames");
    assert!(stderr(&out).contains("differential flame graph"), "{}", stderr(&out));
}

/// One main-job run: requests/s `rps` and open-loop p99 `p99_us` of this
/// server start, each second of its 2 s closed loop within ±1 % of them.
fn shootout_run(app: &str, profile: &str, iteration: u64, rps: f64, p99_us: f64) -> Value {
    let timeline = |rate: f64, p99: f64| -> Vec<Value> {
        (0..2u64)
            .map(|t| {
                let wobble = if (t + iteration).is_multiple_of(2) { 1.01 } else { 0.99 };
                serde_json::json!({"t_s": t, "requests": (rate * wobble) as u64, "errors": 0, "p99_us": p99 * wobble})
            })
            .collect()
    };
    let mut run = run_json(app, "1", iteration, rps);
    run["knobs"] = serde_json::json!({});
    run["profile"] = profile.into();
    run["load"]["duration_s"] = 2.0.into();
    run["load"]["timeline"] = timeline(rps, p99_us / 3.0).into();
    let mut latency = run["load"].clone();
    latency["mode"] = "open".into();
    latency["rps"] = (rps * 0.7).into();
    latency["latency_us"]["p99"] = p99_us.into();
    latency["timeline"] = timeline(rps * 0.7, p99_us).into();
    run["latency"] = latency;
    run
}

/// The three starts of a row: their requests/s differ by these factors, their p99s by the square.
const STARTS: [f64; 3] = [1.0, 1.04, 0.96];

/// A main-job results file: each (app, profile, requests/s, p99 in us) row
/// run three times, `starts` giving each start's factor.
fn shootout_json(rows: &[(&str, &str, f64, f64)], starts: [f64; 3]) -> Value {
    let mut doc = results_json(&[]);
    doc["runs"] = rows
        .iter()
        .flat_map(|&(app, profile, rps, p99)| {
            (1..=3u64).map(move |i| {
                let f = starts[i as usize - 1];
                shootout_run(app, profile, i, rps * f, p99 * f * f)
            })
        })
        .collect::<Vec<_>>()
        .into();
    doc
}

const SHOOTOUT: [(&str, &str, f64, f64); 4] = [
    ("go", "plaintext", 35_000.0, 2_500.0),
    ("go", "json", 28_000.0, 2_800.0),
    ("rust", "plaintext", 87_000.0, 600.0),
    ("rust", "json", 89_000.0, 650.0),
];

fn metric<'a>(pair: &'a Value, name: &str) -> &'a Value {
    pair["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == name).unwrap()
}

#[test]
fn two_main_job_results_get_a_verdict_with_an_interval_for_every_rows_headline_figures() {
    let dir = scratch("compare-main-job");
    let base = write_json(&dir, "base.json", &shootout_json(&SHOOTOUT, STARTS));
    let mut changed = SHOOTOUT;
    changed[0].2 *= 0.8; // go plaintext: 20 % fewer requests/s
    changed[3].3 *= 1.5; // rust json: open-loop p99 50 % higher
    let cand = write_json(&dir, "cand.json", &shootout_json(&changed, [0.97, 1.0, 1.03]));

    let out = run(&["compare", &base, &cand, "--json", "--fail-if", "rps<-5%,p99>+20%"]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pairs = json["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 4);
    let mut verdicts = Vec::new();
    for pair in pairs {
        assert_eq!(pair["base_iterations"], 3);
        for name in ["rps", "rps_per_core", "cpu", "p99"] {
            let m = metric(pair, name);
            assert_eq!((m["base_samples"].as_u64(), m["candidate_samples"].as_u64()), (Some(3), Some(3)), "{m}");
            let interval = &m["interval"];
            let (low, high) = (interval["low"].as_f64().unwrap(), interval["high"].as_f64().unwrap());
            let change = m["change"].as_f64().unwrap();
            assert!(low <= change && change <= high, "{m}");
            if name != "cpu" {
                verdicts.push(format!(
                    "{} {name} {}",
                    pair["label"].as_str().unwrap(),
                    m["verdict_text"].as_str().unwrap()
                ));
            }
        }
    }
    assert_eq!(
        verdicts,
        [
            "go (plaintext) rps slower",
            "go (plaintext) rps_per_core slower",
            "go (plaintext) p99 no significant change",
            "go (json) rps no significant change",
            "go (json) rps_per_core no significant change",
            "go (json) p99 no significant change",
            "rust (plaintext) rps no significant change",
            "rust (plaintext) rps_per_core no significant change",
            "rust (plaintext) p99 no significant change",
            "rust (json) rps no significant change",
            "rust (json) rps_per_core no significant change",
            "rust (json) p99 slower",
        ]
    );
    let rules = json["rules"].as_array().unwrap();
    assert_eq!(rules[0]["broken_by"], serde_json::json!(["go (plaintext)"]));
    assert_eq!(rules[1]["broken_by"], serde_json::json!(["rust (json)"]));

    // The p99 compared is the open-loop phase's, not the closed loop's.
    let p99 = metric(&pairs[3], "p99");
    assert!((p99["base_median"].as_f64().unwrap() - 0.65).abs() < 1e-9, "{p99}");

    let text = stdout(&run(&["compare", &base, &cand]));
    let rps_line = text.lines().find(|l| l.trim_start().starts_with("requests/s ")).unwrap();
    assert!(rps_line.contains("3+3 starts") && rps_line.ends_with("slower"), "{rps_line}");
    assert!(text.contains("noise between starts"), "{text}");
}

/// What broke (issue 39): two results of the same code called significantly
/// different, because seconds of one start were taken for independent
/// samples while the starts differed more than their seconds.
#[test]
fn regression_a_a_results_whose_starts_differ_more_than_their_seconds_give_no_verdict() {
    let dir = scratch("compare-a-a");
    let base = write_json(&dir, "base.json", &shootout_json(&SHOOTOUT, [1.0, 1.05, 0.97]));
    let cand = write_json(&dir, "cand.json", &shootout_json(&SHOOTOUT, [0.96, 0.99, 1.02]));
    let out = run(&["compare", &base, &cand]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains("slower") && !text.contains("faster"), "{text}");
    assert!(!text.contains(" less") && !text.contains(" more"), "{text}");
}

#[test]
fn a_run_invalid_in_its_latency_phase_counts_for_its_closed_loop_figures_only() {
    let dir = scratch("compare-latency-invalid");
    let base = write_json(&dir, "base.json", &shootout_json(&SHOOTOUT[..1], STARTS));
    let mut doc = shootout_json(&SHOOTOUT[..1], STARTS);
    for run in &mut doc["runs"].as_array_mut().unwrap()[..2] {
        run["valid"] = false.into();
        run["load_valid"] = true.into();
        run["invalid_reason"] = "latency phase: load generator late".into();
    }
    let cand = write_json(&dir, "cand.json", &doc);
    let out = run(&["compare", &base, &cand, "--json"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pair = &json["pairs"][0];
    assert_eq!(metric(pair, "rps")["candidate_samples"], 3, "closed-loop figures keep all three starts");
    assert_eq!(metric(pair, "rps_per_core")["verdict"], "no_significant_change");
    let p99 = metric(pair, "p99");
    assert_eq!(p99["verdict"], "too_few_iterations");
    assert_eq!(p99["verdict_text"], "too few iterations with a valid latency phase: base 3, candidate 1 (2 needed)");

    // Without load_valid the same reason spoils every figure.
    for run in doc["runs"].as_array_mut().unwrap() {
        run.as_object_mut().unwrap().remove("load_valid");
    }
    let cand = write_json(&dir, "cand.json", &doc);
    let json: Value = serde_json::from_slice(&run(&["compare", &base, &cand, "--json"]).stdout).unwrap();
    assert_eq!(
        metric(&json["pairs"][0], "rps")["verdict_text"],
        "too few valid iterations: base 3, candidate 1 (2 needed)"
    );
}
