//! Reading one HTTP/1.1 response off a connection, exactly: the head as sent,
//! the framing the server chose (`Content-Length`, chunked, or none), and the
//! body decoded accordingly. Separate from the client so the byte-level rules
//! of RFC 9112 sit in one place, apart from connection reuse and timeouts.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::transport::TransportError;
use stampede_contract::SPLIT_PAUSE;

/// Largest response head accepted, bytes: the load's limit, in every protocol.
pub(crate) use stampede_spec::limits::MAX_HEAD_BYTES;
/// Largest body accepted, bytes (the biggest built-in body, `/api/fib/10000`,
/// is about 10 MiB).
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// How long an unframed body may stay quiet before it is taken as complete.
const UNFRAMED_QUIET: Duration = Duration::from_secs(1);

/// How the response body was delimited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length: n`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// A status that never has a body (1xx, 204, 304).
    NoBody,
    /// Neither header: the body was read until the server closed or went quiet.
    Unframed,
    /// Headers that contradict each other or cannot be read; the text says how.
    Invalid(String),
}

/// A persistent connection and the bytes read past the last response.
pub(crate) struct Conn {
    pub stream: TcpStream,
    pub buf: Vec<u8>,
}

/// A short lower-case phrase for an I/O error, as people say it.
pub(crate) fn io_phrase(e: &std::io::Error) -> String {
    match e.kind() {
        ErrorKind::ConnectionRefused => "connection refused".into(),
        ErrorKind::ConnectionReset => "connection reset".into(),
        ErrorKind::TimedOut | ErrorKind::WouldBlock => "timed out".into(),
        ErrorKind::NetworkUnreachable => "network unreachable".into(),
        ErrorKind::HostUnreachable => "host unreachable".into(),
        ErrorKind::AddrNotAvailable => "address not available".into(),
        _ => e.to_string(),
    }
}

/// The parsed response head.
pub(crate) struct Head {
    pub version_minor: u8,
    pub status: u16,
    pub reason: String,
    pub headers: Vec<(String, Vec<u8>)>,
}

/// Writes the request, piece by piece with [`SPLIT_PAUSE`] between pieces,
/// and reads one whole response (skipping 1xx interim ones). A server that
/// answers and closes before the last piece is read as it answered.
pub(crate) fn exchange_on(
    conn: &mut Conn,
    pieces: &[Vec<u8>],
    deadline: Instant,
    timeout: Duration,
) -> Result<(Head, Vec<u8>, Framing), TransportError> {
    conn.stream.set_write_timeout(Some(timeout)).map_err(|e| TransportError::Connect(io_phrase(&e)))?;
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(SPLIT_PAUSE);
        }
        if conn.stream.write_all(piece).is_err() {
            if i == 0 {
                return Err(TransportError::ClosedBeforeResponse);
            }
            break;
        }
    }
    let head = loop {
        let head = read_head(conn, deadline, timeout)?;
        if !(100..200).contains(&head.status) || head.status == 101 {
            break head;
        }
    };
    let framing = framing_of(&head);
    let body = match &framing {
        Framing::NoBody => Vec::new(),
        Framing::Length(n) => read_length(conn, *n, deadline, timeout)?,
        Framing::Chunked => read_chunked(conn, deadline, timeout)?,
        Framing::Unframed | Framing::Invalid(_) => read_until_quiet(conn, deadline)?,
    };
    Ok((head, body, framing))
}

fn read_head(conn: &mut Conn, deadline: Instant, timeout: Duration) -> Result<Head, TransportError> {
    loop {
        let mut slots = [httparse::EMPTY_HEADER; 128];
        let mut parsed = httparse::Response::new(&mut slots);
        match parsed.parse(&conn.buf) {
            Ok(httparse::Status::Complete(len)) => {
                let head = Head {
                    version_minor: parsed.version.unwrap_or(1),
                    status: parsed.code.unwrap_or(0),
                    reason: parsed.reason.unwrap_or("").to_string(),
                    headers: parsed.headers.iter().map(|h| (h.name.to_string(), h.value.to_vec())).collect(),
                };
                conn.buf.drain(..len);
                return Ok(head);
            }
            Ok(httparse::Status::Partial) if conn.buf.len() > MAX_HEAD_BYTES => {
                return Err(TransportError::Malformed(format!("response head larger than {MAX_HEAD_BYTES} bytes")));
            }
            Ok(httparse::Status::Partial) => {
                let had_bytes = !conn.buf.is_empty();
                if fill(conn, deadline, timeout)? == 0 {
                    return Err(if had_bytes {
                        TransportError::ClosedMidResponse("in the middle of the response head".into())
                    } else {
                        TransportError::ClosedBeforeResponse
                    });
                }
            }
            Err(e) => return Err(TransportError::Malformed(format!("{e} in the response head"))),
        }
    }
}

