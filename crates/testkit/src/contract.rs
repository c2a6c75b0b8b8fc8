//! A small threaded HTTP/1.1 server that implements one of the built-in
//! contracts exactly (the `stampede` API of apps/CONTRACT.md, the original
//! `sequence` API and nothing else, TechEmpower's `tfb` plaintext and
//! json, or an arena's endpoints, arena.rs), written here so `stampede check` can be tested against a server
//! known to be right, and against the same server with one deliberate fault at
//! a time. The API and each fault are parameters rather than copies of the
//! server, so every variant differs from the correct one in exactly the way
//! its name says.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use crate::arena::{self, Reply};
use num_bigint::BigUint;
use num_traits::ToPrimitive;

/// Which contract the server implements, and nothing more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// apps/CONTRACT.md: every endpoint, `Server` and `Date` on every response.
    Stampede,
    /// `/api/count/{n}` and `/api/fib/{n}` only, no `Server` or `Date`.
    Sequence,
    /// `/plaintext` and `/json` only, with `Server` and `Date`.
    Tfb,
    /// [`Api::Tfb`] at the server's own URLs, as a TechEmpower
    /// implementation declares them: `/hello/text` and `/hello/json?pretty=`
    /// (the other two paths are 404).
    TfbOwnUrls,
    /// HttpArena's HTTP/1.1 profiles: baseline, pipelined, json, json-comp, upload.
    HttpArena,
    /// the-benchmarker's web-frameworks: `GET /`, `GET /user/:id`, `POST /user`.
    WebFrameworks,
}

/// The one way a variant breaks the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A correct server.
    None,
    /// `/plaintext` answers `Hello, World!\n` (one byte too many).
    PlaintextNewline,
    /// No `Date` header on any response.
    NoDate,
    /// `/values/-1` answers 200 `-1` instead of 400.
    AcceptsNegativeId,
    /// `Date` is a fixed day in 1994.
    StaleDate,
    /// `/api/fib` numbers go through a 64-bit float, as a naive JavaScript
    /// server would: F89 comes out as `1779979416004714200`.
    FibAsDouble,
    /// 404 responses carry no `Server` header.
    NoServerOn404,
    /// One digit of F(4000) is wrong (the 400th of its 836).
    FibWrongDigit,
    /// `/api/count/{n}` ends with a space: `1 2 3 4 5 `.
    CountTrailingSpace,
    /// No `Server` header on any response.
    NoServer,
    /// `Date` is the server's start time, never updated (a cached date).
    FrozenDate,
    /// `/sleep/{ms}` sleeps holding one global lock: one sleep at a time, as
    /// an event loop that blocks while it sleeps would serve them.
    SerialSleep,
    /// Error answers (400, 404) carry neither Content-Length nor chunked
    /// encoding and end by closing the connection, as the original
    /// api_runtime_compare Netty server sends them.
    CloseDelimitedErrors,
    /// Error answers are HTTP/1.0 (framed, then the connection closes).
    Http10Errors,
    /// `tfb` answers `Hello, world!` (lower-case w), as 51 TechEmpower
    /// implementations do, and `{"Message": …}`.
    LowerCaseHello,
    /// HttpArena: a `POST /baseline11` answers what the first POST to that
    /// URL got, whatever its body (a cached answer).
    CachedAnswer,
    /// HttpArena: a chunked body is read and left out of the sum.
    ChunkedBodyIgnored,
    /// HttpArena: a Content-Length body is what one `read` after the head
    /// returned, whole or not.
    ReadsBodyOnce,
    /// HttpArena: `/json` is gzipped even without Accept-Encoding.
    CompressesUnasked,
    /// HttpArena: `/baseline11` sums end in `\n`.
    TrailingNewline,
    /// web-frameworks: `/user/:id` answers `0` for every id.
    FixedUserId,
    /// web-frameworks: `POST /user` answers 201 Created.
    Created201,
}

/// What a server's connections share: the lock of `/lock` and `/sleep`
/// ([`Fault::SerialSleep`]), and the answers [`Fault::CachedAnswer`] keeps.
#[derive(Default)]
struct Shared {
    lock: Mutex<()>,
    cache: Mutex<HashMap<String, Vec<u8>>>,
}

