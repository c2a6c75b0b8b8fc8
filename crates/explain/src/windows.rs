//! CPU saturation and run-queue spikes, as events, from the probe's samples of
//! the server's process tree (`server.samples` in results.json).
//!
//! A sample covers the interval since the previous one. It is saturated when
//! the tree used at least 90% of the cores it was allowed (its pinning, or the
//! machine). Run-queue wait, summed over the tree's threads from
//! `/proc/PID/task/*/schedstat`, is the direct OS-level signal: a sample is a
//! spike when its wait per wall-clock second is at least three times the
//! run's median and at least 10% of one core (threads that were ready to run
//! spent that long waiting for a CPU). A sample whose `net_drops` counted
//! a retransmitted segment is a `kernel_drops` event: the kernel lost a
//! packet of some connection in that interval, or since the probe last read
//! the counters (at most `NET_DROPS_PERIOD` before the sample's end;
//! counters are per network namespace, so not necessarily one of the load's
//! connections). Its accept-queue overflows and dropped SYNs count only in
//! a phase where the server's own listen socket dropped connection attempts
//! (`listen_drops` in the run record): on a shared host those counters are
//! every program's listeners', and another program's overflowing listener
//! is no evidence about the server.

use crate::event::{Event, Kind};

/// A probe sample as results.json stores it (declared once in stampede-schema).
pub use stampede_schema::process::Sample;
use stampede_schema::process::{NetDrops, NET_DROPS_PERIOD};
use stampede_schema::run::ListenDrops;

const SATURATED: f64 = 0.9;
const SPIKE_OVER_MEDIAN: f64 = 3.0;
const SPIKE_FLOOR: f64 = 0.1;

/// What the server's own listen socket dropped, and where its phases meet.
#[derive(Debug, Clone, Copy, Default)]
pub struct Listener {
    pub drops: ListenDrops,
    /// The measured phase's length: samples up to it are the measured
    /// phase's, later ones the latency phase's.
    pub measured_s: f64,
}

impl Listener {
    /// Whether the listener dropped connection attempts in the phase of a
    /// sample ending at `t_s` (never in the warmup: not read there).
    fn dropped_at(&self, t_s: f64) -> bool {
        let drops = match t_s {
            t if t <= 0.0 => None,
            t if t <= self.measured_s => self.drops.measured,
            _ => self.drops.after,
        };
        drops.unwrap_or(0) > 0
    }
}

/// Turns samples into events. `t0_mono_ns` is CLOCK_MONOTONIC at `t_s = 0`;
/// `allowed_cores` the CPUs the server may use.
pub fn events(samples: &[Sample], t0_mono_ns: u64, allowed_cores: f64, listener: Listener) -> Vec<Event> {
    let mono = |t_s: f64| (t0_mono_ns as i128 + (t_s * 1e9).round() as i128).max(0) as u64;
    let intervals: Vec<(f64, f64, &Sample)> =
        samples.windows(2).filter(|w| w[1].t_s > w[0].t_s).map(|w| (w[0].t_s, w[1].t_s, &w[1])).collect();
    let mut ratios: Vec<f64> = intervals.iter().map(|(a, b, s)| s.runqueue_wait_ms / 1000.0 / (b - a)).collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios.get(ratios.len() / 2).copied().unwrap_or(0.0);
    let spike = (median * SPIKE_OVER_MEDIAN).max(SPIKE_FLOOR);
    let mut out = Vec::new();
    for (a, b, s) in intervals {
        let (start, end) = (mono(a), mono(b));
        let cores = s.cpu_cores;
        if allowed_cores > 0.0 && cores >= SATURATED * allowed_cores {
            out.push(Event {
                start_mono_ns: start,
                end_mono_ns: end,
                kind: Kind::CpuSaturation,
                label: format!("server used {cores:.2} of {allowed_cores} allowed cores"),
                stopped: false,
                error_ns: 0,
                owner: None,
            });
        }
        let mut d = s.net_drops;
        if !listener.dropped_at(s.t_s) {
            d = NetDrops { retrans_segs: d.retrans_segs, ..NetDrops::default() };
        }
        if !d.is_zero() {
            // Counted since the probe's last reading of the counters, which
            // may be several samples back.
            let period = NET_DROPS_PERIOD.as_nanos() as u64;
            out.push(Event {
                start_mono_ns: start.min(end.saturating_sub(period)),
                end_mono_ns: end,
                kind: Kind::KernelDrops,
                label: drops_label(&d),
                stopped: false,
                error_ns: 0,
                owner: None,
            });
        }
        let wait = s.runqueue_wait_ms;
        let ratio = wait / 1000.0 / (b - a);
        if ratio >= spike {
            out.push(Event {
                start_mono_ns: start,
                end_mono_ns: end,
                kind: Kind::Runqueue,
                label: format!(
                    "run-queue wait {wait:.1} ms in {:.0} ms (median {:.1} ms)",
                    (b - a) * 1e3,
                    median * (b - a) * 1e3
                ),
                stopped: false,
                error_ns: 0,
                owner: None,
            });
        }
    }
    out
}

