//! The `stampede.explain/1` document (docs/explain.md): what `stampede
//! explain --json` prints for each run, and the vocabulary of server-side
//! trouble (event kinds and the causes slow requests are attributed to).
//! `stampede-explain` computes these types and serialises them; a program
//! reading the document uses the same declarations.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "stampede.explain/1";

/// The whole document: one explanation per run with a measured load.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExplainDoc {
    pub schema: String,
    pub runs: Vec<Explanation>,
}

/// What happened on the server side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A garbage-collector pause, or a GC phase that takes the mutator's CPU.
    Gc,
    /// A JVM safepoint that is not a collection (deoptimisation, biased-lock
    /// revocation, cleanup): the application threads were stopped all the same.
    Safepoint,
    /// The process was stopped by something else (SIGSTOP in the validation tests).
    Pause,
    /// The server's process tree used all the CPU it was allowed.
    CpuSaturation,
    /// The server's threads waited for a CPU far more than usual.
    Runqueue,
    /// Far more of the server's threads than usual were blocked in `futex`,
    /// or the working threads spent at least half their time there (the
    /// probe's microstates: a contended lock, in bursts or steadily).
    Lock,
    /// Far more of the server's threads than usual were blocked in read/write calls.
    BlockedIo,
    /// The load generator sent the request late: from when it could have
    /// gone (due, and a connection free) to when it went. The generator's
    /// own lateness (its thread lacked CPU or was busy elsewhere).
    SendDelay,
    /// The request waited for a free connection: every connection was busy
    /// with an earlier request (the server was slow to answer).
    ConnectionBusy,
    /// The request waited for its connection to open (connect time, a SYN
    /// retransmitted after an accept-queue overflow).
    ConnectionSetup,
    /// The slow-window profile's most over-represented frame was on the CPU
    /// (a burst of its on-CPU samples; `stampede run --profile`).
    Function,
    /// Threads of the server were blocked at the stack of the slow-window
    /// off-CPU profile's most over-represented frame (a waiter stack: a
    /// lock's acquirer, a queue's taker; `stampede run --profile-off-cpu`).
    Waiting,
    /// The kernel dropped a connection attempt (accept-queue overflow, SYN
    /// drop) or retransmitted segments in the server's network namespace.
    KernelDrops,
}

impl Kind {
    pub fn parse(text: &str) -> Option<Kind> {
        Some(match text {
            "gc" => Kind::Gc,
            "safepoint" => Kind::Safepoint,
            "pause" => Kind::Pause,
            "cpu_saturation" => Kind::CpuSaturation,
            "runqueue" => Kind::Runqueue,
            "lock" => Kind::Lock,
            "blocked_io" => Kind::BlockedIo,
            "send_delay" => Kind::SendDelay,
            "connection_busy" => Kind::ConnectionBusy,
            "connection_setup" => Kind::ConnectionSetup,
            "function" => Kind::Function,
            "waiting" => Kind::Waiting,
            "kernel_drops" => Kind::KernelDrops,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Gc => "gc",
            Kind::Safepoint => "safepoint",
            Kind::Pause => "pause",
            Kind::CpuSaturation => "cpu_saturation",
            Kind::Runqueue => "runqueue",
            Kind::Lock => "lock",
            Kind::BlockedIo => "blocked_io",
            Kind::SendDelay => "send_delay",
            Kind::ConnectionBusy => "connection_busy",
            Kind::ConnectionSetup => "connection_setup",
            Kind::Function => "function",
            Kind::Waiting => "waiting",
            Kind::KernelDrops => "kernel_drops",
        }
    }

    /// The cause a slow request is attributed to when it meets this event.
    /// GC and safepoint pauses both stop the runtime and share the `gc` cause.
    pub fn cause(self) -> Cause {
        match self {
            Kind::Gc | Kind::Safepoint => Cause::Gc,
            Kind::Pause => Cause::Pause,
            Kind::CpuSaturation => Cause::CpuSaturation,
            Kind::Runqueue => Cause::Runqueue,
            Kind::Lock => Cause::Lock,
            Kind::BlockedIo => Cause::BlockedIo,
            Kind::SendDelay => Cause::SendDelay,
            Kind::ConnectionBusy => Cause::ConnectionBusy,
            Kind::ConnectionSetup => Cause::ConnectionSetup,
            Kind::Function => Cause::Function,
            Kind::Waiting => Cause::Waiting,
            Kind::KernelDrops => Cause::KernelDrops,
        }
    }
}

/// The causes slow requests are attributed to, in order of precedence: when a
/// request meets several, the first in this order is its cause (a runtime
/// pause is the most specific evidence, CPU saturation the least). Waiting
/// for a busy connection comes last: it says the server was slow to answer
/// earlier requests, and a server-side cause met in the same window is the
/// reason why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Gc,
    Pause,
    SendDelay,
    ConnectionSetup,
    KernelDrops,
    Function,
    Waiting,
    Lock,
    BlockedIo,
    Runqueue,
    CpuSaturation,
    ConnectionBusy,
}