/// A running test server; stops when dropped.
pub struct TestServer {
    port: u16,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl TestServer {
    /// The `stampede` API on 127.0.0.1 on a free port, until dropped.
    pub fn start(fault: Fault) -> TestServer {
        TestServer::serving(Api::Stampede, fault)
    }

    /// Binds 127.0.0.1 on a free port and serves `api` until dropped.
    pub fn serving(api: Api, fault: Fault) -> TestServer {
        let started = SystemTime::now();
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("bound address").port();
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared::default());
        let stopping = stop.clone();
        let acceptor = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let shared = shared.clone();
                let server = Served { api, fault, started };
                std::thread::spawn(move || serve_connection(stream, server, &shared));
            }
        });
        TestServer { port, stop, acceptor: Some(acceptor) }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept so the loop sees the flag.
        let _ = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// What one server is: its API, its fault and when it started.
#[derive(Clone, Copy)]
struct Served {
    api: Api,
    fault: Fault,
    started: SystemTime,
}

/// Answers requests on one keep-alive connection until the client closes it
/// or stays idle for 10 s.
fn serve_connection(mut stream: TcpStream, server: Served, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end + 4);
        let target = head.lines().next().and_then(|line| line.split(' ').nth(1)).unwrap_or("/").to_string();
        let path = target.split('?').next().unwrap_or("/");
        if matches!(server.api, Api::HttpArena | Api::WebFrameworks) {
            let Some(body) = arena::read_body(&head, &mut buf, &mut stream, server.fault) else { return };
            let reply = match server.api {
                Api::HttpArena => arena::route_httparena(&head, &body, server.fault, &shared.cache),
                _ => arena::route_web_frameworks(&head, server.fault),
            };
            if stream.write_all(&encode_reply(&reply, server)).is_err() || reply.close {
                return;
            }
            continue;
        }
        let (status, content_type, body) = match server.api {
            Api::Stampede => route(path, server.fault, &shared.lock),
            Api::Sequence => route_sequence(path, server.fault),
            Api::Tfb => route_tfb(path, server.fault),
            Api::TfbOwnUrls => match target.as_str() {
                "/hello/text" => route_tfb("/plaintext", server.fault),
                "/hello/json?pretty=" => route_tfb("/json", server.fault),
                _ => route_tfb("/elsewhere", server.fault),
            },
            Api::HttpArena | Api::WebFrameworks => unreachable!("answered above"),
        };
        if stream.write_all(&encode(status, content_type, &body, server)).is_err() {
            return;
        }
        let closes = matches!(server.fault, Fault::CloseDelimitedErrors | Fault::Http10Errors);
        if closes && status >= 400 {
            return;
        }
    }
}

/// An arena [`Reply`], with its extra headers and `Connection: close` when it closes.
fn encode_reply(reply: &Reply, server: Served) -> Vec<u8> {
    let mut bytes = encode(reply.status, reply.content_type, &reply.body, server);
    let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n").expect("encode writes a head") + 2;
    let mut extra: String = reply.headers.iter().map(|h| format!("{h}\r\n")).collect();
    if reply.close {
        extra.push_str("Connection: close\r\n");
    }
    bytes.splice(head_end..head_end, extra.into_bytes());
    bytes
}

