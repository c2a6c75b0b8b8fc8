//! What Stampede's integration tests (crates/cli/tests) share, in one crate
//! so it is compiled once rather than into every test binary, as cargo's own
//! `cargo-test-support` is: running the real `stampede` binary with a
//! deadline, ports, processes and scratch directories, the servers that
//! implement the contract (with switchable faults), the servers that
//! misbehave on purpose (HTTP/1.1, TLS, HTTP/2, HTTP/3, gRPC), the reference
//! apps' lifecycle, a seeded PostgreSQL, and the network of ssh hosts.
//! Fixtures that are not Rust modules (a Python contract server, the cause
//! server compiled at test time, Java and Go lock servers, a fake `perf`)
//! live in crates/testkit/fixtures/ and are reached with [`fixture`].

pub mod app;
pub mod arena;
pub mod causes;
pub mod cmd;
pub mod contract;
pub mod db;
pub mod explain;
pub mod hostile;
pub mod hosts;
pub mod load;
pub mod net;
pub mod process;
pub mod proto;
pub mod report;
pub mod run;

pub use cmd::{Outcome, Stampede};

use std::path::{Path, PathBuf};

/// The `stampede` binary cargo built beside the running test binary:
/// tests run from target/<profile>/deps/, the binary is in target/<profile>/.
/// (`env!("CARGO_BIN_EXE_stampede")` exists only in the tests' own crate.)
pub fn bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<test>");
    let bin = profile_dir.join("stampede");
    assert!(bin.exists(), "{} is missing: run the tests through `cargo test -p stampede`", bin.display());
    bin
}

/// A scratch directory under target/tmp that survives the test for
/// inspection (what `CARGO_TARGET_TMPDIR` is to an integration test).
pub fn tmp_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let target = exe.ancestors().nth(3).expect("target/<profile>/deps/<test>");
    let dir = target.join("tmp");
    std::fs::create_dir_all(&dir).expect("create target/tmp");
    dir
}

/// The repository's root (apps/, docs/, contracts/ are found from here).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A file or folder in crates/testkit/fixtures/.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}
