//! Running `stampede load` in a test: the real binary with a deadline
//! (through [`Stampede`]), its `--json` result parsed and its exit status
//! checked, pinned to CPUs when asked; the requests an open-loop result had
//! due; a port where nothing listens, and CPU pinning for the test's own
//! threads. The servers it loads are in
//! [`crate::hostile`] and [`crate::proto`].

use crate::Stampede;
use std::net::TcpListener;
use std::ops::RangeInclusive;
use std::process::Output;
use std::time::Duration;

/// The requests an open-loop result `r` of `rate` requests a second for
/// `secs` (no warmup) had due, sent or never sent: its schedule ran from
/// `schedule_start_ms` (each thread's first connection open, the latest),
/// not from the start, to the end; each of up to two threads' schedules
/// may round by one.
pub fn due(r: &serde_json::Value, rate: f64, secs: f64) -> RangeInclusive<u64> {
    let began_s = r["schedule_start_ms"].as_f64().expect("an open-loop result") / 1e3;
    let least = (rate * (secs - began_s)).floor() as u64;
    least.saturating_sub(2)..=(rate * secs) as u64 + 1
}

/// Pins the calling thread (and the threads it starts afterwards) to one CPU.
pub fn pin_to_cpu(cpu: usize) {
    // SAFETY: plain syscall on a zeroed cpu_set_t we own, for the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// A port with nothing listening on it.
pub fn refused_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Runs the real binary; kills it and fails the test past `deadline`.
pub fn stampede(args: &[&str], deadline: Duration) -> Output {
    stampede_on(None, args, deadline)
}

/// Like `stampede`, pinned with `taskset -c CPUS` when given.
pub fn stampede_on(cpus: Option<&str>, args: &[&str], deadline: Duration) -> Output {
    Stampede::pinned(cpus).args(args).deadline(deadline).output()
}

/// Runs `stampede load --json …` and returns the parsed result.
pub fn load_json(args: &[&str], deadline: Duration) -> serde_json::Value {
    load_json_on(None, args, deadline)
}

/// `stampede load --json` that may measure a stall: its result, whose exit
/// status must say whether it did (1 with `stalled`, 0 without).
pub fn load_json_any(args: &[&str], deadline: Duration) -> serde_json::Value {
    let mut all = vec!["load", "--json"];
    all.extend_from_slice(args);
    let out = stampede(&all, deadline);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("stampede {all:?}: no JSON: {}", String::from_utf8_lossy(&out.stderr)));
    let stalled = r.get("stalled").is_some_and(|s| !s.is_null());
    assert_eq!(out.status.code(), Some(i32::from(stalled)), "stampede {all:?}: exit 1 if and only if stalled: {r}");
    r
}

pub fn load_json_on(cpus: Option<&str>, args: &[&str], deadline: Duration) -> serde_json::Value {
    let mut all = vec!["load", "--json"];
    all.extend_from_slice(args);
    let out = stampede_on(cpus, &all, deadline);
    assert!(out.status.success(), "stampede {all:?} failed: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}
