//! What `stampede run` shows people: the plan of commands before anything
//! runs (plan.rs), the progress bar and its notes on stderr (progress.rs),
//! and each run's tables (tables.rs, microstates.rs), all told by the
//! runner through screen.rs, the terminal's observer.

pub(crate) mod microstates;
pub(crate) mod plan;
pub mod progress;
pub(crate) mod screen;
pub(crate) mod tables;
