//! One complete response as the checker's transports hand it over, HTTP/1.1
//! (client.rs over wire.rs) and HTTP/3 (h3.rs) alike: the head exactly as
//! received, how the body was framed, and when it came. The judges read it;
//! it sits below both transports so neither imports the other for it.

use std::time::{Duration, SystemTime};

use crate::wire::Framing;

/// One complete response, with the head exactly as received.
#[derive(Debug, Clone)]
pub struct Response {
    /// `1` for HTTP/1.1, `0` for HTTP/1.0.
    pub version_minor: u8,
    pub status: u16,
    pub reason: String,
    /// Header names as sent, values as raw bytes, in order.
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
    pub framing: Framing,
    /// Wall-clock time just before the request was written.
    pub sent_at: SystemTime,
    /// Wall-clock time just after the last body byte was read.
    pub received_at: SystemTime,
    /// From writing the request to the last body byte.
    pub elapsed: Duration,
    /// The request went out on a connection that had already served one.
    pub reused_connection: bool,
}

impl Response {
    /// Every value of the header `name` (case-insensitive), in order.
    pub fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.headers.iter().filter(move |(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_slice())
    }

    /// The first value of `name` as text (lossy), if present.
    pub fn header(&self, name: &str) -> Option<String> {
        self.header_values(name).next().map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// The status line as sent, e.g. `HTTP/1.1 404 Not Found`.
    pub fn status_line(&self) -> String {
        format!("HTTP/1.{} {} {}", self.version_minor, self.status, self.reason)
    }

    /// The connection may carry another request after this response.
    pub fn keeps_alive(&self) -> bool {
        let tokens: Vec<String> = self
            .header_values("connection")
            .flat_map(|v| {
                String::from_utf8_lossy(v).split(',').map(|t| t.trim().to_ascii_lowercase()).collect::<Vec<_>>()
            })
            .collect();
        let framed = matches!(self.framing, Framing::Length(_) | Framing::Chunked | Framing::NoBody);
        let persistent = if self.version_minor >= 1 {
            !tokens.iter().any(|t| t == "close")
        } else {
            tokens.iter().any(|t| t == "keep-alive")
        };
        framed && persistent
    }
}