/// Decides how the body is delimited, per RFC 9112 §6.3.
fn framing_of(head: &Head) -> Framing {
    if (100..200).contains(&head.status) || head.status == 204 || head.status == 304 {
        return Framing::NoBody;
    }
    let values = |name: &str| -> Vec<String> {
        head.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .flat_map(|(_, v)| String::from_utf8_lossy(v).split(',').map(|t| t.trim().to_string()).collect::<Vec<_>>())
            .collect()
    };
    let codings = values("transfer-encoding");
    let lengths = values("content-length");
    if !codings.is_empty() {
        if !codings.last().is_some_and(|c| c.eq_ignore_ascii_case("chunked")) {
            return Framing::Invalid(format!("Transfer-Encoding {:?} does not end in chunked", codings.join(", ")));
        }
        if !lengths.is_empty() {
            return Framing::Invalid("both Content-Length and Transfer-Encoding: chunked".into());
        }
        return Framing::Chunked;
    }
    if lengths.is_empty() {
        return Framing::Unframed;
    }
    let parsed: Vec<Option<u64>> = lengths
        .iter()
        .map(|l| if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) { l.parse().ok() } else { None })
        .collect();
    match parsed[0] {
        Some(n) if parsed.iter().all(|p| *p == Some(n)) => Framing::Length(n),
        _ => Framing::Invalid(format!("Content-Length {:?} is not one decimal number", lengths.join(", "))),
    }
}

fn read_length(conn: &mut Conn, len: u64, deadline: Instant, timeout: Duration) -> Result<Vec<u8>, TransportError> {
    let len = usize::try_from(len).ok().filter(|n| *n <= MAX_BODY_BYTES).ok_or_else(|| {
        TransportError::Malformed(format!("Content-Length {len} is larger than the {MAX_BODY_BYTES}-byte limit"))
    })?;
    while conn.buf.len() < len {
        if fill(conn, deadline, timeout)? == 0 {
            return Err(TransportError::ClosedMidResponse(format!(
                "after {} of {len} body bytes (Content-Length)",
                conn.buf.len()
            )));
        }
    }
    Ok(conn.buf.drain(..len).collect())
}

fn read_chunked(conn: &mut Conn, deadline: Instant, timeout: Duration) -> Result<Vec<u8>, TransportError> {
    let Conn { stream, buf } = conn;
    decode_chunked(buf, &mut |buf| fill_from(stream, buf, deadline, timeout))
}

/// Decodes a chunked body from `buf`, calling `more` to read more bytes into
/// it (0: the server closed); what follows the body stays in `buf`. Every
/// size is checked (a chunk-size line, a chunk, the body, the trailers), so
/// no server can overflow the arithmetic or grow the memory past the limits.
pub(crate) fn decode_chunked(
    buf: &mut Vec<u8>,
    more: &mut dyn FnMut(&mut Vec<u8>) -> Result<usize, TransportError>,
) -> Result<Vec<u8>, TransportError> {
    let mut body = Vec::new();
    let closed = || TransportError::ClosedMidResponse("in the middle of a chunked body".into());
    loop {
        let (consumed, size) = loop {
            match httparse::parse_chunk_size(buf) {
                Ok(httparse::Status::Complete(found)) => break found,
                Ok(httparse::Status::Partial) if buf.len() > 4096 => {
                    return Err(TransportError::Malformed("chunk size line longer than 4096 bytes".into()));
                }
                Ok(httparse::Status::Partial) => {
                    if more(buf)? == 0 {
                        return Err(closed());
                    }
                }
                Err(_) => return Err(TransportError::Malformed("invalid chunk size line".into())),
            }
        };
        buf.drain(..consumed);
        if size == 0 {
            read_trailers(buf, more)?;
            return Ok(body);
        }
        let fits = |s: usize| body.len().checked_add(s).is_some_and(|total| total <= MAX_BODY_BYTES);
        let size = usize::try_from(size).ok().filter(|s| fits(*s)).ok_or_else(|| {
            TransportError::Malformed(format!("chunked body larger than the {MAX_BODY_BYTES}-byte limit"))
        })?;
        while buf.len() < size + 2 {
            if more(buf)? == 0 {
                return Err(closed());
            }
        }
        if &buf[size..size + 2] != b"\r\n" {
            return Err(TransportError::Malformed("chunk data not followed by CRLF".into()));
        }
        body.extend_from_slice(&buf[..size]);
        buf.drain(..size + 2);
    }
}

/// The trailer fields after the last chunk, then the empty line that ends
/// the message; at most [`MAX_HEAD_BYTES`] of them.
fn read_trailers(
    buf: &mut Vec<u8>,
    more: &mut dyn FnMut(&mut Vec<u8>) -> Result<usize, TransportError>,
) -> Result<(), TransportError> {
    let mut read = 0;
    loop {
        match buf.windows(2).position(|w| w == b"\r\n") {
            Some(0) => {
                buf.drain(..2);
                return Ok(());
            }
            Some(end) => {
                read += end + 2;
                buf.drain(..end + 2);
            }
            None if read + buf.len() > MAX_HEAD_BYTES => {
                return Err(TransportError::Malformed(format!("trailers longer than {MAX_HEAD_BYTES} bytes")));
            }
            None => {
                if more(buf)? == 0 {
                    return Err(TransportError::ClosedMidResponse("in the middle of a chunked body".into()));
                }
            }
        }
    }
}

