//! What the connections of a run speak, carrying only the settings that
//! apply to it: pipelining and the I/O backend belong to HTTP/1.1, streams
//! to HTTP/2 and HTTP/3. A combination no loop can run (`--pipeline` over
//! HTTP/2, `--streams` over HTTP/1.1) cannot be written, so the runner picks
//! its event loop with one `match` instead of a chain of flags.
//!
//! The load spec keeps its flags (`http2`, `http3`, `pipeline`, `streams`,
//! `engine`: what users and scenario files write); `check::check` makes
//! them a `Protocol` in one place. gRPC, a protocol of the HTTP/2 loop, is
//! a field of [`Protocol::Http2`] (what its streams [`Carry`]), not a new
//! set of flags.

use crate::limits::{self, fits, in_range};
use crate::spec_error::{Field, SpecError};
use crate::tls::check_alpn;
pub use stampede_schema::spec::IoBackend;
use stampede_schema::spec::LoadSpec;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.1: `pipeline` requests written back to back per connection
    /// before reading. `io` picks the event loop of a cleartext run (TLS
    /// connections run on epoll).
    Http1 { pipeline: usize, io: IoBackend },
    /// HTTP/2 (prior knowledge on `http://`, ALPN `h2` on `https://`):
    /// `streams` concurrent streams per connection, each carrying `carry`.
    Http2 { streams: usize, carry: Carry },
    /// HTTP/3 over QUIC to an `https://` URL: `streams` concurrent streams
    /// per connection.
    Http3 { streams: usize },
    /// `https://` offering h2 by ALPN without `--http2`: the server's answer
    /// makes the run [`Protocol::Http2`] with `streams` or
    /// [`Protocol::Http1`] with `pipeline` and `io` ([`Protocol::chosen`]).
    ByAlpn { pipeline: usize, streams: usize, io: IoBackend },
}

/// What the streams of an HTTP/2 run carry: HTTP requests, whose answer is
/// judged by its `:status`, or gRPC calls, judged by their `grpc-status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Carry {
    #[default]
    Http,
    Grpc,
}

impl Default for Protocol {
    fn default() -> Protocol {
        Protocol::Http1 { pipeline: 1, io: IoBackend::Auto }
    }
}

impl Protocol {
    /// The protocol a load spec's flags ask for, or why they cannot work
    /// together. The one place where `http2`, `http3`, `pipeline`,
    /// `streams`, `alpn` and `engine` become a `Protocol`.
    pub fn of_spec(s: &LoadSpec) -> Result<Protocol, SpecError> {
        let (pipeline, streams, io) = (fits(Field::Pipeline, s.pipeline)?, fits(Field::Streams, s.streams)?, s.engine);
        in_range(Field::Pipeline, pipeline, limits::MAX_PIPELINE)?;
        in_range(Field::Streams, streams, limits::MAX_STREAMS)?;
        let pipelined = |over: &str| {
            Err(SpecError::new(Field::Pipeline, format!("--pipeline is for HTTP/1.1; {over} with --streams")))
        };
        if s.grpc.is_some() {
            if s.http3 {
                return Err(SpecError::new(Field::Http3, "--grpc runs over HTTP/2: drop --http3"));
            }
            if pipeline > 1 {
                return pipelined("gRPC sends concurrent calls");
            }
            return Ok(Protocol::Http2 { streams, carry: Carry::Grpc });
        }
        if s.http3 {
            if s.http2 {
                return Err(SpecError::new(
                    Field::Http3,
                    "--http3 and --http2 cannot be combined: choose one protocol",
                ));
            }
            if pipeline > 1 {
                return pipelined("HTTP/3 sends concurrent requests");
            }
            return Ok(Protocol::Http3 { streams });
        }
        if s.http2 {
            if pipeline > 1 {
                return pipelined("HTTP/2 sends concurrent requests");
            }
            return Ok(Protocol::Http2 { streams, carry: Carry::Http });
        }
        let offer: Vec<&str> = s.alpn.iter().map(|p| p.trim()).collect();
        check_alpn(&offer)?;
        if offer.contains(&"h2") {
            return Ok(Protocol::ByAlpn { pipeline, streams, io });
        }
        if streams > 1 {
            return Err(SpecError::new(
                Field::Streams,
                "--streams needs HTTP/2 or HTTP/3: add --http2 (or --alpn h2,http/1.1 on https://) or --http3",
            ));
        }
        Ok(Protocol::Http1 { pipeline, io })
    }

    /// HTTP/1.1 requests per write (1 where streams carry the concurrency).
    pub fn pipeline(&self) -> usize {
        match *self {
            Protocol::Http1 { pipeline, .. } | Protocol::ByAlpn { pipeline, .. } => pipeline,
            Protocol::Http2 { .. } | Protocol::Http3 { .. } => 1,
        }
    }

    /// Concurrent streams per connection (1 for HTTP/1.1).
    pub fn streams(&self) -> usize {
        match *self {
            Protocol::Http2 { streams, .. } | Protocol::Http3 { streams } | Protocol::ByAlpn { streams, .. } => streams,
            Protocol::Http1 { .. } => 1,
        }
    }

    /// Whether the streams carry gRPC calls.
    pub fn grpc(&self) -> bool {
        matches!(self, Protocol::Http2 { carry: Carry::Grpc, .. })
    }

