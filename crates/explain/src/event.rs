//! The one shape every source of server-side trouble is brought to: a window
//! on CLOCK_MONOTONIC with a kind and a label. GC logs of four runtimes, the
//! probe's CPU and run-queue samples and hand-written (injected) events all
//! become `Event`s, so attribution never needs to know where one came from.

use serde::{Deserialize, Serialize};

/// The event kinds and causes, declared once with the `stampede.explain/1`
/// document in stampede-schema.
pub use stampede_schema::explain::{Cause, Kind};

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
