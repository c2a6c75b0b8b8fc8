//! The URL under test, parsed and resolved once before any thread starts, so a
//! typo or an unreachable host is one clear error instead of a wall of
//! connection failures.

use crate::error::LoadError;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Target {
    /// The URL as the user gave it, for messages and results.
    pub url: String,
    pub addr: SocketAddr,
    /// Value of the `Host` header: the host, plus the port when it is not the scheme's default.
    pub host_header: String,
    /// Path and query, as sent on the request line.
    pub path: String,
    /// The host as written in the URL (the TLS server name).
    pub host: String,
    /// `https://`: connections speak TLS.
    pub tls: bool,
}

impl Target {
    pub fn parse(raw: &str) -> Result<Target, LoadError> {
        let bad = |reason: &str| LoadError::BadUrl { url: raw.to_string(), reason: reason.to_string() };
        let url = url::Url::parse(raw).map_err(|e| bad(&e.to_string()))?;
        let tls = match url.scheme() {
            "http" => false,
            "https" => true,
            other => return Err(bad(&format!("unsupported scheme {other:?}"))),
        };
        let host = url.host_str().ok_or_else(|| bad("no host"))?;
        let port = url.port_or_known_default().unwrap_or(if tls { 443 } else { 80 });
        let lookup_host = host.trim_start_matches('[').trim_end_matches(']');
        let addr = (lookup_host, port)
            .to_socket_addrs()
            .map_err(|e| LoadError::Resolve { url: raw.to_string(), reason: e.to_string() })?
            .next()
            .ok_or_else(|| LoadError::Resolve { url: raw.to_string(), reason: "no addresses".into() })?;
        let host_header = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let mut path = url.path().to_string();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        Ok(Target { url: raw.to_string(), addr, host_header, path, host: host.to_string(), tls })
    }

    /// One blocking connection attempt, so that a refused port fails the run
    /// up front with its reason rather than as a count of connect errors.
    pub fn preflight(&self, timeout: Duration) -> Result<(), LoadError> {
        TcpStream::connect_timeout(&self.addr, timeout)
            .map(drop)
            .map_err(|e| LoadError::Connect { url: self.url.clone(), reason: describe(&e) })
    }
}

fn describe(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connection refused".into(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => "connect timed out".into(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_header_keeps_explicit_port_and_path_keeps_query() {
        let t = Target::parse("http://127.0.0.1:8080/a/b?x=1").unwrap();
        assert_eq!(t.host_header, "127.0.0.1:8080");
        assert_eq!(t.path, "/a/b?x=1");
        assert_eq!(t.addr.port(), 8080);
    }

    #[test]
    fn rejects_what_it_cannot_load() {
        assert!(matches!(Target::parse("127.0.0.1:80"), Err(LoadError::BadUrl { .. })));
        assert!(matches!(Target::parse("ftp://x/"), Err(LoadError::BadUrl { .. })));
        let t = Target::parse("https://127.0.0.1/").unwrap();
        assert!(t.tls);
        assert_eq!((t.addr.port(), t.host_header.as_str()), (443, "127.0.0.1"));
        assert!(matches!(Target::parse("http://"), Err(LoadError::BadUrl { .. })));
    }

    #[test]
    fn ipv6_literal() {
        let t = Target::parse("http://[::1]:9/").unwrap();
        assert!(t.addr.is_ipv6());
        assert_eq!(t.host_header, "[::1]:9");
    }
}
