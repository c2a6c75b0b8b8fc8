//! Load from several machines, driven over SSH.
//!
//! One machine cannot always saturate a server, and a generator sharing the
//! server's machine steals its CPU. This crate runs `stampede load` on other
//! hosts through the system's own `ssh` client, so the user's keys, config and
//! known_hosts decide who may connect: there is no daemon and no listening
//! port of ours. It measures each host's clock offset, agrees one start
//! instant, gives each host its share of connections and rate, and merges the
//! hosts' results losslessly through their HdrHistograms.

pub mod clock;
pub mod controller;
pub mod copy;
pub mod error;
pub mod merge;
pub mod share;
pub mod ssh;

pub use controller::{run, Outcome, Plan};
pub use error::{HostError, HostFailure};
pub use share::Share;
pub use ssh::Ssh;
pub use stampede_schema::hosts::HostRow;
