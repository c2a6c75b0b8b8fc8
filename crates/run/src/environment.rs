//! How a result was made: tool version, the repository's git commit, the
//! command line, CPU model, kernel, core count and pinning. Each app's runtime
//! version is added as the app is prepared.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::record::{Environment, PinningRecord};
use crate::scenario::Scenario;

pub fn collect(scenario: &Scenario, repo_hint: &Path, tool_version: &str) -> Environment {
    // Each word masked alone, before quoting: `-H 'Cookie: …'`, `--set database.url=…`.
    let redaction = scenario.redaction();
    let command_line = std::env::args()
        .map(|a| redaction.text(&a))
        .map(|a| if a.contains(' ') { format!("{a:?}") } else { a })
        .collect::<Vec<_>>()
        .join(" ");
    Environment {
        tool_version: tool_version.to_string(),
        git_commit: git_commit(repo_hint),
        command_line,
        cpu_model: stampede_probe::cpu_model(),
        kernel: stampede_probe::kernel(),
        cores: stampede_probe::machine_cores(),
        pinning: PinningRecord {
            server: scenario.pinning.server.as_ref().map(|t| t.0.clone()),
            loadgen: scenario.pinning.loadgen.as_ref().map(|t| t.0.clone()),
        },
        runtimes: BTreeMap::new(),
        started_unix_s: SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        server_host: None,
    }
}

/// `git rev-parse HEAD` in `dir`, with `-dirty` when the tree has changes.
fn git_commit(dir: &Path) -> Option<String> {
    let out = Command::new("git").args(["rev-parse", "HEAD"]).current_dir(dir).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .current_dir(dir)
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    Some(if dirty { format!("{commit}-dirty") } else { commit })
}
