//! `stampede agent`: the server's half of a run whose server is on another
//! host (`[hosts] server`). The controller starts it over ssh, one session per
//! request; it reads the request on its first stdin line, and for `serve`
//! starts the app with the same [`LocalServer`] a local run uses (process
//! group, probe, readiness, stop, runtime events), then follows the
//! controller's commands and reports on stdout (protocol.rs). It never
//! listens on a port: the ssh session is its only channel. When its stdin
//! closes (the controller finished, died, or lost the connection) it stops
//! the app and its whole process tree and exits.

pub mod protocol;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use protocol::{Action, Command, Event, Host, Request, Serve};

use crate::scenario::matrix::Combination;
use crate::server::served::{pick_port, Failure, Launch, LocalServer, Served};

/// The largest piece of the server's log sent back to the controller.
const LOG_BYTES: u64 = 64 * 1024;

/// Runs one agent session; returns the exit code.
pub fn run(mut input: impl BufRead + Send + 'static, out: &mut dyn Write) -> i32 {
    if !send(out, &Event::Hello(Host::here())) {
        return 2;
    }
    let mut first = String::new();
    if input.read_line(&mut first).map_or(true, |n| n == 0) {
        return 0;
    }
    let request: Request = match protocol::decode(&first) {
        Ok(r) => r,
        Err(reason) => return fail(out, reason),
    };
    if request.version != protocol::VERSION {
        return fail(out, format!("protocol version {} is not this agent's {}; run the same stampede version on both hosts (or use copy_binary)", request.version, protocol::VERSION));
    }
    let (commands, gone) = listen(input);
    match request.action {
        Action::Describe => 0,
        Action::Prepare { app, build } => {
            let logs = scratch();
            match crate::server::prepare::prepare(&app.manifest(), build, &logs, &|| gone.load(Ordering::SeqCst)) {
                Ok(p) => {
                    send(out, &Event::Prepared { build_time_ms: p.build_time_ms, runtime_version: p.runtime_version });
                    0
                }
                Err(e) => fail(out, e.to_string()),
            }
        }
        Action::Serve(serve) => run_server(&serve, &commands, &gone, out),
    }
}

fn send(out: &mut dyn Write, event: &Event) -> bool {
    writeln!(out, "{}", protocol::encode(event)).and_then(|_| out.flush()).is_ok()
}

fn fail(out: &mut dyn Write, reason: String) -> i32 {
    send(out, &Event::Failed { reason });
    2
}

/// Reads the commands on a thread; a closed stdin (or garbage) is `Stop`.
fn listen(input: impl BufRead + Send + 'static) -> (mpsc::Receiver<Command>, Arc<AtomicBool>) {
    let (tx, rx) = mpsc::channel();
    let gone = Arc::new(AtomicBool::new(false));
    let flag = gone.clone();
    std::thread::spawn(move || {
        for line in input.lines() {
            let Ok(line) = line else { break };
            match protocol::decode::<Command>(&line) {
                Ok(cmd) => {
                    if tx.send(cmd).is_err() {
                        return;
                    }
                }
                Err(_) => break,
            }
        }
        flag.store(true, Ordering::SeqCst);
        let _ = tx.send(Command::Stop);
    });
    (rx, gone)
}

/// Where the agent keeps logs on its host.
fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join("stampede-agent");
    let _ = std::fs::create_dir_all(&dir);
    dir
}

fn run_server(serve: &Serve, commands: &mpsc::Receiver<Command>, gone: &AtomicBool, out: &mut dyn Write) -> i32 {
    let app = serve.app.manifest();
    if !app.dir.is_dir() {
        return fail(
            out,
            format!("the app folder {} does not exist on the server's host: put the app there at the same path (docs/hosts.md)", app.dir.display()),
        );
    }
    let port = match pick_port(serve.port) {
        Ok(p) => p,
        Err(reason) => return fail(out, reason),
    };
    let combo = Combination { env: serve.env.clone(), args: serve.args.clone(), ..Default::default() };
    let log = scratch().join(format!("{}-{}.log", crate::scenario::names::file_part(&app.name), std::process::id()));
    let launch = Launch {
        app: &app,
        combo: &combo,
        port,
        cpus: serve.cpus.as_deref(),
        log: &log,
        grace: Duration::from_millis(serve.stop_grace_ms),
        sample_interval: Duration::from_millis(serve.sample_interval_ms),
        ready: &serve.ready,
        env: &[],
        database_pid: None,
    };
    let mut server = match LocalServer::start(&launch) {
        Ok(s) => s,
        Err(reason) => return fail(out, reason),
    };
    let (code, report) = drive(&mut server, serve, port, commands, gone, out);
    // Whatever happened, the app and its process tree are stopped here.
    let finished = Box::new(server).finish();
    if let (true, Ok(finished)) = (report, finished) {
        send(out, &Event::Report(Box::new(finished)));
    }
    send(out, &Event::Stopped { log: log_tail(&log) });
    // The log went back to the controller; the runtime events (events.rs
    // keeps them beside the log) are in the report.
    let _ = std::fs::remove_file(&log);
    let _ = std::fs::remove_file(log.with_extension("events"));
    code
}

