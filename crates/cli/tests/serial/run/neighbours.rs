//! `stampede run`'s noisy-neighbour warning (crates/run/src/contention.rs)
//! through the real binary, both ways: a process spinning on the server's
//! CPU during the run gets the run the warning (in results.json and on
//! stderr), and a run on a quiet machine, its server pinned to that CPU and
//! kept busy by a closed loop, gets none: the server's, the generator's and
//! the probe's own CPU are not taken for a neighbour's. Serial: the quiet
//! half needs the machine to itself (it says SKIP when another program
//! keeps the machine busy before it starts, where the warning would be
//! true).

use stampede_testkit::run::{self, assert_nothing_left, Scratch};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The scenario: one contract server pinned to CPU 0, a closed loop of two
/// connections for 2 s.
fn scenario(s: &Scratch) -> std::path::PathBuf {
    let app = s.app("neighbour", "");
    s.scenario(&format!(
        r#"
apps = ["{}"]
check = false
[pinning]
server = "0"
[[profiles]]
path = "/plaintext"
connections = 2
duration = "2s"
warmup = "500ms"
"#,
        app.display()
    ))
}

/// Runs the scenario: stderr, and the run's record.
fn run(s: &Scratch) -> (String, serde_json::Value) {
    let path = scenario(s);
    let out = s.run(&[path.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let stderr = run::text(&out.stderr);
    let doc = s.results().unwrap_or_else(|| panic!("no results.json: {stderr}"));
    let _ = std::fs::remove_dir_all(s.out());
    (stderr, doc["runs"][0].clone())
}

/// The record's CPU figures, for a failure's message.
fn cores(record: &serde_json::Value) -> String {
    let m = &record["machine"];
    format!(
        "machine {} cores, server {}, load generator {}, probe {}; warnings {}",
        m["cpu_cores_avg"],
        record["server"]["cpu_cores_avg"],
        record["loadgen"]["cpu_cores_avg"],
        m["probe_cpu_cores"],
        record["warnings"]
    )
}

fn warned(record: &serde_json::Value) -> bool {
    let warnings = record["warnings"].as_array().map_or(&[][..], |w| &w[..]);
    warnings.iter().any(|w| w.as_str().is_some_and(|w| w.starts_with("noisy neighbour: other processes used")))
}

/// A process spinning on CPU 0 (`taskset`), carrying the test's marker so
/// the leftover scan sees it; killed when dropped.
struct Hog(Child);

impl Hog {
    fn start(s: &Scratch) -> Hog {
        let child = Command::new("taskset")
            .args(["-c", "0", "python3", "-c", "while True: pass"])
            .env("STAMPEDE_RUN_TEST_MARKER", &s.marker)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("taskset and python3 (scripts/deps.sh installs them)");
        Hog(child)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The machine's busy cores over `window` (`/proc/stat`: every CPU's time
/// less its idle and iowait), before anything of the test runs.
fn busy_cores(window: Duration) -> f64 {
    let read = || -> (f64, f64) {
        let stat = std::fs::read_to_string("/proc/stat").unwrap();
        let cpu: Vec<f64> =
            stat.lines().next().unwrap().split_whitespace().skip(1).map(|v| v.parse().unwrap()).collect();
        let total: f64 = cpu.iter().take(8).sum();
        (total, total - cpu[3] - cpu[4])
    };
    let (t0, b0) = read();
    std::thread::sleep(window);
    let (t1, b1) = read();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    if t1 > t0 {
        (b1 - b0) / (t1 - t0) * cpus
    } else {
        0.0
    }
}

#[test]
fn a_process_busy_on_the_servers_cpu_gets_the_run_a_noisy_neighbour_warning_and_a_quiet_run_none() {
    let _machine = crate::machine();
    let s = Scratch::new("neighbours");

    let before = busy_cores(Duration::from_secs(1));
    let (stderr, record) = run(&s);
    if before < 0.1 {
        assert!(!warned(&record), "a quiet machine: no warning: {}\n{stderr}", cores(&record));
        assert!(!stderr.contains("noisy neighbour"), "{stderr}");
    } else {
        println!("SKIP the quiet half: the machine was busy before the run ({before:.2} cores): {}", cores(&record));
    }

    let hog = Hog::start(&s);
    let (stderr, record) = run(&s);
    drop(hog);
    assert!(warned(&record), "a process spun on the server's CPU: {}\n{stderr}", cores(&record));
    println!("with the hog: {}", cores(&record));
    assert!(stderr.contains("warning: noisy neighbour: other processes used"), "{stderr}");
    // A warning, never a reason for an invalid run (a starved server may
    // still stall on a busy machine: that is its own reason).
    let reason = record["invalid_reason"].as_str().unwrap_or("");
    assert!(!reason.contains("neighbour") && !reason.contains("other processes"), "{reason}");
    assert_nothing_left(&s);
}
