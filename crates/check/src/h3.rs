//! The check's HTTP/3 transport (`stampede check --http3`): one QUIC
//! connection (`quinn`, rustls with ALPN `h3`) carrying the contract's
//! requests one at a time on the `h3` crate, each answer turned into the
//! same [`Response`] the HTTP/1.1 client gives, so that every rule and
//! probe judges it unchanged. Speed does not matter here, exactness does,
//! so the crates made for the job are used as they are, each request
//! blocking on a one-thread tokio runtime (the load engine's HTTP/3, built
//! for cost per request, is its own).
//!
//! HTTP/3 frames a body itself (DATA frames, then the stream's end): the
//! framing is `Length` of what arrived, or `Invalid` where a
//! `content-length` says otherwise. There is no minor version: a response
//! counts as `version_minor` 1 (HTTP/1.1 or later, what the `http-version`
//! rule asks). Certificates are trusted as `stampede load` trusts them
//! (`--insecure`, `--ca`: `stampede_spec::tls`, declared once).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::{Buf, Bytes};

use crate::response::Response;
use crate::transport::TransportError;
use crate::wire::Framing;

/// The TLS alert a server sends when it offers none of the client's ALPN
/// protocols (no_application_protocol, 120), as a QUIC CRYPTO_ERROR.
const NO_APPLICATION_PROTOCOL: u64 = 0x100 + 120;

/// How to trust the server's certificate over HTTP/3.
#[derive(Debug, Clone, Default)]
pub struct Http3 {
    /// Accept any certificate (a self-signed test server).
    pub insecure: bool,
    /// Trust only the certificates in this PEM file.
    pub ca: Option<PathBuf>,
}

/// The QUIC client configuration of a check, built once per target.
#[derive(Clone)]
pub struct Quic {
    config: quinn::ClientConfig,
    /// The SNI and certificate name.
    server_name: String,
}

impl fmt::Debug for Quic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Quic({})", self.server_name)
    }
}

impl Quic {
    /// The client configuration for `host` (as in the URL `url`), or one
    /// line saying what to change (a `--ca` file that cannot be read).
    pub fn new(trust: &Http3, host: &str, url: &str, timeout: Duration) -> Result<Quic, String> {
        let opts =
            stampede_spec::tls::TlsOptions { insecure: trust.insecure, ca: trust.ca.clone(), alpn: vec!["h3".into()] };
        let tls = stampede_spec::tls::TlsShared::new(&opts, host, url).map_err(|e| e.to_string())?;
        let quic = quinn::crypto::rustls::QuicClientConfig::try_from(tls.config.clone())
            .map_err(|e| format!("--http3: TLS setup for QUIC failed: {e}"))?;
        let mut config = quinn::ClientConfig::new(Arc::new(quic));
        let mut transport = quinn::TransportConfig::default();
        transport.max_idle_timeout(quinn::IdleTimeout::try_from(timeout).ok());
        config.transport_config(Arc::new(transport));
        let server_name = host.trim_start_matches('[').trim_end_matches(']').to_string();
        Ok(Quic { config, server_name })
    }
}

type Sender = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// One HTTP/3 connection, with the runtime that drives it.
pub struct H3Conn {
    runtime: tokio::runtime::Runtime,
    endpoint: quinn::Endpoint,
    sender: Sender,
    /// The connection's own task (control streams, GOAWAY); its end means
    /// the connection is gone.
    driver: tokio::task::JoinHandle<()>,
}

impl Drop for H3Conn {
    fn drop(&mut self) {
        self.driver.abort();
        // H3_NO_ERROR: the server frees the connection now, not at its idle timeout.
        self.endpoint.close(quinn::VarInt::from_u32(0x100), b"");
    }
}

