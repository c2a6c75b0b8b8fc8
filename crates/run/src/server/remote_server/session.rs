//! One ssh session to `stampede agent` on the server's host: the request on
//! its stdin's first line, commands after, the agent's events read on a
//! thread so the run can poll them with a timeout. Closing stdin asks the
//! agent to stop; when an agent vanishes without saying it stopped (it was
//! killed, or the connection dropped) the server's process group is stopped
//! over a fresh ssh session, so no path leaves the app running there.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use stampede_remote::ssh::{last_line, Ssh};
use stampede_remote::HostError;

use crate::server::agent::protocol::{self, Command, Event, Host, Request};

/// What polling the agent gave.
pub enum Next {
    Event(Event),
    /// Nothing within the wait.
    Quiet,
    /// The session ended: the agent exited or died.
    Gone,
}

pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    events: mpsc::Receiver<Event>,
    stderr: Arc<Mutex<String>>,
    /// The agent said `stopped`: nothing of the app is left there.
    pub stopped: bool,
    /// The server's process group on the host, once started.
    pub pgid: Option<i32>,
    /// The agent's output ended (it exited or died), seen without polling.
    ended: Arc<AtomicBool>,
}

impl Session {
    /// Starts `stampede agent` on `host`, sends `request`, and reads the
    /// agent's greeting.
    pub fn open(ssh: &Ssh, host: &str, request: &Request) -> Result<(Session, Host), HostError> {
        let mut cmd = ssh.stampede(host, &["agent".to_string()]);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // ssh dies with `stampede run`: the agent then sees its stdin close
        // and stops the server there.
        stampede_probe::lifeline::die_with_parent(&mut cmd);
        let mut child = cmd
            .spawn()
            .map_err(|e| HostError::Connect(format!("cannot start ssh: {e}; is openssh-client installed?")))?;
        let mut stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let mut err_pipe = child.stderr.take().expect("piped");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut text = sink.lock().unwrap_or_else(|p| p.into_inner());
                text.push_str(&String::from_utf8_lossy(&buf[..n]));
                if text.len() > 16 * 1024 {
                    let cut = text.len() - 8 * 1024;
                    let cut = (cut..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
                    text.drain(..cut);
                }
            }
        });
        let (tx, events) = mpsc::channel();
        let ended = Arc::new(AtomicBool::new(false));
        let end = ended.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // A line that is not ours (a login banner) is skipped.
                if let Ok(event) = protocol::decode::<Event>(&line) {
                    if tx.send(event).is_err() {
                        break;
                    }
                }
            }
            end.store(true, Ordering::SeqCst);
        });
        let _ = writeln!(stdin, "{}", protocol::encode(request)).and_then(|_| stdin.flush());
        let mut session = Session { child, stdin: Some(stdin), events, stderr, stopped: false, pgid: None, ended };
        let deadline = Instant::now() + ssh.connect_timeout + Duration::from_secs(10);
        loop {
            match session.next(Duration::from_millis(100)) {
                Next::Event(Event::Hello(host)) => return Ok((session, host)),
                Next::Event(other) => {
                    return Err(HostError::BadResult(format!("the agent greeted with {:?}", protocol::encode(&other))))
                }
                Next::Gone => return Err(session.refused(&ssh.remote_path)),
                Next::Quiet if Instant::now() > deadline => {
                    session.kill();
                    return Err(HostError::Hung);
                }
                Next::Quiet => {}
            }
        }
    }

    /// Waits up to `wait` for the agent's next event.
    pub fn next(&mut self, wait: Duration) -> Next {
        match self.events.recv_timeout(wait) {
            Ok(event) => {
                match &event {
                    Event::Started { pgid, .. } => self.pgid = Some(*pgid),
                    Event::Stopped { .. } => self.stopped = true,
                    _ => {}
                }
                Next::Event(event)
            }
            Err(mpsc::RecvTimeoutError::Timeout) => Next::Quiet,
            Err(mpsc::RecvTimeoutError::Disconnected) => Next::Gone,
        }
    }

    /// Whether the agent's output has ended (cheap; for polling during a load).
    pub fn ended(&self) -> bool {
        self.ended.load(Ordering::SeqCst)
    }

    /// Sends a command; false if the agent no longer reads them.
    pub fn send(&mut self, cmd: Command) -> bool {
        match self.stdin.as_mut() {
            Some(stdin) => writeln!(stdin, "{}", protocol::encode(&cmd)).and_then(|_| stdin.flush()).is_ok(),
            None => false,
        }
    }

    /// Why the agent did not even greet: ssh's own failure, a missing binary,
    /// or an older stampede without `agent`.
    fn refused(&mut self, path: &str) -> HostError {
        let code = self.wait_exit(Duration::from_secs(5));
        let err = last_line(&self.stderr_text());
        match code {
            Some(255) => HostError::Connect(format!("ssh exited 255: {err}")),
            Some(126) | Some(127) => HostError::Missing { path: path.to_string(), detail: err },
            _ => HostError::Remote(format!(
                "`{path} agent` did not start ({err}); run the same stampede version there, or set copy_binary = true"
            )),
        }
    }

    /// How the session ended, for the one line that names the lost host.
    pub fn died(&mut self) -> String {
        let code = self.wait_exit(Duration::from_secs(2));
        let err = last_line(&self.stderr_text());
        match code {
            Some(c) if err != "no message" => format!("ssh exited {c}: {err}"),
            Some(c) => format!("ssh exited {c} with no message: the agent was killed or the connection dropped"),
            None => "the session ended without a word".into(),
        }
    }

    fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn wait_exit(&mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            if Instant::now() > deadline {
                self.kill();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes stdin (the agent stops the server and says so) and waits up to
    /// `limit` for its `stopped`; true if it came.
    pub fn close(&mut self, limit: Duration) -> bool {
        self.stdin = None;
        let deadline = Instant::now() + limit;
        while !self.stopped && Instant::now() < deadline {
            if let Next::Gone = self.next(Duration::from_millis(50)) {
                break;
            }
        }
        self.wait_exit(Duration::from_secs(2));
        self.stopped
    }
}

/// Stops a process group on `host` over a new ssh session: SIGTERM, up to
/// `grace` for it to go, then SIGKILL. For an agent that can no longer do it.
pub fn stop_group(ssh: &Ssh, host: &str, pgid: i32, grace: Duration) -> Result<(), HostError> {
    if pgid <= 1 {
        return Ok(());
    }
    let script = stop_script(pgid, grace);
    let out = ssh.output(ssh.command(host, &["sh".into(), "-c".into(), script]), None)?;
    match out.connect_error() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The POSIX shell script [`stop_group`] runs on the host. It uses the
/// `kill -SIG -PGID` form (no `--`), the one dash's and bash's builtins share.
fn stop_script(pgid: i32, grace: Duration) -> String {
    let tenths = (grace.as_millis() / 100).max(1);
    format!(
        "kill -TERM -{pgid} 2>/dev/null || exit 0; i=0; while kill -0 -{pgid} 2>/dev/null && [ $i -lt {tenths} ]; do sleep 0.1; i=$((i+1)); done; kill -KILL -{pgid} 2>/dev/null; exit 0"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn the_stop_script_ends_a_group_that_ignores_term() {
        // A group whose leader ignores SIGTERM: only the SIGKILL after the grace ends it.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "trap '' TERM; sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id() as i32;
        std::thread::sleep(Duration::from_millis(100));
        let started = Instant::now();
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(stop_script(pgid, Duration::from_millis(300)))
            .status()
            .unwrap();
        assert!(status.success());
        assert!(started.elapsed() >= Duration::from_millis(250), "SIGKILL came before the grace period");
        let _ = child.wait();
        // The orphaned sleep is reaped by init a moment after its SIGKILL.
        let deadline = Instant::now() + Duration::from_secs(3);
        // SAFETY: signal 0 only asks whether the group still exists.
        while unsafe { libc::kill(-pgid, 0) } == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_ne!(unsafe { libc::kill(-pgid, 0) }, 0, "the group survived");
        // A group that is already gone: nothing to do, still success.
        assert!(std::process::Command::new("sh")
            .arg("-c")
            .arg(stop_script(pgid, Duration::from_millis(300)))
            .status()
            .unwrap()
            .success());
    }
}
