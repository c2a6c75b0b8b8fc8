//! Before a `--http2` run: an HTTP/2 handshake and a PING, so that a server
//! which does not speak HTTP/2, or allows no streams, is named in one line
//! instead of a run of failed connections (over TLS too, after ALPN agreed
//! on h2: a server may agree and then allow no streams). A PING, not a request: it proves the
//! protocol without giving the server work, and a server that is merely
//! slow to answer requests still passes. Blocking and done once, with the
//! same framing code as the runs (`http2::frame`).

use crate::http2::frame;
use crate::http2::session::NO_STREAMS;
use crate::tls::TlsShared;
use stampede_spec::error::LoadError;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

const PAYLOAD: &[u8; 8] = b"stampede";

pub fn preflight(addr: SocketAddr, url: &str, timeout: Duration) -> Result<(), LoadError> {
    let exchanged = TcpStream::connect_timeout(&addr, timeout)
        .map_err(|_| "connect failed".to_string())
        .and_then(|mut tcp| exchange(&mut tcp, timeout));
    exchanged.map_err(|why| {
        said(url, why, "does not speak HTTP/2 with prior knowledge", "; drop --http2 to load it over HTTP/1.1")
    })
}

/// The same over TLS, once ALPN agreed on h2: a server may agree and then
/// allow no streams.
pub fn preflight_tls(tls: &TlsShared, addr: SocketAddr, url: &str, timeout: Duration) -> Result<(), LoadError> {
    let mut stream = tls.connect_blocking(addr, url, timeout)?;
    let exchanged = exchange(&mut stream, timeout);
    stream.conn.send_close_notify();
    let _ = stream.flush();
    exchanged.map_err(|why| said(url, why, "agreed on h2 by ALPN but does not speak HTTP/2", ""))
}

/// A server allowing no streams is said the same whatever the transport;
/// anything else failed is `what`, with `then` what to do.
fn said(url: &str, why: String, what: &str, then: &str) -> LoadError {
    if why == NO_STREAMS {
        LoadError::no_streams("--http2", url, "SETTINGS_MAX_CONCURRENT_STREAMS")
    } else {
        LoadError::Config(format!("--http2: {url} {what} ({why}){then}"))
    }
}

/// A blocking connection whose socket's timeouts can be set.
pub(crate) trait Wire: Read + Write {
    fn tcp(&self) -> &TcpStream;
}

impl Wire for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

impl Wire for rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    fn tcp(&self) -> &TcpStream {
        &self.sock
    }
}

fn exchange(wire: &mut impl Wire, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    let late = || format!("no answer to an HTTP/2 PING within {timeout:?}");
    let mut out = Vec::new();
    frame::client_start(&mut out);
    frame::ping(&mut out, 0, PAYLOAD);
    let sent =
        wire.tcp().set_write_timeout(Some(timeout)).and_then(|_| wire.write_all(&out)).and_then(|_| wire.flush());
    sent.map_err(|_| late())?;
    let mut answer = Answer::default();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = read_before(wire, &mut chunk, deadline, &late)?;
        if answer.feed(&chunk[..n])? {
            return Ok(());
        }
    }
}

/// One read before `deadline`: how many bytes came, or why none did
/// (`late()` once the deadline passed; a close or an error is no handshake).
pub(crate) fn read_before(
    wire: &mut impl Wire,
    buf: &mut [u8],
    deadline: Instant,
    late: &dyn Fn() -> String,
) -> Result<usize, String> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(late());
        }
        wire.tcp().set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
        match wire.read(buf) {
            Ok(0) => return Err("no HTTP/2 handshake".into()),
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Err(late())
            }
            Err(_) => return Err("no HTTP/2 handshake".into()),
        }
    }
}

/// What the server sent so far, frame by frame, however its writes were
/// split across reads (Go's net/http writes its SETTINGS, the SETTINGS ACK,
/// a WINDOW_UPDATE and the PING ACK one by one).
#[derive(Default)]
struct Answer {
    buf: Vec<u8>,
    frames: usize,
}

impl Answer {
    /// Adds the bytes of one read: true once the PING's ACK came, an error
    /// when the server's first frame is not its SETTINGS preface.
    fn feed(&mut self, bytes: &[u8]) -> Result<bool, String> {
        self.buf.extend_from_slice(bytes);
        let mut used = 0;
        while let Some((f, len)) = frame::parse(&self.buf[used..]).map_err(|_| "no HTTP/2 handshake".to_string())? {
            if self.frames == 0 && f.kind != frame::SETTINGS {
                return Err("no HTTP/2 handshake".into());
            }
            self.frames += 1;
            if f.kind == frame::SETTINGS && f.flags & frame::ACK == 0 && allows_no_streams(f.payload) {
                return Err(NO_STREAMS.into());
            }
            if f.kind == frame::PING && f.flags & frame::ACK != 0 && f.payload == PAYLOAD {
                return Ok(true);
            }
            used += len;
        }
        self.buf.drain(..used);
        Ok(false)
    }
}

/// Whether a SETTINGS payload sets SETTINGS_MAX_CONCURRENT_STREAMS to 0.
fn allows_no_streams(payload: &[u8]) -> bool {
    payload
        .chunks_exact(6)
        .any(|p| u16::from_be_bytes([p[0], p[1]]) == frame::SETTINGS_MAX_CONCURRENT_STREAMS && p[2..] == [0, 0, 0, 0])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's h2c answer to the preflight: SETTINGS, SETTINGS ACK,
    /// WINDOW_UPDATE, PING ACK.
    fn go_answer() -> Vec<u8> {
        let mut out = Vec::new();
        frame::settings(&mut out, &[(frame::SETTINGS_MAX_FRAME_SIZE, 1 << 20)]);
        frame::settings_ack(&mut out);
        frame::window_update(&mut out, 0, 983_041);
        frame::ping(&mut out, frame::ACK, PAYLOAD);
        out
    }

    #[test]
    fn go_net_http_handshake_split_across_reads_is_http2() {
        // Broke: the first frame of every read had to be SETTINGS, so Go's
        // WINDOW_UPDATE arriving first in a second read failed the preflight.
        let bytes = go_answer();
        for split in 1..bytes.len() {
            let mut answer = Answer::default();
            assert_eq!(answer.feed(&bytes[..split]), Ok(false), "split at {split}");
            assert_eq!(answer.feed(&bytes[split..]), Ok(true), "split at {split}");
        }
    }

    #[test]
    fn a_first_frame_other_than_settings_is_no_handshake() {
        let mut out = Vec::new();
        frame::ping(&mut out, frame::ACK, PAYLOAD);
        assert_eq!(Answer::default().feed(&out), Err("no HTTP/2 handshake".into()));
        let http1 = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(Answer::default().feed(http1), Err("no HTTP/2 handshake".into()));
    }
}
