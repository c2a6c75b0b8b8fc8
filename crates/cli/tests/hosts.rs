//! `stampede load --hosts`: load from several machines over ssh, for real.
//! The test builds a small network of namespaces (crates/testkit/src/hosts.rs): two load
//! hosts running Debian's sshd with keys generated here, and a server host;
//! the test itself is the controller. It checks that merged counts are the
//! sums of the hosts', that merged percentiles are those of the hosts'
//! histograms merged here by hand, that a host killed mid-run is named in one
//! line, and that an unreachable host fails fast. Without root (no
//! namespaces) the namespace test prints a visible SKIP line.

use base64::Engine;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::Value;
use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::hosts::{self, processes_in, Net};
use stampede_testkit::load::{self, refused_port};
use stampede_testkit::{hostile, run, Stampede};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where the load hosts find `stampede` (`--remote-path`, `remote_path`):
/// they share this machine's file system. The test itself runs the binary
/// through `Stampede`.
const BIN: &str = env!("CARGO_BIN_EXE_stampede");

fn decode(b64: &str) -> Histogram<u64> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).expect("base64");
    Deserializer::new().deserialize(&mut bytes.as_slice()).expect("HdrHistogram V2")
}

/// Microseconds as result.rs rounds them.
fn us(ns: u64) -> f64 {
    (ns as f64 / 100.0).round() / 10.0
}

fn controller(net: &Net, extra: &[&str], url: &str) -> Command {
    controller_with(net, BIN, &["--json"], extra, url)
}

fn controller_with(net: &Net, remote_path: &str, output: &[&str], extra: &[&str], url: &str) -> Command {
    let mut cmd = Stampede::new().command();
    cmd.arg("load")
        .args(output)
        .args(["--hosts", &net.load_hosts.join(",")])
        .arg("--ssh-config")
        .arg(&net.ssh_config)
        .args(["--remote-path", remote_path])
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn finish(child: std::process::Child, deadline: Duration) -> (Option<i32>, Value, String) {
    let start = Instant::now();
    let pid = child.id() as i32;
    let waiter = std::thread::spawn(move || child.wait_with_output().expect("wait"));
    while !waiter.is_finished() {
        if start.elapsed() > deadline {
            // SAFETY: kill(2) on the controller this test started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = waiter.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        start.elapsed() <= deadline + Duration::from_secs(1),
        "controller hung past {deadline:?}; stderr:\n{stderr}"
    );
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), json, stderr)
}

