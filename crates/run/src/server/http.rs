//! The one HTTP request the orchestrator makes itself: `GET` on the ready
//! path (ready.rs) until the server answers, which defines the start time
//! (exec to first ready response) and the first-request time. Deliberately tiny and
//! blocking: the load generator does the real HTTP work.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The status code of `GET path` on `host:port` (a name or an address; IPv6
/// bare or in brackets), and how long it took.
pub fn get_status_at(host: &str, port: u16, path: &str, timeout: Duration) -> io::Result<(u16, Duration)> {
    let started = Instant::now();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addr = (bare, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address")))?;
    let host_header = if bare.contains(':') { format!("[{bare}]") } else { bare.to_string() };
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    // One write: `write!` on the socket itself sends each formatted piece as
    // a segment of its own, and a server that answers after its first read
    // and closes makes the next piece fail with a broken pipe.
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host_header}:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes())?;
    let mut head = Vec::with_capacity(256);
    let mut buf = [0u8; 256];
    while !head.windows(2).any(|w| w == b"\r\n") {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed before a status line"));
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    let status = line.split_whitespace().nth(1).and_then(|code| code.parse::<u16>().ok()).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not an HTTP status line: {:?}", line.lines().next().unwrap_or("")),
        )
    })?;
    Ok((status, started.elapsed()))
}

/// A port nobody listens on now.
pub fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

/// Whether something already listens on `port` (or holds it).
pub fn port_in_use(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
        return true;
    }
    TcpListener::bind(("0.0.0.0", port)).is_err()
}

/// A server on a loopback port (returned) that answers one request with
/// `response`, for the tests of this request and of readiness.
#[cfg(test)]
pub(crate) fn answer_once(response: &'static [u8]) -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 512];
        let _ = s.read(&mut buf).unwrap();
        s.write_all(response).unwrap();
    });
    (port, server)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_status_of_a_tiny_server() {
        let held = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        assert!(port_in_use(held.local_addr().unwrap().port()));
        let (port, server) = answer_once(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n");
        let (status, took) = get_status_at("127.0.0.1", port, "/plaintext", Duration::from_secs(2)).unwrap();
        server.join().unwrap();
        assert_eq!(status, 204);
        assert!(took < Duration::from_secs(2));
        let free = free_port().unwrap();
        assert!(!port_in_use(free));
        assert!(get_status_at("127.0.0.1", free, "/", Duration::from_millis(200)).is_err());
    }
}
