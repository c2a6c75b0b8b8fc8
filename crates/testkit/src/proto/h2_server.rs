//! An HTTP/2 server on the `h2` crate, cleartext (prior knowledge) or TLS
//! (ALPN h2), answering `Hello, World!`. It can misbehave the ways a real
//! server does under load: GOAWAY after N requests on a connection (as nginx
//! does at `keepalive_requests`), a reset (RST_STREAM) of every Nth stream,
//! an answer only after a fixed delay, or connections slow to open.
//! It records the most streams it ever saw open at once on one connection.

use bytes::Bytes;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use super::h2_listener::Listener;
use std::sync::Arc;

#[derive(Clone, Copy)]
pub enum Behaviour {
    Ok,
    /// Send GOAWAY (graceful: streams in flight are still answered) after
    /// this many requests on a connection.
    GoawayAfter(u64),
    /// Reset every Nth stream with REFUSED_STREAM instead of answering it.
    ResetEvery(u64),
    /// Accept every stream and never answer it.
    Silent,
    /// Answer this many streams on a connection, then accept the rest and
    /// never answer them: a server that stopped answering.
    SilentAfter(u64),
    /// On the first connection only: accept this many streams without
    /// answering, then GOAWAY with the last of them as last-stream-id (so
    /// the client must assume they may have been processed) and close.
    /// Later connections are answered.
    DropAfterGoaway(u64),
    /// Advertise SETTINGS_MAX_CONCURRENT_STREAMS 0: no request can be sent.
    NoStreams,
    /// Answer every stream this long after it arrived.
    Delay(std::time::Duration),
    /// Wait this long on every new connection before anything else (over
    /// TLS: before its handshake, so the client's connection takes that
    /// long to open), then answer as `Ok`.
    SlowStart(std::time::Duration),
}

#[derive(Default)]
pub struct Counts {
    pub requests: AtomicU64,
    pub connections: AtomicU64,
    pub goaways: AtomicU64,
    pub resets: AtomicU64,
    pub max_open_streams: AtomicU64,
}

pub struct H2Server {
    pub addr: SocketAddr,
    pub counts: Arc<Counts>,
    _listener: Listener,
}

impl H2Server {
    /// With `tls`, connections are TLS and must pick h2 by ALPN.
    pub fn start(behaviour: Behaviour, tls: Option<Arc<rustls::ServerConfig>>) -> H2Server {
        let counts = Arc::new(Counts::default());
        let c = counts.clone();
        let delay = match behaviour {
            Behaviour::SlowStart(d) => d,
            _ => std::time::Duration::ZERO,
        };
        let listener = Listener::start_after(delay, tls, move |io| {
            let c = c.clone();
            async move { serve(io, behaviour, &c).await }
        });
        H2Server { addr: listener.addr, counts, _listener: listener }
    }

    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://127.0.0.1:{}/", self.addr.port())
    }
}

async fn serve<S>(io: S, behaviour: Behaviour, counts: &Arc<Counts>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = h2::server::Builder::new();
    if let Behaviour::NoStreams = behaviour {
        builder.max_concurrent_streams(0);
    }
    let Ok(mut conn) = builder.handshake(io).await else { return };
    counts.connections.fetch_add(1, Ordering::Relaxed);
    let open = Arc::new(AtomicU64::new(0));
    let mut seen = 0u64;
    // Silent: held, because a dropped responder resets its stream.
    let mut unanswered = Vec::new();
    while let Some(next) = conn.accept().await {
        let Ok((_request, mut respond)) = next else { return };
        seen += 1;
        counts.requests.fetch_add(1, Ordering::Relaxed);
        if matches!(behaviour, Behaviour::Silent) || matches!(behaviour, Behaviour::SilentAfter(n) if seen > n) {
            unanswered.push(respond);
            continue;
        }
        if let Behaviour::DropAfterGoaway(n) = behaviour {
            if counts.goaways.load(Ordering::Relaxed) == 0 {
                unanswered.push(respond);
                if seen == n {
                    counts.goaways.fetch_add(1, Ordering::Relaxed);
                    conn.abrupt_shutdown(h2::Reason::NO_ERROR);
                }
                continue;
            }
        }
        if let Behaviour::ResetEvery(n) = behaviour {
            if seen.is_multiple_of(n) {
                respond.send_reset(h2::Reason::REFUSED_STREAM);
                counts.resets.fetch_add(1, Ordering::Relaxed);
                continue;
            }
        }
        let now_open = open.fetch_add(1, Ordering::Relaxed) + 1;
        counts.max_open_streams.fetch_max(now_open, Ordering::Relaxed);
        let open = open.clone();
        // Answered from a task, so concurrent streams really are concurrent.
        tokio::spawn(async move {
            match behaviour {
                Behaviour::Delay(d) => tokio::time::sleep(d).await,
                _ => tokio::task::yield_now().await,
            }
            let response = http::Response::builder().status(200).body(()).unwrap();
            if let Ok(mut body) = respond.send_response(response, false) {
                let _ = body.send_data(Bytes::from_static(b"Hello, World!"), true);
            }
            open.fetch_sub(1, Ordering::Relaxed);
        });
        if let Behaviour::GoawayAfter(n) = behaviour {
            if seen == n {
                conn.graceful_shutdown();
                counts.goaways.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}
