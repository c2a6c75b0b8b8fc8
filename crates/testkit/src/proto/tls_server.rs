//! An HTTPS/1.1 server on rustls: keep-alive `Hello, World!` responses, or a
//! close after every N responses so reconnects (and session resumption) can
//! be counted. It counts completed handshakes and the resumed ones. It can
//! also stop speaking TLS after its first connections, so that handshake
//! failures during a run can be counted.

use rustls::{ServerConnection, StreamOwned};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::hostile::listen::Accepting;

pub struct TlsServer {
    pub addr: SocketAddr,
    pub requests: Arc<AtomicU64>,
    pub handshakes: Arc<AtomicU64>,
    pub resumed: Arc<AtomicU64>,
    _accepting: Accepting,
}

impl TlsServer {
    /// `close_every`: close the connection after this many responses (0: never).
    pub fn start(config: Arc<rustls::ServerConfig>, close_every: u64) -> TlsServer {
        Self::start_with(config, close_every, u64::MAX)
    }

    /// Like `start`, but connections after the first `tls_connections` are
    /// answered with cleartext garbage instead of a TLS handshake.
    pub fn start_with(config: Arc<rustls::ServerConfig>, close_every: u64, tls_connections: u64) -> TlsServer {
        let (requests, handshakes, resumed): (Arc<AtomicU64>, Arc<AtomicU64>, Arc<AtomicU64>) = Default::default();
        let (req, hs, res) = (requests.clone(), handshakes.clone(), resumed.clone());
        let accepted = AtomicU64::new(0);
        let accepting = Accepting::start(Accepting::bind(), move |mut tcp, _| {
            if accepted.fetch_add(1, Ordering::Relaxed) >= tls_connections {
                let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
                return;
            }
            serve(tcp, config.clone(), close_every, &req, &hs, &res);
        });
        TlsServer { addr: accepting.addr, requests, handshakes, resumed, _accepting: accepting }
    }

    pub fn url(&self, host: &str) -> String {
        format!("https://{host}:{}/", self.addr.port())
    }
}

fn serve(
    tcp: TcpStream,
    config: Arc<rustls::ServerConfig>,
    close_every: u64,
    requests: &AtomicU64,
    handshakes: &AtomicU64,
    resumed: &AtomicU64,
) {
    let _ = tcp.set_nodelay(true);
    let Ok(conn) = ServerConnection::new(config) else { return };
    let mut tls = StreamOwned::new(conn, tcp);
    while tls.conn.is_handshaking() {
        if tls.conn.complete_io(&mut tls.sock).is_err() {
            return;
        }
    }
    handshakes.fetch_add(1, Ordering::Relaxed);
    if tls.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
        resumed.fetch_add(1, Ordering::Relaxed);
    }
    let mut buf = vec![0u8; 16 * 1024];
    let mut have = 0;
    let mut answered = 0;
    loop {
        let n = match tls.read(&mut buf[have..]) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        have += n;
        let mut out = Vec::new();
        while let Some(end) = buf[..have].windows(4).position(|w| w == b"\r\n\r\n") {
            buf.copy_within(end + 4..have, 0);
            have -= end + 4;
            requests.fetch_add(1, Ordering::Relaxed);
            answered += 1;
            let close = close_every > 0 && answered % close_every == 0;
            out.extend_from_slice(if close {
                b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 13\r\n\r\nHello, World!".as_slice()
            } else {
                b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!".as_slice()
            });
            if close {
                let _ = tls.write_all(&out);
                tls.conn.send_close_notify();
                let _ = tls.flush();
                return;
            }
        }
        if tls.write_all(&out).is_err() || tls.flush().is_err() {
            return;
        }
    }
}
