//! The servers that misbehave on purpose, so the load engine's counts can be
//! checked against the truth on every engine and mode (issue: numbers that
//! survive hostile servers). Here: one HTTP/1.1 server, cleartext or TLS,
//! whose every misbehaviour is a `Trick`, one parameter of one server, so
//! each test differs from a correct server exactly where its name says (a
//! correct server is `Trick::None`); over TLS it also counts handshakes and
//! resumed sessions. The servers whose protocol or bookkeeping differs are in
//! src/proto/ (pipelining, HTTP/2, HTTP/3, gRPC); the pipelining one stands
//! on the same accept loop ([`listen::Accepting`]).
//!
//! What it counts: complete requests (head and `Content-Length` body),
//! responses written whole, connections, and connections whose first bytes
//! were not the start of a request (the rest of an old request sent on a
//! new socket). It speaks cleartext, or TLS (`start_tls`) with the same
//! tricks, so the HTTPS engine meets the same misbehaviour.

pub mod listen;

use rustls::{ServerConnection, StreamOwned};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};

use listen::Accepting;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub enum Trick {
    /// A correct keep-alive server answering `Hello, World!`.
    None,
    /// The head in two writes `gap` apart, then a 200 KB body.
    SplitHead { gap: Duration },
    /// A 200 KB chunked body whose first chunk-size line is split across
    /// two writes `gap` apart.
    SplitChunkLine { gap: Duration },
    /// Answers as soon as a request head arrives, without reading its body;
    /// then reads (and drops) whatever else comes on that connection.
    EarlyAnswer,
    /// Closes after every response without saying so (no `Connection: close`).
    CloseSilently,
    /// Answers `n` requests on a connection, the last with `Connection:
    /// close`, and closes (lingering): pipelined requests behind it are
    /// never processed.
    CloseAfter(u64),
    /// Answers every request twice, in one write.
    TwoAnswers,
    /// Waits this long before each answer.
    Delay(Duration),
    /// Speaks HTTP/2 just enough to pass `--http2`'s preflight (SETTINGS, a
    /// PING ACK), then sends a HEADERS frame and CONTINUATION frames without
    /// end: a header block that never ends.
    ContinuationFlood,
    /// Answers until this long after the server started, then reads and
    /// answers nothing more (keeping its connections open) until dropped.
    HangAfter(Duration),
    /// The body in three chunks.
    Chunked,
    /// Every answer is a 500.
    Status500,
    /// Bytes that are not HTTP, then a close.
    Malformed,
    /// Reads requests, never answers.
    Silent,
    /// Answers at once, except that nothing is answered during the first
    /// `stall` of every `period` (from the server's start): requests
    /// arriving then wait for its end.
    Hiccup { stall: Duration, period: Duration },
    /// Over TLS: a correct server for the first `n` connections, then a
    /// cleartext HTTP 400 instead of a handshake on every later one.
    PlainAfter(u64),
    /// Waits this long on every new connection before anything else (over
    /// TLS: before its handshake, so the client's connection takes that
    /// long to open), then answers as `None`.
    SlowStart(Duration),
    /// Accepts `n` connections (a client's pre-flight check, say) and
    /// answers them as `None`, then stops listening: every later connect is
    /// refused.
    GoneAfter(u64),
}

#[derive(Default)]
pub struct Seen {
    /// Complete requests read (head and body).
    pub requests: AtomicU64,
    /// Responses written whole (a second answer to one request counts too).
    pub responses: AtomicU64,
    pub connections: AtomicU64,
    /// Connections open at this moment: a client that leaks sockets shows here.
    pub open: AtomicU64,
    /// Connections whose first bytes were not a request line.
    pub bad_starts: AtomicU64,
    /// TLS handshakes completed, and those that resumed a session.
    pub handshakes: AtomicU64,
    pub resumed: AtomicU64,
    /// Every complete request, in the order read (per connection).
    pub log: Mutex<Vec<Logged>>,
}

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Logged {
    fn of(head: &[u8], body: &[u8]) -> Logged {
        let head = String::from_utf8_lossy(head);
        let mut lines = head.split("\r\n");
        let mut first = lines.next().unwrap_or_default().split(' ');
        let (method, path) =
            (first.next().unwrap_or_default().to_string(), first.next().unwrap_or_default().to_string());
        let headers =
            lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.to_string(), v.trim().to_string())).collect();
        Logged { method, path, headers, body: body.to_vec() }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

pub struct Hostile {
    pub addr: SocketAddr,
    pub seen: Arc<Seen>,
    tls: bool,
    _accepting: Accepting,
}

/// `server.requests`, `server.open`: the counts read like the server's own.
impl std::ops::Deref for Hostile {
    type Target = Seen;
    fn deref(&self) -> &Seen {
        &self.seen
    }
}

impl Hostile {
    pub fn start(trick: Trick) -> Hostile {
        Hostile::start_on(Accepting::bind(), trick)
    }

    /// The same over TLS with `config`: its URLs are `https://`.
    pub fn start_tls(trick: Trick, config: Arc<rustls::ServerConfig>) -> Hostile {
        Hostile::serve(Accepting::bind(), trick, Some(config))
    }

