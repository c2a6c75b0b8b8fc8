//! The accept loop and its graceful end: each TCP connection is served by
//! hyper's HTTP/1 connection (keep-alive on, Date added by hyper) on its own
//! tokio task (with `HTTP2=1`, by hyper-util's auto connection, which reads
//! the first bytes and serves HTTP/1.1, or HTTP/2 to a client that opens
//! with its preface: h2c by prior knowledge, as `stampede load --http2`
//! does on http://), and SIGTERM or SIGINT stops accepting, lets requests in flight
//! finish for a bounded time, then returns so the process can exit.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

use crate::database::Database;
use crate::routes;

/// How long requests in flight may run after SIGTERM; the contract requires
/// the process to be gone within 5 s.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// Pause after a failed accept (for example out of file descriptors), so the
/// loop does not spin while the condition lasts.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

pub async fn serve(listener: TcpListener, db: Arc<Database>, http2: bool) -> io::Result<()> {
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new());
    let mut both = auto::Builder::new(TokioExecutor::new());
    both.http1().timer(TokioTimer::new());
    both.http2().timer(TokioTimer::new());
    let graceful = GracefulShutdown::new();

    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    // Go's net/http and most servers disable Nagle's algorithm.
                    let _ = stream.set_nodelay(true);
                    let db = db.clone();
                    let service = service_fn(move |req| routes::respond(db.clone(), req));
                    let io = TokioIo::new(stream);
                    // A client resetting its connection is routine under load.
                    if http2 {
                        let conn = both.serve_connection(io, service).into_owned();
                        let conn = graceful.watch(conn);
                        tokio::spawn(async move {
                            let _ = conn.await;
                        });
                    } else {
                        let conn = graceful.watch(http.serve_connection(io, service));
                        tokio::spawn(async move {
                            let _ = conn.await;
                        });
                    }
                }
                Err(e) => {
                    eprintln!("stampede-app-rust: accept failed: {e}");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
            _ = terminate.recv() => break,
            _ = interrupt.recv() => break,
        }
    }

    drop(listener);
    // Past the grace period, the connections left are dropped with the runtime.
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
    Ok(())
}
