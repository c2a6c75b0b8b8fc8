//! How a check is run (timeout, database, HTTP/3 or TLS trust, the server's
//! own URLs), declared apart from the runner in lib.rs so that the parts it
//! drives (the gRPC check, the target) read it without importing upward.

use std::time::Duration;

use stampede_contract::UrlMap;

use crate::h3::Http3;

/// How to run a check.
#[derive(Debug, Clone)]
pub struct Options {
    /// Longest wait for one response, from connecting to its last byte.
    pub timeout: Duration,
    /// The server's database (`postgres://…`), which the database rules
    /// (contracts/db.toml) read the rows back from.
    pub database: Option<String>,
    /// Ask over HTTP/3 (QUIC) with this trust, instead of HTTP/1.1 over TCP.
    pub http3: Option<Http3>,
    /// The server's own URLs for the contract's endpoints (`--url`).
    pub urls: UrlMap,
    /// A gRPC contract over `https://`: how to trust the server's certificate.
    pub tls: Option<Http3>,
}

impl Default for Options {
    fn default() -> Options {
        Options { timeout: Duration::from_secs(5), database: None, http3: None, urls: UrlMap::default(), tls: None }
    }
}
