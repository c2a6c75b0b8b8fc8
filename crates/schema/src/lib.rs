//! The documents Stampede writes and reads, declared once.
//!
//! Every process and every view talks through these types: the load engine
//! and the orchestrator serialise them, and the report, `explain`, the remote
//! controller and the terminal tables deserialise the same declarations. This
//! crate sits at the bottom of the crate graph and depends on no other
//! Stampede crate. It also owns the figures derived from a document (what
//! counts as a socket error, a bad response, a valid run), so a number does
//! not depend on which view prints it.
//!
//! Reading is lenient: fields added since a file was written read as their
//! defaults and unknown fields are ignored, so older results files still
//! render (docs/results.md, "Reading older files").

pub mod check;
pub mod database;
pub mod document;
pub mod encoding;
pub mod errors;
pub mod explain;
pub mod grpc;
pub mod histogram;
pub mod hosts;
pub mod late;
mod lenient;
pub mod load;
pub mod microstates;
pub mod mix;
pub mod process;
pub mod profile;
pub mod redact;
pub mod run;
pub mod slow_log;
pub mod spec;
pub mod stages;
pub mod summary;
pub mod units;

pub use errors::{ErrorCategory, Errors};
pub use load::LoadResult;
pub use spec::LoadSpec;
