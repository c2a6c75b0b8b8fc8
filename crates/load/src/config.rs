//! What a load run is asked to do, fixed before any thread starts. The request
//! is encoded here once; every connection writes the same bytes. Every count,
//! size and duration a user can pass is held to a documented range by the
//! spec's rules (`stampede_spec::rules`, docs/load.md "Limits"), so an
//! absurd value is one line of error before the run, never an abort or an
//! unbounded allocation in it.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use stampede_spec::headers::{check_header, check_method, header_problem};
pub use stampede_spec::limits;
pub use stampede_spec::rules::Stop;
pub use stampede_spec::Load;

pub use stampede_schema::spec::Arrival;
pub use stampede_spec::protocol::{IoBackend, Protocol};

/// A checked load ([`Load`], declared once in the spec crate) with what
/// only the engine has: the prepared mix and the interrupt flag. The
/// load's fields read as the config's own (`cfg.connections`) through
/// `Deref`: the same field access as before, so the event loops did not
/// change to hold it.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    pub load: Load,
    /// Several targets or URL templates (`target` is then the first one's
    /// host, for connecting); `None` sends the one request of `target`.
    pub mix: Option<Arc<crate::mix::Mix>>,
    /// Set (e.g. by Ctrl-C) to end the run early; results so far are kept.
    pub interrupt: Arc<AtomicBool>,
}

impl Deref for LoadConfig {
    type Target = Load;
    fn deref(&self) -> &Load {
        &self.load
    }
}

impl DerefMut for LoadConfig {
    fn deref_mut(&mut self) -> &mut Load {
        &mut self.load
    }
}

impl LoadConfig {
    /// `load` run by the engine, its one request (no mix), not interrupted.
    pub fn new(load: Load) -> LoadConfig {
        LoadConfig { load, mix: None, interrupt: Arc::new(AtomicBool::new(false)) }
    }

    /// The spec's rules (`stampede_spec::rules`), applied to this config.
    pub fn validate(&self) -> Result<(), stampede_spec::SpecError> {
        self.load.check()
    }

    pub fn is_head(&self) -> bool {
        self.method.eq_ignore_ascii_case("HEAD")
    }

    /// Whether every request of the run may be sent again when a server
    /// may have dropped it (RFC 9110 §9.2.2: idempotent methods).
    pub fn idempotent(&self) -> bool {
        let idempotent = |m: &str| matches!(m, "GET" | "HEAD" | "PUT" | "DELETE" | "OPTIONS" | "TRACE");
        match &self.mix {
            Some(mix) => mix.templates.iter().all(|t| idempotent(&t.spec.method)),
            None => idempotent(&self.method),
        }
    }

    /// Whether a request of the run asks for compression (`Accept-Encoding`):
    /// HTTP/1.1 bodies are then decoded and counted by their coding.
    pub fn asks_compression(&self) -> bool {
        let asks = |h: &[(String, String)]| h.iter().any(|(n, _)| n.eq_ignore_ascii_case("accept-encoding"));
        match &self.mix {
            Some(mix) => mix.templates.iter().any(|t| asks(&t.spec.headers)),
            None => asks(&self.headers),
        }
    }