#[test]
fn two_hosts_over_ssh_merge_losslessly_and_a_killed_host_is_named() {
    let Some(net) = hosts::net_or_skip("hosts") else { return };
    let server = Hostile::start_on(net.server_listener(), Trick::None);

    // 1. Two hosts, two seconds: the total is the sum, percentiles from the merged histogram.
    let url = server.url("/two-hosts");
    let (code, v, stderr) =
        finish(controller(&net, &["-c", "4", "-d", "2s"], &url).spawn().unwrap(), Duration::from_secs(40));
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    assert_eq!(v["schema"], "stampede.load/1");
    assert_eq!(v["partial"], false);
    let hosts = v["hosts"].as_array().expect("hosts array");
    assert_eq!(hosts.len(), 2);
    let total = v["requests"].as_u64().unwrap();
    let sum: u64 = hosts.iter().map(|h| h["requests"].as_u64().unwrap()).sum();
    assert!(total > 100, "too few requests for a 2 s run: {total}");
    assert_eq!(total, sum);
    assert!(server.requests.load(std::sync::atomic::Ordering::Relaxed) >= total);
    assert_eq!(v["connections"], 4);
    let mut by_hand = Histogram::<u64>::new(3).unwrap();
    for (h, name) in hosts.iter().zip(&net.load_hosts) {
        assert_eq!(h["host"], name.as_str());
        assert_eq!(h["connections"], 2);
        assert!(h["requests"].as_u64().unwrap() > 0, "{name} sent nothing");
        assert!(h["clock_offset_ms"].as_f64().unwrap().abs() < 50.0, "{name}: {}", h["clock_offset_ms"]);
        assert!(h["rtt_ms"].as_f64().unwrap() > 0.0);
        let cpu = h["loadgen"]["cpu_user_s"].as_f64().unwrap() + h["loadgen"]["cpu_sys_s"].as_f64().unwrap();
        assert!(cpu > 0.0, "{name}: no CPU reported");
        by_hand.add(decode(h["histogram"].as_str().unwrap())).unwrap();
    }
    let merged = decode(v["histogram"].as_str().unwrap());
    assert_eq!(merged.len(), by_hand.len());
    for (key, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)] {
        assert_eq!(v["latency_us"][key].as_f64().unwrap(), us(by_hand.value_at_quantile(q)), "{key}");
    }
    assert_eq!(v["latency_us"]["max"].as_f64().unwrap(), us(by_hand.max()));

    // The same for people: the total in wrk's layout, then one row per host.
    let url = server.url("/text");
    let out = controller_with(&net, BIN, &[], &["-c", "4", "-d", "1s"], &url).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("Requests/sec:") && text.contains("Hosts:"), "{text}");
    for h in &net.load_hosts {
        assert_eq!(
            text.lines().filter(|l| l.trim_start().starts_with(h.as_str())).count(),
            1,
            "no row for {h}:\n{text}"
        );
    }

    a_targets_file_its_order_and_seed_reach_the_hosts(&net);

    // 2. Host b's stampede is killed mid-run; with `continue`, a partial result from a.
    let url = server.url("/killed-host");
    let child = controller(&net, &["-c", "4", "-d", "3s", "--on-host-failure", "continue"], &url).spawn().unwrap();
    kill_mid_run(&net, &server);
    let (code, v, stderr) = finish(child, Duration::from_secs(40));
    let b = &net.load_hosts[1];
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    let line =
        stderr.lines().find(|l| l.contains(b.as_str())).unwrap_or_else(|| panic!("no line names {b}:\n{stderr}"));
    assert!(line.starts_with(&format!("stampede: error: host {b}: died mid-run after ")), "{line}");
    assert_eq!(v["partial"], true);
    assert_eq!(v["failed_hosts"][0]["host"], b.as_str());
    assert_eq!(v["hosts"].as_array().unwrap().len(), 1);
    assert_eq!(v["requests"], v["hosts"][0]["requests"]);

    // 3. Same with the default `stop`: exit 2, the other host stopped, what it measured still printed.
    let url = server.url("/stop-on-failure");
    let child = controller(&net, &["-c", "4", "-d", "20s"], &url).spawn().unwrap();
    let killed_at = kill_mid_run(&net, &server);
    let (code, v, stderr) = finish(child, Duration::from_secs(40));
    assert_eq!(code, Some(2), "stderr:\n{stderr}");
    assert!(killed_at.elapsed() < Duration::from_secs(12), "host a was not stopped when b died");
    assert_eq!(stderr.lines().filter(|l| l.starts_with("stampede: error: host ")).count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("host {b}: died mid-run")), "{stderr}");
    assert_eq!(v["partial"], true);
    assert_eq!(v["interrupted"], true);

    // 4. Ctrl-C on the controller: the hosts are stopped and what they measured is printed.
    let url = server.url("/interrupted");
    let child = controller(&net, &["-c", "4", "-d", "20s"], &url).spawn().unwrap();
    let before = server.requests.load(std::sync::atomic::Ordering::Relaxed);
    let start = Instant::now();
    while server.requests.load(std::sync::atomic::Ordering::Relaxed) < before + 500 {
        assert!(start.elapsed() < Duration::from_secs(20), "the run never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the controller this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let (code, v, stderr) = finish(child, Duration::from_secs(15));
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["partial"], false);
    assert_eq!(v["hosts"].as_array().unwrap().len(), 2);
    assert!(v["requests"].as_u64().unwrap() > 0);

    // 5. --copy-binary to hosts whose --remote-path does not exist, and -n split exactly.
    let url = server.url("/copied");
    let mut cmd =
        controller_with(&net, "/nonexistent/stampede", &["--json"], &["-c", "2", "-n", "301", "--copy-binary"], &url);
    let (code, v, stderr) = finish(cmd.spawn().unwrap(), Duration::from_secs(60));
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    assert_eq!(v["requests"], 301);
    let per_host: Vec<u64> = v["hosts"].as_array().unwrap().iter().map(|h| h["requests"].as_u64().unwrap()).collect();
    assert_eq!(per_host, [151, 150]);
    let copied = net.home(0).join(format!(".cache/stampede/stampede-{}", env!("CARGO_PKG_VERSION")));
    assert!(copied.is_file(), "{} was not copied", copied.display());

    // 6. `stampede run` with [hosts]: the server and its probe here, the load from the two hosts.
    let scratch = run::Scratch::new("hosts");
    let app = scratch.app("remote", "BIND=0.0.0.0");
    let scenario = scratch.scenario(&format!(
        "apps = [\"{}\"]\n[[profiles]]\npath = \"/plaintext\"\nconnections = 4\nduration = \"1s\"\nwarmup = \"500ms\"\n\
         [hosts]\nload = [\"{}\", \"{}\"]\nserver_address = \"{}\"\nssh_config = \"{}\"\nremote_path = \"{BIN}\"\n",
        app.display(),
        net.load_hosts[0],
        net.load_hosts[1],
        net.controller_ip,
        net.ssh_config.display()
    ));
    let out = scratch.run(&[scenario.to_str().unwrap(), "--out", scratch.out().to_str().unwrap()]);
    let (stdout, stderr) = (run::text(&out.stdout), run::text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let doc = scratch.results().expect("results.json");
    let run = &doc["runs"][0];
    assert_eq!(run["valid"], true, "{run}");
    let load = &run["load"];
    assert_eq!(load["hosts"].as_array().unwrap().len(), 2, "{load}");
    let sum: u64 = load["hosts"].as_array().unwrap().iter().map(|h| h["requests"].as_u64().unwrap()).sum();
    assert_eq!(load["requests"].as_u64().unwrap(), sum);
    assert!(sum > 0);
    assert!(load["url"].as_str().unwrap().starts_with(&format!("http://{}:", net.controller_ip)), "{}", load["url"]);
    assert!(
        run["server"]["cpu_cores_avg"].as_f64().unwrap() > 0.0,
        "the probe sampled the local server: {}",
        run["server"]
    );
    assert!(scratch.leftovers().is_empty(), "left running: {:?}", scratch.leftovers());
    drop(scratch);

    // 7. The server cannot be reached from the hosts: each host's own error, named.
    let refused = format!("http://{}:{}/", net.server_ip, refused_port());
    let (code, _, stderr) =
        finish(controller(&net, &["-c", "2", "-d", "1s"], &refused).spawn().unwrap(), Duration::from_secs(30));
    assert_eq!(code, Some(2), "{stderr}");
    let line = stderr.lines().find(|l| l.contains("stampede load failed there")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.starts_with("stampede: error: host root@") && line.contains("cannot connect to"), "{line}");

    // 8. A host with no sshd: one line naming it, exit 2, quickly.
    let start = Instant::now();
    let out = Stampede::new()
        .command()
        .args(["load", "--hosts", &format!("root@{}", net.dead_ip), "--connect-timeout", "2s", "-d", "1s"])
        .arg("--ssh-config")
        .arg(&net.ssh_config)
        .arg(&url)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(start.elapsed() < Duration::from_secs(15));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("stampede: error: host root@{}: could not connect over ssh", net.dead_ip)),
        "{stderr}"
    );
}