/// The kernel's counts of an interval, the listener's only when its own.
fn drops_label(d: &NetDrops) -> String {
    if d.listen_overflows + d.listen_drops == 0 {
        return format!("kernel: {} segments retransmitted", d.retrans_segs);
    }
    format!(
        "kernel: {} accept-queue overflows, {} SYNs dropped, {} segments retransmitted (the server's listen socket dropped connection attempts in this phase)",
        d.listen_overflows, d.listen_drops, d.retrans_segs
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_s: f64, cpu: f64, rq: f64) -> Sample {
        Sample { t_s, cpu_cores: cpu, runqueue_wait_ms: rq, ..Sample::default() }
    }

    #[test]
    fn a_hog_is_found_and_a_quiet_run_gives_nothing() {
        let quiet: Vec<Sample> = (0..20).map(|i| sample(i as f64 * 0.1, 0.4, 0.5)).collect();
        assert!(events(&quiet, 1_000_000_000, 1.0, Listener::default()).is_empty());
        let mut hog = quiet.clone();
        hog[10] = sample(1.0, 0.98, 45.0);
        let found = events(&hog, 1_000_000_000, 1.0, Listener::default());
        let kinds: Vec<Kind> = found.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [Kind::CpuSaturation, Kind::Runqueue]);
        assert_eq!(found[0].start_mono_ns, 1_900_000_000);
        assert_eq!(found[0].end_mono_ns, 2_000_000_000);
    }

    #[test]
    fn an_interval_with_a_dropped_syn_is_a_kernel_drops_event_that_explains_a_second() {
        use crate::attribution::{attribute, Margins, Request};
        use crate::event::Cause;
        use stampede_schema::process::NetDrops;
        let mut samples: Vec<Sample> = (0..20).map(|i| sample(i as f64 * 0.1, 0.4, 0.5)).collect();
        samples[5].net_drops = NetDrops { listen_overflows: 1, listen_drops: 1, retrans_segs: 0 };
        let found = events(&samples, 0, 4.0, own_drops(Some(1)));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].kind, found[0].start_mono_ns), (Kind::KernelDrops, 400_000_000));
        assert!(found[0].label.contains("1 accept-queue overflows"), "{}", found[0].label);
        // A request that took 1.05 s from 0.45 s: its SYN was dropped in 0.4–0.5 s.
        let request = |from_ms: u64, to_ms: u64| Request {
            latency_us: ((to_ms - from_ms) * 1000) as f64,
            intended_mono_ns: from_ms * 1_000_000,
            start_mono_ns: from_ms * 1_000_000,
            end_mono_ns: to_ms * 1_000_000,
            ..Request::default()
        };
        let requests = [request(450, 1500), request(1700, 2700)];
        let margins = Margins { median_us: 1000.0, ..Margins::default() };
        let causes: Vec<_> = attribute(&requests, &found, margins).iter().map(|a| a.cause).collect();
        assert_eq!(causes, [Some(Cause::KernelDrops), None]);
    }

    #[test]
    fn drops_in_a_short_sample_span_back_to_the_probes_last_reading_of_the_counters() {
        use stampede_schema::process::NetDrops;
        // 10 ms samples: the counters are read every 100 ms, so drops found
        // at 1.00 s happened in 0.90-1.00 s, not only in 0.99-1.00 s.
        let mut samples: Vec<Sample> = (0..200).map(|i| sample(i as f64 * 0.01, 0.4, 0.05)).collect();
        samples[100].net_drops = NetDrops { retrans_segs: 1, ..NetDrops::default() };
        let found = events(&samples, 0, 4.0, Listener::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].start_mono_ns, found[0].end_mono_ns), (900_000_000, 1_000_000_000));
    }

    /// The server's listener dropped `measured` in a measured phase of 2 s.
    fn own_drops(measured: Option<u64>) -> Listener {
        Listener { drops: ListenDrops { measured, after: None }, measured_s: 2.0 }
    }

    #[test]
    fn the_hosts_listen_drops_are_no_event_when_the_servers_own_listener_dropped_nothing() {
        let mut samples: Vec<Sample> = (0..20).map(|i| sample(i as f64 * 0.1, 0.4, 0.5)).collect();
        // Another program's listener overflowing on the same host.
        samples[5].net_drops = NetDrops { listen_overflows: 686, listen_drops: 686, retrans_segs: 0 };
        for unknown_or_none in [None, Some(0)] {
            let found = events(&samples, 0, 4.0, own_drops(unknown_or_none));
            assert!(found.is_empty(), "{unknown_or_none:?}: {found:?}");
        }
        // Its own listener dropped in the latency phase, not the measured one.
        let later = Listener { drops: ListenDrops { measured: Some(0), after: Some(5) }, measured_s: 2.0 };
        assert!(events(&samples, 0, 4.0, later).is_empty());
        // A retransmission is still the kernel losing a packet; the host's
        // listen counts are left out of it.
        samples[5].net_drops.retrans_segs = 2;
        let found = events(&samples, 0, 4.0, own_drops(Some(0)));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].label, "kernel: 2 segments retransmitted");
    }
}
