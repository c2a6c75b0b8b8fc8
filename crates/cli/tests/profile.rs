//! `stampede profile` and `stampede run --profile` through the real binary:
//! the reference apps profiled under load on `/cpu/…` must name the
//! contract's work function (Go, Rust) or a JavaScript function (Node) among
//! the top frames; `run --profile` must store a flame graph and folded stacks
//! beside results.json; a machine without perf, or one that refuses it, must
//! get one clear line (and `run` a complete result without a profile); bad
//! flags and files are named. End-to-end tests skip with a visible `SKIP`
//! line when perf or the app's toolchain is missing, never silently.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use stampede_testkit::app::{announce, apps_root, load_manifest, on_path, BUILD_DEADLINE};
use stampede_testkit::net::{free_port, wait_for_status};
use stampede_testkit::process::{kill_group, run_with_deadline, Finished};
use stampede_testkit::Stampede;

const DEADLINE: Duration = Duration::from_secs(120);

/// Profiling tests load the machine: on two cores, one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn stampede() -> Command {
    Stampede::new().command()
}

fn run(command: &mut Command) -> Finished {
    run_with_deadline(command, DEADLINE).unwrap_or_else(|e| panic!("{e}"))
}

/// An app build: the Rust app with the profiling settings compiles every
/// dependency again, which once took more than [`DEADLINE`] beside another build.
fn build(command: &mut Command) -> Finished {
    run_with_deadline(command, BUILD_DEADLINE).unwrap_or_else(|e| panic!("{e}"))
}

fn tempdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("profile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The stderr lines of a failed command, which must be exactly one.
fn one_error_line(done: &Finished) -> String {
    assert_eq!(done.code(), Some(2), "{}", done.output());
    let lines: Vec<&str> = done.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "want one line:\n{}", done.output());
    assert!(lines[0].starts_with("stampede: error: "), "{}", lines[0]);
    lines[0].to_string()
}

#[test]
fn without_perf_on_path_one_line_says_how_to_install_it() {
    let out = tempdir("noperf");
    let empty = tempdir("empty-path");
    let pid = std::process::id().to_string();
    let done = run(stampede().env("PATH", &empty).args(["profile", "--pid", &pid, "-d", "1s", "--out"]).arg(&out));
    let line = one_error_line(&done);
    assert!(line.contains("perf is not on PATH") && line.contains("apt-get install linux-perf"), "{line}");
    assert!(!out.join("profile.json").exists(), "no profile may be written without perf");
}

#[test]
fn perf_refused_by_paranoid_setting_is_one_line_with_the_sysctl() {
    let fake = stampede_testkit::fixture("fake_perf");
    let out = tempdir("denied");
    let path = format!("{}:/usr/bin:/bin", fake.display());
    let pid = std::process::id().to_string();
    let done = run(stampede().env("PATH", path).args(["profile", "--pid", &pid, "-d", "1s", "--out"]).arg(&out));
    let line = one_error_line(&done);
    assert!(line.contains("perf_event_paranoid") && line.contains("sysctl"), "{line}");
}

#[test]
fn a_pid_that_does_not_exist_is_named() {
    let out = tempdir("nopid");
    // Above any pid_max the kernel allows (2^22).
    let done = run(stampede().args(["profile", "--pid", "4999999", "--out"]).arg(&out));
    let line = one_error_line(&done);
    assert!(line.contains("--pid 4999999: no such process"), "{line}");
}

#[test]
fn a_zero_frequency_is_named() {
    let out = tempdir("freq");
    let pid = std::process::id().to_string();
    let done = run(stampede().args(["profile", "--pid", &pid, "--frequency", "0", "--out"]).arg(&out));
    assert!(one_error_line(&done).contains("--frequency 0"), "{}", done.output());
}

#[test]
fn diff_of_two_folded_files_writes_a_differential_flame_graph() {
    let dir = tempdir("diff");
    std::fs::write(dir.join("a.folded"), "srv;main;parse 80\nsrv;main;work 20\n").unwrap();
    std::fs::write(dir.join("b.folded"), "srv;main;parse 20\nsrv;main;work 80\n").unwrap();
    let done = run(stampede()
        .args(["profile", "--diff"])
        .arg(dir.join("a.folded"))
        .arg(dir.join("b.folded"))
        .arg("--out")
        .arg(&dir));
    assert_eq!(done.code(), Some(0), "{}", done.output());
    let svg = std::fs::read_to_string(dir.join("flame-diff.svg")).unwrap();
    assert!(svg.contains("work (80 samples, 80.00%; +60.00%)"), "work grew by 60 points");
    assert!(svg.contains("parse (20 samples, 20.00%; -60.00%)"), "parse shrank by 60 points");
}