    /// The ALPN id of the protocol: what `stampede.load/1` calls it.
    pub fn id(&self) -> &'static str {
        match self {
            Protocol::Http2 { .. } => "h2",
            Protocol::Http3 { .. } => "h3",
            Protocol::Http1 { .. } | Protocol::ByAlpn { .. } => "http/1.1",
        }
    }

    /// The ALPN offer on `https://` when the user gave none: the one
    /// protocol the run speaks.
    pub fn default_alpn(&self) -> &'static str {
        match self {
            Protocol::Http2 { .. } => "h2",
            _ => "http/1.1",
        }
    }

    /// The protocol the connections speak once the server answered ALPN
    /// with `negotiated`: `ByAlpn` becomes HTTP/2 or HTTP/1.1, and an
    /// explicit `--http2` over TLS needs the server to agree.
    pub fn chosen(self, negotiated: Option<&str>, tls: bool, url: &str) -> Result<Protocol, String> {
        let h2 = negotiated == Some("h2");
        match self {
            Protocol::Http2 { .. } if tls && !h2 => {
                Err(format!("--http2: {url} did not agree to h2 by ALPN; drop --http2 to load it over HTTP/1.1"))
            }
            Protocol::ByAlpn { pipeline, .. } if h2 && pipeline > 1 => Err(format!(
                "--pipeline: {url} chose h2 by ALPN, and pipelining is HTTP/1.1's; use --streams, or --alpn http/1.1"
            )),
            Protocol::ByAlpn { streams, .. } if h2 => Ok(Protocol::Http2 { streams, carry: Carry::Http }),
            Protocol::ByAlpn { pipeline, io, .. } => Ok(Protocol::Http1 { pipeline, io }),
            p => Ok(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(f: impl Fn(&mut LoadSpec)) -> Result<Protocol, String> {
        let mut s = LoadSpec::default();
        f(&mut s);
        Protocol::of_spec(&s).map_err(|e| e.to_string())
    }

    #[test]
    fn spec_flags_become_the_protocol_or_one_line_on_why_they_cannot_work_together() {
        assert_eq!(of(|_| {}), Ok(Protocol::Http1 { pipeline: 1, io: IoBackend::Auto }));
        let h1 = of(|s| {
            s.pipeline = 8;
            s.engine = IoBackend::Epoll;
        });
        assert_eq!(h1, Ok(Protocol::Http1 { pipeline: 8, io: IoBackend::Epoll }));
        assert_eq!(
            of(|s| {
                s.http2 = true;
                s.streams = 10;
            }),
            Ok(Protocol::Http2 { streams: 10, carry: Carry::Http })
        );
        assert_eq!(
            of(|s| {
                s.http3 = true;
                s.streams = 3;
            }),
            Ok(Protocol::Http3 { streams: 3 })
        );
        let by_alpn = of(|s| {
            s.alpn = vec!["h2".into(), " http/1.1".into()];
            s.streams = 4;
        });
        assert_eq!(by_alpn, Ok(Protocol::ByAlpn { pipeline: 1, streams: 4, io: IoBackend::Auto }));
        assert!(of(|s| s.streams = 4).unwrap_err().contains("--streams needs HTTP/2"));
        assert!(of(|s| s.pipeline = 0).unwrap_err().contains("--pipeline must be at least 1"));
        let refused = |http2, http3, pipeline| {
            of(|s| {
                (s.http2, s.http3, s.pipeline) = (http2, http3, pipeline);
            })
            .unwrap_err()
        };
        assert!(refused(true, false, 2).contains("--pipeline is for HTTP/1.1; HTTP/2"));
        assert!(refused(false, true, 2).contains("--pipeline is for HTTP/1.1; HTTP/3"));
        assert!(refused(true, true, 1).contains("cannot be combined"));
        let spdy = of(|s| {
            s.alpn = vec!["spdy/3".into()];
            s.streams = 10;
        });
        assert!(spdy.unwrap_err().contains("--alpn \"spdy/3\""), "the offer is named before the streams");
    }

    #[test]
    fn grpc_makes_the_run_http2_carrying_calls_and_refuses_http3_and_pipelining() {
        let grpc = |f: &dyn Fn(&mut LoadSpec)| {
            of(|s| {
                s.grpc = Some(Default::default());
                s.streams = 4;
                f(s);
            })
        };
        let p = grpc(&|_| {}).unwrap();
        assert_eq!(p, Protocol::Http2 { streams: 4, carry: Carry::Grpc });
        assert!(p.grpc() && p.id() == "h2");
        assert!(!of(|s| s.http2 = true).unwrap().grpc(), "HTTP/2 alone carries HTTP");
        assert!(grpc(&|s| s.http3 = true).unwrap_err().contains("--grpc runs over HTTP/2"));
        assert!(grpc(&|s| s.pipeline = 2).unwrap_err().contains("gRPC sends concurrent calls"));
    }

    #[test]
    fn the_server_s_alpn_answer_picks_http2_or_http1_and_refuses_what_cannot_run() {
        let url = "https://127.0.0.1:8443/";
        let offer = Protocol::ByAlpn { pipeline: 1, streams: 8, io: IoBackend::Epoll };
        assert_eq!(offer.chosen(Some("h2"), true, url), Ok(Protocol::Http2 { streams: 8, carry: Carry::Http }));
        let h1 = Protocol::Http1 { pipeline: 1, io: IoBackend::Epoll };
        assert_eq!(offer.chosen(Some("http/1.1"), true, url), Ok(h1));
        assert_eq!(offer.chosen(None, true, url), Ok(h1));
        let pipelined = Protocol::ByAlpn { pipeline: 4, streams: 1, io: IoBackend::Auto };
        assert!(pipelined.chosen(Some("h2"), true, url).unwrap_err().contains("chose h2 by ALPN"));
        let http2 = Protocol::Http2 { streams: 2, carry: Carry::Http };
        assert!(http2.chosen(Some("http/1.1"), true, url).unwrap_err().contains("did not agree to h2"));
        assert_eq!(http2.chosen(None, false, "http://127.0.0.1:8080/"), Ok(http2), "prior knowledge");
    }
}
