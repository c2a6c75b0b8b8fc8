//! Arena frameworks run from their own folders (issue #43 part 3): an
//! HttpArena-shaped folder (meta.json, Dockerfile, a standard-library Python
//! server) and a the-benchmarker-shaped one (language config.yaml and
//! Dockerfile template, the framework's config.yaml) in crates/testkit/fixtures/arena/
//! are built and started without Docker, checked by `check --arena` with
//! their arena's contract kept to the profiles they enable, and run by
//! `stampede run`; a faulty server fails the rule that catches its fault and
//! no other; what cannot be derived from a folder is one line naming the
//! file and line, exit 2. Each copy gets a free port through an app.toml
//! beside it (the arenas' fixed 8080 and 3000 may be taken) and its build
//! folder under the test's own TMPDIR.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::check::contract::failed_ids;
use stampede_testkit::run::{assert_nothing_left, text, Scratch};

/// A copy of the fixture folder `name` (httparena or web-frameworks) in the
/// scratch folder; the framework's folder in it, with an app.toml giving a
/// free port.
fn arena_copy(s: &Scratch, name: &str, framework: &str) -> PathBuf {
    let from = stampede_testkit::fixture("arena").join(name);
    copy_dir(&from, &s.dir.join(name));
    let dir = s.dir.join(name).join(framework);
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    std::fs::write(dir.join("app.toml"), format!("port = {port}\n")).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Replaces `from` by `to` in `file`.
fn edit(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains(from), "{} has no {from:?}", file.display());
    std::fs::write(file, text.replacen(from, to, 1)).unwrap();
}

/// `stampede check --arena DIR --json` with the scratch folder as TMPDIR.
fn check_arena(s: &Scratch, dir: &Path) -> Output {
    s.stampede().args(["check", "--json", "--arena"]).arg(dir).env("TMPDIR", &s.dir).output().unwrap()
}

fn report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}\nstdout:\n{}\nstderr:\n{}", text(&out.stdout), text(&out.stderr)))
}

fn ids(report: &Value) -> Vec<String> {
    report["results"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
}

/// `stampede run ARGS --out <scratch>/results` to its end, with the scratch folder as TMPDIR.
fn run_in(s: &Scratch, args: &[&std::ffi::OsStr]) -> Output {
    let child = s
        .stampede()
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(s.out())
        .current_dir(&s.dir)
        .env("TMPDIR", &s.dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    stampede_testkit::run::wait_output(child, std::time::Duration::from_secs(240))
}

#[test]
fn check_arena_builds_an_httparena_folder_and_checks_the_profiles_its_meta_json_enables() {
    let s = Scratch::new("arenacheck");
    let dir = arena_copy(&s, "httparena", "frameworks/pyarena");
    let out = check_arena(&s, &dir);
    let (stderr, report) = (text(&out.stderr), report(&out));
    assert_eq!((out.status.code(), failed_ids(&report)), (Some(0), Vec::<String>::new()), "{stderr}\n{report:#}");
    assert_eq!(report["contract"], "httparena");
    let checked = ids(&report);
    assert!(checked.iter().any(|id| id == "upload-20m") && checked.iter().any(|id| id == "json-50"), "{checked:?}");
    assert!(!checked.iter().any(|id| id.starts_with("json-comp")), "json-comp is not in its meta.json: {checked:?}");
    assert!(
        stderr
            .contains("profiles driven: baseline, pipelined, json, upload; not driven: static, async-db, baseline-h2"),
        "{stderr}"
    );
    assert!(stderr.contains("data/dataset.json (50 generated items"), "the dataset it reads is supplied: {stderr}");
    // The same folder without upload in its meta.json is not asked to upload.
    edit(&dir.join("meta.json"), "\"upload\", ", "");
    let report = self::report(&check_arena(&s, &dir));
    assert!(!ids(&report).iter().any(|id| id.starts_with("upload")), "{report:#}");
    assert_nothing_left(&s);
}

#[test]
fn a_cached_answer_set_by_the_dockerfiles_env_fails_only_the_randomised_posts() {
    let s = Scratch::new("arenacached");
    let dir = arena_copy(&s, "httparena", "frameworks/pyarena");
    edit(&dir.join("Dockerfile"), "ENV ARENA_FAULT=none", "ENV ARENA_FAULT=cached");
    let out = check_arena(&s, &dir);
    let report = report(&out);
    assert_eq!(failed_ids(&report), ["baseline-post-random-1", "baseline-post-random-2"], "{report:#}");
    assert_eq!(out.status.code(), Some(1));
    assert_nothing_left(&s);
}

#[test]
fn check_arena_renders_a_benchmarker_framework_and_its_own_environment_reaches_the_server() {
    let s = Scratch::new("arenaweb");
    let dir = arena_copy(&s, "web-frameworks", "python/pyweb");
    let out = check_arena(&s, &dir);
    let report = self::report(&out);
    assert_eq!((out.status.code(), failed_ids(&report)), (Some(0), Vec::<String>::new()), "{report:#}");
    assert_eq!(report["contract"], "web-frameworks");
    assert!(text(&out.stderr).contains("python-pyweb from "), "{}", text(&out.stderr));
    // The framework's config.yaml environment goes over its language's.
    std::fs::write(dir.join("config.yaml"), "framework:\n  version: 1.0\n  environment:\n    ARENA_FAULT: zero\n")
        .unwrap();
    let out = check_arena(&s, &dir);
    assert_eq!(failed_ids(&self::report(&out)), ["user-id-random"]);
    assert_eq!(out.status.code(), Some(1));
    assert_nothing_left(&s);
}

#[test]
fn run_loads_an_arena_folder_named_in_apps_judged_by_its_arena() {
    let s = Scratch::new("arenarun");
    let dir = arena_copy(&s, "httparena", "frameworks/pyarena");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\n[[profiles]]\npath = \"/baseline11?a=1&b=2\"\nconnections = 2\nduration = \"1s\"\nwarmup = \"0s\"\n",
        dir.display()
    ));
    let out = run_in(&s, &[scenario.as_os_str()]);
    let doc = s.results().unwrap_or_else(|| panic!("results.json\n{}", text(&out.stderr)));
    let run = &doc["runs"][0];
    assert_eq!(run["valid"], true, "{}\n{}", run["invalid_reason"], text(&out.stderr));
    assert_eq!(run["contract"], "httparena");
    let verdict = &run["verdicts"][0];
    assert_eq!(
        (verdict["contract"].as_str(), verdict["verdict"].as_str()),
        (Some("httparena"), Some("pass")),
        "{run:#}"
    );
    assert!(run["load"]["requests"].as_u64().unwrap() > 0);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_nothing_left(&s);
}

