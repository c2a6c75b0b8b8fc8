//! What can stop a load run before it starts. Errors during a run (a refused
//! reconnect, a timeout, a malformed response) are counted, not raised: a load
//! generator that gives up on the first bad response measures nothing.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum LoadError {
    #[error("invalid URL {url:?}: {reason} (expected http://HOST[:PORT]/PATH or https://…)")]
    BadUrl { url: String, reason: String },
    #[error("cannot resolve host of {url}: {reason}")]
    Resolve { url: String, reason: String },
    #[error("cannot connect to {url}: {reason} (is the server running?)")]
    Connect { url: String, reason: String },
    #[error("TLS handshake with {url} failed: {reason}")]
    Tls { url: String, reason: String },
    #[error("{0}")]
    Config(String),
    /// A load that breaks the spec's rules (`crate::rules`).
    #[error(transparent)]
    Spec(#[from] crate::SpecError),
    #[error("load generator failed: {0}")]
    Io(#[from] std::io::Error),
}

impl LoadError {
    /// A server whose limit on concurrent streams (`limit`, the protocol's
    /// name for it) is 0 accepts no request: a run would wait for a stream
    /// forever, so `flag` (`--http2`, `--http3`) says so in one line before
    /// it, in the same words for both protocols.
    pub fn no_streams(flag: &str, url: &str, limit: &str) -> LoadError {
        LoadError::Config(format!(
            "{flag}: {url}: the server allows no streams ({limit} 0), so it accepts no request; raise the server's stream limit"
        ))
    }
}
