//! The one definition of Stampede's error counts and their two categories.
//!
//! A load counts what went wrong per cause (`connect`, `read`, `write`,
//! `timeout`, `parse`, `tls`, `status`). People read two sums of them, and
//! every view (the load's own text, `stampede run`'s tables, results.json,
//! the Markdown/CSV export and the HTML report) takes those sums from here,
//! under the names here:
//! - **socket errors**: the transport or the protocol failed and no usable
//!   response arrived: connect, read, write, timeout, TLS handshake and
//!   malformed HTTP (`parse`; the connection's framing is lost with it);
//! - **bad responses**: a well-formed response with a status outside
//!   2xx/3xx (`status`).

use serde::{Deserialize, Serialize};

/// Error counts of a load, one per cause (docs/results.md, `errors`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Errors {
    pub connect: u64,
    pub read: u64,
    pub write: u64,
    pub timeout: u64,
    /// Responses outside 2xx/3xx.
    pub status: u64,
    /// Malformed HTTP, or a server that would not speak HTTP/2.
    pub parse: u64,
    /// TLS handshakes that failed (untrusted certificate, protocol error, timeout).
    pub tls: u64,
}

impl Errors {
    pub fn add(&mut self, o: &Errors) {
        self.connect += o.connect;
        self.read += o.read;
        self.write += o.write;
        self.timeout += o.timeout;
        self.status += o.status;
        self.parse += o.parse;
        self.tls += o.tls;
    }

    /// Socket errors: failures of the transport or the protocol.
    pub fn socket(&self) -> u64 {
        self.connect + self.read + self.write + self.timeout + self.parse + self.tls
    }

    /// Bad responses: well-formed responses outside 2xx/3xx.
    pub fn bad_responses(&self) -> u64 {
        self.status
    }

    /// Everything that went wrong: socket errors plus bad responses.
    pub fn total(&self) -> u64 {
        self.socket() + self.bad_responses()
    }
}

/// The two sums people read, with the names every view prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCategory {
    SocketErrors,
    BadResponses,
}

impl ErrorCategory {
    pub const ALL: [ErrorCategory; 2] = [ErrorCategory::BadResponses, ErrorCategory::SocketErrors];

    /// The row or column title: `Socket errors`, `Bad responses`.
    pub fn title(self) -> &'static str {
        match self {
            ErrorCategory::SocketErrors => "Socket errors",
            ErrorCategory::BadResponses => "Bad responses",
        }
    }

    /// The machine name (CSV column, JSON field): `socket_errors`, `bad_responses`.
    pub fn key(self) -> &'static str {
        match self {
            ErrorCategory::SocketErrors => "socket_errors",
            ErrorCategory::BadResponses => "bad_responses",
        }
    }

    pub fn count(self, errors: &Errors) -> u64 {
        match self {
            ErrorCategory::SocketErrors => errors.socket(),
            ErrorCategory::BadResponses => errors.bad_responses(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_and_tls_are_socket_errors_and_status_is_a_bad_response() {
        let e = Errors { connect: 1, read: 2, write: 3, timeout: 4, status: 5, parse: 6, tls: 7 };
        assert_eq!(e.socket(), 1 + 2 + 3 + 4 + 6 + 7);
        assert_eq!(e.bad_responses(), 5);
        assert_eq!(ErrorCategory::SocketErrors.count(&e), e.socket());
        assert_eq!(ErrorCategory::BadResponses.count(&e), 5);
        assert_eq!(e.total(), 28);
    }

    #[test]
    fn an_older_document_without_tls_reads_as_zero_tls_errors() {
        let e: Errors =
            serde_json::from_str(r#"{"connect":1,"read":0,"write":0,"timeout":0,"status":2,"parse":3}"#).unwrap();
        assert_eq!((e.tls, e.socket(), e.bad_responses()), (0, 4, 2));
    }
}
