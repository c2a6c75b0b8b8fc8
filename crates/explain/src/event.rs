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
    /// The request this event is a wait of (its own wait for a connection,
    /// or for the load generator), `None` for events of the server or the
    /// machine. Such a wait explains its own request alone: a neighbour
    /// whose window it overlaps did not wait for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
}

/// Which logged request a wait belongs to: its connection and intended send
/// time (two requests due at the same nanosecond on one connection waited
/// alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub connection: u32,
    pub intended_mono_ns: u64,
}

impl Owner {
    pub fn of(request: &stampede_schema::load::SlowRequest) -> Owner {
        Owner { connection: request.connection, intended_mono_ns: request.intended_mono_ns }
    }
}

impl Event {
    pub fn duration_ns(&self) -> u64 {
        self.end_mono_ns.saturating_sub(self.start_mono_ns)
    }

    /// Whether this event can have delayed `request`: any event of the
    /// server or the machine can; a request's own wait only that request.
    pub fn can_touch(&self, request: &stampede_schema::load::SlowRequest) -> bool {
        self.owner.is_none_or(|o| o == Owner::of(request))
    }
}
