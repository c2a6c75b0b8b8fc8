//! The one shape every source of server-side trouble is brought to: a window
//! on CLOCK_MONOTONIC with a kind and a label. GC logs of four runtimes, the
//! probe's CPU and run-queue samples and hand-written (injected) events all
//! become `Event`s, so attribution never needs to know where one came from.

use serde::{Deserialize, Serialize};

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
    /// Far more of the server's threads than usual were blocked in `futex`
    /// (the probe's microstates: a contended lock).
    Lock,
    /// Far more of the server's threads than usual were blocked in read/write calls.
    BlockedIo,
    /// The load generator sent the request late (actual minus intended send).
    SendDelay,
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
        }
    }
}

/// The causes slow requests are attributed to, in order of precedence: when a
/// request meets several, the first in this order is its cause (a runtime
/// pause is the most specific evidence, CPU saturation the least).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Gc,
    Pause,
    SendDelay,
    Lock,
    BlockedIo,
    Runqueue,
    CpuSaturation,
}

impl Cause {
    pub const ALL: [Cause; 7] = [
        Cause::Gc,
        Cause::Pause,
        Cause::SendDelay,
        Cause::Lock,
        Cause::BlockedIo,
        Cause::Runqueue,
        Cause::CpuSaturation,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Cause::Gc => "gc",
            Cause::Pause => "pause",
            Cause::Runqueue => "runqueue",
            Cause::CpuSaturation => "cpu_saturation",
            Cause::SendDelay => "send_delay",
            Cause::Lock => "lock",
            Cause::BlockedIo => "blocked_io",
        }
    }
}

/// One server-side event on CLOCK_MONOTONIC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub start_mono_ns: u64,
    pub end_mono_ns: u64,
    pub kind: Kind,
    pub label: String,
    /// True when the application was stopped for the whole window (a
    /// stop-the-world pause); false for phases that only compete for CPU
    /// (Go's concurrent mark with its assists, a saturated sample).
    pub stopped: bool,
    /// How far `start_mono_ns`/`end_mono_ns` may be off, from aligning the
    /// runtime's clock with CLOCK_MONOTONIC.
    pub error_ns: u64,
}

impl Event {
    pub fn duration_ns(&self) -> u64 {
        self.end_mono_ns.saturating_sub(self.start_mono_ns)
    }
}