/// Waits for host b's remote `stampede load` (its load spec on stdin, so
/// found by its controls) to be under way, then kills it; returns when.
fn kill_mid_run(net: &Net, server: &Hostile) -> Instant {
    let ns = net.ns_id(&net.load_ns[1]);
    let start = Instant::now();
    let pid = loop {
        if let Some(&pid) = processes_in(ns, &["load", "--exit-on-stdin-eof", "--spec"]).first() {
            break pid;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "host b's stampede load never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Under way: the server sees requests (the start instant has passed).
    let before = server.requests.load(std::sync::atomic::Ordering::Relaxed);
    while server.requests.load(std::sync::atomic::Ordering::Relaxed) < before + 200 {
        assert!(start.elapsed() < Duration::from_secs(20), "the run never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the process found above, inside this test's namespace.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    Instant::now()
}

#[test]
fn an_unreachable_host_is_one_line_and_exit_2() {
    // No namespaces needed: ssh to a loopback port where nothing listens.
    let dir = std::env::temp_dir().join(format!("stampede-hosts-refused-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("ssh_config");
    std::fs::write(&cfg, format!("Host *\n  Port {}\n  BatchMode yes\n", refused_port())).unwrap();
    let start = Instant::now();
    let out = Stampede::new()
        .command()
        .args(["load", "--hosts", "nobody@127.0.0.1", "--connect-timeout", "2s", "-d", "1s", "--ssh-config"])
        .arg(&cfg)
        .arg(format!("http://127.0.0.1:{}/", refused_port()))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(start.elapsed() < Duration::from_secs(10));
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("stampede: error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].starts_with("stampede: error: host nobody@127.0.0.1: could not connect over ssh"),
        "{}",
        errors[0]
    );
    assert!(errors[0].contains("Connection refused"), "{}", errors[0]);
}

/// Regression: `--targets` was refused with `--hosts`, and `--order` and
/// `--seed` never reached the hosts. The targets file and its binary body
/// are read here and travel in each host's spec; the hosts need no files.
/// The load hosts themselves travel in the spec document (`from_hosts`).
fn a_targets_file_its_order_and_seed_reach_the_hosts(net: &Net) {
    let server = hostile::Hostile::start_on(net.server_listener(), hostile::Trick::None);
    let dir = std::env::temp_dir().join(format!("stampede-hosts-targets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let blob: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
    std::fs::write(dir.join("blob.bin"), &blob).unwrap();
    let targets = dir.join("mix.txt");
    let text = format!("POST {}\nX-K: v\n@blob.bin\nGET {}\n", server.url("/t/a"), server.url("/t/b/{rand:1..1000}"));
    std::fs::write(&targets, text).unwrap();
    // Through a spec document with `from_hosts`, as `stampede run` sends it.
    let printed = Stampede::new()
        .command()
        .args(["load", "--print-spec", "--hosts", &net.load_hosts.join(",")])
        .arg("--ssh-config")
        .arg(&net.ssh_config)
        .args(["--remote-path", BIN, "--order", "random", "--seed", "5", "-n", "400", "-c", "2", "--targets"])
        .arg(&targets)
        .output()
        .unwrap();
    assert_eq!(printed.status.code(), Some(0), "{}", String::from_utf8_lossy(&printed.stderr));
    let spec: Value = serde_json::from_slice(&printed.stdout).unwrap();
    assert_eq!(spec["from_hosts"]["hosts"], serde_json::json!(net.load_hosts), "{spec}");
    let spec_file = dir.join("spec.json");
    std::fs::write(&spec_file, &printed.stdout).unwrap();
    let mut cmd = Stampede::new().command();
    cmd.args(["load", "--json", "--spec"])
        .arg(&spec_file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (code, v, stderr) = finish(cmd.spawn().unwrap(), Duration::from_secs(40));
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    assert_eq!(v["requests"], 400);
    assert_eq!(v["mix"]["order"], "random");
    assert_eq!(v["mix"]["seed"], 5, "host 0 keeps the run's seed");
    for h in v["hosts"].as_array().unwrap() {
        assert_eq!(h["requests"], 200, "{h}");
    }
    let log = server.log();
    let posts: Vec<_> = log.iter().filter(|r| r.method == "POST").collect();
    assert!(!posts.is_empty() && posts.len() < 400, "random order sent {} POSTs of 400", posts.len());
    for p in &posts {
        assert_eq!((p.path.as_str(), p.header("x-k")), ("/t/a", Some("v")));
        assert_eq!(p.body, blob, "the binary body arrived whole");
    }
    assert!(log.iter().filter(|r| r.method == "GET").all(|r| r.path.starts_with("/t/b/")));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_host_flags_name_the_flag() {
    let out =
        Stampede::new().command().args(["load", "--hosts", "a,b", "-c", "1", "http://127.0.0.1:9/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--connections 1 is fewer than the 2 hosts"));
    let out = Stampede::new().command().args(["load", "--start-at", "1000", "http://127.0.0.1:9/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--start-at 1000.000 is"));
    let out = Stampede::new()
        .command()
        .args(["load", "--hosts", "a", "--ssh-config", "/nonexistent/cfg", "http://127.0.0.1:9/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--ssh-config /nonexistent/cfg: no such file"));
}

#[test]
fn start_at_waits_for_the_instant() {
    let server = Hostile::start(Trick::None);
    let at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64() + 1.5;
    let start = Instant::now();
    let v = load::load_json(
        &["-c", "1", "-d", "300ms", "--start-at", &format!("{at:.3}"), &server.url("/")],
        Duration::from_secs(20),
    );
    assert!(start.elapsed() >= Duration::from_millis(1400), "started early: {:?}", start.elapsed());
    assert!(v["requests"].as_u64().unwrap() > 0);
}

/// What a load host is sent: `--spec -`, its spec on stdin, and a stdin
/// kept open; closing it ends the run with its result.
#[test]
fn a_closed_stdin_ends_a_remote_run_with_its_result() {
    use std::io::Write;
    let server = Hostile::start(Trick::None);
    let mut child = Stampede::new()
        .command()
        .args(["load", "--json", "--exit-on-stdin-eof", "--spec", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let spec = serde_json::json!({ "urls": [server.url("/")], "connections": 1, "duration": "60s" });
    writeln!(child.stdin.as_mut().unwrap(), "{spec}").unwrap();
    let start = Instant::now();
    while server.requests.load(std::sync::atomic::Ordering::Relaxed) < 100 {
        assert!(start.elapsed() < Duration::from_secs(20), "the run never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(child.stdin.take());
    let (code, v, stderr) = finish(child, Duration::from_secs(15));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(v["interrupted"], true);
    assert!(v["requests"].as_u64().unwrap() > 0);
    assert_eq!(v["connections"], 1);
}

/// A scenario whose server runs on the server namespace's host under
/// `stampede agent`, with the load from the two load hosts; `after` goes at
/// the end (e.g. a second `[[profiles]]`).
fn remote_server_scenario(net: &Net, scratch: &run::Scratch, after: &str) -> std::path::PathBuf {
    let app = scratch.app("remote", "BIND=0.0.0.0");
    let load = format!("load = [\"{}\", \"{}\"]\nremote_path = \"{BIN}\"", net.load_hosts[0], net.load_hosts[1]);
    server_scenario(net, scratch, &app, &net.server_host, &net.server_ip, &format!("{load}\n{after}"), "")
}

/// A scenario running the app of `manifest` with its server on `server`,
/// reached at `address`; `hosts` and `extra` go into `[hosts]` and the top.
fn server_scenario(
    net: &Net,
    scratch: &run::Scratch,
    manifest: &std::path::Path,
    server: &str,
    address: &str,
    hosts: &str,
    extra: &str,
) -> std::path::PathBuf {
    scratch.scenario(&format!(
        "apps = [\"{}\"]\n{extra}\n[[profiles]]\npath = \"/plaintext\"\nconnections = 4\nduration = \"1s\"\nwarmup = \"500ms\"\n\
         [hosts]\nserver = \"{server}\"\nserver_address = \"{address}\"\nssh_config = \"{}\"\n{hosts}",
        manifest.display(),
        net.ssh_config.display()
    ))
}

#[test]
fn a_server_on_another_host_is_probed_there_and_a_dead_agent_is_named() {
    let Some(net) = hosts::net_or_skip("hosts (server on another host)") else { return };
    let server_ns = net.ns_id(&net.server_ns);

    // 1. The whole lifecycle through the agent: results as a local run's.
    let scratch = run::Scratch::new("remote-server");
    let scenario = remote_server_scenario(&net, &scratch, "");
    let out = scratch.run(&[scenario.to_str().unwrap(), "--out", scratch.out().to_str().unwrap()]);
    let (stdout, stderr) = (run::text(&out.stdout), run::text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let doc = scratch.results().expect("results.json");
    let where_ = &doc["environment"]["server_host"];
    assert_eq!(where_["host"], net.server_host.as_str(), "{where_}");
    assert_eq!(where_["address"], net.server_ip.as_str());
    assert!(where_["clock_offset_ms"].as_f64().unwrap().abs() < 50.0, "{where_}");
    assert!(where_["clock_rtt_ms"].as_f64().unwrap() > 0.0, "{where_}");
    let run = &doc["runs"][0];
    assert_eq!(run["valid"], true, "{run}");
    assert!(run["start_time_ms"].as_f64().unwrap() > 0.0, "{run}");
    // The probe ran where the server ran: its figures came back from there.
    let server = &run["server"];
    assert!(server["cpu_cores_avg"].as_f64().unwrap() > 0.0, "{server}");
    assert!(server["rss_max_mib"].as_f64().unwrap() > 0.0, "{server}");
    let samples = server["samples"].as_array().unwrap();
    assert!(samples.len() >= 5, "{server}");
    assert!(samples.iter().any(|s| s["cpu_cores"].as_f64().unwrap() > 0.0 && s["rss_mib"].as_f64().unwrap() > 0.0));
    assert!(run["rps_per_server_core"].as_f64().unwrap() > 0.0);
    // The load came from both load hosts, to the server's address.
    let load = &run["load"];
    let hosts = load["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 2, "{load}");
    let sum: u64 = hosts.iter().map(|h| h["requests"].as_u64().unwrap()).sum();
    assert!(sum > 0);
    assert_eq!(load["requests"].as_u64().unwrap(), sum);
    assert!(load["url"].as_str().unwrap().starts_with(&format!("http://{}:", net.server_ip)), "{}", load["url"]);
    // The server's log came back; nothing of the app or agent is left there.
    let logs: Vec<_> = std::fs::read_dir(scratch.out())
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path().join("logs")).into_iter().flatten().flatten())
        .collect();
    assert!(
        logs.iter().any(|l| l.file_name().to_string_lossy().starts_with("remote-") && l.metadata().unwrap().len() > 0),
        "{logs:?}"
    );
    run::assert_nothing_left(&scratch);
    assert!(processes_in(server_ns, &["agent"]).is_empty(), "an agent is left in the server namespace");
    drop(scratch);

    // 2. The agent is killed during the second run's 30 s load: the load
    // stops at once, one line names the host, the scenario stops (exit 2),
    // the first run is kept, and the app is stopped over a new ssh session.
    let scratch = run::Scratch::new("remote-killed");
    let scenario = remote_server_scenario(
        &net,
        &scratch,
        "[[profiles]]\nname = \"long\"\npath = \"/plaintext\"\nduration = \"30s\"\nwarmup = \"0s\"\n",
    );
    let child = scratch.spawn_run(&[scenario.to_str().unwrap(), "--out", scratch.out().to_str().unwrap()]);
    let first_done = run::wait_for(Duration::from_secs(60), || {
        scratch.results().is_some_and(|d| d["runs"].as_array().is_some_and(|r| !r.is_empty()))
    });
    assert!(first_done, "the first run never finished");
    let loading = run::wait_for(Duration::from_secs(30), || {
        !processes_in(net.ns_id(&net.load_ns[0]), &["load", "--exit-on-stdin-eof"]).is_empty()
    });
    assert!(loading, "the long load never started");
    let agent = processes_in(server_ns, &["agent"]);
    assert_eq!(agent.len(), 1, "one agent serves the long run: {agent:?}");
    // SAFETY: kill(2) on the agent found above, inside this test's namespace.
    unsafe { libc::kill(agent[0], libc::SIGKILL) };
    let killed = Instant::now();
    // A killed agent cannot remove its copy of the server's log (sshd passes no TMPDIR).
    let _ = std::fs::remove_file(format!("/tmp/stampede-agent/remote-{}.log", agent[0]));
    let out = run::wait_output(child, Duration::from_secs(60));
    assert!(
        killed.elapsed() < Duration::from_secs(15),
        "the load went on for {:?} after the agent died",
        killed.elapsed()
    );
    let stderr = run::text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("stampede: error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].starts_with(&format!(
            "stampede: error: hosts.server {}: the stampede agent died mid-run",
            net.server_host
        )),
        "{}",
        errors[0]
    );
    assert!(errors[0].contains("the server there was stopped"), "{}", errors[0]);
    let doc = scratch.results().expect("results.json");
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!((&runs[0]["profile"], &runs[0]["valid"]), (&"plaintext".into(), &true.into()));
    assert_eq!((&runs[1]["profile"], &runs[1]["valid"]), (&"long".into(), &false.into()));
    assert!(runs[1]["invalid_reason"].as_str().unwrap().contains("agent died"), "{}", runs[1]["invalid_reason"]);
    run::assert_nothing_left(&scratch);
    drop(scratch);

    // 3. Ctrl-C on the controller mid-load: exit 130, and the agent stops the app there.
    let scratch = run::Scratch::new("remote-ctrl-c");
    let scenario = remote_server_scenario(&net, &scratch, "");
    let child =
        scratch.spawn_run(&[scenario.to_str().unwrap(), "--duration", "30s", "--out", scratch.out().to_str().unwrap()]);
    let loading = run::wait_for(Duration::from_secs(60), || {
        !processes_in(net.ns_id(&net.load_ns[0]), &["load", "--exit-on-stdin-eof"]).is_empty()
    });
    assert!(loading, "the load never started");
    assert!(!scratch.leftovers().is_empty(), "the app is not running");
    // SAFETY: kill(2) on the `stampede run` this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let start = Instant::now();
    let out = run::wait_output(child, Duration::from_secs(40));
    assert_eq!(out.status.code(), Some(130), "stderr:\n{}", run::text(&out.stderr));
    assert!(start.elapsed() < Duration::from_secs(20), "Ctrl-C took {:?}", start.elapsed());
    run::assert_nothing_left(&scratch);
    assert!(
        run::wait_for(Duration::from_secs(5), || processes_in(server_ns, &["agent"]).is_empty()),
        "an agent is left"
    );
    drop(scratch);

    // 4. An app that fails to start there: the run is invalid with its output's tail, as locally.
    let scratch = run::Scratch::new("remote-broken");
    let broken = scratch.manifest("broken", "name = \"broken\"\nrun = \"echo remote-boom >&2; exit 3\"\n");
    let scenario = server_scenario(
        &net,
        &scratch,
        &broken,
        &net.server_host,
        &net.server_ip,
        &format!("remote_path = \"{BIN}\"\n"),
        "",
    );
    let out = scratch.run(&[scenario.to_str().unwrap(), "--out", scratch.out().to_str().unwrap()]);
    let stderr = run::text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let run = &scratch.results().expect("results.json")["runs"][0];
    let reason = run["invalid_reason"].as_str().unwrap();
    assert!(reason.starts_with("broken crashed during start (exit status: 3): remote-boom"), "{reason}");
    drop(scratch);

    // 5. An unreachable server host: one line naming hosts.server, exit 2.
    let scratch = run::Scratch::new("remote-dead");
    let app = scratch.app("remote", "BIND=0.0.0.0");
    let dead = net.dead_ip.as_str();
    let scenario = server_scenario(&net, &scratch, &app, &format!("root@{dead}"), dead, "", "");
    let out = scratch.run(&[scenario.to_str().unwrap(), "--out", scratch.out().to_str().unwrap()]);
    let stderr = run::text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("stampede: error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0]
            .starts_with(&format!("stampede: error: hosts.server root@{}: could not connect over ssh", net.dead_ip)),
        "{}",
        errors[0]
    );
}
