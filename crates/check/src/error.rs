//! Why a check could not be run at all. A rule that fails is not an error (it
//! is a result in the report); these are the cases where there is nothing to
//! judge: the URL makes no sense, or nothing answers at it.

/// The ways [`crate::check`] can fail before producing a report.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The base URL could not be used. `reason` says what to change.
    #[error("invalid URL {url:?}: {reason}; give a base URL such as http://127.0.0.1:9009")]
    BadUrl { url: String, reason: String },

    /// The host name in the URL has no address.
    #[error("cannot resolve host {host} in {url}: {reason}; check the host name")]
    Unresolvable { url: String, host: String, reason: String },

    /// Nothing answered the first request. `reason` is one lower-case phrase
    /// such as `connection refused`; the message asks whether the server runs.
    #[error("cannot connect to {url}: {reason} (is the server running?)")]
    Unreachable { url: String, reason: String },

    /// The contract reads rows back from a database, and none was given.
    #[error("contract {contract} checks the answers against the database: give its URL with --database postgres://user:password@host:port/database")]
    NeedsDatabase { contract: String },

    /// `--http3`: the TLS settings cannot be used (a `--ca` file unreadable).
    #[error("{reason}")]
    Http3Setup { reason: String },

    /// A gRPC contract's `.proto` does not compile, or the server's
    /// reflection gave no schema for a contract without one.
    #[error("{reason}")]
    Grpc { reason: String },

    /// The database given with `--database` cannot be read.
    #[error("--database {url}: {reason}")]
    Database { url: String, reason: String },
}
