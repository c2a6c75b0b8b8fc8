//! Drives the probe for `bench/probe_cost.sh`: samples a process of `THREADS`
//! threads every `INTERVAL_MS` for `SECONDS` and prints the probe's own CPU as
//! a percentage of one core. The figure depends on the machine, so it lives in
//! a bench script and not in a test.
//!
//! `probe_cost INTERVAL_MS SECONDS [THREADS] [MICROSTATES] [WAKE_MS]`
//! (defaults 10, 5, 11, 1, 0). `MICROSTATES` 0 turns the thread microstates
//! off; `WAKE_MS` above 0 makes every target thread wake that often (a server
//! whose threads run between samples, so the probe reads their `syscall`
//! files) instead of staying parked.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use stampede_probe::{Probe, ProbeConfig};

fn arg(n: usize, default: u64) -> u64 {
    std::env::args()
        .nth(n)
        .map_or(default, |a| a.parse().unwrap_or_else(|_| panic!("argument {n}: {a} is not a number")))
}

/// The target: `threads` threads (main included) for `seconds`, parked or
/// waking every `wake_ms`.
fn target(threads: u64, seconds: u64, wake_ms: u64) {
    let end = Instant::now() + Duration::from_secs(seconds);
    let body = move || {
        if wake_ms == 0 {
            std::thread::park_timeout(end.saturating_duration_since(Instant::now()));
        }
        while wake_ms > 0 && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(wake_ms));
        }
    };
    let others: Vec<_> = (1..threads).map(|_| std::thread::spawn(body)).collect();
    std::thread::sleep(end.saturating_duration_since(Instant::now()));
    for t in others {
        let _ = t.join();
    }
}

fn main() {
    // `--idle N S [WAKE_MS]`: the target itself.
    if std::env::args().nth(1).as_deref() == Some("--idle") {
        target(arg(2, 11), arg(3, 5), arg(4, 0));
        return;
    }
    let (interval_ms, seconds, threads) = (arg(1, 10), arg(2, 5), arg(3, 11));
    let (microstates, wake_ms) = (arg(4, 1) != 0, arg(5, 0));
    let exe = std::env::current_exe().expect("own path");
    let mut idle = Command::new(exe)
        .args(["--idle", &threads.to_string(), &(seconds + 2).to_string(), &wake_ms.to_string()])
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn the target");
    // Let the target start its threads before the measured period.
    std::thread::sleep(Duration::from_millis(200));
    let config = ProbeConfig { interval: Duration::from_millis(interval_ms), microstates, ..Default::default() };
    let probe = Probe::start(config, idle.id() as i32).expect("probe starts");
    probe.mark_measured_start();
    std::thread::sleep(Duration::from_secs(seconds));
    let report = probe.finish();
    let _ = idle.kill();
    let _ = idle.wait();
    println!(
        "interval {interval_ms} ms: probe {:.3} % of a core ({} threads, {} samples, {seconds} s, microstates {}, wake {})",
        report.probe_cpu_cores * 100.0,
        report.server.threads_max,
        report.server.samples.len(),
        if microstates { "on" } else { "off" },
        if wake_ms == 0 { "parked".to_string() } else { format!("every {wake_ms} ms") },
    );
}
