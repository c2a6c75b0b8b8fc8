//! The one gRPC test server, for contracts/grpc/bench.proto on the `h2`
//! crate, cleartext (prior knowledge) or TLS (ALPN h2), on 127.0.0.1 port 0
//! and stopped when dropped: `Unary` (text unchanged, sum = a + b) and
//! `Stream` (`count` replies as flow control lets them go), and the client
//! streams of crates/testkit/fixtures/grpc/streams.proto, which no
//! reference app serves: `Collect` (one reply for all the requests) and
//! `Echo` (a reply per request). Correct by
//! default (apps/CONTRACT.md, "gRPC"); each other [`Mode`] is one way a
//! server gets a call wrong, for `stampede load --grpc` (a share of calls
//! failed in HTTP 200 trailers, Trailers-Only errors, a stall of every
//! period, not gRPC at all) or for `stampede check --contract grpc` (a
//! constant answer, an ignored deadline, the wrong status), one that
//! PINGs its clients, one that paces a stream's replies, and two that offer
//! server reflection (v1 or v1alpha, grpc_reflection.rs). Its protobuf is
//! written by hand (three fields a message), so Stampede's encoding
//! (prost-reflect) is tested against another one. It records the calls, the
//! replies, the `grpc-timeout`, metadata and request message it received.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::grpc_reflection;
pub use super::grpc_reflection::Version;
use super::h2_listener::{Conn, Listener};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Ok,
    /// Every Nth call ends with INTERNAL (13) in the trailers after its
    /// reply, in an HTTP 200.
    InternalEvery(u64),
    /// Every call is answered Trailers-Only with this status: HTTP 200,
    /// grpc-status in the HEADERS frame that ends the stream.
    TrailersOnly(u32),
    /// Answers at once, except that nothing is answered during the first
    /// `stall` of every `period` (from the server's start): calls arriving
    /// then wait for its end.
    Hiccup {
        stall: Duration,
        period: Duration,
    },
    /// An HTTP/2 server that is not gRPC: a text/html page.
    NotGrpc,
    /// Unary answers the same reply whatever it is asked.
    Constant,
    /// `grpc-timeout` is never read: 1n is answered OK, a long stream waits
    /// for its reader forever.
    IgnoresDeadline,
    /// An unknown method or service is answered OK with an empty reply.
    UnknownMethodOk,
    /// A stream of N sends N + 1 replies.
    OneReplyTooMany,
    /// `grpc-status` in the headers of every answer, none in the trailers.
    StatusInHeaders,
    /// Answers as `Ok`, except that a stream waits this long before each
    /// of its replies, the first too.
    Paced(Duration),
    /// Answers as `Ok`, and PINGs every connection every 20 ms from its
    /// start (as grpc-go's keepalive and BDP estimator do), counting the
    /// acknowledgements per connection in [`Seen::pongs`].
    Pings,
    /// Answers as `Ok` and offers server reflection of this version only
    /// (grpc_reflection.rs); every other mode answers reflection
    /// UNIMPLEMENTED.
    Reflection(Version),
}

/// What the server received and sent.
#[derive(Default)]
pub struct Seen {
    pub calls: AtomicU64,
    pub connections: AtomicU64,
    /// Reply messages sent.
    pub replies: AtomicU64,
    /// Request messages of client streams (`Collect`, `Echo`) received.
    pub requests: AtomicU64,
    /// The last call's `grpc-timeout` and `x-tenant` metadata.
    pub grpc_timeout: Mutex<Option<String>>,
    pub metadata: Mutex<Option<String>>,
    pub paths: Mutex<Vec<String>>,
    /// [`Mode::Pings`]: PING acknowledgements received, one counter per
    /// connection.
    pub pongs: Mutex<Vec<Arc<AtomicU64>>>,
    /// Reflection streams opened (of any version, answered or not); never
    /// in `calls` or `paths`.
    pub reflection_calls: AtomicU64,
    /// The last call's request message (after its length prefix).
    pub request: Mutex<Option<Vec<u8>>>,
}

pub struct GrpcServer {
    pub addr: SocketAddr,
    pub seen: Arc<Seen>,
    _listener: Listener,
}

