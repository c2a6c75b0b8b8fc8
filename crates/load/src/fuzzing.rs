//! Entry points for the fuzz targets in `fuzz/` at the root of the
//! repository, compiled only with the cargo feature `fuzzing`. The HTTP/1.1
//! target needs nothing here (`response::ResponseParser` is public); the
//! HTTP/2 one needs the client side of a connection over any byte stream, with
//! the settings the runs use (`h2_conn::client_builder`), and one exchange
//! read the way the HTTP/2 worker reads it: the status, then the body to its
//! end, releasing flow-control capacity as it goes.

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite};

/// How one fuzzed exchange ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exchange {
    /// A response with this status, its body read to the end.
    Response { status: u16, body_bytes: u64 },
    /// The handshake, the request or the response failed (any h2 error).
    Failed,
}

/// Handshakes over `io` as a run's connection does, sends one GET and reads
/// its response to the end. Must run inside a tokio runtime (the connection is
/// driven by a spawned task, aborted before returning). It may wait forever on
/// a peer that says nothing: bound it with `tokio::time::timeout`.
pub async fn h2_exchange<IO>(io: IO) -> Exchange
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Ok((send, conn)) = crate::h2_conn::client_builder().handshake::<IO, Bytes>(io).await else {
        return Exchange::Failed;
    };
    let driver = tokio::spawn(async move {
        let _ = conn.await;
    });
    let result = async {
        let mut send = send.ready().await.ok()?;
        let request = http::Request::get("http://fuzz.invalid/").header("user-agent", "stampede-fuzz").body(()).ok()?;
        let (response, _) = send.send_request(request, true).ok()?;
        let response = response.await.ok()?;
        let status = response.status().as_u16();
        let mut body = response.into_body();
        let mut body_bytes = 0u64;
        while let Some(chunk) = body.data().await {
            let chunk = chunk.ok()?;
            body_bytes += chunk.len() as u64;
            let _ = body.flow_control().release_capacity(chunk.len());
        }
        Some(Exchange::Response { status, body_bytes })
    }
    .await
    .unwrap_or(Exchange::Failed);
    driver.abort();
    result
}