impl H3Conn {
    /// Opens a connection to `addr` within `timeout`.
    pub fn connect(quic: &Quic, addr: std::net::SocketAddr, timeout: Duration) -> Result<H3Conn, TransportError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| TransportError::Connect(format!("cannot start the HTTP/3 client: {e}")))?;
        let bind: std::net::SocketAddr =
            if addr.is_ipv6() { "[::]:0" } else { "0.0.0.0:0" }.parse().expect("an address");
        let connected = runtime.block_on(async {
            let endpoint = quinn::Endpoint::client(bind).map_err(|e| TransportError::Connect(e.to_string()))?;
            let connecting = endpoint
                .connect_with(quic.config.clone(), addr, &quic.server_name)
                .map_err(|e| TransportError::Connect(e.to_string()))?;
            let no_answer = || {
                TransportError::Connect(format!(
                    "no HTTP/3 answer on UDP {addr} within {}",
                    stampede_grpc::short_duration(timeout)
                ))
            };
            let conn = match tokio::time::timeout(timeout, connecting).await {
                Err(_) | Ok(Err(quinn::ConnectionError::TimedOut)) => return Err(no_answer()),
                Ok(Err(e)) => return Err(TransportError::Connect(handshake_phrase(&e))),
                Ok(Ok(conn)) => conn,
            };
            // The same bound on a response head as HTTP/1.1's (wire.rs).
            let (mut driver, sender) = h3::client::builder()
                .max_field_section_size(crate::wire::MAX_HEAD_BYTES as u64)
                .build(h3_quinn::Connection::new(conn))
                .await
                .map_err(|e| TransportError::Connect(format!("HTTP/3 setup failed: {e}")))?;
            let driver = tokio::spawn(async move {
                let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
            });
            Ok((endpoint, sender, driver))
        })?;
        let (endpoint, sender, driver) = connected;
        Ok(H3Conn { runtime, endpoint, sender, driver })
    }

    /// `GET` of `uri` (`https://authority/path`), with the check's headers.
    /// The connection is unusable after an error (the caller drops it).
    pub fn get(&mut self, uri: &str, user_agent: &str, timeout: Duration) -> Result<Response, TransportError> {
        let request = http::Request::get(uri)
            .header("user-agent", user_agent)
            .header("accept", "*/*")
            .body(())
            .map_err(|e| TransportError::Malformed(format!("cannot build the request for {uri}: {e}")))?;
        let sent_at = SystemTime::now();
        let start = Instant::now();
        let sender = &mut self.sender;
        let exchange = async move {
            let mut stream = sender.send_request(request).await.map_err(|e| stream_error(&e, false))?;
            stream.finish().await.map_err(|e| stream_error(&e, false))?;
            let head = stream.recv_response().await.map_err(|e| stream_error(&e, false))?;
            let mut body = Vec::new();
            while let Some(mut chunk) = stream.recv_data().await.map_err(|e| stream_error(&e, true))? {
                while chunk.has_remaining() {
                    let part = chunk.chunk();
                    if body.len() + part.len() > crate::wire::MAX_BODY_BYTES {
                        let limit = crate::wire::MAX_BODY_BYTES;
                        return Err(TransportError::Malformed(format!("body larger than the {limit}-byte limit")));
                    }
                    body.extend_from_slice(part);
                    let n = part.len();
                    chunk.advance(n);
                }
            }
            Ok::<_, TransportError>((head, body))
        };
        let (head, body) = match self.runtime.block_on(async { tokio::time::timeout(timeout, exchange).await }) {
            Err(_) => return Err(TransportError::Timeout(timeout)),
            Ok(answer) => answer?,
        };
        let status = head.status().as_u16();
        let headers: Vec<(String, Vec<u8>)> =
            head.headers().iter().map(|(n, v)| (n.as_str().to_string(), v.as_bytes().to_vec())).collect();
        let framing = framing(status, &headers, body.len());
        Ok(Response {
            version_minor: 1,
            status,
            reason: head.status().canonical_reason().unwrap_or("").to_string(),
            headers,
            body,
            framing,
            sent_at,
            received_at: SystemTime::now(),
            elapsed: start.elapsed(),
            reused_connection: false,
        })
    }
}

/// An HTTP/3 body's framing: what arrived, unless `content-length` disagrees.
fn framing(status: u16, headers: &[(String, Vec<u8>)], len: usize) -> Framing {
    let lengths: Vec<&[u8]> =
        headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("content-length")).map(|(_, v)| v.as_slice()).collect();
    let declared = match lengths.as_slice() {
        [] => None,
        [one] => match std::str::from_utf8(one).ok().and_then(|s| s.trim().parse::<u64>().ok()) {
            Some(n) => Some(n),
            None => {
                return Framing::Invalid(format!("content-length {:?} is not a number", String::from_utf8_lossy(one)))
            }
        },
        _ => return Framing::Invalid("several content-length fields".into()),
    };
    if (100..200).contains(&status) || status == 204 || status == 304 {
        return Framing::NoBody;
    }
    match declared {
        Some(n) if n != len as u64 => {
            Framing::Invalid(format!("content-length {n}, but the DATA frames carried {len} bytes"))
        }
        _ => Framing::Length(len as u64),
    }
}

/// What a failed request stream says: the server reset it, or the
/// connection ended under it (before or after the head, `mid`).
fn stream_error(e: &h3::error::StreamError, mid: bool) -> TransportError {
    match e {
        h3::error::StreamError::RemoteTerminate { code, .. } => {
            TransportError::ClosedMidResponse(format!("by resetting the request's stream ({code})"))
        }
        h3::error::StreamError::ConnectionError { .. } if !mid => TransportError::ClosedBeforeResponse,
        other => TransportError::ClosedMidResponse(format!("({other})")),
    }
}

/// Why a QUIC handshake failed, as one phrase naming the remedy.
fn handshake_phrase(e: &quinn::ConnectionError) -> String {
    // A TLS failure on either side is a QUIC CRYPTO_ERROR: 0x100 + the alert.
    let code = match e {
        quinn::ConnectionError::TransportError(t) => u64::from(t.code),
        quinn::ConnectionError::ConnectionClosed(c) => u64::from(c.error_code),
        _ => 0,
    };
    match code {
        NO_APPLICATION_PROTOCOL => "the server speaks QUIC but not HTTP/3 (it refused ALPN h3)".into(),
        0x100..=0x1ff => {
            format!("TLS: {e} (for a self-signed certificate use --insecure, or --ca FILE to trust its issuer)")
        }
        _ => format!("HTTP/3 handshake failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, value: &str) -> (String, Vec<u8>) {
        (name.into(), value.as_bytes().to_vec())
    }

    #[test]
    fn a_body_is_framed_by_what_arrived_unless_content_length_disagrees() {
        assert_eq!(framing(200, &[], 13), Framing::Length(13));
        assert_eq!(framing(200, &[h("content-length", "13")], 13), Framing::Length(13));
        assert!(matches!(framing(200, &[h("content-length", "12")], 13), Framing::Invalid(_)));
        assert!(matches!(framing(200, &[h("content-length", "x")], 1), Framing::Invalid(_)));
        assert_eq!(framing(204, &[], 0), Framing::NoBody);
    }
}
