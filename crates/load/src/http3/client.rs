//! What every HTTP/3 connection of a run shares, built once: the QUIC client
//! configuration (the run's rustls config, ALPN `h3`, transport limits) and
//! the request's frames; and the check made once before the run, a blocking
//! handshake, so that a server without HTTP/3 is one line of error and exit
//! 2 rather than a run of timeouts: nothing on the UDP port (the kernel's
//! "port unreachable" reaches a connected socket at once), no answer within
//! the timeout, a certificate not trusted, ALPN without `h3`, or a server
//! whose transport parameters allow no request stream (a silent stall).

use crate::config::LoadConfig;
use crate::http3::frame as h3_frame;
use crate::http3::qpack as h3_qpack;
use crate::tls::{TlsOptions, TlsShared};
use quinn_proto::crypto::rustls::{HandshakeData, QuicClientConfig};
use quinn_proto::{ClientConfig, ConnectionError, Endpoint, EndpointConfig, Event, IdleTimeout, TransportConfig};
use stampede_spec::error::LoadError;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The TLS alert a server sends when no protocol offered by ALPN suits it
/// (no_application_protocol, 120), as a QUIC CRYPTO_ERROR (0x100 + alert).
const NO_APPLICATION_PROTOCOL: u64 = 0x100 + 120;

/// What every HTTP/3 connection of a run shares (as `TlsShared` does every
/// TLS connection's).
pub struct QuicShared {
    pub client: ClientConfig,
    /// The SNI and certificate name.
    pub server_name: String,
    /// The run's request: its HEADERS (and DATA) frames.
    pub request: Vec<u8>,
    pub https: bool,
    pub authority: String,
}

impl QuicShared {
    pub fn new(cfg: &LoadConfig) -> Result<QuicShared, LoadError> {
        let t = &cfg.target;
        let opts = TlsOptions { alpn: vec!["h3".into()], ..cfg.tls.clone() };
        let tls = TlsShared::new(&opts, &t.host, &t.url)?;
        let quic = QuicClientConfig::try_from(tls.config.clone())
            .map_err(|e| LoadError::Config(format!("--http3: TLS setup for QUIC failed: {e}")))?;
        let mut transport = TransportConfig::default();
        // A server that stops answering ends its connections after --timeout
        // (counted as timeouts); pings keep a quiet connection of the open
        // loop alive in between.
        let idle = cfg.timeout.max(Duration::from_millis(100));
        transport.max_idle_timeout(IdleTimeout::try_from(idle).ok());
        transport.keep_alive_interval(Some(idle / 3));
        let mut client = ClientConfig::new(Arc::new(quic));
        client.transport_config(Arc::new(transport));
        let mut block = Vec::new();
        h3_qpack::encode(&mut block, &cfg.method, true, &t.host_header, &t.path, &cfg.headers);
        let mut request = Vec::new();
        h3_frame::request(&mut request, &block, &cfg.body);
        let server_name = t.host.trim_start_matches('[').trim_end_matches(']').to_string();
        Ok(QuicShared { client, server_name, request, https: true, authority: t.host_header.clone() })
    }

