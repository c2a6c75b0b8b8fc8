//! Building and running the system's `ssh` client. Host keys, identities and
//! options come from the user's own ssh configuration (or `--ssh-config`);
//! we only add `BatchMode=yes`, so ssh fails instead of prompting, and a
//! connect timeout. Host-key checking is never weakened.

use crate::error::HostError;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Ssh {
    /// `ssh -F FILE`; `None` uses the user's ~/.ssh/config.
    pub config: Option<PathBuf>,
    pub connect_timeout: Duration,
    /// The `stampede` to run on the hosts (`--remote-path`).
    pub remote_path: String,
}

impl Ssh {
    /// `ssh [-F cfg] -o BatchMode=yes … HOST -- 'quoted remote command'`,
    /// in its own process group so the controller's Ctrl-C reaches the
    /// controller alone, which then stops each remote run cleanly.
    pub fn command(&self, host: &str, remote: &[String]) -> Command {
        let mut cmd = Command::new("ssh");
        if let Some(cfg) = &self.config {
            cmd.arg("-F").arg(cfg);
        }
        cmd.args(["-T", "-o", "BatchMode=yes"])
            .arg("-o")
            .arg(format!("ConnectTimeout={}", self.connect_timeout.as_secs().max(1)))
            .args(["-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "-o", "LogLevel=ERROR"])
            .arg(host)
            .arg("--")
            .arg(remote.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "));
        cmd.process_group(0);
        cmd
    }

    /// The remote `stampede` invocation with these arguments.
    pub fn stampede(&self, host: &str, args: &[String]) -> Command {
        let mut remote = vec![self.remote_path.clone()];
        remote.extend(args.iter().cloned());
        self.command(host, &remote)
    }

    /// Runs a short remote command to completion, feeding it `input`.
    pub fn output(&self, mut cmd: Command, input: Option<&[u8]>) -> Result<Finished, HostError> {
        cmd.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| HostError::Connect(format!("cannot start ssh: {e}; is openssh-client installed?")))?;
        if let (Some(mut stdin), Some(data)) = (child.stdin.take(), input) {
            use std::io::Write;
            let data = data.to_vec();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&data);
            });
        }
        wait(&mut child)
    }
}

/// Reads a child's piped stdout and stderr to their ends and reaps it.
pub fn wait(child: &mut Child) -> Result<Finished, HostError> {
    let mut stderr = child.stderr.take().expect("piped");
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut stdout = String::new();
    let _ = child.stdout.take().expect("piped").read_to_string(&mut stdout);
    let status = child.wait().map_err(|e| HostError::Connect(e.to_string()))?;
    Ok(Finished { code: status.code(), stdout, stderr: err_reader.join().unwrap_or_default() })
}

/// What a finished ssh command left.
#[derive(Debug, Clone)]
pub struct Finished {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    /// ssh's own failure (exit 255) as a connect error, with its last words.
    pub fn connect_error(&self) -> Option<HostError> {
        (self.code == Some(255)).then(|| HostError::Connect(format!("ssh exited 255: {}", last_line(&self.stderr))))
    }
}

/// The last non-empty line of a command's stderr, the one that says why.
pub fn last_line(s: &str) -> String {
    let line = s.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("no message");
    line.strip_prefix("stampede: error: ").unwrap_or(line).to_string()
}

/// Quotes one word for the remote POSIX shell. A leading `~/` is left
/// outside the quotes so the remote shell expands it to the home directory.
pub fn quote(word: &str) -> String {
    if let Some(rest) = word.strip_prefix("~/") {
        return format!("~/{}", quote(rest));
    }
    if !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,@%+".contains(&b)) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_the_remote_shell() {
        assert_eq!(quote("--json"), "--json");
        assert_eq!(quote("http://10.0.0.1:80/a?b=1&c"), "'http://10.0.0.1:80/a?b=1&c'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("~/.cache/stampede/x y"), "~/'.cache/stampede/x y'");
        let out =
            Command::new("sh").arg("-c").arg(format!("printf %s {}", quote("a 'b' $HOME \"c\""))).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a 'b' $HOME \"c\"");
    }

    #[test]
    fn never_weakens_host_key_checking() {
        let ssh = Ssh {
            config: Some("/tmp/cfg".into()),
            connect_timeout: Duration::from_secs(3),
            remote_path: "stampede".into(),
        };
        let cmd = ssh.stampede("bob@h1", &["load".into(), "--json".into()]);
        let args: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(&args[..2], ["-F", "/tmp/cfg"]);
        assert!(args.contains(&"BatchMode=yes".to_string()));
        assert!(args.contains(&"ConnectTimeout=3".to_string()));
        assert!(!args.iter().any(|a| a.contains("StrictHostKeyChecking") || a.contains("UserKnownHostsFile")));
        assert_eq!(args.last().unwrap(), "stampede load --json");
    }
}