    /// `--pipeline N`: the request repeated N times, encoded once, so a batch
    /// (or, under `-n`, the last partial batch) is one slice and one write.
    pub fn encode_batch(&self) -> Vec<u8> {
        self.encode_request().repeat(self.protocol.pipeline())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// `stampede load URL`'s config.
    fn at(url: &str) -> LoadConfig {
        let spec = stampede_schema::LoadSpec { urls: vec![url.into()], ..Default::default() };
        crate::spec::config(&spec, std::path::Path::new("")).unwrap()
    }

    #[test]
    fn request_is_encoded_with_host_headers_and_body() {
        let mut c = at("http://127.0.0.1:8080/x?y=1");
        c.method = "POST".into();
        c.headers.push(("X-A".into(), "b".into()));
        c.body = b"hi".to_vec();
        let req = String::from_utf8(c.encode_request()).unwrap();
        assert!(req.starts_with("POST /x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
        assert!(req.contains("\r\nX-A: b\r\n"));
        assert!(req.ends_with("Content-Length: 2\r\n\r\nhi"));
    }

    #[test]
    fn pipelining_is_refused_in_open_loop_with_the_reason() {
        let mut c = at("http://127.0.0.1:8080/");
        c.protocol = Protocol::Http1 { pipeline: 4, io: IoBackend::Auto };
        assert_eq!(c.encode_batch(), c.encode_request().repeat(4));
        assert!(c.validate().is_ok());
        c.rate = Some(100.0);
        let err = c.validate().unwrap_err().to_string();
        assert!(err.contains("--pipeline 4 cannot be combined with --rate") && err.contains("intended send"), "{err}");
    }

    #[test]
    fn protocol_flags_that_cannot_work_are_refused() {
        let base = at("http://127.0.0.1:8080/");
        let refused = |f: &dyn Fn(&mut LoadConfig)| {
            let mut c = base.clone();
            f(&mut c);
            c.validate().unwrap_err().to_string()
        };
        assert!(refused(&|c| c.tls.insecure = true).contains("apply to https://"));
        assert!(refused(&|c| c.protocol = Protocol::Http3 { streams: 1 }).contains("--http3 needs an https:// URL"));
        let mut tls = at("https://127.0.0.1:8443/");
        tls.tls.alpn = vec!["h2".into(), "http/1.1".into()];
        tls.protocol = Protocol::ByAlpn { pipeline: 1, streams: 10, io: IoBackend::Auto };
        assert!(tls.validate().is_ok(), "streams with an h2 offer");
        tls.tls.alpn = vec!["spdy/3".into()];
        assert!(tls.validate().unwrap_err().to_string().contains("--alpn \"spdy/3\""));
    }

    #[test]
    fn counts_sizes_and_text_outside_their_range_are_refused_naming_the_flag() {
        let base = at("http://127.0.0.1:8080/");
        let refused = |f: &dyn Fn(&mut LoadConfig)| {
            let mut c = base.clone();
            f(&mut c);
            c.validate().unwrap_err().to_string()
        };
        assert!(refused(&|c| c.protocol = Protocol::Http2 { streams: 1 << 32, carry: Default::default() })
            .contains("--streams 4294967296 is above the maximum"));
        assert!(refused(&|c| c.threads = 5000).contains("--threads"));
        assert!(refused(&|c| c.stop = Stop::Duration(Duration::from_secs(u64::MAX))).contains("--duration"));
        assert!(refused(&|c| c.warmup = Duration::MAX).contains("--warmup"));
        assert!(refused(&|c| c.rate = Some(1e12)).contains("--rate"));
        assert!(refused(&|c| c.body = vec![0; limits::MAX_BODY_BYTES + 1]).contains("64 MiB"));
        assert!(refused(&|c| c.method = String::new()).contains("--method \"\""));
        assert!(refused(&|c| c.method = "GET /x".into()).contains("--method"));
        assert!(refused(&|c| c.headers = vec![("X-A".into(), "b\r\nX-Injected: 1".into())]).contains("CR, LF"));
        assert!(refused(&|c| c.headers = vec![("X A".into(), "b".into())]).contains("token"));
        assert!(refused(&|c| {
            c.protocol = Protocol::Http1 { pipeline: 1_000_000, io: IoBackend::Auto };
            c.body = vec![b'x'; 1000];
        })
        .contains("per batch"));
        let mut ok = base.clone();
        ok.method = "PROPFIND".into();
        ok.headers = vec![("X-Trace_id".into(), "a\tb ü".into())];
        assert!(ok.validate().is_ok());
    }

    #[test]
    fn user_host_header_wins() {
        let mut c = at("http://127.0.0.1:8080/");
        c.headers.push(("host".into(), "example".into()));
        let req = String::from_utf8(c.encode_request()).unwrap();
        assert_eq!(req.matches("ost:").count(), 1);
    }
}