impl Cause {
    pub const ALL: [Cause; 12] = [
        Cause::Gc,
        Cause::Pause,
        Cause::SendDelay,
        Cause::ConnectionSetup,
        Cause::KernelDrops,
        Cause::Function,
        Cause::Waiting,
        Cause::Lock,
        Cause::BlockedIo,
        Cause::Runqueue,
        Cause::CpuSaturation,
        Cause::ConnectionBusy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Cause::Gc => "gc",
            Cause::Pause => "pause",
            Cause::Runqueue => "runqueue",
            Cause::CpuSaturation => "cpu_saturation",
            Cause::SendDelay => "send_delay",
            Cause::ConnectionBusy => "connection_busy",
            Cause::ConnectionSetup => "connection_setup",
            Cause::Function => "function",
            Cause::Waiting => "waiting",
            Cause::KernelDrops => "kernel_drops",
            Cause::Lock => "lock",
            Cause::BlockedIo => "blocked_io",
        }
    }

    /// How people read it: the words of the terminal, the table and the report.
    pub fn title(self) -> &'static str {
        match self {
            Cause::Gc => "gc",
            Cause::Pause => "other pause",
            Cause::SendDelay => "load generator late",
            Cause::ConnectionBusy => "waiting for a free connection",
            Cause::ConnectionSetup => "waiting for a connection to open",
            Cause::Function => "a function on the CPU",
            Cause::Waiting => "threads waiting at a stack",
            Cause::KernelDrops => "kernel drops",
            Cause::Lock => "lock",
            Cause::BlockedIo => "blocked I/O",
            Cause::Runqueue => "run-queue",
            Cause::CpuSaturation => "cpu saturation",
        }
    }

    /// Shown even at 0%: what any server can have, so a 0 says something.
    /// The others are shown where they are not 0.
    pub fn always_shown(self) -> bool {
        matches!(self, Cause::Gc | Cause::Lock | Cause::Runqueue | Cause::CpuSaturation)
    }
}

/// The least share of the slow requests a cause must explain to stand out.
pub const ABOVE_CHANCE_SHARE: f64 = 0.2;
/// How far above its chance level a cause's share must be to stand out.
pub const ABOVE_CHANCE_MARGIN: f64 = 0.15;

/// Shares of a set of slow requests, as fractions of their number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Shares {
    pub gc: f64,
    pub pause: f64,
    pub runqueue: f64,
    pub cpu_saturation: f64,
    /// Futex waits in the server (microstates' LCK), a burst or steady contention.
    #[serde(default)]
    pub lock: f64,
    /// A burst of read/write waits in the server (microstates' IO).
    #[serde(default)]
    pub blocked_io: f64,
    /// The load generator's own lateness in sending.
    #[serde(default)]
    pub send_delay: f64,
    /// A connection drop or retransmission counted by the kernel.
    #[serde(default)]
    pub kernel_drops: f64,
    /// Waiting for a free connection (all busy: the server slow to answer).
    #[serde(default)]
    pub connection_busy: f64,
    /// Waiting for a connection to open.
    #[serde(default)]
    pub connection_setup: f64,
    /// The profile's most over-represented frame on the CPU.
    #[serde(default)]
    pub function: f64,
    /// Threads blocked at the off-CPU profile's most over-represented frame.
    #[serde(default)]
    pub waiting: f64,
    pub unexplained: f64,
}

impl Shares {
    /// The share of one cause.
    pub fn of(&self, cause: Cause) -> f64 {
        match cause {
            Cause::Gc => self.gc,
            Cause::Pause => self.pause,
            Cause::SendDelay => self.send_delay,
            Cause::KernelDrops => self.kernel_drops,
            Cause::ConnectionBusy => self.connection_busy,
            Cause::ConnectionSetup => self.connection_setup,
            Cause::Function => self.function,
            Cause::Waiting => self.waiting,
            Cause::Lock => self.lock,
            Cause::BlockedIo => self.blocked_io,
            Cause::Runqueue => self.runqueue,
            Cause::CpuSaturation => self.cpu_saturation,
        }
    }

