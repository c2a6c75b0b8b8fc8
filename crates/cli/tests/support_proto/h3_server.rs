//! An HTTP/3 server on `quinn` and the `h3` crate, on UDP 127.0.0.1 port 0,
//! answering `Hello, World!`. It misbehaves the ways the load engine must
//! count: a reset (RESET_STREAM, H3_INTERNAL_ERROR) of every Nth request, or
//! the whole QUIC connection closed after N requests on it. Its TLS config is
//! the test's, so a server offering only `h2` by ALPN is one too.

use bytes::{Buf, Bytes};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Clone, Copy)]
pub enum Behaviour {
    Ok,
    /// Reset every Nth request's stream instead of answering it.
    ResetEvery(u64),
    /// Close the QUIC connection after answering this many requests on it.
    CloseAfter(u64),
    /// Answer this many requests on a connection, then hold every later
    /// stream open unanswered: a server that stopped answering.
    SilentAfter(u64),
}

#[derive(Default)]
pub struct Counts {
    pub requests: AtomicU64,
    pub connections: AtomicU64,
    pub resets: AtomicU64,
    pub closes: AtomicU64,
    /// Request paths, in arrival order (for the mix test).
    pub paths: std::sync::Mutex<Vec<String>>,
}

pub struct H3Server {
    pub addr: SocketAddr,
    pub counts: Arc<Counts>,
    endpoint: quinn::Endpoint,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl H3Server {
    pub fn start(behaviour: Behaviour, tls: Arc<rustls::ServerConfig>) -> H3Server {
        let (rt, endpoint) = endpoint(tls);
        let addr = endpoint.local_addr().unwrap();
        let counts = Arc::new(Counts::default());
        let (c, ep) = (counts.clone(), endpoint.clone());
        let thread = std::thread::spawn(move || {
            rt.block_on(async move {
                while let Some(incoming) = ep.accept().await {
                    let c = c.clone();
                    tokio::spawn(async move {
                        let Ok(conn) = incoming.await else { return };
                        c.connections.fetch_add(1, Ordering::Relaxed);
                        let _ = serve(conn, behaviour, &c).await;
                    });
                }
            });
        });
        H3Server { addr, counts, endpoint, thread: Some(thread) }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.addr.port())
    }
}

/// A QUIC endpoint on UDP 127.0.0.1 port 0 with `tls`, and the one-thread
/// runtime it belongs to.
pub fn endpoint(tls: Arc<rustls::ServerConfig>) -> (tokio::runtime::Runtime, quinn::Endpoint) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let quic = quinn::crypto::rustls::QuicServerConfig::try_from((*tls).clone()).unwrap();
    let config = quinn::ServerConfig::with_crypto(Arc::new(quic));
    let endpoint = {
        let _guard = rt.enter();
        quinn::Endpoint::server(config, "127.0.0.1:0".parse().unwrap()).unwrap()
    };
    (rt, endpoint)
}

impl Drop for H3Server {
    fn drop(&mut self) {
        self.endpoint.close(0u32.into(), b"done");
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn serve(
    conn: quinn::Connection,
    behaviour: Behaviour,
    counts: &Arc<Counts>,
) -> Result<(), h3::error::ConnectionError> {
    let quic = conn.clone();
    let mut h3 = h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(conn)).await?;
    let on_this = Arc::new(AtomicU64::new(0));
    while let Some(resolver) = h3.accept().await? {
        let (counts, on_this, quic) = (counts.clone(), on_this.clone(), quic.clone());
        // Each request on its own task: streams run concurrently.
        tokio::spawn(async move {
            let Ok((req, mut stream)) = resolver.resolve_request().await else { return };
            counts.paths.lock().unwrap().push(req.uri().path().to_string());
            while let Ok(Some(mut chunk)) = stream.recv_data().await {
                chunk.advance(chunk.remaining());
            }
            let nth = on_this.fetch_add(1, Ordering::Relaxed) + 1;
            if matches!(behaviour, Behaviour::SilentAfter(n) if nth > n) {
                std::future::pending::<()>().await;
            }
            if let Behaviour::ResetEvery(n) = behaviour {
                if nth % n == 0 {
                    counts.resets.fetch_add(1, Ordering::Relaxed);
                    stream.stop_stream(h3::error::Code::H3_INTERNAL_ERROR);
                    return;
                }
            }
            let resp = http::Response::builder().status(200).header("content-type", "text/plain").body(()).unwrap();
            if stream.send_response(resp).await.is_ok()
                && stream.send_data(Bytes::from_static(b"Hello, World!")).await.is_ok()
                && stream.finish().await.is_ok()
            {
                counts.requests.fetch_add(1, Ordering::Relaxed);
            }
            if matches!(behaviour, Behaviour::CloseAfter(n) if nth == n) {
                counts.closes.fetch_add(1, Ordering::Relaxed);
                quic.close(0x100u32.into(), b"closing mid-run");
            }
        });
    }
    Ok(())
}
