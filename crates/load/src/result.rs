//! The result of a load run is the `stampede.load/1` document, declared once
//! in `stampede-schema`; re-exported here so the engine's modules name it as
//! before.

pub use stampede_schema::histogram::{encode_histogram, spectrum};
pub use stampede_schema::hosts::{HostFailure, HostRow, MultiHost};
pub use stampede_schema::load::*;
pub use stampede_schema::mix::{MixStats, TargetResult};