/// For a body with no usable framing: whatever arrives until the server closes
/// the connection or stays quiet for a moment.
fn read_until_quiet(conn: &mut Conn, deadline: Instant) -> Result<Vec<u8>, TransportError> {
    loop {
        let quiet_deadline = deadline.min(Instant::now() + UNFRAMED_QUIET);
        match fill(conn, quiet_deadline, UNFRAMED_QUIET) {
            Ok(0) | Err(TransportError::Timeout(_)) => return Ok(std::mem::take(&mut conn.buf)),
            Ok(_) if conn.buf.len() > MAX_BODY_BYTES => {
                return Err(TransportError::Malformed(format!("unframed body larger than {MAX_BODY_BYTES} bytes")));
            }
            Ok(_) => {}
            Err(e) => return Err(e),
        }
    }
}

/// Reads more bytes into the buffer; `Ok(0)` means the server closed.
fn fill(conn: &mut Conn, deadline: Instant, timeout: Duration) -> Result<usize, TransportError> {
    fill_from(&mut conn.stream, &mut conn.buf, deadline, timeout)
}

fn fill_from(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    deadline: Instant,
    timeout: Duration,
) -> Result<usize, TransportError> {
    let remaining = deadline.saturating_duration_since(Instant::now());
    if remaining.is_zero() {
        return Err(TransportError::Timeout(timeout));
    }
    stream.set_read_timeout(Some(remaining)).map_err(|e| TransportError::Connect(io_phrase(&e)))?;
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return Ok(n);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(TransportError::Timeout(timeout));
            }
            // A reset reads as a close: the caller knows how far it got.
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Ok(0),
            Err(e) => return Err(TransportError::ClosedMidResponse(format!("({})", io_phrase(&e)))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(status: u16, headers: &[(&str, &str)]) -> Head {
        Head {
            version_minor: 1,
            status,
            reason: String::new(),
            headers: headers.iter().map(|(n, v)| (n.to_string(), v.as_bytes().to_vec())).collect(),
        }
    }

    /// Decodes `wire` as a chunked body, read in pieces of `read` bytes.
    fn chunked(wire: &[u8], read: usize) -> Result<Vec<u8>, TransportError> {
        let mut pieces = wire.chunks(read.max(1));
        let mut buf = Vec::new();
        decode_chunked(&mut buf, &mut |buf| {
            Ok(pieces.next().map_or(0, |p| {
                buf.extend_from_slice(p);
                p.len()
            }))
        })
    }

    /// Regression: a chunk size of 2^64-1 after a first chunk overflowed
    /// the body-size check and panicked `stampede check` (inside `run`, the
    /// invalid reason became a backtrace fragment).
    #[test]
    fn a_huge_chunk_size_after_a_first_chunk_is_malformed_not_a_panic() {
        for read in [1, 7, 4096] {
            let found = chunked(b"1\r\na\r\nffffffffffffffff\r\n", read);
            assert!(matches!(&found, Err(TransportError::Malformed(m)) if m.contains("limit")), "{found:?}");
        }
        assert_eq!(chunked(b"1\r\na\r\n2\r\nbc\r\n0\r\nX-T: 1\r\n\r\n", 3).unwrap(), b"abc");
    }

    #[test]
    fn endless_trailers_are_malformed_not_memory() {
        let mut wire = b"0\r\n".to_vec();
        wire.extend(std::iter::repeat_n(b'x', 2 * MAX_HEAD_BYTES));
        let found = chunked(&wire, 16 * 1024);
        assert!(matches!(&found, Err(TransportError::Malformed(m)) if m.contains("trailers")), "{found:?}");
    }

    #[test]
    fn framing_follows_rfc_9112() {
        assert_eq!(framing_of(&head(200, &[("Content-Length", "13")])), Framing::Length(13));
        assert_eq!(framing_of(&head(200, &[("transfer-encoding", "Chunked")])), Framing::Chunked);
        assert_eq!(framing_of(&head(200, &[])), Framing::Unframed);
        assert_eq!(framing_of(&head(204, &[])), Framing::NoBody);
        assert_eq!(framing_of(&head(200, &[("Content-Length", "5"), ("Content-Length", "5")])), Framing::Length(5));
        for bad in [
            vec![("Content-Length", "5"), ("Content-Length", "6")],
            vec![("Content-Length", "+5")],
            vec![("Content-Length", "5"), ("Transfer-Encoding", "chunked")],
            vec![("Transfer-Encoding", "gzip")],
        ] {
            assert!(matches!(framing_of(&head(200, &bad)), Framing::Invalid(_)), "{bad:?}");
        }
    }
}
