//! The integration tests that need no machine of their own, as one test
//! binary. Each file here was a binary of its own, and cargo compiled the
//! shared support modules into every one of them and ran them one after the
//! other: 48 optimised compilations made the test build the longest step of
//! CI. The tests that pin CPUs or judge latency against a computed truth
//! run one at a time in tests/serial.rs, so nothing else runs beside them;
//! those that build the reference apps or run perf on them stay binaries of
//! their own (crates/cli/Cargo.toml lists them). `autotests = false` means a
//! new file in tests/ is compiled only when it is named here, in serial.rs or
//! in Cargo.toml; `every_test_file_is_compiled` fails otherwise.

mod common;
mod support;
mod support_db;
mod support_hostile;
mod support_proto;
mod support_report;
mod support_run;

mod check;
mod check_arena;
mod check_db;
mod check_grpc;
mod check_tfb_config;
mod compare;
mod engines;
mod error_counts;
mod grpc;
mod hdr_log;
mod hostile;
mod http2;
mod http3;
mod http3_check;
mod limits;
mod load;
mod mix;
mod openmetrics;
mod pipeline;
mod report;
mod run;
mod run_children;
mod run_database;
mod run_hdr_log;
mod run_names;
mod run_plan;
mod run_slow_files;
mod run_tfb;
mod secrets;
mod spec;
mod stages;
mod tls;

/// A file in tests/ that is neither a `[[test]]` of crates/cli/Cargo.toml
/// nor a module of one (this binary, tests/serial.rs) would never be
/// compiled (autotests = false).
#[test]
fn every_test_file_is_compiled() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let roots: Vec<&str> =
        manifest.lines().filter_map(|l| l.strip_prefix("path = \"tests/")?.strip_suffix('"')).collect();
    assert!(roots.contains(&"it.rs") && roots.contains(&"serial.rs"), "{roots:?}");
    let modules: String =
        roots.iter().map(|root| std::fs::read_to_string(dir.join("tests").join(root)).unwrap()).collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(dir.join("tests")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(stem) = name.strip_suffix(".rs") else { continue };
        if !roots.contains(&name.as_str()) && !modules.contains(&format!("\nmod {stem};\n")) {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "tests/{missing:?}: add `mod NAME;` to tests/it.rs or tests/serial.rs, or a [[test]] to crates/cli/Cargo.toml"
    );
}
