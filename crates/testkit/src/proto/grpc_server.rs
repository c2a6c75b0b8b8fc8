//! A gRPC server for the `--grpc` tests, on the `h2` crate with messages
//! declared by hand with prost's derive (not with the code under test):
//! contracts/grpc/bench.proto's `Unary` (text unchanged, sum = a + b) and
//! `Stream` (`count` replies), with the ways a server can fail a call while
//! answering HTTP 200: a share of calls ended with a non-OK status in the
//! trailers, every call a Trailers-Only error, answers held during a stall
//! of every period, or not gRPC at all (a web page). It records the calls,
//! the `grpc-timeout` and metadata it received.

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderValue};
use prost::Message;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use super::h2_listener::{Conn, Listener};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, PartialEq, Message)]
pub struct Request {
    #[prost(string, tag = "1")]
    pub text: String,
    #[prost(int32, tag = "2")]
    pub a: i32,
    #[prost(int32, tag = "3")]
    pub b: i32,
}

#[derive(Clone, PartialEq, Message)]
pub struct StreamRequest {
    #[prost(string, tag = "1")]
    pub text: String,
    #[prost(int32, tag = "2")]
    pub count: i32,
}

#[derive(Clone, PartialEq, Message)]
pub struct Reply {
    #[prost(string, tag = "1")]
    pub text: String,
    #[prost(int64, tag = "2")]
    pub sum: i64,
    #[prost(int64, tag = "3")]
    pub seq: i64,
}

#[derive(Clone, Copy, Debug)]
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
}

#[derive(Default)]
pub struct Seen {
    pub calls: AtomicU64,
    pub connections: AtomicU64,
    pub replies: AtomicU64,
    pub grpc_timeout: Mutex<Option<String>>,
    pub metadata: Mutex<Option<String>>,
    pub paths: Mutex<Vec<String>>,
}

pub struct GrpcServer {
    pub addr: SocketAddr,
    pub seen: Arc<Seen>,
    pub t0: Instant,
    _listener: Listener,
}

impl GrpcServer {
    pub fn start(mode: Mode) -> GrpcServer {
        let (seen, t0) = (Arc::new(Seen::default()), Instant::now());
        let s = seen.clone();
        let listener = Listener::start(None, move |io| serve(io, mode, s.clone(), t0));
        GrpcServer { addr: listener.addr, seen, t0, _listener: listener }
    }

    /// ghz's form: host:port.
    pub fn target(&self) -> String {
        format!("127.0.0.1:{}", self.addr.port())
    }
}

async fn serve(io: Conn, mode: Mode, seen: Arc<Seen>, t0: Instant) {
    let Ok(mut conn) = h2::server::handshake(io).await else { return };
    seen.connections.fetch_add(1, Ordering::Relaxed);
    while let Some(Ok((request, respond))) = conn.accept().await {
        let n = seen.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
        *seen.grpc_timeout.lock().unwrap() = header("grpc-timeout");
        *seen.metadata.lock().unwrap() = header("x-tenant");
        seen.paths.lock().unwrap().push(request.uri().path().to_string());
        let path = request.uri().path().to_string();
        let seen = seen.clone();
        tokio::spawn(async move {
            let body = read_body(request.into_body()).await;
            if let Mode::Hiccup { stall, period } = mode {
                let into = t0.elapsed().as_nanos() % period.as_nanos();
                if into < stall.as_nanos() {
                    tokio::time::sleep(Duration::from_nanos((stall.as_nanos() - into) as u64)).await;
                }
            }
            answer(respond, mode, n, &path, body, &seen);
        });
    }
}

async fn read_body(mut body: h2::RecvStream) -> BytesMut {
    let mut all = BytesMut::new();
    while let Some(Ok(chunk)) = body.data().await {
        let _ = body.flow_control().release_capacity(chunk.len());
        all.extend_from_slice(&chunk);
    }
    all
}

fn status(code: u32, message: Option<&str>) -> HeaderMap {
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from(code));
    if let Some(m) = message {
        trailers.insert("grpc-message", HeaderValue::from_str(m).unwrap());
    }
    trailers
}

fn framed(reply: &Reply) -> Bytes {
    let payload = reply.encode_to_vec();
    let mut out = BytesMut::with_capacity(5 + payload.len());
    out.extend_from_slice(&[0]);
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(&payload);
    out.freeze()
}

fn answer(
    mut respond: h2::server::SendResponse<Bytes>,
    mode: Mode,
    n: u64,
    path: &str,
    mut body: BytesMut,
    seen: &Seen,
) {
    let head = |content_type: &str| http::Response::builder().status(200).header("content-type", content_type);
    if let Mode::NotGrpc = mode {
        if let Ok(mut s) = respond.send_response(head("text/html").body(()).unwrap(), false) {
            let _ = s.send_data(Bytes::from_static(b"<html>hello</html>"), true);
        }
        return;
    }
    if let Mode::TrailersOnly(code) = mode {
        let mut r = head("application/grpc").body(()).unwrap();
        r.headers_mut().extend(status(code, Some("refused%20here")));
        let _ = respond.send_response(r, true);
        return;
    }
    let message = (body.len() >= 5).then(|| body.split_off(5).freeze());
    let replies: Result<Vec<Reply>, u32> = match path {
        "/stampede.bench.v1.Bench/Unary" => match message.and_then(|mut m| Request::decode(&mut m).ok()) {
            Some(r) => Ok(vec![Reply { text: r.text, sum: i64::from(r.a) + i64::from(r.b), seq: 0 }]),
            None => Err(13),
        },
        "/stampede.bench.v1.Bench/Stream" => {
            let r = message.and_then(|mut m| StreamRequest::decode(&mut m).ok()).unwrap_or_default();
            Ok((1..=r.count).map(|i| Reply { text: r.text.clone(), sum: 0, seq: i64::from(i) }).collect())
        }
        _ => Err(12),
    };
    let Ok(mut s) = respond.send_response(head("application/grpc").body(()).unwrap(), false) else { return };
    let replies = match replies {
        Ok(replies) => replies,
        Err(code) => {
            let _ = s.send_trailers(status(code, None));
            return;
        }
    };
    for reply in &replies {
        seen.replies.fetch_add(1, Ordering::Relaxed);
        let _ = s.send_data(framed(reply), false);
    }
    let failed = matches!(mode, Mode::InternalEvery(k) if n.is_multiple_of(k));
    let _ = s.send_trailers(if failed { status(13, Some("boom%20at%20call")) } else { status(0, None) });
}
