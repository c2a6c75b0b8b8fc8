//! gRPC: `stampede load --grpc` and `stampede check --contract grpc` against
//! the gRPC test servers.

use stampede_testkit::load::stampede;
use std::time::Duration;

mod check;
mod client_streams;
mod hosts;
mod load;
mod reflection;

/// contracts/grpc/bench.proto, for `--proto`.
fn proto() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../contracts/grpc/bench.proto").to_string()
}

/// A load that must fail before it starts: exit 2 and its one line.
fn refused(args: &[&str]) -> String {
    let out = stampede(&[&["load"][..], args].concat(), Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}