    /// Serves on `listener` (e.g. one bound in another network namespace).
    pub fn start_on(listener: TcpListener, trick: Trick) -> Hostile {
        Hostile::serve(listener, trick, None)
    }

    fn serve(listener: TcpListener, trick: Trick, tls: Option<Arc<rustls::ServerConfig>>) -> Hostile {
        let seen = Arc::new(Seen::default());
        let sn = seen.clone();
        let born = Instant::now();
        let https = tls.is_some();
        let most = match trick {
            Trick::GoneAfter(n) => n,
            _ => u64::MAX,
        };
        let accepting = Accepting::start_at_most(listener, most, move |conn, stop| {
            let accepted = sn.connections.fetch_add(1, Ordering::Relaxed) + 1;
            sn.open.fetch_add(1, Ordering::Relaxed);
            let _ = conn.set_nodelay(true);
            let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
            if let Trick::SlowStart(delay) = trick {
                std::thread::sleep(delay);
            }
            match tls.clone().map(ServerConnection::new) {
                None => serve(conn, trick, &sn, stop, born),
                Some(_) if matches!(trick, Trick::PlainAfter(n) if accepted > n) => {
                    let mut conn = conn;
                    let _ = conn.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
                }
                Some(Ok(tls)) => {
                    if let Some(tls) = handshake(StreamOwned::new(tls, conn), &sn) {
                        serve(tls, trick, &sn, stop, born);
                    }
                }
                Some(Err(_)) => {}
            }
            sn.open.fetch_sub(1, Ordering::Relaxed);
        });
        Hostile { addr: accepting.addr, seen, tls: https, _accepting: accepting }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}://{}{}", if self.tls { "https" } else { "http" }, self.addr, path)
    }

    /// The URL of `/` by another name for this machine (`localhost`, for a
    /// certificate that names it).
    pub fn url_at(&self, host: &str) -> String {
        format!("{}://{host}:{}/", if self.tls { "https" } else { "http" }, self.addr.port())
    }

    pub fn get(&self, what: fn(&Seen) -> &AtomicU64) -> u64 {
        what(&self.seen).load(Ordering::Relaxed)
    }

    /// The requests read so far.
    pub fn log(&self) -> Vec<Logged> {
        self.seen.log.lock().unwrap().clone()
    }
}

/// The answer of a correct server (`Trick::None`), byte for byte.
pub const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!";
const BIG: usize = 200_000;

/// A connection the server speaks on: TCP, or TLS over it.
trait Wire: Read + Write {
    /// Ends this side's sending, the connection still read (a lingering close).
    fn end_writes(&mut self);
}

impl Wire for TcpStream {
    fn end_writes(&mut self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

impl Wire for StreamOwned<ServerConnection, TcpStream> {
    fn end_writes(&mut self) {
        self.conn.send_close_notify();
        let _ = self.flush();
    }
}

/// Completes a TLS handshake, counting it (and whether it resumed a
/// session); `None` when it fails.
fn handshake(
    mut tls: StreamOwned<ServerConnection, TcpStream>,
    seen: &Seen,
) -> Option<StreamOwned<ServerConnection, TcpStream>> {
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock).ok()?;
    }
    seen.handshakes.fetch_add(1, Ordering::Relaxed);
    if tls.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
        seen.resumed.fetch_add(1, Ordering::Relaxed);
    }
    Some(tls)
}

