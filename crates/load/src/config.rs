//! What a load run is asked to do, fixed before any thread starts. The request
//! is encoded here once; every connection writes the same bytes.

use crate::target::Target;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// When the measured phase ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this long (the warmup comes before it).
    Duration(Duration),
    /// After this many requests have been sent and answered or failed.
    Requests(u64),
}

/// How intended send times are spaced in open-loop mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Evenly spaced, like wrk2.
    Uniform,
    /// Exponentially distributed gaps (a Poisson process), like independent users.
    Poisson,
}

#[derive(Debug, Clone)]
pub struct LoadConfig {
    pub target: Target,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub connections: usize,
    /// Open loop only: connections may grow to this many when all are busy.
    pub max_connections: usize,
    pub threads: usize,
    pub stop: Stop,
    pub warmup: Duration,
    pub timeout: Duration,
    /// Requests per second in total; `None` is closed-loop mode.
    pub rate: Option<f64>,
    pub arrival: Arrival,
    /// Keep this many slowest requests with their timestamps.
    pub slow_log: usize,
    /// Open loop: delay by the generator itself beyond which the run is saturated.
    pub max_lag: Duration,
    /// Set (e.g. by Ctrl-C) to end the run early; results so far are kept.
    pub interrupt: Arc<AtomicBool>,
}

impl LoadConfig {
    pub fn new(target: Target) -> LoadConfig {
        LoadConfig {
            target,
            method: "GET".into(),
            headers: Vec::new(),
            body: Vec::new(),
            connections: 32,
            max_connections: 32,
            threads: 1,
            stop: Stop::Duration(Duration::from_secs(10)),
            warmup: Duration::ZERO,
            timeout: Duration::from_secs(5),
            rate: None,
            arrival: Arrival::Uniform,
            slow_log: 0,
            max_lag: Duration::from_millis(1),
            interrupt: Arc::new(AtomicBool::new(false)),
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.connections == 0 {
            return Err("--connections must be at least 1".into());
        }
        if self.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        if self.threads > self.connections {
            return Err(format!(
                "--threads ({}) must not exceed --connections ({}): each thread needs a connection",
                self.threads, self.connections
            ));
        }
        if let Stop::Requests(0) = self.stop {
            return Err("--requests must be at least 1".into());
        }
        if let Stop::Duration(d) = self.stop {
            if d.is_zero() {
                return Err("--duration must be longer than 0s".into());
            }
        }
        if self.timeout.is_zero() {
            return Err("--timeout must be longer than 0s".into());
        }
        if let Some(rate) = self.rate {
            if !(rate.is_finite() && rate > 0.0) {
                return Err("--rate must be a positive number of requests per second".into());
            }
        }
        Ok(())
    }

    pub fn is_head(&self) -> bool {
        self.method.eq_ignore_ascii_case("HEAD")
    }

    /// The request as it goes on the wire, encoded once for the whole run.
    pub fn encode_request(&self) -> Vec<u8> {
        let mut req = format!("{} {} HTTP/1.1\r\n", self.method, self.target.path);
        let has = |name: &str| self.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
        if !has("host") {
            req.push_str(&format!("Host: {}\r\n", self.target.host_header));
        }
        if !has("user-agent") {
            req.push_str(concat!("User-Agent: stampede/", env!("CARGO_PKG_VERSION"), "\r\n"));
        }
        for (name, value) in &self.headers {
            req.push_str(&format!("{name}: {value}\r\n"));
        }
        if !self.body.is_empty() && !has("content-length") {
            req.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        req.push_str("\r\n");
        let mut bytes = req.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_is_encoded_with_host_headers_and_body() {
        let mut c = LoadConfig::new(Target::parse("http://127.0.0.1:8080/x?y=1").unwrap());
        c.method = "POST".into();
        c.headers.push(("X-A".into(), "b".into()));
        c.body = b"hi".to_vec();
        let req = String::from_utf8(c.encode_request()).unwrap();
        assert!(req.starts_with("POST /x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
        assert!(req.contains("\r\nX-A: b\r\n"));
        assert!(req.ends_with("Content-Length: 2\r\n\r\nhi"));
    }

    #[test]
    fn user_host_header_wins() {
        let mut c = LoadConfig::new(Target::parse("http://127.0.0.1:8080/").unwrap());
        c.headers.push(("host".into(), "example".into()));
        let req = String::from_utf8(c.encode_request()).unwrap();
        assert_eq!(req.matches("ost:").count(), 1);
    }
}
