//! A gRPC server for contracts/grpc/bench.proto on the `h2` crate,
//! cleartext (prior knowledge) or TLS (ALPN h2), on 127.0.0.1 port 0 and
//! stopped when dropped. Correct by default (apps/CONTRACT.md, "gRPC"); each
//! [`Fault`] breaks one thing the gRPC contract checks, the ways real servers
//! get it wrong. Its protobuf is written by hand (three fields a message), so
//! the check's encoding (prost-reflect) is tested against another one.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::h2_listener::Listener;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    None,
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
}

pub struct GrpcServer {
    pub addr: SocketAddr,
    /// Calls received.
    pub calls: Arc<AtomicU64>,
    _listener: Listener,
}

impl GrpcServer {
    /// With `tls`, connections are TLS and must pick h2 by ALPN.
    pub fn start(fault: Fault, tls: Option<Arc<rustls::ServerConfig>>) -> GrpcServer {
        let calls = Arc::new(AtomicU64::new(0));
        let c = calls.clone();
        let listener = Listener::start(tls, move |io| serve(io, fault, c.clone()));
        GrpcServer { addr: listener.addr, calls, _listener: listener }
    }

    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://127.0.0.1:{}", self.addr.port())
    }
}

async fn serve<S>(io: S, fault: Fault, calls: Arc<AtomicU64>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let Ok(mut conn) = h2::server::handshake(io).await else { return };
    while let Some(Ok((request, respond))) = conn.accept().await {
        calls.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(answer(request, respond, fault));
    }
}

type Respond = h2::server::SendResponse<Bytes>;

async fn answer(request: http::Request<h2::RecvStream>, mut respond: Respond, fault: Fault) {
    let started = Instant::now();
    let deadline = request
        .headers()
        .get("grpc-timeout")
        .and_then(|v| parse_timeout(v.to_str().ok()?))
        .filter(|_| fault != Fault::IgnoresDeadline);
    let path = request.uri().path().to_string();
    let mut body = request.into_body();
    let mut bytes = Vec::new();
    while let Some(Ok(chunk)) = body.data().await {
        let _ = body.flow_control().release_capacity(chunk.len());
        bytes.extend_from_slice(&chunk);
    }
    let message = bytes.get(5..).unwrap_or_default();
    let known = ["/stampede.bench.v1.Bench/Unary", "/stampede.bench.v1.Bench/Stream"].contains(&path.as_str());
    if !known {
        return match fault {
            Fault::UnknownMethodOk => unary_reply(respond, fault, Vec::new()),
            _ => status_only(&mut respond, fault, 12),
        };
    }
    let Some(fields) = decode(message) else { return status_only(&mut respond, fault, 13) };
    let text = fields.text.clone();
    if deadline.is_some_and(|d| started.elapsed() >= d) {
        return status_only(&mut respond, fault, 4);
    }
    if path.ends_with("/Unary") {
        let reply = match fault {
            Fault::Constant => encode_reply("hello", 3, 0),
            _ => encode_reply(&text, i64::from(fields.f2) + i64::from(fields.f3), 0),
        };
        return unary_reply(respond, fault, reply);
    }
    let count = fields.f2;
    if !(0..=100_000).contains(&count) {
        return status_only(&mut respond, fault, 3);
    }
    let sent = if fault == Fault::OneReplyTooMany { count + 1 } else { count };
    stream_replies(respond, fault, &text, sent as i64, deadline.map(|d| started + d)).await;
}

fn headers(fault: Fault, status: Option<u32>) -> http::Response<()> {
    let mut response = http::Response::builder().status(200).header("content-type", "application/grpc");
    if let Some(code) = status {
        response = response.header("grpc-status", code.to_string());
    }
    if fault == Fault::StatusInHeaders && status.is_none() {
        response = response.header("grpc-status", "0");
    }
    response.body(()).unwrap()
}

/// A Trailers-Only answer with this status.
fn status_only(respond: &mut Respond, fault: Fault, code: u32) {
    let _ = respond.send_response(headers(fault, Some(code)), true);
}

fn trailers(fault: Fault) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    if fault != Fault::StatusInHeaders {
        map.insert("grpc-status", http::HeaderValue::from_static("0"));
    }
    map
}

fn unary_reply(mut respond: Respond, fault: Fault, reply: Vec<u8>) {
    let Ok(mut out) = respond.send_response(headers(fault, None), false) else { return };
    let _ = out.send_data(frame(&reply).into(), false);
    let _ = out.send_trailers(trailers(fault));
}

/// `count` replies as flow control lets them go; at the deadline, the
/// stream is reset (CANCEL), as grpc-go does mid-stream.
async fn stream_replies(mut respond: Respond, fault: Fault, text: &str, count: i64, deadline: Option<Instant>) {
    let Ok(mut out) = respond.send_response(headers(fault, None), false) else { return };
    for seq in 1..=count {
        let data = frame(&encode_reply(text, 0, seq));
        out.reserve_capacity(data.len());
        loop {
            if out.capacity() >= data.len() {
                break;
            }
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
    }
    let _ = out.send_trailers(trailers(fault));
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

fn varint(bytes: &mut &[u8]) -> Option<u64> {
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

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
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

fn frame(message: &[u8]) -> Vec<u8> {
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
