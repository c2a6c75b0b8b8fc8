//! Before a cleartext `--http2` run: an HTTP/2 handshake and a PING, so
//! that a server which does not speak HTTP/2 is named in one line instead of
//! a run of failed connections. A PING, not a request: it proves the
//! protocol without giving the server work, and a server that is merely
//! slow to answer requests still passes. Blocking and done once, with the
//! same framing code as the runs (`h2_frame`).

use crate::error::LoadError;
use crate::h2_frame as frame;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

const PAYLOAD: &[u8; 8] = b"stampede";

pub fn preflight(addr: SocketAddr, url: &str, timeout: Duration) -> Result<(), LoadError> {
    exchange(addr, timeout).map_err(|why| {
        LoadError::Config(format!(
            "--http2: {url} does not speak HTTP/2 with prior knowledge ({why}); drop --http2 to load it over HTTP/1.1"
        ))
    })
}

fn exchange(addr: SocketAddr, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    let late = || format!("no answer to an HTTP/2 PING within {timeout:?}");
    let mut tcp = TcpStream::connect_timeout(&addr, timeout).map_err(|_| "connect failed".to_string())?;
    let mut out = Vec::new();
    frame::client_start(&mut out);
    frame::ping(&mut out, 0, PAYLOAD);
    tcp.set_write_timeout(Some(timeout)).and_then(|_| tcp.write_all(&out)).map_err(|_| late())?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(late());
        }
        tcp.set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
        let n = match tcp.read(&mut chunk) {
            Ok(0) => return Err("no HTTP/2 handshake".into()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Err(late())
            }
            Err(_) => return Err("no HTTP/2 handshake".into()),
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut used = 0;
        let mut first = true;
        while let Some((f, len)) = frame::parse(&buf[used..]).map_err(|_| "no HTTP/2 handshake".to_string())? {
            // The server's preface is a SETTINGS frame.
            if first && used == 0 && f.kind != frame::SETTINGS {
                return Err("no HTTP/2 handshake".into());
            }
            first = false;
            if f.kind == frame::PING && f.flags & frame::ACK != 0 && f.payload == PAYLOAD {
                return Ok(());
            }
            used += len;
        }
        buf.drain(..used);
    }
}
