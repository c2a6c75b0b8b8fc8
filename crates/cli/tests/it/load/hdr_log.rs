//! `stampede load --hdr-log`: the interval log is read back by HdrHistogram's
//! own Java reader (the artifact from Maven Central, fetched by the test with
//! `mvn dependency:get`), which must see, second by second, the same counts
//! and the same p99 as the run's stampede.load/1 timeline.

use stampede_testkit::hostile;
use stampede_testkit::load;

use hostile::{Hostile, Trick};
use load::{load_json, stampede};
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);
const ARTIFACT: &str = "org.hdrhistogram:HdrHistogram:2.2.2";

/// The HdrHistogram jar, fetched into the local Maven repository.
fn hdrhistogram_jar() -> Option<std::path::PathBuf> {
    let home = std::env::var("HOME").ok()?;
    let jar =
        std::path::Path::new(&home).join(".m2/repository/org/hdrhistogram/HdrHistogram/2.2.2/HdrHistogram-2.2.2.jar");
    if !jar.exists() {
        let got =
            Command::new("mvn").args(["-q", "dependency:get", &format!("-Dartifact={ARTIFACT}")]).status().ok()?;
        assert!(got.success(), "mvn dependency:get {ARTIFACT} failed");
    }
    Some(jar)
}

#[test]
fn the_interval_log_reads_back_in_hdrhistograms_java_reader_with_the_same_counts_and_p99() {
    let (Ok(_), Some(jar)) = (Command::new("java").arg("-version").output(), hdrhistogram_jar()) else {
        eprintln!("SKIP hdr_log: java or mvn not on PATH");
        return;
    };
    let srv = Hostile::start(Trick::Delay(Duration::from_millis(2)));
    let log = std::env::temp_dir().join(format!("stampede-{}.hlog", std::process::id()));
    let r = load_json(
        &["--rate", "400", "-d", "3s", "-c", "8", "--hdr-log", log.to_str().unwrap(), &srv.url("/")],
        DEADLINE,
    );
    let reader = stampede_testkit::fixture("ReadLog.java");
    let out = Command::new("java").arg("-cp").arg(&jar).arg(reader).arg(&log).output().expect("java runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let intervals: Vec<(u64, u64, f64)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect();
    let timeline = r["timeline"].as_array().unwrap();
    let total: u64 = intervals.iter().map(|i| i.1).sum();
    assert_eq!(total, r["requests"].as_u64().unwrap(), "the log holds every response");
    assert!(intervals.len() >= 3, "{intervals:?}");
    for (t, count, p99_ns) in intervals {
        let second = &timeline[t as usize];
        assert_eq!(count, second["requests"].as_u64().unwrap(), "second {t}");
        let p99_us = second["p99_us"].as_f64().unwrap();
        assert!((p99_ns / 1000.0 - p99_us).abs() <= p99_us * 0.01 + 1.0, "second {t}: {p99_ns} ns vs {p99_us} us");
    }
    // An unwritable path is refused before the run, in one line.
    let out = stampede(&["load", "-n", "10", "--hdr-log", "/nonexistent/dir/x.hlog", &srv.url("/")], DEADLINE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!((out.status.code(), err.trim().lines().count()), (Some(2), 1), "{err}");
    assert!(err.contains("--hdr-log /nonexistent/dir/x.hlog"), "{err}");
    let _ = std::fs::remove_file(&log);
}
