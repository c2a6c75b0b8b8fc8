//! `stampede explain` on servers where the cause of the slow requests is
//! injected, or known to be absent: each is timed against a known truth.

mod backlog;
mod causes;
mod frames;
mod generator;
mod lock;
mod locks;
mod quiet;
