//! One server process, started the way its manifest says (`sh -c` in the
//! app's folder, under `taskset` when pinned) in a process group of its own,
//! so that stopping it reaches every worker it forked: SIGTERM to the group
//! and to every descendant seen (a child that called `setsid()` has left the
//! group), then SIGKILL after the grace period. Every process the server
//! starts carries its [`Tag`] in its environment, so the stop also reaches
//! a daemonized grandchild whose parent exited before it could be seen
//! (fork, `setsid`, fork): those are reported as strays. The stop happens in `Drop`
//! too, so no error, panic or Ctrl-C leaves a server behind; and the server
//! gets SIGKILL from the kernel if `stampede` itself is killed
//! (`stampede_probe::lifeline`).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use stampede_probe::lifeline::{self, Lineage, Tag};

use crate::scenario::manifest::Manifest;
use crate::scenario::matrix::Combination;
use crate::scenario::pinning;

pub struct Server {
    child: Child,
    pgid: i32,
    /// Every descendant seen so far, for the stop.
    lineage: Lineage,
    /// Processes found at the stop by the tag alone (they had left the
    /// server's tree), with their command lines.
    pub strays: Vec<(i32, String)>,
    log_path: PathBuf,
    grace: Duration,
    exit: Option<ExitStatus>,
    stopped: bool,
    pub spawned_at: Instant,
    /// CLOCK_MONOTONIC just before the spawn: the anchor for runtime clocks.
    pub exec_mono_ns: u64,
    /// Where this run's runtime events go, when the manifest has `[events]`.
    pub capture: Option<crate::server::events::Capture>,
    /// Threads copying piped output (events from `output`) to the log.
    pumps: Vec<std::thread::JoinHandle<()>>,
}

/// How a stop went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The group was gone within the grace period after SIGTERM.
    Terminated,
    /// It had to be killed.
    Killed,
    /// It had exited before we asked.
    AlreadyExited,
}

impl Server {
    /// Starts `app` with `combo` on `port`; output goes to `log_path`.
    pub fn spawn(
        app: &Manifest,
        combo: &Combination,
        port: u16,
        cpus: Option<&str>,
        log_path: &Path,
        grace: Duration,
        extra_env: &[(String, String)],
    ) -> io::Result<Server> {
        let log = File::create(log_path)?;
        let capture = app.events.as_ref().and_then(|settings| crate::server::events::Capture::new(settings, log_path));
        let env = match (&capture, &app.events) {
            (Some(capture), Some(settings)) => capture.env(settings, &combo.env),
            _ => combo.env.clone(),
        };
        let script = if combo.args.is_empty() { app.run.clone() } else { format!("{} {}", app.run, combo.args) };
        let mut cmd = pinning::command(cpus, "sh");
        cmd.arg("-c")
            .arg(&script)
            .current_dir(app.command_dir())
            .env("PORT", port.to_string())
            .env_remove("THREADS")
            .envs(extra_env.iter().map(|(k, v)| (k, v)))
            .envs(&env)
            .stdin(Stdio::null())
            .process_group(0);
        lifeline::die_with_parent(&mut cmd);
        let tag = Tag::new();
        tag.apply(&mut cmd);
        let from_output = capture.as_ref().is_some_and(|c| c.from_output);
        if from_output {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        } else {
            cmd.stdout(log.try_clone()?).stderr(log.try_clone()?);
        }
        let exec_mono_ns = crate::server::events::mono_ns();
        let spawned_at = Instant::now();
        let mut child = cmd.spawn()?;
        let pgid = child.id() as i32;
        let mut pumps = Vec::new();
        if let (true, Some(c)) = (from_output, &capture) {
            let log = std::sync::Arc::new(std::sync::Mutex::new(log));
            let stamped = std::sync::Arc::new(std::sync::Mutex::new(File::create(&c.path)?));
            let streams: [Option<Box<dyn Read + Send>>; 2] =
                [child.stdout.take().map(|s| Box::new(s) as _), child.stderr.take().map(|s| Box::new(s) as _)];
            for stream in streams.into_iter().flatten() {
                pumps.push(crate::server::events::pump(stream, log.clone(), stamped.clone()));
            }
        }
        Ok(Server {
            child,
            pgid,
            lineage: Lineage::tagged(pgid, tag),
            strays: Vec::new(),
            log_path: log_path.to_path_buf(),
            grace,
            exit: None,
            stopped: false,
            spawned_at,
            exec_mono_ns,
            capture,
            pumps,
        })
    }

