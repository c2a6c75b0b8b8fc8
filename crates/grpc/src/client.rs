//! A gRPC client for what is not the hot path (feature `client`): `stampede
//! check`'s calls and `stampede run`'s readiness poll of a gRPC app. HTTP/2
//! on the `h2` crate, cleartext by prior knowledge (`http://`) or TLS with
//! ALPN h2 (`https://`, with the rustls config the caller trusts servers
//! with). A check must see exactly what the server sent (headers, each
//! length-prefixed message, trailers, a RST_STREAM and its reason), so the
//! crate made for the job is used as it is, on the caller's one-thread tokio
//! runtime; `stampede load --grpc` has its own engine, built for cost.
//!
//! It lives here, behind a feature, rather than in the checker so that
//! `stampede run` can ask a gRPC app whether it is up without linking the
//! checker (its HTTP/1.1, HTTP/3 and PostgreSQL clients), and the load
//! engine, which uses this crate's vocabulary only, links no h2 or tokio.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{frame, parse_message, parse_status, request_headers, Code, Deframer, DEFAULT_MAX_MESSAGE_BYTES};
use bytes::Bytes;
use h2::client::SendRequest;

/// Where the server is and how to speak to it.
#[derive(Clone)]
pub struct Endpoint {
    pub addrs: Vec<SocketAddr>,
    /// The `:authority` sent.
    pub authority: String,
    /// TLS with ALPN h2, for `https://`.
    pub tls: Option<(Arc<rustls::ClientConfig>, rustls::pki_types::ServerName<'static>)>,
}

/// One call to send: the path, the framed message and the header fields.
pub struct Outgoing {
    pub path: String,
    pub body: Bytes,
    pub headers: Vec<(String, String)>,
    /// Acknowledge received data (WINDOW_UPDATE) no faster than this many
    /// bytes a second: a reader slower than the server.
    pub read_rate: Option<u64>,
    /// What was sent, said in one line.
    pub request_line: String,
}

/// What came back for one call, as it arrived.
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    /// What was sent, for a failure's `>` line.
    pub request_line: String,
    pub http_status: Option<u16>,
    pub headers: Vec<(String, String)>,
    /// The trailing HEADERS, if any came.
    pub trailers: Option<Vec<(String, String)>>,
    /// Each message's payload, in order.
    pub messages: Vec<Vec<u8>>,
    /// A body that is not length-prefixed messages.
    pub frame_error: Option<String>,
    /// The server reset the stream with this reason.
    pub reset: Option<h2::Reason>,
    /// No complete answer: why (refused, not HTTP/2, the wait ran out).
    pub error: Option<String>,
    pub elapsed: Duration,
}

impl Exchange {
    /// A header field's values, in the headers (`trailers` false) or trailers.
    pub fn values(&self, name: &str, trailers: bool) -> Vec<&str> {
        let fields = if trailers { self.trailers.as_deref().unwrap_or(&[]) } else { &self.headers[..] };
        fields.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str()).collect()
    }
}

/// Opens an HTTP/2 connection; its driver runs as a task on the current runtime.
pub async fn connect(endpoint: &Endpoint) -> Result<SendRequest<Bytes>, String> {
    let tcp = open_tcp(&endpoint.addrs).await?;
    let _ = tcp.set_nodelay(true);
    match &endpoint.tls {
        None => handshake(tcp).await,
        Some((config, name)) => {
            let tls = tokio_rustls::TlsConnector::from(config.clone())
                .connect(name.clone(), tcp)
                .await
                .map_err(|e| format!("TLS handshake failed: {e}"))?;
            if tls.get_ref().1.alpn_protocol() != Some(b"h2") {
                return Err("the server did not choose HTTP/2 (ALPN h2) in the TLS handshake".into());
            }
            handshake(tls).await
        }
    }
}

