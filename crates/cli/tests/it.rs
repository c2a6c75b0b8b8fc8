//! The integration tests that need no machine of their own, as one test
//! binary. Each file here was a binary of its own, and cargo compiled the
//! shared support modules into every one of them and ran them one after the
//! other: 48 optimised compilations made the test build the longest step of
//! CI. The tests that pin CPUs, judge latency against a computed truth,
//! build the reference apps or run perf stay binaries of their own
//! (crates/cli/Cargo.toml lists them), so nothing else runs beside them.
//! `autotests = false` means a new file in tests/ is compiled only when it is
//! named here or in Cargo.toml; `every_test_file_is_compiled` fails otherwise.

mod common;
mod support;
mod support_db;
mod support_hostile;
mod support_proto;
mod support_report;
mod support_run;

mod check;
mod check_db;
mod check_tfb_config;
mod compare;
mod engines;
mod error_counts;
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
mod run_tfb;
mod spec;
mod stages;
mod tls;

/// A file in tests/ that is neither a module of this binary nor a `[[test]]`
/// of crates/cli/Cargo.toml would never be compiled (autotests = false).
#[test]
fn every_test_file_is_compiled() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let modules = std::fs::read_to_string(dir.join("tests/it.rs")).unwrap();
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(dir.join("tests")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(stem) = name.strip_suffix(".rs") else { continue };
        if stem != "it"
            && !modules.contains(&format!("\nmod {stem};\n"))
            && !manifest.contains(&format!("path = \"tests/{name}\""))
        {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "tests/{missing:?}: add `mod NAME;` to tests/it.rs or a [[test]] to crates/cli/Cargo.toml"
    );
}
