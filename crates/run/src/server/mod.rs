//! Where a run's server lives: built once (prepare.rs), started in its own
//! process group with its output and runtime events captured (process.rs,
//! events.rs), timed to its first ready answer (ready.rs), sampled and
//! stopped (served.rs). With `[hosts] server` the same lifecycle runs on
//! another host under `stampede agent` (agent/), driven from here
//! (remote_server/).

pub mod agent;
pub(crate) mod events;
pub(crate) mod http;
pub(crate) mod prepare;
pub(crate) mod process;
pub(crate) mod ready;
pub mod remote_server;
pub(crate) mod served;
pub mod standalone;
pub(crate) mod subprocess;
