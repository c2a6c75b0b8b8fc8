//! `stampede run` end to end on small contract servers: what it writes,
//! what it starts and stops, databases, TechEmpower apps, names, secrets and
//! the sizes of its files.

mod arena;
mod basics;
mod children;
mod database;
mod error_counts;
mod hdr_log;
mod listen;
mod names;
mod plan;
mod secrets;
mod slow_files;
mod tfb;
