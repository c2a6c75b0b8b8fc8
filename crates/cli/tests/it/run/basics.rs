//! `stampede run` end to end, through the real binary, on small contract
//! servers (standard-library Python, see crates/testkit/fixtures/contract_server.py):
//! the JSON it writes, Ctrl-C in the middle, a crash during the load and a
//! taken port. Runs are 1-2 s each; every test checks nothing is left running.

use stampede_testkit::run;

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Duration;

use run::{assert_nothing_left, text, wait_for, wait_output, Scratch};
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn two_apps_two_thread_counts_two_iterations_write_plausible_results() {
    let s = Scratch::new("e2e");
    let alpha = s.app("alpha", "");
    let beta = s.app("beta", "");
    let scenario = s.scenario(&format!(
        r#"
apps = ["{}", "{}"]
iterations = 2
[[profiles]]
path = "/plaintext"
connections = 4
duration = "1s"
warmup = "500ms"
[matrix]
threads = [1, 2]
[pinning]
server = "0"
loadgen = "1"
"#,
        alpha.display(),
        beta.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("Mean RPS") && stdout.contains("summary"), "{stdout}");
    assert!(stdout.contains("results: "), "{stdout}");

    let doc = s.results().expect("results.json");
    assert_eq!(doc["schema"], "stampede.run/1");
    let env = &doc["environment"];
    for key in ["tool_version", "command_line", "cpu_model", "kernel"] {
        assert!(env[key].as_str().is_some_and(|v| !v.is_empty()), "environment.{key}: {env}");
    }
    assert_eq!(env["pinning"]["server"], "0");
    assert!(env["runtimes"]["alpha"].as_str().unwrap().starts_with("Python"), "{env}");
    assert!(env["runtimes"]["beta"].is_string());
    assert!(env["cores"].as_u64().unwrap() >= 1);

    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 * 2 * 2, "apps × threads × iterations");
    for run in runs {
        let who = format!("{} {} #{}", run["app"], run["knobs"], run["iteration"]);
        assert_eq!(run["valid"], true, "{who}: {}", run["invalid_reason"]);
        assert!(run["invalid_reason"].is_null());
        assert_eq!(run["profile"], "plaintext");
        assert_eq!(run["path"], "/plaintext");
        assert!(f(&run["start_time_ms"]) > 0.0, "{who}");
        assert!(f(&run["first_request_ms"]) > 0.0, "{who}");
        assert!(f(&run["build_time_ms"]) >= 0.0);
        let load = &run["load"];
        assert_eq!(load["schema"], "stampede.load/1");
        assert!(load["requests"].as_u64().unwrap() > 0, "{who}");
        assert_eq!(run["warmup"]["schema"], "stampede.load/1", "warmup recorded apart");
        let server = &run["server"];
        let cores = f(&server["cpu_cores_avg"]);
        assert!(cores > 0.0 && cores < 2.5, "{who}: server cores {cores}");
        assert!(f(&server["rss_max_mib"]) > 1.0, "{who}");
        assert!(server["threads_max"].as_u64().unwrap() >= 1);
        assert!(f(&server["cpu_pct_max"]) > 0.0);
        assert!(server["ctx_voluntary"].as_u64().unwrap() > 0, "{who}: a server that answered requests has slept");
        let samples = server["samples"].as_array().unwrap();
        assert!(samples.iter().any(|x| f(&x["t_s"]) < 0.0), "{who}: warmup samples have negative t_s");
        assert!(samples.iter().any(|x| f(&x["t_s"]) > 0.5), "{who}: measured samples");
        assert!(!server["threads_table"].as_array().unwrap().is_empty());
        let rps = f(&load["rps"]);
        let per_core = f(&run["rps_per_server_core"]);
        assert!((per_core - rps / cores).abs() <= 1e-6 * per_core.max(1.0), "{who}: {per_core} vs {rps}/{cores}");
        assert!(f(&run["loadgen"]["cpu_cores_avg"]) > 0.0, "{who}: the probe sampled the load generator");
        assert!(f(&run["machine"]["cpu_cores_avg"]) > 0.0);
    }
    // THREADS=2 forks a second worker: the probe must see both processes' memory.
    let rss = |threads: &str| {
        runs.iter()
            .filter(|r| r["knobs"]["threads"] == threads)
            .map(|r| f(&r["server"]["rss_max_mib"]))
            .fold(0.0, f64::max)
    };
    assert!(rss("2") > rss("1") * 1.3, "two worker processes use more memory than one: {} vs {}", rss("2"), rss("1"));
    assert_nothing_left(&s);
}

