//! Stampede's Rust gRPC reference server: contracts/grpc/bench.proto served by
//! tonic on tokio, written the way a Rust user would write it, so that numbers
//! measured against it describe tonic. This file reads the environment, builds
//! the tokio runtime and serves until SIGTERM; `service` holds the answers.
//!
//! Run it by hand from apps/grpc/rust:
//!
//! ```text
//! CARGO_TARGET_DIR=target cargo build --release
//! PORT=9009 ./target/release/stampede-grpc-rust
//! ghz --insecure --proto ../../../contracts/grpc/bench.proto \
//!     --call stampede.bench.v1.Bench/Unary -d '{"text":"hi","a":2,"b":3}' -n 1 127.0.0.1:9009
//! ```
//!
//! Environment: `PORT` (default 9009), `THREADS` (tokio worker threads; unset or
//! empty keeps tokio's default of one per CPU) and `TOKIO_FLAVOR` (`multi`, the
//! default, or `current` for a single-threaded runtime, which ignores THREADS):
//! the same names and meanings as apps/rust. Per-call logging is absent.

mod deadline;
mod service;
#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::runtime::{Builder, Runtime};
use tokio::signal::unix::{signal, SignalKind};
use tonic::transport::server::TcpIncoming;

pub mod pb {
    tonic::include_proto!("stampede.bench.v1");

    /// The .proto's descriptors, encoded by build.rs: what reflection serves.
    pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("bench_descriptor");
}

/// How long running calls (a long stream) may finish after SIGTERM; the
/// contract requires the process to be gone within 5 s.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("stampede-grpc-rust: error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let port = port_from(std::env::var("PORT").ok().as_deref())?;
    let runtime =
        runtime_from(std::env::var("TOKIO_FLAVOR").ok().as_deref(), std::env::var("THREADS").ok().as_deref())?;
    runtime.block_on(async {
        let addr = SocketAddr::from(([0, 0, 0, 0], port));
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| format!("cannot listen on {addr} (set PORT to a free port): {e}"))?;
        let mut terminate = signal(SignalKind::terminate()).map_err(|e| e.to_string())?;
        let mut interrupt = signal(SignalKind::interrupt()).map_err(|e| e.to_string())?;
        let stopping = async move {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = interrupt.recv() => {}
            }
        };
        serve(listener, stopping).await
    })
    // Dropping the runtime cancels whatever still runs and joins its threads.
}

/// Serves the Bench service on `listener` until `stopping` completes, then
/// lets running calls finish for at most SHUTDOWN_GRACE.
async fn serve(
    listener: TcpListener,
    stopping: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let reflection =
        || tonic_reflection::server::Builder::configure().register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET);
    let reflection_v1 = reflection().build_v1().map_err(|e| format!("reflection: {e}"))?;
    let reflection_v1alpha = reflection().build_v1alpha().map_err(|e| format!("reflection: {e}"))?;
    let server = tonic::transport::Server::builder()
        // An interceptor runs before the request's body is read: a call whose
        // deadline is already past at its arrival gets DEADLINE_EXCEEDED
        // there, in the first poll, before tonic's own grpc-timeout timer can
        // answer CANCELLED (see deadline.rs); the handlers check again before
        // each message they send.
        .add_service(pb::bench_server::BenchServer::with_interceptor(service::Bench, deadline::refuse_expired))
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        // TCP_NODELAY on every accepted connection, as grpc-go, grpc-java and
        // grpc-js set it: tonic leaves Nagle on for sockets it is handed, and a
        // stream of small replies then waits on the client's delayed ACK
        // (40 ms a call: 900 stream calls/s where grpc-go did 18,000).
        .serve_with_incoming_shutdown(TcpIncoming::from(listener).with_nodelay(Some(true)), async move {
            let _ = stop_rx.await;
        });
    let server = tokio::spawn(server);
    stopping.await;
    let _ = stop_tx.send(());
    match tokio::time::timeout(SHUTDOWN_GRACE, server).await {
        Ok(Ok(served)) => served.map_err(|e| format!("serving: {e}")),
        Ok(Err(join)) => Err(format!("server task: {join}")),
        Err(_) => Ok(()),
    }
}

fn port_from(value: Option<&str>) -> Result<u16, String> {
    match value {
        None | Some("") => Ok(9009),
        Some(s) => s.parse().map_err(|_| format!("PORT={s:?} is not a TCP port number (1-65535)")),
    }
}

/// The tokio runtime the manifest's `runtime` knob and THREADS ask for.
fn runtime_from(flavor: Option<&str>, threads: Option<&str>) -> Result<Runtime, String> {
    let mut builder = match flavor.unwrap_or("") {
        "" | "multi" => Builder::new_multi_thread(),
        "current" => Builder::new_current_thread(),
        other => return Err(format!("TOKIO_FLAVOR={other:?} is unknown (use `multi` or `current`)")),
    };
    match threads.unwrap_or("") {
        "" => {}
        s => match s.parse::<usize>() {
            Ok(n) if n >= 1 => {
                builder.worker_threads(n);
            }
            _ => return Err(format!("THREADS={s:?} is not a positive integer (unset it for tokio's default)")),
        },
    }
    builder.enable_all().build().map_err(|e| format!("cannot start tokio: {e}"))
}