fn encode(status: u16, content_type: &str, body: &[u8], server: Served) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        _ => "Not Found",
    };
    let fault = server.fault;
    let error = status >= 400;
    let minor = if fault == Fault::Http10Errors && error { 0 } else { 1 };
    let mut head = format!("HTTP/1.{minor} {status} {reason}\r\n");
    let server_header = match fault {
        Fault::NoServer => false,
        Fault::NoServerOn404 => status != 404,
        _ => server.api != Api::Sequence,
    };
    if server_header {
        head.push_str("Server: stampede-test\r\n");
    }
    match fault {
        _ if server.api == Api::Sequence => {}
        Fault::NoDate => {}
        Fault::FrozenDate => head.push_str(&format!("Date: {}\r\n", httpdate::fmt_http_date(server.started))),
        Fault::StaleDate => head.push_str("Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n"),
        _ => head.push_str(&format!("Date: {}\r\n", httpdate::fmt_http_date(SystemTime::now()))),
    }
    head.push_str(&format!("Content-Type: {content_type}\r\n"));
    if !(fault == Fault::CloseDelimitedErrors && error) {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// A path integer: ASCII digits only, at most `max`.
fn int(segment: &str, max: u64) -> Option<u64> {
    if segment.is_empty() || !segment.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    segment.parse::<u64>().ok().filter(|n| *n <= max)
}

fn xorshift(iters: u64) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..iters {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

fn route(path: &str, fault: Fault, lock: &Mutex<()>) -> (u16, &'static str, Vec<u8>) {
    const JSON: &str = "application/json";
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return (404, "text/plain", b"not found".to_vec());
    }
    let bad = || (400, "text/plain", b"bad request".to_vec());
    let json = |body: String| (200, JSON, body.into_bytes());
    match segments.as_slice() {
        ["plaintext"] if fault == Fault::PlaintextNewline => (200, "text/plain", b"Hello, World!\n".to_vec()),
        ["plaintext"] => (200, "text/plain; charset=utf-8", b"Hello, World!".to_vec()),
        ["json"] => json(r#"{"message": "Hello, World!"}"#.to_string()),
        ["values", id] if fault == Fault::AcceptsNegativeId && id.starts_with('-') => json(id.to_string()),
        ["values", id] => int(id, 2_147_483_647).map_or_else(bad, |n| json(n.to_string())),
        ["api", "count", n] => int(n, 100_000).map_or_else(bad, |n| count(n, fault)),
        ["api", "fib", n] => int(n, 10_000).map_or_else(bad, |n| fib(n, fault)),
        ["cpu", n] => int(n, 10_000_000).map_or_else(bad, |n| json(format!(r#"{{"result":"{}"}}"#, xorshift(n)))),
        ["lock", n] => int(n, 10_000_000).map_or_else(bad, |n| {
            let _held = lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            json(format!(r#"{{"result":"{}"}}"#, xorshift(n)))
        }),
        ["alloc", kib] => int(kib, 65_536).map_or_else(bad, |kib| {
            let blocks: Vec<Vec<u8>> = (0..kib * 4).map(|i| vec![i as u8; 256]).collect();
            drop(blocks);
            json(format!(r#"{{"allocated_kib":{kib}}}"#))
        }),
        ["sleep", ms] => int(ms, 10_000).map_or_else(bad, |ms| {
            let _held =
                (fault == Fault::SerialSleep).then(|| lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
            std::thread::sleep(Duration::from_millis(ms));
            json(format!(r#"{{"slept_ms":{ms}}}"#))
        }),
        _ => (404, "text/plain", b"not found".to_vec()),
    }
}

/// The sequence API and nothing else: no `/plaintext`, and any integer.
fn route_sequence(path: &str, fault: Fault) -> (u16, &'static str, Vec<u8>) {
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let bad = || (400, "text/plain", b"not an integer".to_vec());
    match segments.as_slice() {
        ["api", "count", n] => int(n, u64::MAX).map_or_else(bad, |n| count(n, fault)),
        ["api", "fib", n] => int(n, u64::MAX).map_or_else(bad, |n| fib(n, fault)),
        _ => (404, "text/plain", b"not found".to_vec()),
    }
}

/// TechEmpower's plaintext and json test types, nothing else.
fn route_tfb(path: &str, fault: Fault) -> (u16, &'static str, Vec<u8>) {
    match path {
        "/plaintext" if fault == Fault::LowerCaseHello => (200, "text/plain", b"Hello, world!".to_vec()),
        "/json" if fault == Fault::LowerCaseHello => {
            (200, "application/json", br#"{"Message":"Hello, world!"}"#.to_vec())
        }
        "/plaintext" => (200, "text/plain", b"Hello, World!".to_vec()),
        "/json" => (200, "application/json", br#"{"message":"Hello, World!"}"#.to_vec()),
        _ => (404, "text/plain", b"not found".to_vec()),
    }
}

/// `1 2 … n`, single spaces.
fn count(n: u64, fault: Fault) -> (u16, &'static str, Vec<u8>) {
    let mut text = (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(" ");
    if fault == Fault::CountTrailingSpace {
        text.push(' ');
    }
    (200, "text/plain; charset=utf-8", text.into_bytes())
}

/// `F(0) … F(n)`, single spaces, exact (unless the fault says otherwise).
fn fib(n: u64, fault: Fault) -> (u16, &'static str, Vec<u8>) {
    let (mut a, mut b) = (BigUint::from(0u32), BigUint::from(1u32));
    let mut items = Vec::new();
    for i in 0..=n {
        let mut item = a.to_string();
        if fault == Fault::FibAsDouble {
            item = a.to_f64().map_or_else(|| "inf".into(), |x| x.to_string());
        }
        if fault == Fault::FibWrongDigit && i == 4000 {
            let digit = item.as_bytes()[399];
            let wrong = if digit == b'9' { '0' } else { (digit + 1) as char };
            item.replace_range(399..400, &wrong.to_string());
        }
        items.push(item);
        let next = &a + &b;
        a = std::mem::replace(&mut b, next);
    }
    (200, "text/plain", items.join(" ").into_bytes())
}
