//! Small network helpers for tests: a free port for a server we start, and a
//! bare `GET` that reports only the status, for readiness polling.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// A port that was free a moment ago (bound to port 0, then released).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local address of a bound listener").port()
}

/// The status code of `GET path` on 127.0.0.1:`port`, or `None` if no
/// complete status line arrives within `timeout`.
pub fn get_status(port: u16, path: &str, timeout: Duration) -> Option<u16> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&addr, timeout).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 512];
    while !buf.windows(2).any(|w| w == b"\r\n") {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let line = String::from_utf8_lossy(&buf);
    let mut parts = line.split(' ');
    parts.next().filter(|v| v.starts_with("HTTP/1."))?;
    parts.next()?.trim().parse().ok()
}

/// Polls `GET path` until it answers `want` or `deadline` passes; returns how
/// long it took, or `None` on timeout or when `gave_up()` says to stop early.
pub fn wait_for_status(
    port: u16,
    path: &str,
    want: u16,
    deadline: Duration,
    mut gave_up: impl FnMut() -> bool,
) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if get_status(port, path, Duration::from_millis(1000)) == Some(want) {
            return Some(start.elapsed());
        }
        if gave_up() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}