#[test]
fn run_arena_loads_the_profiles_the_framework_enables_and_names_the_others() {
    let s = Scratch::new("arenaprofiles");
    let dir = arena_copy(&s, "httparena", "frameworks/pyarena");
    let out = run_in(
        &s,
        &[
            "--duration".as_ref(),
            "1s".as_ref(),
            "--warmup".as_ref(),
            "0s".as_ref(),
            "--arena".as_ref(),
            dir.as_os_str(),
        ],
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("stampede: pyarena: not driven: static, async-db, baseline-h2"), "{stderr}");
    let doc = s.results().unwrap_or_else(|| panic!("results.json\n{stderr}"));
    let runs = doc["runs"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|r| r["profile"].as_str().unwrap_or("?")).collect();
    assert_eq!(names, ["baseline", "pipelined", "json", "upload"], "json-comp is not in its meta.json\n{stderr}");
    for run in runs {
        assert_eq!(run["valid"], true, "{}: {}", run["profile"], run["invalid_reason"]);
        assert!(run["load"]["requests"].as_u64().unwrap() > 0, "{}", run["profile"]);
    }
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_nothing_left(&s);
}

/// `check --arena` on `dir` exits 2 with one line on stderr containing `expected`.
fn refused(s: &Scratch, dir: &Path, path: Option<&str>, expected: &str) {
    let mut cmd = s.stampede();
    cmd.args(["check", "--arena"]).arg(dir).env("TMPDIR", &s.dir);
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    let out = cmd.output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(expected), "{expected:?} in {stderr}");
}

#[test]
fn what_a_folder_cannot_give_is_one_line_naming_its_file_and_line() {
    let s = Scratch::new("arenarefused");
    let dir = arena_copy(&s, "httparena", "frameworks/pyarena");
    let dockerfile = dir.join("Dockerfile");
    let at = |line: usize| format!("{}:{line}: ", dockerfile.display());
    refused(
        &s,
        &dir,
        Some("/nonexistent"),
        &format!("{}FROM python:3.11-slim needs python3, which is not on PATH", at(3)),
    );
    edit(&dockerfile, "ENV ARENA_FAULT=none", "RUN apt-get update && apt-get install -y libzzzstampede-dev");
    refused(&s, &dir, None, &format!("{}RUN installs system packages not on this host (libzzzstampede-dev)", at(7)));
    edit(&dockerfile, "RUN apt-get update && apt-get install -y libzzzstampede-dev", "ONBUILD RUN true");
    refused(&s, &dir, None, &format!("{}ONBUILD has no meaning without Docker", at(7)));
    edit(&dockerfile, "ONBUILD RUN true", "");
    edit(&dockerfile, "CMD [\"python3\", \"server.py\"]", "");
    refused(&s, &dir, None, &format!("{}: no CMD or ENTRYPOINT in its last stage", dockerfile.display()));
    // An app.toml's run stands in for the missing CMD.
    std::fs::write(dir.join("app.toml"), "port = 1\nrun = \"exec python3 server.py\"\ncontract = \"none\"\n").unwrap();
    refused(&s, &dir, None, "its app.toml says contract = \"none\": nothing to check");
    refused(
        &s,
        &s.dir.join("httparena/frameworks"),
        None,
        "holds 1 framework folder(s) (pyarena): check one at a time",
    );
}