async fn open_tcp(addrs: &[SocketAddr]) -> Result<tokio::net::TcpStream, String> {
    let mut last = String::from("no address");
    for addr in addrs {
        match tokio::net::TcpStream::connect(addr).await {
            Ok(tcp) => return Ok(tcp),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => last = "connection refused".into(),
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

async fn handshake<T>(io: T) -> Result<SendRequest<Bytes>, String>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    // h2 closes a connection whose small DATA frames outrun the reader
    // (ENHANCE_YOUR_CALM); a gRPC server sends a frame per small message,
    // and the check reads every one, so the allowance is raised.
    let (sender, connection) = h2::client::Builder::new()
        .data_frame_budget(1 << 30)
        .handshake(io)
        .await
        .map_err(|e| format!("HTTP/2 handshake failed: {e}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

/// Sends one call on `sender` and reads its answer to the end, or until `limit`.
pub async fn call(sender: SendRequest<Bytes>, authority: &str, out: &Outgoing, limit: Duration) -> Exchange {
    let started = Instant::now();
    let mut exchange = Exchange { request_line: out.request_line.clone(), ..Exchange::default() };
    let result = tokio::time::timeout(limit, exchange_into(sender, authority, out, &mut exchange)).await;
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => match e.reason().filter(|_| e.is_reset() && e.is_remote()) {
            Some(reason) => exchange.reset = Some(reason),
            None if e.is_go_away() && e.is_remote() => {
                exchange.error = Some(format!("the server closed the connection (GOAWAY: {e})"))
            }
            None => exchange.error = Some(not_http2(&e)),
        },
        Err(_) => {
            let got = exchange.messages.len();
            exchange.error = Some(format!("the call did not end within {} ({got} replies received)", fmt(limit)));
        }
    }
    exchange.elapsed = started.elapsed();
    exchange
}

async fn exchange_into(
    sender: SendRequest<Bytes>,
    authority: &str,
    out: &Outgoing,
    ex: &mut Exchange,
) -> Result<(), h2::Error> {
    let mut request = http::Request::builder().method("POST").uri(format!("http://{authority}{}", out.path));
    for (name, value) in &out.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let request = request.body(()).expect("the contract's path and header fields are validated");
    let mut sender = sender.ready().await?;
    let (answer, mut body_out) = sender.send_request(request, false)?;
    body_out.send_data(out.body.clone(), true)?;
    let response = answer.await?;
    ex.http_status = Some(response.status().as_u16());
    ex.headers = fields(response.headers());
    let mut body = response.into_body();
    let mut deframer = Deframer::new(DEFAULT_MAX_MESSAGE_BYTES, true);
    let (reading, mut read) = (Instant::now(), 0u64);
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        read += chunk.len() as u64;
        if let Some(rate) = out.read_rate {
            let due = Duration::from_secs_f64(read as f64 / rate as f64);
            if let Some(wait) = due.checked_sub(reading.elapsed()) {
                tokio::time::sleep(wait).await;
            }
        }
        let _ = body.flow_control().release_capacity(chunk.len());
        if ex.frame_error.is_none() {
            if let Err(e) = deframer.feed(&chunk) {
                ex.frame_error = Some(e.to_string());
            }
            ex.messages.extend(deframer.take().into_iter().map(|(_, payload)| payload));
        }
    }
    if deframer.is_mid_message() && ex.frame_error.is_none() {
        ex.frame_error = Some("the body ends inside a message (its length prefix says more bytes)".into());
    }
    ex.trailers = body.trailers().await?.as_ref().map(fields);
    Ok(())
}

fn fields(map: &http::HeaderMap) -> Vec<(String, String)> {
    map.iter().map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned())).collect()
}

/// A failure the client saw (the bytes were not HTTP/2 frames, the
/// connection broke), said as what it most likely means.
fn not_http2(e: &h2::Error) -> String {
    if e.is_remote() {
        e.to_string()
    } else {
        format!("no HTTP/2 answer ({e}): is it a gRPC server (HTTP/2 by prior knowledge)?")
    }
}

fn fmt(d: Duration) -> String {
    crate::short_duration(d)
}

/// The status the call ended with, and how it was said.
pub fn status_of(ex: &Exchange, deadline: Option<Duration>) -> Result<(Code, String), String> {
    if let Some(reason) = ex.reset {
        return match deadline {
            Some(d) if reason == h2::Reason::CANCEL && ex.elapsed >= d => {
                Ok((Code::DeadlineExceeded, "the stream reset (CANCEL) after its deadline".into()))
            }
            _ => Err(format!("the server reset the stream ({reason:?}) instead of ending it with a grpc-status")),
        };
    }
    let (place, values) = match &ex.trailers {
        Some(_) => ("trailers", ex.values("grpc-status", true)),
        None => ("Trailers-Only headers", ex.values("grpc-status", false)),
    };
    let value = values.first().ok_or_else(|| format!("no grpc-status in the {place}"))?;
    let code = parse_status(value.as_bytes()).ok_or_else(|| format!("grpc-status {value:?} is not a number"))?;
    let trailers = ex.trailers.is_some();
    let message = ex.values("grpc-message", trailers).first().map(|m| parse_message(m.as_bytes()));
    let said = match message {
        Some(m) if !m.is_empty() => format!("grpc-status {code}, grpc-message {m:?}"),
        _ => format!("grpc-status {code}"),
    };
    Ok((code, said))
}

/// Why a server is not ready: a caller that polls it decides on which (a
/// server that answers the wrong thing is another server, or the app is
/// not up yet; no answer may be a wrong address).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotReady {
    /// It answered, but not what counts: another status (`answers 404`,
    /// `grpc-status UNIMPLEMENTED (12)`).
    #[error("{0}")]
    Answered(String),
    /// No answer that counts as one: no connection, a reset, another protocol.
    #[error("{0}")]
    NoAnswer(String),
}

/// Whether the gRPC server at `addr` answers a call of `path` with an empty
/// request message `OK`: `stampede run`'s readiness for a gRPC app. Errs
/// with what it got instead.
pub fn ready(addr: std::net::SocketAddr, path: &str, timeout: Duration) -> Result<Duration, NotReady> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| NotReady::NoAnswer(e.to_string()))?;
    let started = Instant::now();
    let endpoint = Endpoint { addrs: vec![addr], authority: addr.to_string(), tls: None };
    let out = Outgoing {
        path: path.to_string(),
        body: Bytes::from(frame(&[])),
        headers: request_headers(None, &[]),
        read_rate: None,
        request_line: String::new(),
    };
    let ex = runtime
        .block_on(async {
            let sender =
                tokio::time::timeout(timeout, connect(&endpoint)).await.map_err(|_| "no connection".to_string())??;
            Ok::<_, String>(call(sender, &endpoint.authority, &out, timeout).await)
        })
        .map_err(NotReady::NoAnswer)?;
    match status_of(&ex, None) {
        Ok((Code::Ok, _)) => Ok(started.elapsed()),
        Ok((_, said)) => Err(NotReady::Answered(said)),
        Err(why) => Err(NotReady::NoAnswer(ex.error.unwrap_or(why))),
    }
}
