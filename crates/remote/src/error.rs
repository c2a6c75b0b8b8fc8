//! What can go wrong with a load host, each failure naming the host and what
//! to do, so the controller can print it as one line and either stop or go on
//! without that host (`--on-host-failure`).

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum HostError {
    #[error("could not connect over ssh ({0}); check the host name, that its key is in your known_hosts, or your ssh config")]
    Connect(String),
    #[error("`{path}` was not found or did not run there ({detail}); install stampede on it, pass --remote-path, or use --copy-binary")]
    Missing { path: String, detail: String },
    #[error("runs {found:?}, not {wanted:?}; use --copy-binary to send this one")]
    Version { found: String, wanted: String },
    #[error("could not copy the stampede binary ({0}); check free space and write access to ~/.cache/stampede there")]
    Copy(String),
    #[error("clock is {} ms {} (limit --max-clock-offset {limit_ms} ms); synchronise its clock (chrony, systemd-timesyncd) or raise the limit", .offset_ms.abs().round(), if *.offset_ms > 0.0 { "ahead" } else { "behind" })]
    Clock { offset_ms: f64, limit_ms: f64 },
    #[error("clock check failed ({0})")]
    ClockProtocol(String),
    #[error("stampede load failed there: {0}")]
    Remote(String),
    #[error("died mid-run after {after_s:.1} s ({detail}); its requests are missing from the total")]
    Died { after_s: f64, detail: String },
    #[error("returned no readable result ({0})")]
    BadResult(String),
    #[error("did not finish in time and was stopped")]
    Hung,
}

pub use stampede_schema::hosts::HostFailure;

/// A host's failure as the result's `failed_hosts` records it.
pub fn failure(host: &str, err: &HostError) -> HostFailure {
    HostFailure { host: host.to_string(), reason: err.to_string() }
}
