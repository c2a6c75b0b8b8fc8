//! Drives the probe for `bench/probe_cost.sh`: samples an idle process of
//! `THREADS` threads every `INTERVAL_MS` for `SECONDS` and prints the probe's
//! own CPU as a percentage of one core. The figure depends on the machine, so
//! it lives in a bench script and not in a test.
//!
//! `probe_cost INTERVAL_MS SECONDS [THREADS]` (defaults 10, 5, 11)

use std::process::{Command, Stdio};
use std::time::Duration;

use stampede_probe::{Probe, ProbeConfig};

fn arg(n: usize, default: u64) -> u64 {
    std::env::args()
        .nth(n)
        .map_or(default, |a| a.parse().unwrap_or_else(|_| panic!("argument {n}: {a} is not a number")))
}

fn main() {
    // `--idle N S`: the target itself, N parked threads for S seconds.
    if std::env::args().nth(1).as_deref() == Some("--idle") {
        let (threads, seconds) = (arg(2, 11), arg(3, 5));
        let parked: Vec<_> = (1..threads)
            .map(|_| std::thread::spawn(move || std::thread::park_timeout(Duration::from_secs(seconds))))
            .collect();
        std::thread::sleep(Duration::from_secs(seconds));
        for t in parked {
            let _ = t.join();
        }
        return;
    }
    let (interval_ms, seconds, threads) = (arg(1, 10), arg(2, 5), arg(3, 11));
    let exe = std::env::current_exe().expect("own path");
    let mut idle = Command::new(exe)
        .args(["--idle", &threads.to_string(), &(seconds + 2).to_string()])
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn the idle target");
    // Let the target start its threads before the measured period.
    std::thread::sleep(Duration::from_millis(200));
    let config = ProbeConfig { interval: Duration::from_millis(interval_ms), ..Default::default() };
    let probe = Probe::start(config, idle.id() as i32).expect("probe starts");
    probe.mark_measured_start();
    std::thread::sleep(Duration::from_secs(seconds));
    let report = probe.finish();
    let _ = idle.kill();
    let _ = idle.wait();
    println!(
        "interval {interval_ms} ms: probe {:.3} % of a core ({} threads, {} samples, {seconds} s)",
        report.probe_cpu_cores * 100.0,
        report.server.threads_max,
        report.server.samples.len()
    );
}