    pub fn pid(&self) -> i32 {
        self.pgid
    }

    /// Notes the server's descendants as they are now, so the stop reaches
    /// them even if they leave its group and their parent exits before then.
    pub fn watch(&mut self) {
        self.lineage.refresh();
    }

    /// Waits for the output copiers to reach the end of the server's output
    /// (call after `stop`: the pipes close when the group is gone).
    pub fn finish_output(&mut self) {
        for pump in self.pumps.drain(..) {
            let _ = pump.join();
        }
    }

    /// The exit status if the server's main process has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.exit.is_none() {
            self.exit = self.child.try_wait().ok().flatten();
        }
        self.exit
    }

    /// The last `lines` lines of its output, joined with " | ".
    pub fn output_tail(&self, lines: usize) -> String {
        tail(&self.log_path, lines)
    }

    /// Why it died, for a crash at start: the log's panic or exception line
    /// (crash_line) and the log's path, else the log's last lines and path.
    pub fn crash_report(&self, lines: usize) -> String {
        let why = crash_line(&self.log_path).unwrap_or_else(|| self.output_tail(lines));
        format!("{why} (its output: {})", self.log_path.display())
    }

    fn group_alive(&self) -> bool {
        // SAFETY: kill with signal 0 only checks whether the group exists.
        unsafe { libc::kill(-self.pgid, 0) == 0 }
    }

    /// `signal` to the group and to every descendant seen outside it.
    fn signal_all(&self, signal: i32) {
        // SAFETY: the group id is our own child's pid, which leads its group.
        unsafe {
            libc::kill(-self.pgid, signal);
        }
        self.lineage.signal(signal);
    }

    /// Nothing of the server is left: its main process reaped, its group
    /// empty, every descendant seen gone.
    fn all_gone(&mut self) -> bool {
        self.exited();
        self.exit.is_some() && !self.group_alive() && self.lineage.living().is_empty()
    }

    /// SIGTERM to the group and every descendant seen; SIGKILL if anything is
    /// left after the grace period.
    pub fn stop(&mut self) -> Stopped {
        if self.stopped {
            return Stopped::AlreadyExited;
        }
        self.stopped = true;
        let was_running = self.exited().is_none();
        self.strays = self.lineage.refresh_tagged();
        let stopped = self.stop_all(was_running);
        self.lineage.reap();
        stopped
    }

    fn stop_all(&mut self, was_running: bool) -> Stopped {
        let anything_left = was_running || !self.lineage.living().is_empty() || self.group_alive();
        self.signal_all(libc::SIGTERM);
        let deadline = Instant::now() + self.grace;
        while Instant::now() < deadline {
            if self.all_gone() {
                return if anything_left { Stopped::Terminated } else { Stopped::AlreadyExited };
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.signal_all(libc::SIGKILL);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if self.all_gone() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if self.exit.is_none() {
            self.exit = self.child.wait().ok();
        }
        Stopped::Killed
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The last `lines` non-empty lines of a log file, joined with " | ".
pub fn tail(path: &Path, lines: usize) -> String {
    let Ok(mut file) = File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(8192)));
    let mut text = String::new();
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_ok() {
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    let all: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join(" | ")
}

/// The line that says why a program died, from the start of its log (the
/// first 64 KiB): a Python traceback's exception line (the first unindented
/// line after `Traceback`), else the first line with `panic` (Go's
/// `panic: …`, Rust's `panicked at …:` with the message on the next line),
/// `Exception` or `Error`. A goroutine dump or a stack after it is noise a
/// reader must not have to search.
pub fn crash_line(path: &Path) -> Option<String> {
    let mut bytes = Vec::new();
    File::open(path).ok()?.take(64 * 1024).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect();
    if let Some(at) = lines.iter().position(|l| l.starts_with("Traceback")) {
        if let Some(last) = lines[at + 1..].iter().find(|l| !l.starts_with(char::is_whitespace)) {
            return Some(last.to_string());
        }
    }
    let at = lines.iter().position(|l| l.contains("panic") || l.contains("Exception") || l.contains("Error"))?;
    match lines.get(at + 1) {
        // Rust puts the panic's message on the line after `panicked at file:line:col:`.
        Some(message) if lines[at].contains("panicked at") && lines[at].ends_with(':') => {
            Some(format!("{} {}", lines[at], message.trim()))
        }
        _ => Some(lines[at].to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn manifest(run: &str) -> Manifest {
        Manifest {
            name: "t".into(),
            description: String::new(),
            requires: vec![],
            build: None,
            run: run.into(),
            version: None,
            contract: None,
            ready: None,
            knobs: BTreeMap::new(),
            profile: Default::default(),
            events: None,
            working_dir: None,
            urls: Default::default(),
            tfb_config: None,
            tfb_test: None,
            port: None,
            fixed_port: None,
            arena: None,
            dir: std::env::temp_dir(),
        }
    }

    #[test]
    fn stop_reaches_children_that_ignore_nothing_and_ones_that_ignore_term() {
        let log = std::env::temp_dir().join(format!("stampede-server-test-{}.log", std::process::id()));
        let app = manifest("sleep 30 & (trap '' TERM; echo started; sleep 30) & wait");
        let mut server =
            Server::spawn(&app, &Combination::default(), 1, None, &log, Duration::from_millis(300), &[]).unwrap();
        let pgid = server.pid();
        // "started" is printed once the subshell ignores SIGTERM.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !(server.output_tail(1).contains("started") && group_size(pgid) >= 3) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(server.stop(), Stopped::Killed, "the TERM-ignoring child needs SIGKILL");
        assert!(unsafe { libc::kill(-pgid, 0) } != 0, "group gone");
        assert!(server.output_tail(2).contains("started"));
        let _ = std::fs::remove_file(&log);
    }

    fn group_size(pgid: i32) -> usize {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|s| s.rsplit(')').next().map(|r| r.split_whitespace().nth(2) == Some(&pgid.to_string())))
                    .unwrap_or(false)
            })
            .count()
    }

    #[test]
    fn crash_line_finds_the_panic_or_the_exception() {
        let path = std::env::temp_dir().join(format!("stampede-crash-{}.log", std::process::id()));
        let cases = [
            (
                "starting\npanic: dial tcp: lookup tfb-database: no such host\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:40 +0x1d\n",
                "panic: dial tcp: lookup tfb-database: no such host",
            ),
            (
                "thread 'main' panicked at src/main.rs:12:5:\ncannot bind: Address in use\nnote: run with RUST_BACKTRACE=1\n",
                "thread 'main' panicked at src/main.rs:12:5: cannot bind: Address in use",
            ),
            (
                "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n    import asyncpg\nModuleNotFoundError: No module named 'asyncpg'\n",
                "ModuleNotFoundError: No module named 'asyncpg'",
            ),
            ("Exception in thread \"main\" java.net.BindException: Address already in use\n\tat x\n", "Exception in thread \"main\" java.net.BindException: Address already in use"),
        ];
        for (log, line) in cases {
            std::fs::write(&path, log).unwrap();
            assert_eq!(crash_line(&path).as_deref(), Some(line), "{log}");
        }
        std::fs::write(&path, "listening\nbye\n").unwrap();
        assert_eq!(crash_line(&path), None);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let path = std::env::temp_dir().join(format!("stampede-tail-{}.log", std::process::id()));
        std::fs::write(&path, "a\nb\n\nc\nd\n").unwrap();
        assert_eq!(tail(&path, 2), "c | d");
        let _ = std::fs::remove_file(&path);
    }
}