impl GrpcServer {
    /// A cleartext (h2c, prior knowledge) server.
    pub fn start(mode: Mode) -> GrpcServer {
        GrpcServer::start_on(mode, None)
    }

    /// With `tls`, connections are TLS and must pick h2 by ALPN.
    pub fn start_on(mode: Mode, tls: Option<Arc<rustls::ServerConfig>>) -> GrpcServer {
        let (seen, t0) = (Arc::new(Seen::default()), Instant::now());
        let s = seen.clone();
        let listener = Listener::start(tls, move |io| serve(io, mode, s.clone(), t0));
        GrpcServer { addr: listener.addr, seen, _listener: listener }
    }

    /// ghz's form: host:port.
    pub fn target(&self) -> String {
        format!("127.0.0.1:{}", self.addr.port())
    }

    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://127.0.0.1:{}", self.addr.port())
    }

    pub fn calls(&self) -> u64 {
        self.seen.calls.load(Ordering::Relaxed)
    }
}

async fn serve(io: Conn, mode: Mode, seen: Arc<Seen>, t0: Instant) {
    let Ok(mut conn) = h2::server::handshake(io).await else { return };
    seen.connections.fetch_add(1, Ordering::Relaxed);
    if let (Mode::Pings, Some(pings)) = (mode, conn.ping_pong()) {
        let pongs = Arc::new(AtomicU64::new(0));
        seen.pongs.lock().unwrap().push(pongs.clone());
        tokio::spawn(ping_every_20ms(pings, pongs));
    }
    while let Some(Ok((request, mut respond))) = conn.accept().await {
        if grpc_reflection::is_reflection(request.uri().path()) {
            seen.reflection_calls.fetch_add(1, Ordering::Relaxed);
            match mode {
                Mode::Reflection(v) if v.path() == request.uri().path() => {
                    tokio::spawn(grpc_reflection::serve(request.into_body(), respond));
                }
                Mode::NotGrpc => not_grpc(respond),
                _ => status_only(&mut respond, mode, 12, None),
            }
            continue;
        }
        let n = seen.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
        *seen.grpc_timeout.lock().unwrap() = header("grpc-timeout");
        *seen.metadata.lock().unwrap() = header("x-tenant");
        seen.paths.lock().unwrap().push(request.uri().path().to_string());
        tokio::spawn(answer(request, Call { respond, mode, n, seen: seen.clone(), t0 }));
    }
}