    /// The causes to show for these shares, in precedence order: the
    /// always-shown ones and any other that is not 0 in one of them.
    pub fn shown(all: &[&Shares]) -> Vec<Cause> {
        Cause::ALL.into_iter().filter(|&c| c.always_shown() || all.iter().any(|s| s.of(c) > 0.0)).collect()
    }

    /// The causes whose share stands clearly above their chance level: at
    /// least `ABOVE_CHANCE_SHARE` of the requests and `ABOVE_CHANCE_MARGIN`
    /// more than by chance; largest share first.
    pub fn above_chance(&self, chance: &Shares) -> Vec<Cause> {
        let mut causes: Vec<Cause> = Cause::ALL
            .into_iter()
            .filter(|&c| self.of(c) >= ABOVE_CHANCE_SHARE && self.of(c) >= chance.of(c) + ABOVE_CHANCE_MARGIN)
            .collect();
        causes.sort_by(|a, b| self.of(*b).total_cmp(&self.of(*a)));
        causes
    }

    /// Every share of `self` plus `other`'s times `weight`.
    pub fn add_scaled(&mut self, other: &Shares, weight: f64) {
        self.gc += other.gc * weight;
        self.pause += other.pause * weight;
        self.runqueue += other.runqueue * weight;
        self.cpu_saturation += other.cpu_saturation * weight;
        self.lock += other.lock * weight;
        self.blocked_io += other.blocked_io * weight;
        self.send_delay += other.send_delay * weight;
        self.kernel_drops += other.kernel_drops * weight;
        self.connection_busy += other.connection_busy * weight;
        self.connection_setup += other.connection_setup * weight;
        self.function += other.function * weight;
        self.waiting += other.waiting * weight;
        self.unexplained += other.unexplained * weight;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub p50_us: f64,
    pub p99_us: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WithWithout {
    pub all: Figures,
    pub without_pauses: Figures,
    /// Requests taken out.
    pub removed: u64,
    /// The slow log reached below the p99 without pauses.
    pub exact: bool,
}

/// Slow requests above one threshold.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tier {
    pub threshold_us: f64,
    /// Logged requests above the threshold: the ones attributed.
    pub slow_requests: usize,
    /// Requests above the threshold by the histogram (≈ requests × (1 − q)).
    pub expected: u64,
    /// Each request under its first cause; adds up to 1.
    pub share: Shares,
    /// How often each cause was present at all; may add up to more than 1.
    pub present: Shares,
    /// The shares the same requests get when moved to random times: the level
    /// a share must clearly exceed to be evidence.
    pub chance: Shares,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Met {
    pub kind: Kind,
    pub label: String,
    /// Event start relative to the request's intended send time.
    pub offset_ms: f64,
    pub duration_ms: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Slowest {
    pub latency_us: f64,
    pub intended_mono_ns: u64,
    pub cause: Option<Cause>,
    pub events: Vec<Met>,
}

impl Slowest {
    /// The events a view lists for one slow request. A request queued
    /// behind hundreds of others overlaps each one's wait for a connection:
    /// listed whole, five such requests made a report's Explain section
    /// 0.5 MB a run (2026-11-27, Go /plaintext, 3 s phases).
    pub const EVENTS_SHOWN: usize = 4;

    /// The first [`Self::EVENTS_SHOWN`] events met, and what the rest were:
    /// `"496 more: 490 connection_busy, 6 gc"`, or `None` when none is left.
    pub fn shown_events(&self) -> (&[Met], Option<String>) {
        let n = self.events.len().min(Self::EVENTS_SHOWN);
        let rest = &self.events[n..];
        if rest.is_empty() {
            return (&self.events, None);
        }
        let mut kinds: Vec<(&str, usize)> = Vec::new();
        for e in rest {
            match kinds.iter_mut().find(|(k, _)| *k == e.kind.name()) {
                Some((_, count)) => *count += 1,
                None => kinds.push((e.kind.name(), 1)),
            }
        }
        kinds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let by_kind: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        (&self.events[..n], Some(format!("{} more: {}", rest.len(), by_kind.join(", "))))
    }
}

/// How much of the working threads' time went to futex waits (microstates'
/// LCK of the threads that used a CPU within the last second), in percent:
/// the evidence for steady lock contention, which is present at every time
/// and so cannot stand out from its chance level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LockLevel {
    /// In the slow (above p99) requests' windows, weighted by overlap; none
    /// when no sample overlapped them.
    pub slow_windows_pct: Option<f64>,
    /// Over the measured phase.
    pub run_pct: f64,
    /// Working threads per sample, on average.
    pub working_threads: f64,
}

/// A cause that raises latency for every request, not only the slow ones:
/// a level the probe measured over the measured phase (docs/explain.md,
/// "Dominant causes"). Steady contention is present at every time, so
/// comparing slow requests with the same requests at other times cannot
/// see it; its level can.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Dominant {
    /// `lock` (the working threads blocked on futexes), `runqueue` (runnable
    /// but not running), `cpu_saturation` (the server's CPU at its limit)
    /// or `gc` (the runtime stopped).
    pub cause: Cause,
    /// The level, percent: of the working threads' time (`lock`,
    /// `runqueue`), of the cores the server may use (`cpu_saturation`), of
    /// the measured phase's wall time (`gc`).
    pub level_pct: f64,
    /// Pearson correlation, second by second, between the level and the
    /// second's p99 latency; null when either does not vary or there are
    /// fewer than three seconds.
    pub latency_correlation: Option<f64>,
}

/// How a profiled run compares with the unprofiled runs of the same app,
/// knobs, profile and path (docs/explain.md, "A profiled run").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProfilerCost {
    /// The profiled run's closed-loop requests/s and p99 (µs).
    pub rps: f64,
    pub p99_us: f64,
    /// The unprofiled runs' medians.
    pub unprofiled_rps: f64,
    pub unprofiled_p99_us: f64,
    pub unprofiled_runs: usize,
    /// The relative difference counted as noise: 0.2, or twice the
    /// unprofiled runs' relative spread, whichever is larger.
    pub noise: f64,
    /// Throughput or p99 differs by more than the noise.
    pub beyond_noise: bool,
}

