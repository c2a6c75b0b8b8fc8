//! Short-lived helper commands (an app's build and version commands,
//! `stampede check`) run to completion with a time limit, an eye on Ctrl-C,
//! and their output either captured or written to a log file. Each runs in
//! its own process group and with its own [`Tag`] in its environment, so
//! that a timeout, an interrupt or its end kills all of it, a child it left
//! in the background in a session of its own included (that child would
//! otherwise hold the output pipe open, and `stampede` would wait for it
//! forever); and it gets SIGKILL from the kernel if `stampede` dies first.

use std::fs::File;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use stampede_probe::lifeline::{Lineage, Tag};

/// How long the output is waited for once the command has exited and all it
/// left is killed: the pipes close as soon as the last holder is gone.
const OUTPUT_GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, thiserror::Error)]
pub enum SubprocessError {
    #[error("cannot start `{what}`: {source}")]
    Spawn { what: String, source: std::io::Error },
    #[error("`{what}` did not finish within {limit:?}")]
    Timeout { what: String, limit: Duration },
    #[error("interrupted")]
    Interrupted,
}

pub struct Finished {
    pub status: ExitStatus,
    pub output: String,
    pub took: Duration,
}

/// Runs `cmd` (described as `what`) until it exits, `limit` passes or
/// `interrupted()` says so. Output goes to `log` when given (and `output` is
/// then empty), else is captured (stdout then stderr).
pub fn run(
    mut cmd: Command,
    what: &str,
    limit: Duration,
    log: Option<&Path>,
    interrupted: &dyn Fn() -> bool,
) -> Result<Finished, SubprocessError> {
    let spawn_err = |source| SubprocessError::Spawn { what: what.to_string(), source };
    cmd.stdin(Stdio::null()).process_group(0);
    stampede_probe::lifeline::die_with_parent(&mut cmd);
    let tag = Tag::new();
    tag.apply(&mut cmd);
    match log {
        Some(path) => {
            let file = File::create(path).map_err(spawn_err)?;
            cmd.stdout(file.try_clone().map_err(spawn_err)?).stderr(file);
        }
        None => {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
    }
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(spawn_err)?;
    let mut lineage = Lineage::tagged(child.id() as i32, tag);
    let output = Output::read(&mut child);
    let status = loop {
        if interrupted() {
            kill_all(&mut lineage, &mut child);
            return Err(SubprocessError::Interrupted);
        }
        if started.elapsed() > limit {
            kill_all(&mut lineage, &mut child);
            return Err(SubprocessError::Timeout { what: what.to_string(), limit });
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(source) => return Err(spawn_err(source)),
        }
    };
    let took = started.elapsed();
    // Anything the command left running, in its group or not, goes with it.
    kill_all(&mut lineage, &mut child);
    let output = output.collect(Instant::now() + OUTPUT_GRACE, interrupted);
    Ok(Finished { status, output, took })
}

/// SIGKILL to the command's group and to every process carrying its tag,
/// then its exit status and theirs collected.
fn kill_all(lineage: &mut Lineage, child: &mut std::process::Child) {
    lineage.refresh_tagged();
    let pgid = child.id() as i32;
    // SAFETY: signals only the group this module created.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
    lineage.signal(libc::SIGKILL);
    // The status is kept by `Child` once read, so this never waits twice.
    let _ = child.wait();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !lineage.living().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    lineage.reap();
}

/// The command's stdout and stderr, read by one thread each into a channel,
/// so the wait for them can end at a deadline: a process that escaped the
/// kill (it cleared its environment) may hold a pipe open for ever.
struct Output {
    chunks: mpsc::Receiver<(usize, Vec<u8>)>,
    streams: usize,
}

impl Output {
    fn read(child: &mut std::process::Child) -> Output {
        let (tx, chunks) = mpsc::channel();
        let sources: Vec<Box<dyn Read + Send>> = [
            child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>),
            child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>),
        ]
        .into_iter()
        .flatten()
        .collect();
        let streams = sources.len();
        for (i, mut source) in sources.into_iter().enumerate() {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while let Ok(n @ 1..) = source.read(&mut buf) {
                    if tx.send((i, buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
                let _ = tx.send((i, Vec::new()));
            });
        }
        Output { chunks, streams }
    }

    /// Stdout then stderr, as far as they were read by `deadline` (or an
    /// interrupt).
    fn collect(self, deadline: Instant, interrupted: &dyn Fn() -> bool) -> String {
        let mut bytes = vec![Vec::new(); self.streams];
        let mut open = self.streams;
        while open > 0 && Instant::now() < deadline && !interrupted() {
            match self.chunks.recv_timeout(Duration::from_millis(20)) {
                Ok((_, chunk)) if chunk.is_empty() => open -= 1,
                Ok((i, chunk)) => bytes[i].extend_from_slice(&chunk),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        bytes.iter().map(|b| String::from_utf8_lossy(b)).collect()
    }
}

/// A shell command run in `dir`.
pub fn shell(script: &str, dir: &Path) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script).current_dir(dir);
    cmd
}

/// The last `n` non-empty lines of `text`, joined with " | ".
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_status() {
        let done =
            run(shell("echo out; echo err >&2; exit 3", Path::new("/")), "t", Duration::from_secs(5), None, &|| false)
                .unwrap();
        assert_eq!(done.status.code(), Some(3));
        assert!(done.output.contains("out") && done.output.contains("err"));
    }

    #[test]
    fn a_slow_command_is_killed_at_its_limit() {
        let started = Instant::now();
        let err = run(shell("sleep 20", Path::new("/")), "sleepy", Duration::from_millis(200), None, &|| false)
            .err()
            .unwrap();
        assert!(matches!(err, SubprocessError::Timeout { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    /// Regression: a version command that left a child in a session of its
    /// own (holding the output pipe) made `run` wait for ever.
    #[test]
    fn a_background_child_in_its_own_session_is_killed_and_does_not_hold_the_output() {
        let tag_probe = "stampede-subprocess-bg-test";
        // `$0` of the inner shell carries the probe; `; :` keeps that shell alive.
        let script = format!("echo v1.2; setsid sh -c 'sleep 300; :' {tag_probe} & exit 0");
        let started = Instant::now();
        let done = run(shell(&script, Path::new("/")), "t", Duration::from_secs(20), None, &|| false).unwrap();
        assert!(done.status.success());
        assert!(done.output.contains("v1.2"), "{}", done.output);
        assert!(started.elapsed() < Duration::from_secs(10), "waited for the background child");
        let left = std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()).any(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(tag_probe))
        });
        assert!(!left, "the background child outlived the command");
    }

    #[test]
    fn an_interrupt_stops_a_hung_command() {
        let flag = std::sync::atomic::AtomicBool::new(false);
        let started = Instant::now();
        let flip = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(200));
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            run(shell("sleep 300", Path::new("/")), "hung", Duration::from_secs(600), None, &|| {
                flag.load(std::sync::atomic::Ordering::SeqCst)
            })
        });
        assert!(matches!(flip, Err(SubprocessError::Interrupted)));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn last_lines_skips_blanks() {
        assert_eq!(last_lines("a\n\nb\nc\n", 2), "b | c");
    }
}