/// PINGs the client until the connection ends, counting its answers; the
/// next PING goes once the last is answered (h2 allows one at a time).
async fn ping_every_20ms(mut pings: h2::PingPong, pongs: Arc<AtomicU64>) {
    while pings.ping(h2::Ping::opaque()).await.is_ok() {
        pongs.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(super) type Respond = h2::server::SendResponse<Bytes>;

/// One call being answered.
struct Call {
    respond: Respond,
    mode: Mode,
    /// Its number among the server's calls, from 1.
    n: u64,
    seen: Arc<Seen>,
    t0: Instant,
}

async fn answer(request: http::Request<h2::RecvStream>, mut call: Call) {
    let started = Instant::now();
    let mode = call.mode;
    let deadline = request
        .headers()
        .get("grpc-timeout")
        .and_then(|v| parse_timeout(v.to_str().ok()?))
        .filter(|_| mode != Mode::IgnoresDeadline);
    let path = request.uri().path().to_string();
    let mut body = request.into_body();
    let mut bytes = Vec::new();
    while let Some(Ok(chunk)) = body.data().await {
        let _ = body.flow_control().release_capacity(chunk.len());
        bytes.extend_from_slice(&chunk);
    }
    if let Mode::Hiccup { stall, period } = mode {
        let into = call.t0.elapsed().as_nanos() % period.as_nanos();
        if into < stall.as_nanos() {
            tokio::time::sleep(Duration::from_nanos((stall.as_nanos() - into) as u64)).await;
        }
    }
    match mode {
        Mode::NotGrpc => return not_grpc(call.respond),
        Mode::TrailersOnly(code) => return status_only(&mut call.respond, mode, code, Some("refused%20here")),
        _ => {}
    }
    let message = bytes.get(5..).unwrap_or_default();
    *call.seen.request.lock().unwrap() = Some(message.to_vec());
    let known =
        ["/stampede.bench.v1.Bench/Unary", "/stampede.bench.v1.Bench/Stream", COLLECT, ECHO].contains(&path.as_str());
    if !known {
        return match mode {
            Mode::UnknownMethodOk => unary_reply(call, Vec::new()),
            _ => status_only(&mut call.respond, mode, 12, None),
        };
    }
    if path == COLLECT || path == ECHO {
        return client_stream(call, &bytes, path == ECHO);
    }
    let Some(fields) = decode(message) else { return status_only(&mut call.respond, mode, 13, None) };
    if deadline.is_some_and(|d| started.elapsed() >= d) {
        return status_only(&mut call.respond, mode, 4, None);
    }
    if path.ends_with("/Unary") {
        let reply = match mode {
            Mode::Constant => encode_reply("hello", 3, 0),
            _ => encode_reply(&fields.text, i64::from(fields.f2) + i64::from(fields.f3), 0),
        };
        return unary_reply(call, reply);
    }
    let count = fields.f2;
    if !(0..=100_000).contains(&count) {
        return status_only(&mut call.respond, mode, 3, None);
    }
    let sent = if mode == Mode::OneReplyTooMany { count + 1 } else { count };
    stream_replies(call, &fields.text, sent as i64, deadline.map(|d| started + d)).await;
}

const COLLECT: &str = "/stampede.test.v1.Streams/Collect";
const ECHO: &str = "/stampede.test.v1.Streams/Echo";

/// A client stream's requests, read whole: `Collect` answers once for all
/// of them, `Echo` once for each. A message that is not a Request, or a
/// body cut inside one, is INTERNAL.
fn client_stream(mut call: Call, mut bytes: &[u8], echo: bool) {
    let mut requests = Vec::new();
    while !bytes.is_empty() {
        let len = bytes.get(1..5).map(|b| u32::from_be_bytes(b.try_into().unwrap()) as usize);
        let Some(fields) = len.and_then(|len| decode(bytes.get(5..5 + len)?)) else {
            return status_only(&mut call.respond, call.mode, 13, None);
        };
        bytes = &bytes[5 + len.unwrap_or(0)..];
        requests.push(fields);
    }
    call.seen.requests.fetch_add(requests.len() as u64, Ordering::Relaxed);
    let sum = |f: &Fields| i64::from(f.f2) + i64::from(f.f3);
    if !echo {
        let text = requests.last().map_or("", |f| f.text.as_str());
        return unary_reply(call, encode_reply(text, requests.iter().map(sum).sum(), requests.len() as i64));
    }
    let Ok(mut out) = call.respond.send_response(headers(call.mode, None, None), false) else { return };
    for (i, f) in requests.iter().enumerate() {
        if out.send_data(frame(&encode_reply(&f.text, sum(f), i as i64 + 1)).into(), false).is_err() {
            return;
        }
        call.seen.replies.fetch_add(1, Ordering::Relaxed);
    }
    let _ = out.send_trailers(trailers(&call));
}

fn not_grpc(mut respond: Respond) {
    let page = http::Response::builder().status(200).header("content-type", "text/html").body(()).unwrap();
    if let Ok(mut s) = respond.send_response(page, false) {
        let _ = s.send_data(Bytes::from_static(b"<html>hello</html>"), true);
    }
}

fn headers(mode: Mode, status: Option<u32>, message: Option<&str>) -> http::Response<()> {
    let mut response = http::Response::builder().status(200).header("content-type", "application/grpc");
    if let Some(code) = status {
        response = response.header("grpc-status", code.to_string());
    }
    if let Some(m) = message {
        response = response.header("grpc-message", m);
    }
    if mode == Mode::StatusInHeaders && status.is_none() {
        response = response.header("grpc-status", "0");
    }
    response.body(()).unwrap()
}

/// A Trailers-Only answer with this status.
fn status_only(respond: &mut Respond, mode: Mode, code: u32, message: Option<&str>) {
    let _ = respond.send_response(headers(mode, Some(code), message), true);
}

/// The trailers that end call `call`: OK, INTERNAL for every Nth call of
/// [`Mode::InternalEvery`], none for [`Mode::StatusInHeaders`].
fn trailers(call: &Call) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    match call.mode {
        Mode::StatusInHeaders => {}
        Mode::InternalEvery(k) if call.n.is_multiple_of(k) => {
            map.insert("grpc-status", http::HeaderValue::from_static("13"));
            map.insert("grpc-message", http::HeaderValue::from_static("boom%20at%20call"));
        }
        _ => {
            map.insert("grpc-status", http::HeaderValue::from_static("0"));
        }
    }
    map
}

fn unary_reply(mut call: Call, reply: Vec<u8>) {
    let Ok(mut out) = call.respond.send_response(headers(call.mode, None, None), false) else { return };
    call.seen.replies.fetch_add(1, Ordering::Relaxed);
    let _ = out.send_data(frame(&reply).into(), false);
    let _ = out.send_trailers(trailers(&call));
}

/// `count` replies as flow control lets them go; at the deadline, the
/// stream is reset (CANCEL), as grpc-go does mid-stream.
async fn stream_replies(mut call: Call, text: &str, count: i64, deadline: Option<Instant>) {
    let Ok(mut out) = call.respond.send_response(headers(call.mode, None, None), false) else { return };
    for seq in 1..=count {
        if let Mode::Paced(pause) = call.mode {
            tokio::time::sleep(pause).await;
        }
        let data = frame(&encode_reply(text, 0, seq));
        out.reserve_capacity(data.len());
        while out.capacity() < data.len() {
            let wait = std::future::poll_fn(|cx| out.poll_capacity(cx));
            let waited = match deadline {
                Some(at) => tokio::time::timeout(at.saturating_duration_since(Instant::now()), wait).await,
                None => Ok(wait.await),
            };
            match waited {
                Ok(Some(Ok(_))) => continue,
                Ok(_) => return,
                Err(_) => return out.send_reset(h2::Reason::CANCEL),
            }
        }
        if out.send_data(data.into(), false).is_err() {
            return;
        }
        call.seen.replies.fetch_add(1, Ordering::Relaxed);
    }
    let _ = out.send_trailers(trailers(&call));
}

/// Request{text=1, a=2, b=3} or StreamRequest{text=1, count=2}: field 2
/// is `a` or `count`.
struct Fields {
    text: String,
    f2: i32,
    f3: i32,
}

/// The fields, or None when the bytes are not a protobuf message.
fn decode(mut bytes: &[u8]) -> Option<Fields> {
    let mut fields = Fields { text: String::new(), f2: 0, f3: 0 };
    while !bytes.is_empty() {
        let tag = varint(&mut bytes)?;
        match (tag >> 3, tag & 7) {
            (1, 2) => {
                let len = varint(&mut bytes)? as usize;
                fields.text = String::from_utf8(bytes.get(..len)?.to_vec()).ok()?;
                bytes = &bytes[len..];
            }
            (2, 0) => fields.f2 = varint(&mut bytes)? as i32,
            (3, 0) => fields.f3 = varint(&mut bytes)? as i32,
            _ => return None,
        }
    }
    Some(fields)
}

pub(super) fn varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..70).step_by(7) {
        let (&b, rest) = bytes.split_first()?;
        *bytes = rest;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reply{text=1, sum=2, seq=3}, proto3: fields at their default left out.
fn encode_reply(text: &str, sum: i64, seq: i64) -> Vec<u8> {
    let mut out = Vec::new();
    if !text.is_empty() {
        out.push(0x0a);
        put_varint(&mut out, text.len() as u64);
        out.extend_from_slice(text.as_bytes());
    }
    for (tag, v) in [(0x10, sum), (0x18, seq)] {
        if v != 0 {
            out.push(tag);
            put_varint(&mut out, v as u64);
        }
    }
    out
}

pub(super) fn frame(message: &[u8]) -> Vec<u8> {
    let mut out = vec![0];
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out
}

fn parse_timeout(v: &str) -> Option<Duration> {
    let (digits, unit) = v.split_at(v.len().checked_sub(1)?);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}