#[test]
fn diff_with_a_bad_folded_file_names_file_and_line() {
    let dir = tempdir("baddiff");
    std::fs::write(dir.join("a.folded"), "srv;main 3\n").unwrap();
    std::fs::write(dir.join("b.folded"), "srv;main 3\nsrv;oops\n").unwrap();
    let done = run(stampede()
        .args(["profile", "--diff"])
        .arg(dir.join("a.folded"))
        .arg(dir.join("b.folded"))
        .arg("--out")
        .arg(&dir));
    let line = one_error_line(&done);
    assert!(line.contains("b.folded: line 2"), "{line}");
}

/// The `[profile]` table of an app's manifest: environment and arguments for
/// the server, and environment for its build, under profiling.
#[derive(Default)]
struct ProfileSettings {
    env: BTreeMap<String, String>,
    args: String,
    build_env: BTreeMap<String, String>,
}

fn profile_settings(app: &str) -> ProfileSettings {
    let path = apps_root().join(app).join("app.toml");
    let manifest = load_manifest(&path).unwrap_or_else(|e| panic!("{e}"));
    let args = manifest.profile.as_ref().and_then(|t| t.get("args")).and_then(|v| v.as_str()).unwrap_or("");
    ProfileSettings {
        env: manifest.profile_strings("env"),
        args: args.to_string(),
        build_env: manifest.profile_strings("build_env"),
    }
}

/// Starts `program args…` in `dir` on `port` in its own process group.
fn start_server(
    dir: &Path,
    program: &Path,
    args: &str,
    env: &BTreeMap<String, String>,
    port: u16,
    log: &Path,
) -> Child {
    let log = std::fs::File::create(log).unwrap();
    let mut command = Command::new(program);
    command
        .args(args.split_whitespace())
        .current_dir(dir)
        .env("PORT", port.to_string())
        .envs(env)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .process_group(0);
    command.spawn().unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()))
}