#[test]
fn sigint_in_the_middle_stops_the_servers_and_keeps_finished_runs() {
    let s = Scratch::new("sigint");
    let app = s.app("alpha", "");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\niterations = 5\ncheck = false\n[[profiles]]\npath = \"/json\"\nconnections = 2\nduration = \"2s\"\nwarmup = \"0s\"\n",
        app.display()
    ));
    let child = s
        .stampede()
        .args(["run", scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()])
        .current_dir(&s.dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let first_done = wait_for(Duration::from_secs(60), || {
        s.results().is_some_and(|d| d["runs"].as_array().is_some_and(|r| !r.is_empty()))
    });
    assert!(first_done, "no run finished within 60 s");
    // Wait until the next run's server is up, so the interrupt lands mid-run.
    wait_for(Duration::from_secs(10), || s.leftovers().iter().any(|(_, cmd)| cmd.contains("contract_server.py")));
    let sent = Command::new("kill").args(["-INT", &pid.to_string()]).status().unwrap();
    assert!(sent.success());
    let out = wait_output(child, Duration::from_secs(30));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "stderr:\n{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let doc = s.results().unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert!(!runs.is_empty() && runs.len() < 5, "{} runs", runs.len());
    assert_eq!(runs[0]["valid"], true, "{}", runs[0]["invalid_reason"]);
    assert!(runs[0]["load"]["requests"].as_u64().unwrap() > 0);
    assert_nothing_left(&s);
}

/// Issue 42: after a crash the reason led with the accept queue, and the
/// open-loop latency phase still ran against the dead server. The crash is
/// named first and no phase follows it; a healthy server's latency phase runs.
#[test]
fn a_crash_during_the_load_is_reported_and_the_scenario_goes_on() {
    let s = Scratch::new("crash");
    let crasher = s.app("crasher", "CRASH_AFTER=200");
    let alpha = s.app("alpha", "");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\", \"{}\"]\ncheck = false\n[[profiles]]\npath = \"/plaintext\"\nconnections = 2\nduration = \"2s\"\nwarmup = \"0s\"\nlatency = {{ fraction = 0.5, duration = \"1s\" }}\n",
        crasher.display(),
        alpha.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "an invalid run exits 1\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stderr.contains("crasher")
            && stderr.contains("crashed during load")
            && stderr.contains("simulated crash after 200 requests"),
        "{stderr}"
    );
    let doc = s.results().unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "the scenario went on after the crash");
    assert_eq!(runs[0]["app"], "crasher");
    assert_eq!(runs[0]["valid"], false);
    let reason = runs[0]["invalid_reason"].as_str().unwrap();
    assert!(reason.starts_with("crasher crashed during load") && reason.contains("exit status: 3"), "{reason}");
    assert!(reason.contains("the latency phase was not run"), "{reason}");
    assert!(runs[0]["latency"].is_null(), "a latency phase ran against the dead server: {}", runs[0]["latency"]);
    assert_eq!(runs[0]["invalid_by_server"], true, "a crash is the server's doing");
    assert_eq!(runs[1]["app"], "alpha");
    // Its open loop may find a busy machine's generator behind schedule:
    // whether that invalidates is not this test's business, only that alpha
    // is not called crashed and its latency phase ran.
    let reason = runs[1]["invalid_reason"].as_str().unwrap_or("");
    assert!(!reason.contains("crashed") && runs[1]["load"]["requests"].as_u64() > Some(0), "{reason}");
    assert!(runs[1]["latency"].is_object(), "the healthy server's latency phase ran");
    assert_nothing_left(&s);
}

