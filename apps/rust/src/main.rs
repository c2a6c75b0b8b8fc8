//! Stampede's Rust reference server: the benchmark contract (apps/CONTRACT.md)
//! served by hyper 1.x on tokio, written the way a Rust user would write it, so
//! that numbers measured against it describe hyper and tokio. This file reads
//! the environment and builds the tokio runtime; `server` owns the sockets and
//! shutdown, `routes` the HTTP answers, `work` the computations.
//!
//! Run it by hand from apps/rust:
//!
//! ```text
//! CARGO_TARGET_DIR=target cargo build --release
//! PORT=9009 ./target/release/stampede-app-rust
//! curl -si http://127.0.0.1:9009/plaintext
//! ```
//!
//! Environment: `PORT` (default 9009), `THREADS` (tokio worker threads; unset or
//! empty keeps tokio's default of one per CPU) and `TOKIO_FLAVOR` (`multi`, the
//! default, or `current` for a single-threaded runtime, which ignores THREADS).
//! `DATABASE_URL` (e.g. `postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:5432/hello_world`)
//! and `DATABASE_POOL_SIZE` (default 8) feed the database endpoints; without a
//! URL the server still runs and those endpoints answer 503. `HTTP2=1` serves
//! HTTP/2 (h2c by prior knowledge) beside HTTP/1.1 on the TCP port (`server`);
//! `HTTP3=1` adds an HTTP/3 listener on the same port number over UDP (`http3`).

mod database;
mod fortunes;
mod http3;
mod routes;
mod server;
mod work;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::runtime::{Builder, Runtime};

/// Which tokio scheduler runs the server (the manifest's `runtime` knob).
#[derive(Debug, PartialEq)]
enum Flavor {
    MultiThread { worker_threads: Option<usize> },
    CurrentThread,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("stampede-app-rust: error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let port = port_from(std::env::var("PORT").ok().as_deref())?;
    let flavor = flavor_from(
        std::env::var("TOKIO_FLAVOR").ok().as_deref(),
        std::env::var("THREADS").ok().as_deref(),
    )?;
    let db = database::Database::from_env(
        std::env::var("DATABASE_URL").ok().as_deref(),
        std::env::var("DATABASE_POOL_SIZE").ok().as_deref(),
    )?;
    let http2 = std::env::var("HTTP2").ok();
    let http2 = switch_from("HTTP2", http2.as_deref(), "HTTP/2 beside HTTP/1.1")?;
    let http3 = std::env::var("HTTP3").ok();
    let http3 = switch_from("HTTP3", http3.as_deref(), "an HTTP/3 listener")?;
    let runtime = build_runtime(&flavor)?;
    runtime.block_on(async {
        let addr = SocketAddr::from(([0, 0, 0, 0], port));
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| format!("cannot listen on {addr} (set PORT to a free port): {e}"))?;
        let db = Arc::new(db);
        let quic = match http3 {
            true => Some(http3::listen(addr, db.clone())?),
            false => None,
        };
        let served = server::serve(listener, db, http2)
            .await
            .map_err(|e| format!("serving on {addr}: {e}"));
        if let Some(quic) = quic {
            quic.close(0u32.into(), b"shutting down");
        }
        served
    })
    // Dropping the runtime here cancels any request still running after the
    // shutdown grace period and joins every worker thread.
}

fn port_from(value: Option<&str>) -> Result<u16, String> {
    match value {
        None | Some("") => Ok(9009),
        Some(s) => s
            .parse()
            .map_err(|_| format!("PORT={s:?} is not a TCP port number (1-65535)")),
    }
}

/// An on/off variable `name` (`HTTP2`, `HTTP3`): 1 turns on `what`.
fn switch_from(name: &str, value: Option<&str>, what: &str) -> Result<bool, String> {
    match value.unwrap_or("") {
        "" | "0" => Ok(false),
        "1" => Ok(true),
        other => Err(format!(
            "{name}={other:?} is unknown (use 1 for {what}, 0 or unset for none)"
        )),
    }
}

fn flavor_from(flavor: Option<&str>, threads: Option<&str>) -> Result<Flavor, String> {
    match flavor.unwrap_or("") {
        "" | "multi" => {}
        "current" => return Ok(Flavor::CurrentThread),
        other => {
            return Err(format!(
                "TOKIO_FLAVOR={other:?} is unknown (use `multi` or `current`)"
            ))
        }
    }
    let worker_threads = match threads.unwrap_or("") {
        "" => None,
        s => match s.parse::<usize>() {
            Ok(n) if n >= 1 => Some(n),
            _ => {
                return Err(format!(
                    "THREADS={s:?} is not a positive integer (unset it for tokio's default)"
                ))
            }
        },
    };
    Ok(Flavor::MultiThread { worker_threads })
}

fn build_runtime(flavor: &Flavor) -> Result<Runtime, String> {
    let mut builder = match flavor {
        Flavor::CurrentThread => Builder::new_current_thread(),
        Flavor::MultiThread { worker_threads } => {
            let mut builder = Builder::new_multi_thread();
            if let Some(n) = worker_threads {
                builder.worker_threads(*n);
            }
            builder
        }
    };
    builder
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_defaults_follow_the_contract() {
        assert_eq!(port_from(None), Ok(9009));
        assert_eq!(port_from(Some("")), Ok(9009));
        assert_eq!(port_from(Some("8080")), Ok(8080));
        assert!(port_from(Some("http")).is_err());
        assert_eq!(
            flavor_from(None, None),
            Ok(Flavor::MultiThread {
                worker_threads: None
            })
        );
        assert_eq!(
            flavor_from(Some("multi"), Some("2")),
            Ok(Flavor::MultiThread {
                worker_threads: Some(2)
            })
        );
        assert_eq!(
            flavor_from(Some("current"), Some("4")),
            Ok(Flavor::CurrentThread)
        );
        assert!(flavor_from(None, Some("0")).is_err());
        assert!(flavor_from(Some("single"), None).is_err());
        assert_eq!(switch_from("HTTP3", None, "x"), Ok(false));
        assert_eq!(switch_from("HTTP3", Some("1"), "x"), Ok(true));
        let error = switch_from("HTTP2", Some("yes"), "x").unwrap_err();
        assert!(error.starts_with("HTTP2=\"yes\""), "{error}");
    }
}
