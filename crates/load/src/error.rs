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
    #[error("load generator failed: {0}")]
    Io(#[from] std::io::Error),
}
