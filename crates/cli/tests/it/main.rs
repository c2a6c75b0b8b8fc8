//! The integration tests that need no machine of their own, as one test
//! binary, by topic: one folder per verb or subject (check/, grpc/, load/,
//! report/, run/), one file per feature, the shape of cargo's own
//! tests/testsuite. Each file was once a binary of its own, and cargo compiled
//! the shared support into every one of them and ran them one after the
//! other; the support is now the crate stampede-testkit (crates/testkit),
//! compiled once. The tests that pin CPUs or judge latency against a computed
//! truth run one at a time in tests/serial/, so nothing else runs beside
//! them; those that build the reference apps or run perf on them stay
//! binaries of their own (crates/cli/Cargo.toml lists them).
//! `autotests = false` means a new file in tests/ is compiled only when a
//! `mod` line names it; `every_test_file_is_compiled` fails otherwise.

mod check;
mod grpc;
mod load;
mod report;
mod run;

/// A file in tests/ that is neither a `[[test]]` of crates/cli/Cargo.toml
/// nor a module of one (`mod NAME;` in the main.rs or mod.rs of its folder)
/// would never be compiled (autotests = false).
#[test]
fn every_test_file_is_compiled() {
    use std::path::{Path, PathBuf};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let roots: Vec<PathBuf> = manifest
        .lines()
        .filter_map(|l| l.strip_prefix("path = \"tests/")?.strip_suffix('"'))
        .map(|root| dir.join("tests").join(root))
        .collect();
    assert!(roots.iter().any(|r| r.ends_with("it/main.rs")) && roots.iter().any(|r| r.ends_with("serial/main.rs")));
    let mut missing = Vec::new();
    let mut folders = vec![dir.join("tests")];
    while let Some(folder) = folders.pop() {
        // The file that declares this folder's modules, if it has one.
        let parent = ["main.rs", "mod.rs"].iter().map(|f| folder.join(f)).find(|f| f.exists());
        let declared = parent.as_ref().map(|p| std::fs::read_to_string(p).unwrap()).unwrap_or_default();
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            let stem = if path.is_dir() {
                folders.push(path.clone());
                if roots.iter().any(|r| r.starts_with(&path)) {
                    continue;
                }
                name.as_str()
            } else if let Some(stem) = name.strip_suffix(".rs") {
                if roots.contains(&path) || name == "mod.rs" {
                    continue;
                }
                stem
            } else {
                continue;
            };
            let declares = |vis: &str| declared.contains(&format!("\n{vis}mod {stem};\n"));
            if !["", "pub(crate) "].into_iter().any(declares) {
                missing.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{missing:?}: add `mod NAME;` to the main.rs or mod.rs of its folder (tests/it/ may share the \
         machine, tests/serial/ runs alone), or a [[test]] to crates/cli/Cargo.toml"
    );
}
