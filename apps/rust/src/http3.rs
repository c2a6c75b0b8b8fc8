//! The HTTP/3 listener, on when `HTTP3=1`: the same routes over QUIC on the
//! same port number over UDP, with `h3` on `quinn` (the QUIC stack of the
//! Rust ecosystem, on the same tokio runtime) and rustls. HTTP/3 is always
//! encrypted, so a self-signed certificate for `localhost` and 127.0.0.1 is
//! generated at start (`rcgen`): load it with `stampede load --http3 -k`.
//! Each connection is served on its own task and each request on its own,
//! as hyper does; `Date` and `Content-Length`, which hyper adds itself over
//! HTTP/1.1, are added here.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::{Buf, Bytes};
use http_body_util::BodyExt;
use hyper::header::{HeaderValue, CONTENT_LENGTH, DATE};
use hyper::Method;

use crate::database::Database;
use crate::routes;

/// Starts listening on UDP `addr`; the endpoint serves until closed.
pub fn listen(addr: SocketAddr, db: Arc<Database>) -> Result<quinn::Endpoint, String> {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
        .map_err(|e| format!("HTTP3=1: cannot generate a certificate: {e}"))?;
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(cert.key_pair.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .and_then(|b| {
            b.with_no_client_auth()
                .with_single_cert(vec![cert.cert.der().clone()], key)
        })
        .map_err(|e| format!("HTTP3=1: TLS setup failed: {e}"))?;
    tls.alpn_protocols = vec![b"h3".to_vec()];
    let quic = quinn::crypto::rustls::QuicServerConfig::try_from(tls)
        .map_err(|e| format!("HTTP3=1: QUIC setup failed: {e}"))?;
    let endpoint = quinn::Endpoint::server(quinn::ServerConfig::with_crypto(Arc::new(quic)), addr)
        .map_err(|e| {
            format!("HTTP3=1: cannot listen on UDP {addr} (set PORT to a free port): {e}")
        })?;
    let accepting = endpoint.clone();
    tokio::spawn(async move {
        while let Some(incoming) = accepting.accept().await {
            let db = db.clone();
            tokio::spawn(async move {
                if let Ok(conn) = incoming.await {
                    // A client closing its connection is routine under load.
                    let _ = serve(conn, db).await;
                }
            });
        }
    });
    Ok(endpoint)
}

async fn serve(
    conn: quinn::Connection,
    db: Arc<Database>,
) -> Result<(), h3::error::ConnectionError> {
    let mut h3 = h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(conn)).await?;
    while let Some(resolver) = h3.accept().await? {
        let db = db.clone();
        tokio::spawn(async move {
            let Ok((req, mut stream)) = resolver.resolve_request().await else {
                return;
            };
            while let Ok(Some(mut chunk)) = stream.recv_data().await {
                chunk.advance(chunk.remaining());
            }
            let (mut head, body) = routes::answer_to(&db, req.method(), req.uri())
                .await
                .into_parts();
            let body = match body.collect().await {
                Ok(b) => b.to_bytes(),
                Err(never) => match never {},
            };
            let date = httpdate::fmt_http_date(SystemTime::now());
            head.headers.insert(
                DATE,
                HeaderValue::from_str(&date).expect("an HTTP date is a valid value"),
            );
            head.headers
                .insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
            let sent = stream
                .send_response(hyper::Response::from_parts(head, ()))
                .await;
            if sent.is_ok() && req.method() != Method::HEAD && !body.is_empty() {
                let _ = stream.send_data(body).await;
            }
            let _ = stream.finish().await;
        });
    }
    Ok(())
}