    /// One blocking handshake with `addr`, before the run.
    pub fn preflight(&self, addr: SocketAddr, url: &str, timeout: Duration) -> Result<(), LoadError> {
        let no_h3 = |why: String| LoadError::Connect { url: url.into(), reason: format!("no HTTP/3 answer: {why}") };
        let local: SocketAddr = match addr {
            SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
            SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let socket = UdpSocket::bind(local)?;
        socket.connect(addr)?;
        let mut endpoint = Endpoint::new(Arc::new(EndpointConfig::default()), None, false, None);
        let start = Instant::now();
        let (handle, mut conn) = endpoint
            .connect(start, self.client.clone(), addr, &self.server_name)
            .map_err(|e| no_h3(format!("cannot start a QUIC connection: {e}")))?;
        let deadline = start + timeout;
        let mut out = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let now = Instant::now();
            while let Some(t) = conn.poll_transmit(now, 1, &mut out) {
                let _ = socket.send(&out[..t.size]);
                out.clear();
            }
            while let Some(event) = conn.poll() {
                match event {
                    Event::Connected => {
                        let alpn = conn
                            .crypto_session()
                            .handshake_data()
                            .and_then(|d| d.downcast::<HandshakeData>().ok())
                            .and_then(|d| d.protocol);
                        let verdict = if alpn.as_deref() != Some(b"h3") {
                            Err(LoadError::Tls {
                                url: url.into(),
                                reason: "the server did not agree to h3 by ALPN: it does not speak HTTP/3".into(),
                            })
                        } else if conn.streams().open(quinn_proto::Dir::Bi).is_none() {
                            // Its transport parameters came with the handshake.
                            Err(LoadError::no_streams("--http3", url, "initial_max_streams_bidi"))
                        } else {
                            Ok(())
                        };
                        conn.close(now, 0u32.into(), bytes::Bytes::new());
                        while let Some(t) = conn.poll_transmit(now, 1, &mut out) {
                            let _ = socket.send(&out[..t.size]);
                            out.clear();
                        }
                        return verdict;
                    }
                    Event::ConnectionLost { reason } => return Err(self.refused(url, reason)),
                    _ => {}
                }
            }
            if now >= deadline {
                return Err(no_h3(format!("nothing answered QUIC on UDP {addr} within {timeout:?}")));
            }
            let wake = conn.poll_timeout().map_or(deadline, |t| t.min(deadline));
            socket.set_read_timeout(Some(wake.saturating_duration_since(now).max(Duration::from_millis(1))))?;
            match socket.recv(&mut buf) {
                Ok(n) => {
                    let data = bytes::BytesMut::from(&buf[..n]);
                    let mut response = Vec::new();
                    if let Some(quinn_proto::DatagramEvent::ConnectionEvent(h, e)) =
                        endpoint.handle(Instant::now(), addr, None, None, data, &mut response)
                    {
                        if h == handle {
                            conn.handle_event(e);
                        }
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    return Err(no_h3(format!(
                        "nothing listens on UDP {addr} (HTTP/3 runs over UDP; drop --http3 for HTTP/1.1 or --http2)"
                    )));
                }
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(e) => return Err(no_h3(e.to_string())),
            }
            conn.handle_timeout(Instant::now());
            while let Some(ev) = conn.poll_endpoint_events() {
                if let Some(e) = endpoint.handle_event(handle, ev) {
                    conn.handle_event(e);
                }
            }
        }
    }

    /// Why the handshake failed, as one error.
    fn refused(&self, url: &str, reason: ConnectionError) -> LoadError {
        let tls = |reason: String| LoadError::Tls { url: url.into(), reason };
        match crypto_alert(&reason) {
            Some(NO_APPLICATION_PROTOCOL) => {
                tls("the server did not agree to h3 by ALPN: it does not speak HTTP/3".into())
            }
            Some(_) => tls(format!("{reason} (use --insecure or --ca FILE for a self-signed server)")),
            None if matches!(reason, ConnectionError::TimedOut) => {
                LoadError::Connect { url: url.into(), reason: "no HTTP/3 answer: the QUIC handshake timed out".into() }
            }
            None => LoadError::Connect { url: url.into(), reason: format!("no HTTP/3 answer: {reason}") },
        }
    }
}

/// The TLS failure that ended a connection, if one did, on either side: its
/// QUIC CRYPTO_ERROR code (0x100 + the TLS alert).
pub fn crypto_alert(reason: &ConnectionError) -> Option<u64> {
    let code = match reason {
        ConnectionError::TransportError(e) => u64::from(e.code),
        ConnectionError::ConnectionClosed(c) => u64::from(c.error_code),
        _ => return None,
    };
    (0x100..0x200).contains(&code).then_some(code)
}