fn serve(mut conn: impl Wire, trick: Trick, seen: &Seen, stop: &AtomicBool, born: Instant) {
    if let Trick::ContinuationFlood = trick {
        return flood(conn, stop);
    }
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut first = true;
    let mut answered = 0u64;
    // Where the next request starts in `buf`: a cursor, not a drain per
    // request, so a deep pipelined batch costs linear time.
    let mut pos = 0;
    loop {
        if pos > 0 && pos == buf.len() {
            buf.clear();
            pos = 0;
        }
        // One request: its head, then its body by Content-Length.
        let head_end = loop {
            if let Some(end) = find(&buf[pos..], b"\r\n\r\n") {
                break pos + end + 4;
            }
            if first && buf.len() >= 4 && !starts_like_a_request(&buf) {
                seen.bad_starts.fetch_add(1, Ordering::Relaxed);
                first = false;
            }
            if pos > 0 {
                buf.drain(..pos);
                pos = 0;
            }
            match conn.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        if first && !starts_like_a_request(&buf) {
            seen.bad_starts.fetch_add(1, Ordering::Relaxed);
        }
        first = false;
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let length = content_length(&buf[pos..head_end]);
        if let Trick::HangAfter(after) = trick {
            if born.elapsed() >= after {
                // Reads nothing more: the client's requests stay unanswered.
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                return;
            }
        }
        if let Trick::EarlyAnswer = trick {
            seen.requests.fetch_add(1, Ordering::Relaxed);
            if write(&mut conn, OK, seen) {
                // Never reads the body as a request: drain to the end.
                while matches!(conn.read(&mut chunk), Ok(n) if n > 0) {}
            }
            return;
        }
        while buf.len() < head_end + length {
            match conn.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        seen.log.lock().unwrap().push(Logged::of(&buf[pos..head_end], &buf[head_end..head_end + length]));
        pos = head_end + length;
        seen.requests.fetch_add(1, Ordering::Relaxed);
        answered += 1;
        if !respond(&mut conn, trick, answered, seen, born) {
            return;
        }
    }
}

/// Writes the answer to one request; false when the connection ends here.
fn respond(conn: &mut impl Wire, trick: Trick, answered: u64, seen: &Seen, born: Instant) -> bool {
    match trick {
        Trick::None
        | Trick::EarlyAnswer
        | Trick::HangAfter(_)
        | Trick::ContinuationFlood
        | Trick::PlainAfter(_)
        | Trick::SlowStart(_)
        | Trick::GoneAfter(_) => write(conn, OK, seen),
        Trick::SplitHead { gap } => {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {BIG}\r\n\r\n");
            let (a, b) = head.as_bytes().split_at(12);
            if conn.write_all(a).is_err() {
                return false;
            }
            std::thread::sleep(gap);
            let mut rest = b.to_vec();
            rest.extend(std::iter::repeat_n(b'x', BIG));
            write(conn, &rest, seen)
        }
        Trick::SplitChunkLine { gap } => {
            let first = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}", BIG);
            let (a, b) = first.split_at(first.len() - 2);
            let mut head = a.as_bytes().to_vec();
            head.extend_from_slice(b.as_bytes().split_at(1).0);
            if conn.write_all(&head).is_err() {
                return false;
            }
            std::thread::sleep(gap);
            let mut rest = b.as_bytes().split_at(1).1.to_vec();
            rest.extend_from_slice(b"\r\n");
            rest.extend(std::iter::repeat_n(b'y', BIG));
            rest.extend_from_slice(b"\r\n0\r\n\r\n");
            write(conn, &rest, seen)
        }
        Trick::CloseSilently => {
            write(conn, OK, seen);
            false
        }
        Trick::CloseAfter(n) if answered >= n => {
            write(conn, b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", seen);
            // A lingering close, as nginx does: closing with requests unread
            // would make the kernel send a reset, which can destroy answers
            // still on their way to the client.
            conn.end_writes();
            let mut sink = [0u8; 16 * 1024];
            while matches!(conn.read(&mut sink), Ok(n) if n > 0) {}
            false
        }
        Trick::CloseAfter(_) => write(conn, OK, seen),
        Trick::TwoAnswers => {
            let twice = [OK, OK].concat();
            let ok = conn.write_all(&twice).is_ok();
            if ok {
                seen.responses.fetch_add(2, Ordering::Relaxed);
            }
            ok
        }
        Trick::Delay(d) => {
            std::thread::sleep(d);
            write(conn, OK, seen)
        }
        Trick::Chunked => write(
            conn,
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n2\r\n, \r\n6\r\nWorld!\r\n0\r\n\r\n",
            seen,
        ),
        Trick::Status500 => write(conn, b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops", seen),
        Trick::Malformed => {
            write(conn, b"this is not http\r\n\r\n", seen);
            false
        }
        Trick::Silent => true,
        Trick::Hiccup { stall, period } => {
            let phase = born.elapsed().as_nanos() % period.as_nanos();
            if phase < stall.as_nanos() {
                std::thread::sleep(Duration::from_nanos((stall.as_nanos() - phase) as u64));
            }
            write(conn, OK, seen)
        }
    }
}

/// HTTP/2 frames: SETTINGS, a PING ACK of the preflight's payload, then a
/// header block on stream 1 continued until the client goes away.
fn flood(mut conn: impl Wire, stop: &AtomicBool) {
    let frame = |kind: u8, flags: u8, stream: u8, payload: &[u8]| {
        let n = payload.len();
        let mut f = vec![(n >> 16) as u8, (n >> 8) as u8, n as u8, kind, flags, 0, 0, 0, stream];
        f.extend_from_slice(payload);
        f
    };
    let mut start = frame(4, 0, 0, &[]);
    start.extend(frame(6, 1, 0, b"stampede"));
    start.extend(frame(1, 0, 1, &[0u8; 16_384]));
    let more = frame(9, 0, 1, &[0u8; 16_384]);
    if conn.write_all(&start).is_err() {
        return;
    }
    while !stop.load(Ordering::Relaxed) && conn.write_all(&more).is_ok() {}
}

fn write(conn: &mut impl Wire, bytes: &[u8], seen: &Seen) -> bool {
    let ok = conn.write_all(bytes).is_ok();
    if ok {
        seen.responses.fetch_add(1, Ordering::Relaxed);
    }
    ok
}

/// `METHOD /…`: an upper-case token, a space, then a target.
fn starts_like_a_request(buf: &[u8]) -> bool {
    let method = buf.iter().take_while(|b| b.is_ascii_uppercase()).count();
    method > 0 && buf.get(method) == Some(&b' ') && buf.get(method + 1) == Some(&b'/')
}

fn content_length(head: &[u8]) -> usize {
    let head = String::from_utf8_lossy(head);
    head.lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.trim().eq_ignore_ascii_case("content-length").then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