#[test]
fn a_taken_port_is_named_and_every_combination_is_still_tried() {
    let s = Scratch::new("port");
    let taken = TcpListener::bind(("0.0.0.0", 0)).unwrap();
    let port = taken.local_addr().unwrap().port();
    let alpha = s.app("alpha", "");
    let beta = s.app("beta", "");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\", \"{}\"]\ncheck = false\nport = {port}\n[[profiles]]\npath = \"/plaintext\"\nduration = \"1s\"\nwarmup = \"0s\"\n",
        alpha.display(),
        beta.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("port {port} is already in use")), "{stderr}");
    let doc = s.results().unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "both apps were tried");
    for run in runs {
        assert_eq!(run["valid"], false);
        assert!(run["invalid_reason"].as_str().unwrap().contains("--set port="), "{}", run["invalid_reason"]);
        assert!(run["load"].is_null());
    }
    drop(taken);
    assert_nothing_left(&s);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let s = Scratch::new("bad");
    let app = s.app("alpha", "");
    let scenario = s.scenario(&format!("apps = [\"{}\"]\n[[profiles]]\npath = \"/json\"\n", app.display()));
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![s.dir.join("missing.toml").display().to_string()], "cannot read scenario file"),
        (vec![scenario.display().to_string(), "--duration".into(), "fast".into()], "--duration"),
        (vec![scenario.display().to_string(), "--set".into(), "iteratons=2".into()], "iteratons"),
        (vec![scenario.display().to_string(), "--apps".into(), "nosuchapp".into()], "apps/nosuchapp/app.toml"),
        (vec![scenario.display().to_string(), "--set".into(), "pinning.server=99".into()], "pinning.server"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["run".to_string()];
        all.extend(args.clone());
        let out = s.stampede().args(&all).current_dir(&s.dir).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("stampede: error: ") && stderr.contains(needle), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: one line: {stderr}");
    }
    assert_nothing_left(&s);
}

#[test]
fn a_missing_toolchain_skips_the_app_with_the_reason() {
    let s = Scratch::new("toolchain");
    let app = s.app("alpha", "");
    let ghost_dir = s.dir.join("ghost");
    std::fs::create_dir_all(&ghost_dir).unwrap();
    std::fs::write(
        ghost_dir.join("app.toml"),
        "name = \"ghost\"\nrequires = [\"no-such-compiler-xyz\"]\nrun = \"exec false\"\n",
    )
    .unwrap();
    let scenario = s.scenario(&format!(
        "apps = [\"{}\", \"{}\"]\ncheck = false\n[[profiles]]\npath = \"/plaintext\"\nduration = \"1s\"\nwarmup = \"0s\"\n",
        ghost_dir.join("app.toml").display(),
        app.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("ghost: skipped: no-such-compiler-xyz not found on PATH"), "{stderr}");
    let doc = s.results().unwrap();
    assert_eq!(doc["skipped"][0]["app"], "ghost");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1);
    assert_nothing_left(&s);
}

#[test]
fn an_app_without_plaintext_is_ready_by_its_contract_or_by_any_answer() {
    // Readiness was hard-wired to GET /plaintext: an app serving only the
    // sequence API (or claiming no contract) never counted as started.
    let s = Scratch::new("ready");
    let sequence = s.app("sequence", "ONLY=sequence");
    let bare = s.app("bare", "ONLY=sequence");
    for (path, contract) in [(&sequence, "sequence"), (&bare, "none")] {
        let manifest = std::fs::read_to_string(path).unwrap();
        std::fs::write(path, format!("{manifest}contract = \"{contract}\"\n")).unwrap();
    }
    let scenario = s.scenario(&format!(
        "apps = [\"{}\", \"{}\"]\n[[profiles]]\npath = \"/api/count/10\"\nconnections = 2\nduration = \"1s\"\nwarmup = \"0s\"\n",
        sequence.display(),
        bare.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let doc = s.results().expect("results.json");
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (run, (app, contract)) in runs.iter().zip([("sequence", "sequence"), ("bare", "none")]) {
        assert_eq!(run["app"], app);
        assert_eq!(run["contract"], contract);
        assert_eq!(run["valid"], true, "{app}: {}", run["invalid_reason"]);
        assert!(run["load"]["requests"].as_u64().unwrap() > 0, "{app}: {run}");
    }
    assert_nothing_left(&s);
}

/// Regression: a server that stopped answering mid-run was `valid: true`
/// under `stampede run`; it is invalid, with that reason first.
#[test]
fn a_server_that_stops_answering_makes_the_run_invalid_with_that_reason_first() {
    let s = Scratch::new("hang");
    let hang = s.app("hang", "HANG_AFTER=400");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\ncheck = false\n[[profiles]]\npath = \"/plaintext\"\nconnections = 2\nduration = \"3s\"\nwarmup = \"0s\"\n",
        hang.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "an invalid run exits 1\nstdout:\n{stdout}\nstderr:\n{stderr}");
    let doc = s.results().unwrap();
    let run = &doc["runs"][0];
    assert_eq!(run["valid"], false);
    let reason = run["invalid_reason"].as_str().unwrap();
    assert!(reason.starts_with("the server stopped answering"), "{reason}");
    assert_nothing_left(&s);
}
