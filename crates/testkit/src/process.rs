//! Running child processes in tests without ever hanging the test run: every
//! command gets its own process group, its output is drained on threads (so a
//! chatty child cannot block on a full pipe), and at the deadline the whole
//! group is killed.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// What a finished command printed and how it ended.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    /// Exit code, or `None` when a signal ended the process.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Both streams, for a failure message.
    pub fn output(&self) -> String {
        format!("--- stdout ---\n{}--- stderr ---\n{}", self.stdout, self.stderr)
    }
}

/// Runs `command` to completion, or kills its process group after `deadline`
/// and returns `Err` with what it printed so far.
pub fn run_with_deadline(command: &mut Command, deadline: Duration) -> Result<Finished, String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= deadline => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("cannot wait for {command:?}: {e}")),
        }
    };
    let timed_out = status.is_none();
    let status = match status {
        Some(status) => status,
        None => {
            kill_group(&mut child, libc::SIGKILL);
            child.wait().map_err(|e| format!("cannot wait for {command:?}: {e}"))?
        }
    };
    // Helpers a build leaves behind (compiler servers, daemons) would keep
    // the pipes open and outlive the test: the group goes with its leader.
    if !group_members(child.id()).is_empty() {
        kill_group(&mut child, libc::SIGKILL);
    }
    let finished = Finished {
        status,
        stdout: stdout.recv_timeout(Duration::from_secs(5)).unwrap_or_default(),
        stderr: stderr.recv_timeout(Duration::from_secs(5)).unwrap_or_default(),
    };
    if timed_out {
        return Err(format!("{command:?} did not finish within {deadline:?}; killed\n{}", finished.output()));
    }
    Ok(finished)
}

/// Reads a pipe to its end on a thread; the text arrives on the channel.
fn drain(pipe: Option<impl Read + Send + 'static>) -> Receiver<String> {
    let (send, receive) = mpsc::channel();
    let bytes = drain_bytes(pipe);
    std::thread::spawn(move || {
        let text = bytes.recv().map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
        let _ = send.send(text);
    });
    receive
}

/// Reads a pipe to its end on a thread; the bytes arrive on the channel.
pub fn drain_bytes(pipe: Option<impl Read + Send + 'static>) -> Receiver<Vec<u8>> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        let _ = send.send(bytes);
    });
    receive
}

/// Sends `signal` to the process group led by `child` (spawned with
/// `process_group(0)`, so its pgid is its pid).
pub fn kill_group(child: &mut Child, signal: i32) {
    let pgid = child.id() as libc::pid_t;
    // SAFETY: kill(2) with a negative pid signals that process group; it
    // touches no memory of ours.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Processes still alive (not zombies) whose process group is `pgid`, read
/// from /proc, as `pid command` strings.
pub fn group_members(pgid: u32) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut members = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().filter(|n| n.bytes().all(|b| b.is_ascii_digit())) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses.
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let (Some(state), Some(pgrp)) = (fields.first(), fields.get(2)) else {
            continue;
        };
        if *state != "Z" && pgrp.parse::<u32>().ok() == Some(pgid) {
            let comm = stat.get(stat.find('(').map_or(0, |i| i + 1)..close).unwrap_or("?");
            members.push(format!("{pid} {comm}"));
        }
    }
    members
}
