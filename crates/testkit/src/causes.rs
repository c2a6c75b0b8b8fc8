//! Helpers for the tests of `stampede explain`'s causes (tests/serial/explain/: lock.rs,
//! quiet.rs, frames.rs, locks.rs): `crates/testkit/fixtures/cause_server.rs`
//! compiled with `rustc` into the test's folder (frame pointers and symbols,
//! so perf names its functions), a manifest and a scenario around it, the
//! real `stampede run` and then `stampede explain` on its results, both text
//! and `--json` (explain_scenario does the same for any apps' manifests,
//! one run each). Each cause scenario measures 3 s after a 500 ms warmup with
//! the probe sampling every 10 ms, its server bound to a free port on 127.0.0.1;
//! `stampede run` stops the server and the test checks nothing is left.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::run;
pub use run::{text, Scratch};
use serde_json::Value;

/// What a scenario left for one run: the results document, and explain's
/// two outputs for that run.
pub struct Explained {
    pub results: Value,
    pub explain: Value,
    pub human: String,
    /// The run's index in `results["runs"]`.
    pub index: usize,
}

impl Explained {
    pub fn run(&self) -> &Value {
        &self.results["runs"][self.index]
    }

    pub fn share(&self, cause: &str) -> f64 {
        self.explain["share"][cause].as_f64().unwrap_or_else(|| panic!("share.{cause} missing: {}", self.explain))
    }

    pub fn chance(&self, cause: &str) -> f64 {
        self.explain["chance"][cause].as_f64().unwrap_or_else(|| panic!("chance.{cause} missing: {}", self.explain))
    }

    /// The microstate shares of a thread group of the server.
    pub fn group(&self, name: &str) -> Value {
        let groups = self.run()["server"]["microstates"]["groups"].as_array().cloned().unwrap_or_default();
        groups
            .into_iter()
            .find(|g| g["group"] == name)
            .unwrap_or_else(|| panic!("no thread group {name}: {}", self.run()["server"]["microstates"]["groups"]))
    }
}

/// Compiles the cause server into `dir`; `None` (with a visible SKIP line) without rustc.
pub fn build_server(dir: &Path) -> Option<PathBuf> {
    let source = crate::fixture("cause_server.rs");
    let bin = dir.join("cause_server");
    let status = Command::new("rustc")
        .args(["--edition", "2021", "-O", "-g", "-C", "force-frame-pointers=yes", "-o"])
        .arg(&bin)
        .arg(&source)
        .status();
    match status {
        Ok(s) if s.success() => Some(bin),
        Ok(s) => panic!("rustc {} failed: {s}", source.display()),
        Err(e) => {
            eprintln!("SKIP: rustc cannot run ({e})");
            None
        }
    }
}

/// Runs the cause server in `mode` under `stampede run` with `load` (the
/// profile's load lines) and `extra` arguments, then explains the results.
pub fn run_and_explain(s: &Scratch, bin: &Path, mode: &str, load: &str, extra: &[&str]) -> Explained {
    let manifest = s.manifest(
        mode,
        &format!(
            "name = \"{mode}\"\ndescription = \"explain cause server\"\nbuild = \"true\"\nrun = \"exec {} {mode} {}\"\nversion = \"true\"\n",
            bin.display(),
            s.marker
        ),
    );
    let profile = format!("name = \"{mode}\"\npath = \"/\"\nduration = \"3s\"\nwarmup = \"500ms\"\n{load}\n");
    explain_scenario(s, &[manifest], &profile, extra).remove(0)
}

/// Runs the apps of `manifests` under `stampede run` with one profile
/// (`profile`: its lines, name and path included) and `extra` arguments,
/// then explains the results: one [`Explained`] per run, in the
/// document's order.
pub fn explain_scenario(s: &Scratch, manifests: &[PathBuf], profile: &str, extra: &[&str]) -> Vec<Explained> {
    let apps: Vec<String> = manifests.iter().map(|m| format!("\"{}\"", m.display())).collect();
    let scenario = s.scenario(&format!(
        "apps = [{}]\ncheck = false\nsample_interval = \"10ms\"\n[[profiles]]\n{profile}\n",
        apps.join(", ")
    ));
    let out_dir = s.out();
    let mut args = vec![scenario.to_str().unwrap(), "--out", out_dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    // Generous: the shipped apps are built first (go build, npm ci, mvn).
    let out = run::wait_output(s.spawn_run(&args), Duration::from_secs(900));
    let stderr = text(&out.stderr);
    // 1: a run marked invalid (a loaded machine can make the generator fall
    // behind its rate); its results are still written and explained.
    assert!(matches!(out.status.code(), Some(0 | 1)), "stampede run failed:\n{stderr}");
    run::assert_nothing_left(s);
    let results_path = s.results_path().expect("a results folder");
    let results: Value = serde_json::from_str(&std::fs::read_to_string(&results_path).unwrap()).unwrap();
    let explain = |json: bool| {
        let mut cmd = s.stampede();
        cmd.arg("explain").arg(&results_path);
        if json {
            cmd.arg("--json");
        }
        // Into a file, not a pipe: wait_output reads the pipes only once the
        // child has ended, and a JSON document larger than a pipe's buffer
        // would block it.
        let printed = s.dir.join(if json { "explain.json" } else { "explain.txt" });
        let file = std::fs::File::create(&printed).unwrap();
        let out = run::wait_output(
            cmd.stdout(file).stderr(std::process::Stdio::piped()).spawn().unwrap(),
            Duration::from_secs(60),
        );
        assert_eq!(out.status.code(), Some(0), "stampede explain failed:\n{}", text(&out.stderr));
        std::fs::read_to_string(&printed).unwrap()
    };
    let doc: Value = serde_json::from_str(&explain(true)).expect("explain --json prints JSON");
    assert_eq!(doc["schema"], "stampede.explain/1");
    let human = explain(false);
    eprintln!("{human}");
    let runs = results["runs"].as_array().cloned().unwrap_or_default();
    let explained = doc["runs"].as_array().cloned().unwrap_or_default();
    assert_eq!(runs.len(), explained.len(), "one explanation per run: {human}");
    // The human text has one paragraph per run, in the same order.
    let paragraphs: Vec<String> = human.split("\n\n").map(str::to_string).collect();
    explained
        .into_iter()
        .enumerate()
        .map(|(index, explain)| Explained {
            results: results.clone(),
            explain,
            human: paragraphs.get(index).cloned().unwrap_or_else(|| human.clone()),
            index,
        })
        .collect()
}
