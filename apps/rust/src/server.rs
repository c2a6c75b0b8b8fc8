//! The accept loop and its graceful end: each TCP connection is served by
//! hyper's HTTP/1 connection (keep-alive on, Date added by hyper) on its own
//! tokio task, and SIGTERM or SIGINT stops accepting, lets requests in flight
//! finish for a bounded time, then returns so the process can exit.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
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

pub async fn serve(listener: TcpListener, db: Arc<Database>) -> io::Result<()> {
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new());
    let graceful = GracefulShutdown::new();

    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    // Go's net/http and most servers disable Nagle's algorithm.
                    let _ = stream.set_nodelay(true);
                    let db = db.clone();
                    let service = service_fn(move |req| routes::respond(db.clone(), req));
                    let conn = http.serve_connection(TokioIo::new(stream), service);
                    let conn = graceful.watch(conn);
                    tokio::spawn(async move {
                        // A client resetting its connection is routine under load.
                        let _ = conn.await;
                    });
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
