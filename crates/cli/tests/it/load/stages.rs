//! `stampede load --stages`: the pacer follows a ramp (each stage gets the
//! requests its target asks for, so its achieved rate is within 3% of the
//! stage's mean target, at rates any machine reaches), a connection ramp
//! parks connections until they are due, per-stage figures reach the text
//! and the JSON, and a bad stage is a one-line error naming the flag.

use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::load;

use load::{load_json, stampede};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

#[test]
fn each_stage_gets_its_target_rate_within_3_percent() {
    let srv = Hostile::start(Trick::None);
    let r = load_json(&["--stages", "1s:400,2s:400,2s:1000", "-c", "8", "-t", "2", &srv.url("/")], DEADLINE);
    let stages = r["stages"].as_array().expect("stages in the JSON");
    assert_eq!(stages.len(), 3);
    // Means of the ramps: 0→400, 400→400, 400→1000.
    for (s, target) in stages.iter().zip([200.0, 400.0, 700.0]) {
        assert_eq!(s["ramp"], "rate");
        let achieved = s["achieved_rate"].as_f64().unwrap();
        assert!((achieved - target).abs() <= 0.03 * target, "stage {s}: {achieved} req/s for {target}");
        assert_eq!(s["errors"]["connect"], 0, "{s}");
        assert!(s["latency_us"]["p99"].as_f64().unwrap() > 0.0, "{s}");
    }
    let sum: u64 = stages.iter().map(|s| s["requests"].as_u64().unwrap()).sum();
    assert_eq!(sum, r["requests"].as_u64().unwrap(), "every request is in one stage");
    assert_eq!(r["mode"], "open");
}

#[test]
fn a_connection_ramp_sends_nothing_until_a_connection_is_due_and_stages_show_in_the_text() {
    let srv = Hostile::start(Trick::None);
    let out = stampede(&["load", "--stages", "1s:0,1s:2", "--ramp", "connections", &srv.url("/")], DEADLINE);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(" connections ") && l.contains(" requests ")).collect();
    assert_eq!(lines.len(), 2, "{text}");
    let requests = |l: &str| -> u64 {
        let words: Vec<&str> = l.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "requests").unwrap();
        words[at - 1].parse().unwrap()
    };
    assert_eq!(requests(lines[0]), 0, "no connection is due during 0 -> 0: {}", lines[0]);
    assert!(requests(lines[1]) > 0, "{}", lines[1]);
}

#[test]
fn bad_stages_name_the_flag_and_the_stage() {
    for (stages, part) in
        [("10s:1k,abc", "\"abc\" (stage 2)"), ("10s:1k,5q:2k", "\"5q:2k\" (stage 2)"), ("1s:0", "every target is 0")]
    {
        let out = stampede(&["load", "--stages", stages, "http://127.0.0.1:9/"], DEADLINE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--stages") && err.contains(part) && err.lines().count() == 1, "{stages}: {err}");
    }
    let out = stampede(&["load", "--stages", "1s:10", "-d", "5s", "http://127.0.0.1:9/"], DEADLINE);
    assert_eq!(out.status.code(), Some(2), "--stages and --duration conflict");
}