/// One frame of the slow-window profile (`stampede run --profile` with a slow
/// log) that is more frequent in the slow requests' windows than over the
/// run: its share of on-CPU samples there, and over the whole phase (the
/// by-chance level), in percent.
pub use crate::profile::FrameShift;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Explanation {
    pub app: String,
    pub knobs: BTreeMap<String, String>,
    pub profile: Option<String>,
    pub path: Option<String>,
    pub iteration: Option<u64>,
    pub requests: u64,
    /// p50 of the run, µs: what a typical request took.
    #[serde(default)]
    pub p50_us: f64,
    /// p99 of the run: requests slower than this are the slow requests.
    pub slow_threshold_us: f64,
    pub slow_requests: usize,
    pub share: Shares,
    pub present: Shares,
    pub chance: Shares,
    pub p999: Tier,
    pub latency: Option<WithWithout>,
    pub slowest: Vec<Slowest>,
    /// Events known for the run, by kind.
    pub events: BTreeMap<String, usize>,
    /// The working threads' futex share, when the run has microstates.
    #[serde(default)]
    pub lock_level: Option<LockLevel>,
    /// The most over-represented frames of the slow-window profile, when the
    /// run has one (most over-represented first).
    #[serde(default)]
    pub frames: Vec<FrameShift>,
    /// The same for the off-CPU time of the slow-window profile (waiter
    /// stacks, `--profile-off-cpu`), with the first frame's stack.
    #[serde(default)]
    pub waiters: Vec<FrameShift>,
    /// What raises latency for every request, highest level first.
    #[serde(default)]
    pub dominant: Vec<Dominant>,
    /// A profiled run against the same run unprofiled, when one is known.
    #[serde(default)]
    pub profiler_cost: Option<ProfilerCost>,
    /// The causes that explain the requests above p99 clearly beyond their
    /// chance level, largest share first ([`Shares::above_chance`]).
    #[serde(default)]
    pub above_chance: Vec<Cause>,
    pub clock: Vec<String>,
    /// Caveats: an incomplete slow log, missing events, …
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_causes_read_back_by_their_names() {
        for kind in [Kind::Gc, Kind::Safepoint, Kind::Pause, Kind::CpuSaturation, Kind::Runqueue, Kind::KernelDrops] {
            assert_eq!(Kind::parse(kind.name()), Some(kind));
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{}\"", kind.name()));
        }
        assert_eq!(Kind::Safepoint.cause(), Cause::Gc, "a safepoint stops the runtime like a GC pause");
        let met: Met =
            serde_json::from_str(r#"{"kind":"runqueue","label":"x","offset_ms":1.5,"duration_ms":2}"#).unwrap();
        assert_eq!(met.kind.cause(), Cause::Runqueue);
    }
}