/// Follows the controller's commands until `finish` (returns true: report)
/// or `stop`, a closed stdin or a failure (false); the exit code first.
fn drive(
    server: &mut LocalServer,
    serve: &Serve,
    port: u16,
    commands: &mpsc::Receiver<Command>,
    gone: &AtomicBool,
    out: &mut dyn Write,
) -> (i32, bool) {
    if !send(out, &Event::Started { port, pgid: server.local_pid().unwrap_or(0) }) {
        return (2, false);
    }
    match server.wait_ready(Duration::from_millis(serve.start_timeout_ms), &|| gone.load(Ordering::SeqCst)) {
        Ok(ready) => {
            if !send(out, &Event::Ready(ready)) {
                return (2, false);
            }
        }
        Err(Failure::Run(reason) | Failure::Host(reason)) => return (fail(out, reason), false),
        Err(Failure::Interrupted) => return (0, false),
    }
    let mut exited_sent = false;
    loop {
        match commands.recv_timeout(Duration::from_millis(50)) {
            Ok(Command::Warmup) => server.mark_warmup(),
            Ok(Command::Measure) => {
                server.mark_measured_start();
                if !send(out, &Event::Measuring { mono_ns: crate::server::events::mono_ns() }) {
                    return (2, false);
                }
            }
            Ok(Command::MeasureEnd) => server.mark_measured_end(),
            Ok(Command::Finish) => return (0, true),
            Ok(Command::Stop) | Err(mpsc::RecvTimeoutError::Disconnected) => return (0, false),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if !exited_sent {
            if let Some(status) = server.crashed() {
                exited_sent = true;
                let tail = server.output_tail();
                if !send(out, &Event::Exited { status, tail }) {
                    return (2, false);
                }
            }
        }
    }
}

/// The last `LOG_BYTES` of the server's log.
fn log_tail(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else { return String::new() };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(LOG_BYTES)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::protocol::{App, Serve, VERSION};
    use super::*;
    use crate::scenario::manifest::Manifest;
    use std::io::BufReader;

    fn app(toml: &str) -> App {
        let manifest: Manifest = toml::from_str(toml).unwrap();
        App { manifest, dir: std::env::temp_dir() }
    }

    /// Runs an agent session on `request`, keeping its stdin open until it
    /// has answered (as a controller does); returns its events.
    fn session(request: &Request) -> (i32, Vec<Event>) {
        let (reader, mut writer) = std::io::pipe().unwrap();
        writeln!(writer, "{}", protocol::encode(request)).unwrap();
        let mut out = Vec::new();
        let code = run(BufReader::new(reader), &mut out);
        drop(writer);
        let events = String::from_utf8(out).unwrap().lines().map(|l| protocol::decode::<Event>(l).unwrap()).collect();
        (code, events)
    }

    #[test]
    fn prepare_builds_and_asks_the_version_there() {
        let request = Request {
            version: VERSION,
            action: Action::Prepare {
                app: app("name = \"a\"\nrun = \"x\"\nbuild = \"true\"\nversion = \"echo 9.9-test\"\n"),
                build: true,
            },
        };
        let (code, events) = session(&request);
        assert_eq!(code, 0);
        assert!(matches!(&events[0], Event::Hello(h) if h.cores > 0));
        assert!(
            matches!(&events[1], Event::Prepared { runtime_version, .. } if runtime_version == "9.9-test"),
            "{events:?}"
        );
        let missing = Request {
            version: VERSION,
            action: Action::Prepare {
                app: app("name = \"a\"\nrun = \"x\"\nrequires = [\"no-such-tool-xyz\"]\n"),
                build: true,
            },
        };
        let (code, events) = session(&missing);
        assert_eq!(code, 2);
        assert!(
            matches!(&events[1], Event::Failed { reason } if reason.contains("no-such-tool-xyz not found on PATH")),
            "{events:?}"
        );
    }

    #[test]
    fn a_server_that_dies_at_start_is_reported_with_its_output_and_stopped() {
        let serve = Serve {
            app: app("name = \"boom\"\nrun = \"echo agent-boom >&2; exit 4\"\n"),
            env: Default::default(),
            args: String::new(),
            port: 0,
            cpus: None,
            start_timeout_ms: 10_000,
            stop_grace_ms: 500,
            sample_interval_ms: 50,
            ready: crate::server::ready::ReadyCheck::any_answer(),
        };
        let (code, events) = session(&Request { version: VERSION, action: Action::Serve(serve) });
        assert_eq!(code, 2);
        let kinds: Vec<String> =
            events.iter().map(|e| protocol::encode(e).split('"').nth(3).unwrap_or("").to_string()).collect();
        assert_eq!(kinds, ["hello", "started", "failed", "stopped"], "{events:?}");
        assert!(
            matches!(&events[2], Event::Failed { reason } if reason.starts_with("boom crashed during start (exit status: 4): agent-boom")),
            "{events:?}"
        );
        assert!(matches!(&events[3], Event::Stopped { log } if log.contains("agent-boom")));
    }

    #[test]
    fn another_protocol_version_or_garbage_is_refused() {
        let (code, events) = session(&Request { version: VERSION + 1, action: Action::Describe });
        assert_eq!(code, 2);
        assert!(
            matches!(&events[1], Event::Failed { reason } if reason.contains("same stampede version")),
            "{events:?}"
        );
        let mut out = Vec::new();
        assert_eq!(run(BufReader::new(&b"hello there\n"[..]), &mut out), 2);
        assert!(String::from_utf8(out).unwrap().contains("not a stampede agent message"));
    }
}
