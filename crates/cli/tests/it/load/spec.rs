//! The load spec through the real binary: every flag of `stampede load`
//! lands in the spec `--print-spec` shows, that document given back with
//! `--spec` is the same load, and a spec document's method, headers and
//! body (from a file beside the document) are what the server receives.

use stampede_testkit::hostile;
use stampede_testkit::load;

use hostile::{Hostile, Trick};
use load::{load_json, stampede};
use serde_json::{json, Value};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("stampede-spec-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn printed(args: &[&str]) -> Value {
    let mut all = vec!["load", "--print-spec"];
    all.extend_from_slice(args);
    let out = stampede(&all, DEADLINE);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("--print-spec prints JSON")
}

#[test]
fn every_flag_reaches_the_spec_and_the_spec_replays_as_written() {
    let dir = scratch("flags");
    let targets = dir.join("mix.txt");
    let ca = dir.join("ca.pem");
    let spec = printed(&[
        "--targets",
        targets.to_str().unwrap(),
        "--order",
        "random",
        "--seed",
        "7",
        "-c",
        "8",
        "-t",
        "2",
        "-n",
        "1000",
        "-m",
        "PUT",
        "-H",
        "X-A: 1",
        "--body",
        "hi",
        "--timeout",
        "2s",
        "--rate",
        "2k",
        "--arrival",
        "poisson",
        "--max-connections",
        "16",
        "--max-lag",
        "3ms",
        "--slow-log",
        "5",
        "--hdr-log",
        "lat.hlog",
        "--streams",
        "10",
        "--http2",
        "--insecure",
        "--alpn",
        "h2,http/1.1",
        "--engine",
        "io-uring",
        "https://127.0.0.1:9/a",
    ]);
    let want = json!({
        "urls": ["https://127.0.0.1:9/a"], "method": "PUT", "headers": ["X-A: 1"], "body": "hi",
        "targets": targets, "order": "random", "seed": 7, "connections": 8, "max_connections": 16,
        "threads": 2, "requests": 1000, "warmup": "0s", "timeout": "2s", "rate": 2000.0,
        "arrival": "poisson", "max_lag": "3ms", "slow_log": 5, "pipeline": 1, "http2": true, "streams": 10,
        "insecure": true, "alpn": ["h2", "http/1.1"], "engine": "io-uring", "hdr_log": "lat.hlog", "ramp": "rate",
    });
    assert_eq!(spec, want);
    // The flags -k, --hdr-log and -n conflict with: --duration, --warmup,
    // --pipeline, --body-file and the load hosts.
    let other = printed(&[
        "--ca",
        ca.to_str().unwrap(),
        "-d",
        "3s",
        "--warmup",
        "1s",
        "--pipeline",
        "4",
        "--body-file",
        "b.json",
        "--hosts",
        "me@a,b",
        "--copy-binary",
        "--remote-path",
        "/opt/stampede",
        "--ssh-config",
        ca.to_str().unwrap(),
        "--on-host-failure",
        "continue",
        "--max-clock-offset",
        "250ms",
        "--connect-timeout",
        "3s",
        "http://h:1/",
    ]);
    let from_hosts = json!({
        "hosts": ["me@a", "b"], "copy_binary": true, "remote_path": "/opt/stampede", "ssh_config": ca,
        "on_host_failure": "continue", "max_clock_offset": "250ms", "connect_timeout": "3s",
    });
    assert_eq!(other["from_hosts"], from_hosts, "where the load goes from is in the spec too");
    assert_eq!(
        (&other["ca"], &other["duration"], &other["warmup"], &other["pipeline"]),
        (&json!(ca), &json!("3s"), &json!("1s"), &json!(4))
    );
    let body_file = std::path::absolute("b.json").unwrap();
    assert_eq!(other["body"], json!(format!("@{}", body_file.display())), "a body file is kept as a file");
    for (name, document) in [("all.json", &spec), ("other.json", &other)] {
        let file = dir.join(name);
        std::fs::write(&file, serde_json::to_vec(document).unwrap()).unwrap();
        assert_eq!(&printed(&["--spec", file.to_str().unwrap()]), document, "{name} read back");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_spec_document_is_what_the_server_receives() {
    let srv = Hostile::start(Trick::None);
    let dir = scratch("server");
    std::fs::write(dir.join("item.json"), b"{\"id\": 3}").unwrap();
    let spec = json!({
        "urls": [srv.url("/items")], "method": "POST", "headers": ["Content-Type: application/json"],
        "body": "@item.json", "requests": 20, "connections": 2,
        "mix": [{ "method": "DELETE", "url": srv.url("/items/{1..2}"), "headers": ["X-Why: test"] }],
    });
    let file = dir.join("load.json");
    std::fs::write(&file, serde_json::to_vec(&spec).unwrap()).unwrap();
    let r = load_json(&["--spec", file.to_str().unwrap()], DEADLINE);
    assert_eq!(r["requests"], 20);
    let log = srv.log();
    let posts: Vec<_> = log.iter().filter(|r| r.method == "POST").collect();
    let deletes: Vec<_> = log.iter().filter(|r| r.method == "DELETE").collect();
    assert_eq!((posts.len(), deletes.len()), (10, 10));
    for p in posts {
        assert_eq!((p.path.as_str(), p.body.as_slice()), ("/items", b"{\"id\": 3}".as_slice()));
        assert_eq!(p.header("content-type"), Some("application/json"));
    }
    for d in deletes {
        assert!(d.path == "/items/1" || d.path == "/items/2", "{}", d.path);
        assert_eq!((d.header("x-why"), d.header("content-type")), (Some("test"), Some("application/json")));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_spec_document_names_the_field_and_exits_2() {
    let dir = scratch("bad");
    for (text, want) in [
        ("{\"urls\": [\"http://127.0.0.1:1/\"], \"conections\": 3}", "conections: unknown field"),
        ("{\"urls\": [\"http://127.0.0.1:1/\"], \"timeout\": \"soon\"}", "timeout: \"soon\" is not a duration"),
        ("{\"urls\": [\"http://127.0.0.1:1/\"], \"body\": \"@missing.json\"}", "body @missing.json: cannot read"),
        ("{\"urls\": [\"/json\"]}", "urls: \"/json\" is a path"),
    ] {
        let file = dir.join("bad.json");
        std::fs::write(&file, text).unwrap();
        let out = stampede(&["load", "--spec", file.to_str().unwrap()], DEADLINE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert!(err.contains(want) && err.lines().count() == 1, "{text}: {err}");
    }
    let out = stampede(&["load", "--spec", "x.json", "-c", "3"], DEADLINE);
    assert_eq!(out.status.code(), Some(2), "--spec with a load flag is refused");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stages_and_their_ramp_are_part_of_the_spec() {
    let spec = printed(&["--stages", "2s:10,1s:0", "--ramp", "connections", "http://127.0.0.1:9/"]);
    assert_eq!(spec["stages"], "2s:10,1s:0");
    assert_eq!(spec["ramp"], "connections");
    // A spec with stages and a duration is refused, naming both.
    let dir = scratch("stages");
    let file = dir.join("staged.json");
    std::fs::write(&file, r#"{"urls": ["http://127.0.0.1:9/"], "stages": "1s:10", "duration": "5s"}"#).unwrap();
    let out = stampede(&["load", "--spec", file.to_str().unwrap()], DEADLINE);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stages sets") && err.contains("drop duration") && !err.contains("--duration"), "{err}");
}

/// One broken rule, written three ways: each error names it as the user
/// wrote it (the flags; a `--spec` document's fields; a scenario profile's
/// fields), exits 2 and is one line. A document's error used to name the
/// flags `--spec` refuses, and a scenario's gRPC `grpc.data` was `data`.
#[test]
fn a_spec_error_names_the_flag_on_the_command_line_and_the_field_in_a_document() {
    let one_line_exit_2 = |out: std::process::Output| {
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        err
    };
    let flags = one_line_exit_2(stampede(&["load", "-t", "4", "-c", "2", "http://127.0.0.1:1/"], DEADLINE));
    assert!(flags.contains("--threads (4) must not exceed --connections (2)"), "{flags}");
    let dir = scratch("words");
    let file = dir.join("bad.json");
    std::fs::write(&file, r#"{"urls": ["http://127.0.0.1:1/"], "threads": 4, "connections": 2}"#).unwrap();
    let doc = one_line_exit_2(stampede(&["load", "--spec", file.to_str().unwrap()], DEADLINE));
    assert!(doc.contains("bad.json: threads (4) must not exceed connections (2)"), "{doc}");
    assert!(!doc.contains("--threads") && !doc.contains("--connections"), "{doc}");

    let s = stampede_testkit::run::Scratch::new("spec-words");
    let app = s.app("alpha", "");
    for (profile, field, words) in [
        ("threads = 4\nconnections = 2", "profiles[0].threads", "threads (4) must not exceed connections (2)"),
        ("grpc = { call = \"p.S/M\", data = \"@nope.json\" }", "profiles[0].grpc.data", "grpc.data @nope.json"),
    ] {
        let scenario = s.scenario(&format!(
            "apps = [\"{}\"]\ncheck = false\n[[profiles]]\npath = \"/\"\n{profile}\n",
            app.display()
        ));
        let out = s.stampede().args(["run", scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]).output();
        let err = one_line_exit_2(out.unwrap());
        assert!(err.contains(&format!("{field}: {words}")), "{profile}: {err}");
        assert!(!err.contains("--"), "{profile}: no flag of stampede load: {err}");
    }
    stampede_testkit::run::assert_nothing_left(&s);
    std::fs::remove_dir_all(&dir).unwrap();
}
