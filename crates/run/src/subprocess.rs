//! Short-lived helper commands (an app's build and version commands,
//! `stampede check`) run to completion with a time limit, an eye on Ctrl-C,
//! and their output either captured or written to a log file. Each runs in
//! its own process group so a timeout or an interrupt kills all of it, and
//! gets SIGKILL from the kernel if `stampede` dies first.

use std::fs::File;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

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
    let pgid = child.id() as i32;
    let readers: Vec<_> = [
        child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>),
        child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|mut source| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = source.read_to_end(&mut buf);
            buf
        })
    })
    .collect();
    let kill_group = || unsafe {
        // SAFETY: signals only the group this function created.
        libc::kill(-pgid, libc::SIGKILL);
    };
    let status = loop {
        if interrupted() {
            kill_group();
            let _ = child.wait();
            return Err(SubprocessError::Interrupted);
        }
        if started.elapsed() > limit {
            kill_group();
            let _ = child.wait();
            return Err(SubprocessError::Timeout { what: what.to_string(), limit });
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(source) => return Err(spawn_err(source)),
        }
    };
    let took = started.elapsed();
    // Anything the command left running in its group goes with it.
    kill_group();
    let mut output = String::new();
    for reader in readers {
        output.push_str(&String::from_utf8_lossy(&reader.join().unwrap_or_default()));
    }
    Ok(Finished { status, output, took })
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

    #[test]
    fn last_lines_skips_blanks() {
        assert_eq!(last_lines("a\n\nb\nc\n", 2), "b | c");
    }
}
