//! The `[hosts]` section of a scenario: which machines send the load. With
//! `load = ["user@h1", …]` every load phase runs as `stampede load --hosts …`
//! from this machine, which then only coordinates (docs/hosts.md), while the
//! server, its probe, readiness check and contract check stay on this
//! machine. A server on another host (`server = …`) is not supported yet and
//! is refused with a line naming the key.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Hosts {
    /// Where the server runs; only this machine is supported (leave it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The load hosts, `user@host` or Host names of the ssh config.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load: Vec<String>,
    /// This machine's address as the load hosts reach it (the server must
    /// listen on it or on 0.0.0.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_address: Option<String>,
    /// `ssh -F FILE`; default ~/.ssh/config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_config: Option<PathBuf>,
    /// The stampede to run on the load hosts (default: `stampede` on their PATH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_path: Option<String>,
    /// Send this binary to load hosts that lack this version.
    #[serde(default)]
    pub copy_binary: bool,
    /// `stop` (the run is invalid) or `continue` (a partial result is kept, marked).
    #[serde(default = "stop")]
    pub on_host_failure: String,
}

fn stop() -> String {
    "stop".into()
}

impl Hosts {
    pub fn validate(&self, loadgen_pinned: bool) -> Result<(), ScenarioError> {
        let field = |field: &str, reason: String| ScenarioError::Field { field: format!("hosts.{field}"), reason };
        if let Some(server) = &self.server {
            return Err(field(
                "server",
                format!("{server:?}: running the server on another host is not supported yet; leave hosts.server out to run it on this machine, with the load from hosts.load"),
            ));
        }
        if self.load.is_empty() {
            return Err(field("load", "names no host: list the load hosts, e.g. load = [\"me@load1\", \"me@load2\"], or remove [hosts]".into()));
        }
        if let Some(bad) = self.load.iter().find(|h| h.trim().is_empty() || h.starts_with('-') || h.contains(char::is_whitespace)) {
            return Err(field("load", format!("{bad:?} is not a host; use user@host or a Host name from your ssh config")));
        }
        match self.server_address.as_deref() {
            None | Some("") => {
                return Err(field(
                    "server_address",
                    "is required with hosts.load: this machine's address as the load hosts reach it, e.g. server_address = \"10.0.0.9\"".into(),
                ))
            }
            Some(a) if a.contains(['/', ' ']) => return Err(field("server_address", format!("{a:?} is not a host name or address"))),
            Some(_) => {}
        }
        if !matches!(self.on_host_failure.as_str(), "stop" | "continue") {
            return Err(field("on_host_failure", format!("{:?}: use \"stop\" or \"continue\"", self.on_host_failure)));
        }
        if loadgen_pinned {
            return Err(ScenarioError::Field {
                field: "pinning.loadgen".into(),
                reason: "does not apply when the load runs on other hosts ([hosts] load); remove it".into(),
            });
        }
        Ok(())
    }

    /// The flags that send a `stampede load` to the load hosts.
    pub fn load_args(&self) -> Vec<String> {
        let mut a = vec!["--hosts".to_string(), self.load.join(",")];
        if let Some(cfg) = &self.ssh_config {
            a.extend(["--ssh-config".into(), cfg.display().to_string()]);
        }
        if let Some(path) = &self.remote_path {
            a.extend(["--remote-path".into(), path.clone()]);
        }
        if self.copy_binary {
            a.push("--copy-binary".into());
        }
        a.extend(["--on-host-failure".into(), self.on_host_failure.clone()]);
        a
    }

    /// The URL base the load hosts use for a server on `port`.
    pub fn base_url(&self, port: u16) -> String {
        let addr = self.server_address.as_deref().unwrap_or("127.0.0.1");
        if addr.contains(':') && !addr.starts_with('[') {
            format!("http://[{addr}]:{port}")
        } else {
            format!("http://{addr}:{port}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(text: &str) -> Hosts {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn load_hosts_become_flags() {
        let h = hosts("load = [\"me@a\", \"me@b\"]\nserver_address = \"10.0.0.9\"\nssh_config = \"/tmp/cfg\"\ncopy_binary = true\n");
        h.validate(false).unwrap();
        assert_eq!(h.load_args().join(" "), "--hosts me@a,me@b --ssh-config /tmp/cfg --copy-binary --on-host-failure stop");
        assert_eq!(h.base_url(8080), "http://10.0.0.9:8080");
        assert_eq!(hosts("load = [\"a\"]\nserver_address = \"fd00::9\"").base_url(80), "http://[fd00::9]:80");
    }

    #[test]
    fn what_is_not_supported_names_the_key() {
        let err = hosts("server = \"me@srv\"\nload = [\"me@a\"]").validate(false).unwrap_err().to_string();
        assert!(err.starts_with("hosts.server: ") && err.contains("not supported"), "{err}");
        let err = hosts("load = [\"me@a\"]").validate(false).unwrap_err().to_string();
        assert!(err.starts_with("hosts.server_address: "), "{err}");
        let err = hosts("load = []\nserver_address = \"x\"").validate(false).unwrap_err().to_string();
        assert!(err.starts_with("hosts.load: "), "{err}");
        let err = hosts("load = [\"a\"]\nserver_address = \"x\"\non_host_failure = \"retry\"").validate(false).unwrap_err().to_string();
        assert!(err.starts_with("hosts.on_host_failure: "), "{err}");
        let err = hosts("load = [\"a\"]\nserver_address = \"x\"").validate(true).unwrap_err().to_string();
        assert!(err.starts_with("pinning.loadgen: "), "{err}");
    }
}
