//! The one way Stampede's tests run the `stampede` binary: a builder that
//! finds the binary cargo built, takes arguments, standard input, the
//! environment, a working directory, CPU pinning (`taskset`) and a deadline,
//! runs it in a process group of its own (killed whole at the deadline, so
//! no test can hang and nothing it started outlives it), and hands back its
//! `Output`, with the assertions tests make on it in [`Outcome`]. A test
//! that signals or watches a running `stampede` takes [`Stampede::spawn`] or
//! [`Stampede::command`] instead.

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::process::{drain_bytes, kill_group, Finished};

/// How long a `stampede` may run when the test names no deadline.
const DEFAULT_DEADLINE: Duration = Duration::from_secs(300);

/// A `stampede` command line being built.
pub struct Stampede {
    cmd: Command,
    stdin: Option<Vec<u8>>,
    deadline: Duration,
}

impl Default for Stampede {
    fn default() -> Self {
        Stampede::new()
    }
}

impl Stampede {
    /// The binary, with no arguments yet.
    pub fn new() -> Stampede {
        Stampede { cmd: Command::new(crate::bin()), stdin: None, deadline: DEFAULT_DEADLINE }
    }

    /// The binary under `taskset -c CPUS` (`None`: not pinned).
    pub fn pinned(cpus: Option<&str>) -> Stampede {
        let Some(cpus) = cpus else { return Stampede::new() };
        let mut cmd = Command::new("taskset");
        cmd.arg("-c").arg(cpus).arg(crate::bin());
        Stampede { cmd, stdin: None, deadline: DEFAULT_DEADLINE }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Stampede {
        self.cmd.arg(arg);
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Stampede {
        self.cmd.args(args);
        self
    }

    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Stampede {
        self.cmd.env(name, value);
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Stampede {
        self.cmd.current_dir(dir);
        self
    }

    /// What the binary reads on standard input (otherwise nothing: /dev/null).
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Stampede {
        self.stdin = Some(bytes.into());
        self
    }

    /// Past this, the binary and everything it started are killed and the
    /// test fails with what it printed.
    pub fn deadline(mut self, deadline: Duration) -> Stampede {
        self.deadline = deadline;
        self
    }

    /// The command itself, for a test that starts and signals it.
    pub fn command(self) -> Command {
        self.cmd
    }

    /// Started with its output piped, in a process group of its own.
    pub fn spawn(mut self) -> Child {
        self.cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).spawn().expect("start stampede")
    }

    /// Runs to the end (or the deadline, which fails the test) and returns
    /// its exit status and output.
    pub fn output(mut self) -> Output {
        let shown = format!("{:?}", self.cmd);
        let stdin = if self.stdin.is_some() { Stdio::piped() } else { Stdio::null() };
        let mut child = self
            .cmd
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("start stampede");
        if let (Some(bytes), Some(mut pipe)) = (self.stdin.take(), child.stdin.take()) {
            std::thread::spawn(move || pipe.write_all(&bytes));
        }
        let (stdout, stderr) = (drain_bytes(child.stdout.take()), drain_bytes(child.stderr.take()));
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for stampede") {
                break Some(status);
            }
            if start.elapsed() > self.deadline {
                kill_group(&mut child, libc::SIGKILL);
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let status = status.unwrap_or_else(|| child.wait().expect("wait for stampede"));
        let limit = Duration::from_secs(5);
        let out = Output {
            status,
            stdout: stdout.recv_timeout(limit).unwrap_or_default(),
            stderr: stderr.recv_timeout(limit).unwrap_or_default(),
        };
        assert!(
            start.elapsed() <= self.deadline,
            "{shown} hung past {:?}\nstdout:\n{}\nstderr:\n{}",
            self.deadline,
            out.stdout_text(),
            out.stderr_text()
        );
        out
    }

    /// Runs to the end like [`Stampede::output`], its output as text.
    pub fn finished(self) -> Finished {
        let out = self.output();
        Finished { status: out.status, stdout: out.stdout_text(), stderr: out.stderr_text() }
    }

    /// Runs to the end, which must be a success, and parses its standard
    /// output as one JSON document.
    pub fn json(self) -> Value {
        let out = self.output();
        out.assert_code(0);
        out.json()
    }
}

/// What tests check on a finished `stampede`.
pub trait Outcome {
    fn stdout_text(&self) -> String;
    fn stderr_text(&self) -> String;
    /// Fails the test, showing both streams, unless the exit code is `code`.
    fn assert_code(&self, code: i32) -> &Self;
    fn assert_stdout_contains(&self, text: &str) -> &Self;
    fn assert_stderr_contains(&self, text: &str) -> &Self;
    /// Standard output as one JSON document (the test fails if it is not).
    fn json(&self) -> Value;
}

impl Outcome for Output {
    fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.status.code(), Some(code), "stdout:\n{}\nstderr:\n{}", self.stdout_text(), self.stderr_text());
        self
    }

    fn assert_stdout_contains(&self, text: &str) -> &Self {
        assert!(self.stdout_text().contains(text), "{text:?} not in stdout:\n{}", self.stdout_text());
        self
    }

    fn assert_stderr_contains(&self, text: &str) -> &Self {
        assert!(self.stderr_text().contains(text), "{text:?} not in stderr:\n{}", self.stderr_text());
        self
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.stdout).unwrap_or_else(|e| {
            panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", self.stdout_text(), self.stderr_text())
        })
    }
}