/// Profiles a running server under `/cpu/20000` load and returns the parsed
/// profile.json, after checking the files it names were written.
fn profile_under_load(name: &str, server: &mut Child, port: u16, log: &Path) -> Value {
    let ready =
        wait_for_status(port, "/plaintext", 200, Duration::from_secs(60), || matches!(server.try_wait(), Ok(Some(_))));
    assert!(ready.is_some(), "{name} did not become ready:\n{}", std::fs::read_to_string(log).unwrap_or_default());
    let out = tempdir(name);
    let url = format!("http://127.0.0.1:{port}/cpu/20000");
    let load = std::thread::spawn(move || run(stampede().args(["load", &url, "-d", "4s", "-c", "4", "--json"])));
    std::thread::sleep(Duration::from_millis(500)); // let the load reach the server first
    let pid = server.id().to_string();
    let done = run(stampede().args(["profile", "--pid", &pid, "-d", "2s", "--json", "--out"]).arg(&out));
    let load = load.join().unwrap();
    kill_group(server, libc::SIGTERM);
    let _ = server.wait();
    let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
    assert_eq!(load.code(), Some(0), "load failed:\n{}", load.output());
    assert_eq!(done.code(), Some(0), "profile failed:\n{}", done.output());
    let profile: Value = serde_json::from_str(&done.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", done.output()));
    assert_eq!(profile["schema"], "stampede.profile/1");
    assert!(profile["samples"].as_u64().unwrap() > 20, "too few samples: {profile}");
    for key in ["flame_svg", "folded"] {
        let file = out.join(profile[key].as_str().unwrap());
        assert!(std::fs::metadata(&file).map(|m| m.len() > 0).unwrap_or(false), "{} missing", file.display());
    }
    let on_disk: Value = serde_json::from_str(&std::fs::read_to_string(out.join("profile.json")).unwrap()).unwrap();
    assert_eq!(on_disk, profile, "profile.json differs from --json output");
    profile
}

fn top_frames(profile: &Value) -> Vec<(String, String)> {
    profile["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (row["frame"].as_str().unwrap().to_string(), row["kind"].as_str().unwrap().to_string()))
        .collect()
}

fn skip_unless(app: &str, tools: &[&str]) -> bool {
    for tool in tools.iter().chain(&["perf"]) {
        if !on_path(tool) {
            announce(&format!("SKIP profile_{app}: {tool} is not on PATH"));
            return true;
        }
    }
    false
}

#[test]
fn profile_go_names_xorshift() {
    if skip_unless("go", &["go"]) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let settings = profile_settings("go");
    let dir = apps_root().join("go");
    let work = tempdir("go-build");
    let binary = work.join("server");
    let built = build(
        Command::new("go").arg("build").arg("-o").arg(&binary).arg(".").current_dir(&dir).envs(&settings.build_env),
    );
    assert_eq!(built.code(), Some(0), "go build:\n{}", built.output());
    let port = free_port();
    let log = work.join("server.log");
    let mut server = start_server(&dir, &binary, &settings.args, &settings.env, port, &log);
    let profile = profile_under_load("go", &mut server, port, &log);
    let top = top_frames(&profile);
    assert!(top.iter().any(|(f, _)| f == "main.xorshift"), "main.xorshift not in the top frames: {top:?}");
}

#[test]
fn profile_rust_names_xorshift() {
    if skip_unless("rust", &["cargo"]) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let settings = profile_settings("rust");
    let dir = apps_root().join("rust");
    // The app's own target folder, built with the same settings by the apps
    // test (stampede_testkit::app::check_app) before this one in `make
    // test`'s apps lane: then this build has nothing left to compile.
    let target = dir.join("target");
    let built = build(
        Command::new("cargo")
            .args(["build", "--release", "--quiet"])
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", &target)
            .envs(&settings.build_env),
    );
    assert_eq!(built.code(), Some(0), "cargo build:\n{}", built.output());
    let binary = target.join("release/stampede-app-rust");
    let work = tempdir("rust-run");
    let port = free_port();
    let log = work.join("server.log");
    let mut server = start_server(&dir, &binary, &settings.args, &settings.env, port, &log);
    let profile = profile_under_load("rust", &mut server, port, &log);
    let top = top_frames(&profile);
    assert!(top.iter().any(|(f, _)| f.ends_with("work::xorshift")), "work::xorshift not in the top frames: {top:?}");
}

#[test]
fn profile_node_names_the_apps_javascript_functions() {
    if skip_unless("node", &["node"]) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let settings = profile_settings("node");
    let dir = apps_root().join("node");
    let work = tempdir("node-run");
    let port = free_port();
    let log = work.join("server.log");
    let node = PathBuf::from("node");
    let args = format!("{} server.js", settings.args);
    let mut server = start_server(&dir, &node, &args, &settings.env, port, &log);
    let profile = profile_under_load("node", &mut server, port, &log);
    let top = top_frames(&profile);
    // V8 inlines xorshift into its caller, so the hot frame is the app's
    // route handler: a named JavaScript function of routes.js or work.js.
    assert!(
        top.iter().any(|(f, kind)| kind == "jit" && (f.contains("/routes.js:") || f.contains("/work.js:"))),
        "no JIT frame naming a function of the app's JavaScript in the top frames: {top:?}"
    );
}

const RUN_SCENARIO: &str = r#"
apps = ["APP"]
[[profiles]]
path = "/cpu/20000"
connections = 2
duration = "2s"
warmup = "500ms"
"#;

/// A folder holding only symlinks to `sh`, `true` and the real `python3`: a
/// PATH on which the contract server runs but perf is absent.
fn path_without_perf(dir: &Path) -> PathBuf {
    let bin = dir.join("bin-without-perf");
    std::fs::create_dir_all(&bin).unwrap();
    let python =
        Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output().expect("python3 runs");
    let python = String::from_utf8(python.stdout).unwrap().trim().to_string();
    for (name, target) in [("sh", "/bin/sh".to_string()), ("true", "/bin/true".to_string()), ("python3", python)] {
        let _ = std::fs::remove_file(bin.join(name));
        std::os::unix::fs::symlink(target, bin.join(name)).unwrap();
    }
    assert!(!bin.join("perf").exists());
    bin
}

fn results_dir(s: &stampede_testkit::run::Scratch) -> PathBuf {
    std::fs::read_dir(s.out())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.json").is_file())
        .expect("a results folder")
}

#[test]
fn run_profile_without_perf_says_so_once_and_completes_without_a_profile() {
    // The scratch folder's name must not say "perf": run's plan names it.
    let s = stampede_testkit::run::Scratch::new("profile-no-tool");
    let app = s.app("alpha", "");
    let scenario = s.scenario(&RUN_SCENARIO.replace("APP", app.to_str().unwrap()));
    let bin = path_without_perf(&s.dir);
    let child = s
        .stampede()
        .env("PATH", &bin)
        .args(["run", scenario.to_str().unwrap(), "--profile", "--out", s.out().to_str().unwrap()])
        .current_dir(&s.dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = stampede_testkit::run::wait_output(child, Duration::from_secs(120));
    let stderr = stampede_testkit::run::text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("perf")).collect();
    assert_eq!(lines.len(), 1, "want one line about perf:\n{stderr}");
    assert!(
        lines[0].contains("--profile: perf is not on PATH") && lines[0].contains("without profiles"),
        "{}",
        lines[0]
    );
    let doc = s.results().expect("results.json");
    let run = &doc["runs"][0];
    assert_eq!(run["valid"], true, "{run}");
    assert!(run["load"]["requests"].as_u64().unwrap() > 0, "the measurement is complete");
    assert!(run["cpu_profile"].is_null(), "no profile without perf: {}", run["cpu_profile"]);
    let flames = std::fs::read_dir(results_dir(&s))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("flame-"))
        .count();
    assert_eq!(flames, 0);
    assert!(s.leftovers().is_empty(), "left running: {:?}", s.leftovers());
}

#[test]
fn run_profile_stores_flame_graph_and_folded_stacks_beside_results() {
    if !on_path("perf") || !on_path("python3") {
        announce(
            "SKIP run_profile_stores_flame_graph_and_folded_stacks_beside_results: perf or python3 is not on PATH",
        );
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = stampede_testkit::run::Scratch::new("profile-run");
    let app = s.app("alpha", "");
    let scenario = s.scenario(&RUN_SCENARIO.replace("APP", app.to_str().unwrap()));
    let out = s.run(&[
        scenario.to_str().unwrap(),
        "--profile",
        "--profile-frequency",
        "199",
        "--out",
        s.out().to_str().unwrap(),
    ]);
    let stderr = stampede_testkit::run::text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    let doc = s.results().expect("results.json");
    let run = &doc["runs"][0];
    assert_eq!(run["valid"], true, "{run}");
    let profile = &run["cpu_profile"];
    assert_eq!(profile["schema"], "stampede.profile/1", "{run}");
    assert_eq!(profile["frequency_hz"], 199);
    // Sampling covers the measured 2 s only, not the warmup or the check.
    let secs = profile["duration_s"].as_f64().unwrap();
    assert!((1.8..3.0).contains(&secs), "profiled for {secs} s");
    assert!(profile["samples"].as_u64().unwrap() > 20, "{profile}");
    let dir = results_dir(&s);
    let svg = dir.join(profile["flame_svg"].as_str().unwrap());
    let folded = dir.join(profile["folded"].as_str().unwrap());
    assert!(svg.file_name().unwrap().to_string_lossy().starts_with("flame-alpha-"), "{}", svg.display());
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"), "{}", svg.display());
    assert!(std::fs::metadata(&folded).unwrap().len() > 0);
    let top = profile["top"].as_array().unwrap();
    assert!(!top.is_empty() && top.len() <= 20, "{profile}");
    // CPython 3.11 shows its interpreter loop, not Python names (docs/profile.md).
    let names: Vec<&str> = top.iter().map(|r| r["frame"].as_str().unwrap()).collect();
    assert!(names.iter().any(|n| n.contains("_PyEval_EvalFrameDefault") || n.contains("python")), "{names:?}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains(profile["flame_svg"].as_str().unwrap()), "the report links the flame graph");
    assert!(s.leftovers().is_empty(), "left running: {:?}", s.leftovers());
}
