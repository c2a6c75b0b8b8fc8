//! Server reflection on the wire (feature `client`): the [`Resolver`]'s
//! questions sent on one `ServerReflectionInfo` stream of an h2 connection
//! (client.rs's, cleartext or TLS), each answer read before the next
//! question goes, `grpc.reflection.v1` first and `v1alpha` when the server
//! says UNIMPLEMENTED. Start-up only: `stampede load --grpc` without a
//! `.proto` asks once and carries what it got in its spec.

use std::time::Duration;

use bytes::Bytes;
use h2::client::SendRequest;
use h2::RecvStream;
use prost::Message;

use crate::client::{connect, Endpoint};
use crate::reflection::{Reflected, ReflectionError, Resolver, Response, METHOD, SERVICES};
use crate::{frame, is_grpc_content_type, parse_status, request_headers, Code, Deframer, Refusal};

/// The schema of `service` (`package.Service`) from the server at
/// `endpoint`, asked with `metadata`, everything within `limit`.
pub fn reflect(
    endpoint: &Endpoint,
    service: &str,
    metadata: &[(String, String)],
    limit: Duration,
) -> Result<Reflected, ReflectionError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ReflectionError::Transport(e.to_string()))?;
    let late = || ReflectionError::Transport(format!("no answer within {}", crate::short_duration(limit)));
    runtime.block_on(async {
        let sender = tokio::time::timeout(limit, connect(endpoint)).await.map_err(|_| late())?;
        let sender = sender.map_err(|why| match why.contains("HTTP/2") {
            true => ReflectionError::from(Refusal::NotHttp2 { why }),
            false => ReflectionError::Transport(why),
        })?;
        for reflection in SERVICES {
            let path = format!("/{reflection}/{METHOD}");
            let asked = converse(sender.clone(), &endpoint.authority, &path, service, metadata);
            match tokio::time::timeout(limit, asked).await.map_err(|_| late())? {
                Err(ReflectionError::Unimplemented) => continue,
                done => return done,
            }
        }
        Err(ReflectionError::Unimplemented)
    })
}

/// One reflection stream at `path`, to its end.
async fn converse(
    sender: SendRequest<Bytes>,
    authority: &str,
    path: &str,
    service: &str,
    metadata: &[(String, String)],
) -> Result<Reflected, ReflectionError> {
    let broke = |e: h2::Error| ReflectionError::Transport(e.to_string());
    let mut request = http::Request::builder().method("POST").uri(format!("http://{authority}{path}"));
    for (name, value) in request_headers(None, metadata) {
        request = request.header(name, value);
    }
    let request = request.body(()).map_err(|e| ReflectionError::Transport(e.to_string()))?;
    let mut sender = sender.ready().await.map_err(before_answer)?;
    let (answer, mut out) = sender.send_request(request, false).map_err(before_answer)?;
    let mut resolver = Resolver::new(service);
    let first = resolver.question().expect("the first question is the service's");
    out.send_data(Bytes::from(frame(&first.encode_to_vec())), false).map_err(before_answer)?;
    let response = answer.await.map_err(before_answer)?;
    let call = &path[1..];
    let status = response.status().as_u16();
    // A Trailers-Only answer: the status alone (UNIMPLEMENTED, for a
    // server without this reflection service).
    let code = response.headers().get("grpc-status").and_then(|v| parse_status(v.as_bytes()));
    if let Some(code) = code.filter(|_| status == 200) {
        return Err(ended(code));
    }
    let grpc = response.headers().get("content-type").is_some_and(|v| is_grpc_content_type(v.as_bytes()));
    if status != 200 || !grpc {
        return Err(Refusal::not_grpc(call, status).into());
    }
    let mut body = response.into_body();
    let mut messages = Messages { deframer: Deframer::new(crate::DEFAULT_MAX_MESSAGE_BYTES, true), queue: Vec::new() };
    loop {
        let Some(payload) = messages.next(&mut body).await.map_err(ReflectionError::Transport)? else {
            let trailers = body.trailers().await.map_err(broke)?;
            let code = trailers.as_ref().and_then(|t| t.get("grpc-status")).and_then(|v| parse_status(v.as_bytes()));
            return Err(ended(code.unwrap_or(Code::Unknown)));
        };
        let answer = Response::decode(payload.as_slice())
            .map_err(|e| ReflectionError::Invalid(format!("an answer does not decode: {e}")))?;
        resolver.answer(answer)?;
        match resolver.question() {
            Some(question) => out.send_data(Bytes::from(frame(&question.encode_to_vec())), false).map_err(broke)?,
            None => {
                let _ = out.send_data(Bytes::new(), true);
                return resolver.finish();
            }
        }
    }
}

/// A failure before the answer's headers: one of this side's reading (the
/// bytes were not HTTP/2 frames: an HTTP/1.1 server's `400`) means the port
/// does not speak HTTP/2, as the run's preflight says it.
fn before_answer(e: h2::Error) -> ReflectionError {
    match e.is_remote() || e.is_io() {
        true => ReflectionError::Transport(e.to_string()),
        false => Refusal::NotHttp2 { why: "no HTTP/2 handshake".into() }.into(),
    }
}

/// The stream ended with `code` before the schema was had.
fn ended(code: Code) -> ReflectionError {
    match code {
        Code::Unimplemented => ReflectionError::Unimplemented,
        other => ReflectionError::Transport(format!("the server ended the stream with grpc-status {other}")),
    }
}

/// The length-prefixed messages of a response body, one at a time.
struct Messages {
    deframer: Deframer,
    queue: Vec<Vec<u8>>,
}

impl Messages {
    /// The next whole message, or `None` at the end of the body.
    async fn next(&mut self, body: &mut RecvStream) -> Result<Option<Vec<u8>>, String> {
        while self.queue.is_empty() {
            let Some(chunk) = body.data().await else { return Ok(None) };
            let chunk = chunk.map_err(|e| e.to_string())?;
            let _ = body.flow_control().release_capacity(chunk.len());
            self.deframer.feed(&chunk).map_err(|e| e.to_string())?;
            self.queue.extend(self.deframer.take().into_iter().rev().map(|(_, payload)| payload));
        }
        Ok(self.queue.pop())
    }
}
