//! An HTTP/3 server on `quinn` and the `h3` crate, on UDP 127.0.0.1 port 0,
//! answering `Hello, World!`. It misbehaves the ways the load engine must
//! count: a reset (RESET_STREAM, H3_INTERNAL_ERROR) of every Nth request,
//! the whole QUIC connection closed after N requests on it, a GOAWAY then a
//! close, a header block without end, or no request stream allowed at all.
//! The misbehaviours `h3` will not commit (a GOAWAY naming a chosen stream,
//! a HEADERS frame of a gigabyte) are written as raw frames on `quinn`'s
//! streams. Its TLS config is the test's, so a server offering only `h2` by
//! ALPN is one too.

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
    /// On connections until it sent a GOAWAY: read this many requests without
    /// answering, then GOAWAY naming the stream of the middle one (those
    /// below it may have been processed: counted in `held`; the rest were
    /// not) and close the connection. Later connections are answered.
    GoawayAfter(u64),
    /// After accepting this many requests on a connection, a graceful GOAWAY
    /// (`h3`'s shutdown: those accepted are still answered) and the
    /// connection held open for the client to close, as nginx does at
    /// `keepalive_requests`.
    GracefulGoaway(u64),
    /// Answer every request with a HEADERS frame that claims 1 GiB and
    /// sends zeros until the client gives up on the stream.
    EndlessHeaders,
    /// Transport parameters allowing no bidirectional stream: no request.
    NoStreams,
}

#[derive(Default)]
pub struct Counts {
    pub requests: AtomicU64,
    pub connections: AtomicU64,
    pub resets: AtomicU64,
    pub closes: AtomicU64,
    /// Requests read and, by a GOAWAY's stream id, said to be processed,
    /// but never answered (`GoawayAfter`).
    pub held: AtomicU64,
    pub goaways: AtomicU64,
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
        let (rt, endpoint) = endpoint_with(tls, !matches!(behaviour, Behaviour::NoStreams));
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
                        // The client's preflight opens no stream: it ends `goaway_after` early.
                        let before_goaway = c.goaways.load(Ordering::Relaxed) == 0;
                        match behaviour {
                            Behaviour::GoawayAfter(n) if before_goaway => goaway_after(conn, n, &c).await,
                            Behaviour::EndlessHeaders => endless_headers(conn).await,
                            _ => drop(serve(conn, behaviour, &c).await),
                        }
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
    endpoint_with(tls, true)
}

/// The same, allowing request streams or not.
fn endpoint_with(tls: Arc<rustls::ServerConfig>, streams: bool) -> (tokio::runtime::Runtime, quinn::Endpoint) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let quic = quinn::crypto::rustls::QuicServerConfig::try_from((*tls).clone()).unwrap();
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(quic));
    if !streams {
        let mut transport = quinn::TransportConfig::default();
        transport.max_concurrent_bidi_streams(0u32.into());
        config.transport_config(Arc::new(transport));
    }
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
    let mut accepted = 0;
    while let Some(resolver) = h3.accept().await? {
        accepted += 1;
        if matches!(behaviour, Behaviour::GracefulGoaway(n) if accepted == n) {
            counts.goaways.fetch_add(1, Ordering::Relaxed);
            h3.shutdown(1).await?;
        }
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
    if let Behaviour::GracefulGoaway(_) = behaviour {
        // Held for the client to close: dropping the last handle would
        // close it at once, answers still unsent.
        quic.closed().await;
    }
    Ok(())
}

/// `GoawayAfter(n)`: `n` requests read and held, then a control stream with
/// SETTINGS and GOAWAY naming the stream of request `n / 2`, and once the
/// client has acknowledged it, the connection closed (H3_NO_ERROR).
async fn goaway_after(conn: quinn::Connection, n: u64, counts: &Counts) {
    let mut held = Vec::new();
    for _ in 0..n {
        let Ok((send, mut recv)) = conn.accept_bi().await else { return };
        if recv.read_to_end(1 << 20).await.is_err() {
            return;
        }
        held.push((send.id(), send));
    }
    let last = u64::from(held[(n / 2) as usize].0);
    counts.held.fetch_add(n / 2, Ordering::Relaxed);
    counts.goaways.fetch_add(1, Ordering::Relaxed);
    let Ok(mut control) = conn.open_uni().await else { return };
    let mut frames = vec![0x00, 0x04, 0x00, 0x07, 8];
    frames.extend_from_slice(&(last | 0xc000_0000_0000_0000).to_be_bytes());
    if control.write_all(&frames).await.is_ok() && control.finish().is_ok() {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), control.stopped()).await;
    }
    conn.close(0x100u32.into(), b"goaway");
}

/// `EndlessHeaders`: every request answered with a HEADERS frame claiming
/// 1 GiB (a 4-byte varint), followed by zeros until the stream is stopped.
async fn endless_headers(conn: quinn::Connection) {
    while let Ok((mut send, mut recv)) = conn.accept_bi().await {
        tokio::spawn(async move {
            if recv.read_to_end(1 << 20).await.is_err() {
                return;
            }
            let zeros = vec![0u8; 16 * 1024];
            let mut out = send.write_all(&[0x01, 0x80 | 0x3f, 0xff, 0xff, 0xff]).await;
            while out.is_ok() {
                out = send.write_all(&zeros).await;
            }
        });
    }
}
