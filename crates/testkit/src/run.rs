//! Helpers for the `stampede run` tests: a temporary folder with small app
//! manifests around `contract_server.py` (standard-library Python, no build),
//! scenario files, the results document, and a /proc scan for anything a
//! scenario left running: every `stampede run` a test starts carries a unique
//! marker in its environment (inherited by the servers, load generators and
//! checkers it starts) and every test app in its command line, so the scan
//! finds this test's processes and no one else's.

use crate::Stampede;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn stampede() -> Command {
    Stampede::new().env("NO_COLOR", "1").command()
}

/// A unique temporary folder, removed on drop.
pub struct Scratch {
    pub dir: PathBuf,
    pub marker: String,
}

impl Scratch {
    pub fn new(test: &str) -> Scratch {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        let marker = format!("stampede-run-{test}-{}-{nanos}", std::process::id());
        let dir = std::env::temp_dir().join(&marker);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch { dir, marker }
    }

    /// Writes `<dir>/<name>/app.toml` running the contract server with `env`
    /// set in front of it; returns the manifest's path.
    pub fn app(&self, name: &str, env: &str) -> PathBuf {
        let server = crate::fixture("contract_server.py");
        let app_dir = self.dir.join(name);
        std::fs::create_dir_all(&app_dir).unwrap();
        let manifest = format!(
            r#"name = "{name}"
description = "contract server for the run tests"
requires = ["python3"]
build = "true"
run = "{env} exec python3 {server} --name {name}-{marker}"
version = "python3 --version"
"#,
            server = server.display(),
            marker = self.marker,
        );
        let path = app_dir.join("app.toml");
        std::fs::write(&path, manifest).unwrap();
        path
    }

    /// Writes `<dir>/<name>/app.toml` with `text`; returns its path.
    pub fn manifest(&self, name: &str, text: &str) -> PathBuf {
        let dir = self.dir.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("app.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn scenario(&self, text: &str) -> PathBuf {
        let path = self.dir.join("scenario.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn out(&self) -> PathBuf {
        self.dir.join("results")
    }

    /// The results document written under `out()`, if any.
    pub fn results(&self) -> Option<serde_json::Value> {
        serde_json::from_str(&std::fs::read_to_string(self.results_path()?).ok()?).ok()
    }

    /// The path of the results.json written under `out()`, if any.
    pub fn results_path(&self) -> Option<PathBuf> {
        let entries = std::fs::read_dir(self.out()).ok()?;
        let dir = entries.filter_map(|e| e.ok()).map(|e| e.path()).find(|p| p.join("results.json").is_file())?;
        Some(dir.join("results.json"))
    }

    /// `stampede` with this test's marker in its environment.
    pub fn stampede(&self) -> Command {
        let mut cmd = stampede();
        cmd.env("STAMPEDE_RUN_TEST_MARKER", &self.marker);
        cmd
    }

    /// Runs `stampede run` to completion (with a generous deadline).
    pub fn run(&self, args: &[&str]) -> Output {
        wait_output(self.spawn_run(args), Duration::from_secs(240))
    }

    /// Starts `stampede run` in this folder, its output piped.
    pub fn spawn_run(&self, args: &[&str]) -> Child {
        self.stampede()
            .arg("run")
            .args(args)
            .current_dir(&self.dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Processes whose command line or environment carries this test's marker.
    pub fn leftovers(&self) -> Vec<(i32, String)> {
        leftovers(&self.marker)
    }
}

impl Drop for Scratch {
    /// Removes the folder, unless `STAMPEDE_TEST_KEEP` is set: then it is
    /// kept for a look at what a failed test's run wrote, and its path said.
    fn drop(&mut self) {
        if std::env::var_os("STAMPEDE_TEST_KEEP").is_some() {
            eprintln!("kept {}", self.dir.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn leftovers(marker: &str) -> Vec<(i32, String)> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| *pid != me)
        .filter_map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let marked = text.contains(marker) || String::from_utf8_lossy(&environ).contains(marker);
            marked.then_some((pid, text))
        })
        .collect()
}

pub fn wait_output(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "stampede run did not finish in {limit:?}\nstdout:\n{}\nstderr:\n{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Polls `cond` every 50 ms until it holds or `limit` passes.
pub fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    cond()
}

/// Checks nothing of the scenario is left, allowing a moment for the kernel
/// to reap what was killed last.
pub fn assert_nothing_left(scratch: &Scratch) {
    let clean = wait_for(Duration::from_secs(5), || scratch.leftovers().is_empty());
    assert!(clean, "processes left behind: {:?}", scratch.leftovers());
}
