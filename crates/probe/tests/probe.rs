//! The probe against real processes: a busy child tree must show up as CPU,
//! and the probe's own cost at a 10 ms interval must stay small.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use stampede_probe::{Probe, ProbeConfig};

/// A shell whose forked subshell spins: CPU in a grandchild, not the root.
struct Spinner(Child);

impl Spinner {
    fn start() -> Spinner {
        let child = Command::new("sh")
            .args(["-c", "(while :; do :; done) & wait"])
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        Spinner(child)
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

#[test]
fn a_busy_grandchild_counts_as_server_cpu() {
    let spinner = Spinner::start();
    let probe = Probe::start(ProbeConfig { interval: Duration::from_millis(20), ..Default::default() }, spinner.0.id() as i32)
        .expect("probe starts");
    std::thread::sleep(Duration::from_millis(300));
    probe.mark_measured_start();
    std::thread::sleep(Duration::from_millis(600));
    let report = probe.finish();
    drop(spinner);
    let server = &report.server;
    assert!(server.cpu_cores_avg > 0.3 && server.cpu_cores_avg < 1.2, "cores {}", server.cpu_cores_avg);
    assert!(server.rss_max_mib > 0.0);
    assert!(server.threads_max >= 2, "threads {}", server.threads_max);
    assert!(server.samples.iter().any(|s| s.t_s < 0.0), "warmup samples kept");
    assert!(server.samples.len() >= 20, "{} samples", server.samples.len());
    let busiest = &server.threads_table[0];
    assert!(busiest.user_s + busiest.sys_s > 0.2, "{busiest:?}");
    assert!(report.machine.cpu_cores_avg >= server.cpu_cores_avg * 0.8, "machine {} server {}", report.machine.cpu_cores_avg, server.cpu_cores_avg);
}

#[test]
fn the_probe_costs_under_one_percent_of_a_core_at_10ms() {
    // Samples a ten-thread process (this test's own threads) and the machine.
    let parked: Vec<_> = (0..8).map(|_| std::thread::spawn(|| std::thread::park_timeout(Duration::from_secs(3)))).collect();
    let probe = Probe::start(ProbeConfig { interval: Duration::from_millis(10), ..Default::default() }, std::process::id() as i32)
        .expect("probe starts");
    let start = Instant::now();
    probe.mark_measured_start();
    std::thread::sleep(Duration::from_millis(1500));
    let report = probe.finish();
    for t in parked {
        t.thread().unpark();
        let _ = t.join();
    }
    eprintln!(
        "probe cost {:.4} cores over {:.2}s for {} threads, {} samples",
        report.probe_cpu_cores,
        start.elapsed().as_secs_f64(),
        report.server.threads_max,
        report.server.samples.len()
    );
    assert!(report.server.samples.len() > 100, "{} samples", report.server.samples.len());
    // The target is 1% of a core (0.83-0.91% measured on the shared 2-core VM
    // at a load average of 6, see docs/run.md); a bare timer wake-up there
    // costs 0.25%, so the test leaves a margin for a busier machine.
    assert!(report.probe_cpu_cores < 0.015, "probe used {:.4} cores", report.probe_cpu_cores);
}
