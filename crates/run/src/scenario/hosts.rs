//! The `[hosts]` section of a scenario: which machines send the load and
//! which one runs the server. With `load = ["user@h1", …]` every load phase
//! runs as `stampede load --hosts …` from this machine, which then only
//! coordinates (docs/hosts.md). With `server = "user@srv"` the server, its
//! build and its probe run there under `stampede agent` (server/remote_server/),
//! reached at `server_address`; without it they stay on this machine.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use stampede_schema::hosts::{HostsSpec, OnHostFailure};

use crate::scenario::error::ScenarioError;

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Hosts {
    /// Where the server runs (`user@host`); this machine when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The load hosts, `user@host` or Host names of the ssh config.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load: Vec<String>,
    /// The server's address as the load hosts (and, with `server`, this
    /// machine) reach it; the server must listen on it or on 0.0.0.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_address: Option<String>,
    /// `ssh -F FILE`; default ~/.ssh/config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_config: Option<PathBuf>,
    /// The stampede to run on the other hosts (default: `stampede` on their PATH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_path: Option<String>,
    /// Send this binary to hosts that lack this version.
    #[serde(default)]
    pub copy_binary: bool,
    /// `stop` (the run is invalid) or `continue` (a partial result is kept, marked).
    #[serde(default = "stop")]
    pub on_host_failure: String,
    /// A load host whose clock is further off than this fails (`--max-clock-offset`).
    #[serde(default = "hundred_ms")]
    pub max_clock_offset: String,
}

fn stop() -> String {
    "stop".into()
}

fn hundred_ms() -> String {
    "100ms".into()
}

impl Hosts {
    pub fn validate(&self, loadgen_pinned: bool, cpu_profile: bool) -> Result<(), ScenarioError> {
        let field = |field: &str, reason: String| ScenarioError::Field { field: format!("hosts.{field}"), reason };
        let not_a_host = |h: &str| !stampede_schema::hosts::is_host_name(h);
        if let Some(server) = &self.server {
            if not_a_host(server) {
                return Err(field(
                    "server",
                    format!("{server:?} is not a host; use user@host or a Host name from your ssh config"),
                ));
            }
            if cpu_profile {
                return Err(ScenarioError::Field {
                    field: "cpu_profile".into(),
                    reason: format!("--profile cannot run perf on hosts.server {server:?}; run `stampede profile` on that host, or leave hosts.server out"),
                });
            }
        } else if self.load.is_empty() {
            return Err(field("load", "names no host: list the load hosts, e.g. load = [\"me@load1\", \"me@load2\"], name the server's host with server = \"me@srv\", or remove [hosts]".into()));
        }
        if let Some(bad) = self.load.iter().find(|h| not_a_host(h)) {
            return Err(field(
                "load",
                format!("{bad:?} is not a host; use user@host or a Host name from your ssh config"),
            ));
        }
        let needed_for = if self.server.is_some() {
            "hosts.server: the server host's address as this machine and the load hosts reach it"
        } else {
            "hosts.load: this machine's address as the load hosts reach it"
        };
        match self.server_address.as_deref() {
            None | Some("") => {
                return Err(field(
                    "server_address",
                    format!("is required with {needed_for}, e.g. server_address = \"10.0.0.9\""),
                ))
            }
            Some(a) if a.contains(['/', ' ']) => {
                return Err(field("server_address", format!("{a:?} is not a host name or address")))
            }
            Some(_) => {}
        }
        if !matches!(self.on_host_failure.as_str(), "stop" | "continue") {
            return Err(field("on_host_failure", format!("{:?}: use \"stop\" or \"continue\"", self.on_host_failure)));
        }
        if let Err(e) = crate::scenario::duration::parse(&self.max_clock_offset) {
            return Err(field("max_clock_offset", format!("{:?}: {e}", self.max_clock_offset)));
        }
        if loadgen_pinned && !self.load.is_empty() {
            return Err(ScenarioError::Field {
                field: "pinning.loadgen".into(),
                reason: "does not apply when the load runs on other hosts ([hosts] load); remove it".into(),
            });
        }
        Ok(())
    }

    /// Where the load phases go from: the `from_hosts` of the spec the
    /// generator is sent (checked by [`Hosts::validate`] first).
    pub fn load_spec(&self) -> HostsSpec {
        HostsSpec {
            hosts: self.load.clone(),
            copy_binary: self.copy_binary,
            remote_path: self.remote_path.clone(),
            ssh_config: self.ssh_config.clone(),
            on_host_failure: match self.on_host_failure.as_str() {
                "continue" => OnHostFailure::Continue,
                _ => OnHostFailure::Stop,
            },
            max_clock_offset: crate::scenario::duration::parse(&self.max_clock_offset)
                .unwrap_or(HostsSpec::default().max_clock_offset),
            ..HostsSpec::default()
        }
    }

    /// The URL base the load hosts use for a server on `port`.
    pub fn base_url(&self, port: u16) -> String {
        url_base(self.server_address.as_deref().unwrap_or("127.0.0.1"), port)
    }
}

/// `http://ADDR:PORT`, brackets around a bare IPv6 address.
pub fn url_base(addr: &str, port: u16) -> String {
    if addr.contains(':') && !addr.starts_with('[') {
        format!("http://[{addr}]:{port}")
    } else {
        format!("http://{addr}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(text: &str) -> Hosts {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn load_hosts_become_the_specs_from_hosts() {
        let h = hosts("load = [\"me@a\", \"me@b\"]\nserver_address = \"10.0.0.9\"\nssh_config = \"/tmp/cfg\"\ncopy_binary = true\non_host_failure = \"continue\"\nmax_clock_offset = \"250ms\"\n");
        h.validate(false, false).unwrap();
        assert_eq!(
            h.load_spec(),
            HostsSpec {
                hosts: vec!["me@a".into(), "me@b".into()],
                copy_binary: true,
                ssh_config: Some("/tmp/cfg".into()),
                on_host_failure: OnHostFailure::Continue,
                max_clock_offset: std::time::Duration::from_millis(250),
                ..HostsSpec::default()
            }
        );
        assert_eq!(hosts("load = [\"a\"]").load_spec().on_host_failure, OnHostFailure::Stop);
        assert_eq!(h.base_url(8080), "http://10.0.0.9:8080");
        assert_eq!(hosts("load = [\"a\"]\nserver_address = \"fd00::9\"").base_url(80), "http://[fd00::9]:80");
    }

    /// The error `text` gets, with pinning.loadgen set or not and --profile or not.
    fn refused(text: &str, loadgen_pinned: bool, cpu_profile: bool) -> String {
        hosts(text).validate(loadgen_pinned, cpu_profile).unwrap_err().to_string()
    }

    #[test]
    fn what_is_wrong_names_the_key() {
        let cases = [
            ("load = [\"me@a\"]", false, false, "hosts.server_address: is required with hosts.load"),
            ("load = []\nserver_address = \"x\"", false, false, "hosts.load: "),
            (
                "load = [\"a\"]\nserver_address = \"x\"\non_host_failure = \"retry\"",
                false,
                false,
                "hosts.on_host_failure: ",
            ),
            (
                "load = [\"a\"]\nserver_address = \"x\"\nmax_clock_offset = \"soon\"",
                false,
                false,
                "hosts.max_clock_offset: ",
            ),
            ("load = [\"a\"]\nserver_address = \"x\"", true, false, "pinning.loadgen: "),
            ("server = \"me@srv\"", false, false, "hosts.server_address: is required with hosts.server"),
            ("server = \"me srv\"\nserver_address = \"x\"", false, false, "hosts.server: "),
            (
                "server = \"me@srv\"\nserver_address = \"x\"",
                false,
                true,
                "cpu_profile: --profile cannot run perf on hosts.server",
            ),
        ];
        for (text, pinned, profile, start) in cases {
            let err = refused(text, pinned, profile);
            assert!(err.starts_with(start), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_server_host_may_have_no_load_hosts_and_a_pinned_local_load() {
        hosts("server = \"me@srv\"\nserver_address = \"10.0.0.9\"").validate(true, false).unwrap();
        hosts("server = \"me@srv\"\nload = [\"me@a\"]\nserver_address = \"10.0.0.9\"").validate(false, false).unwrap();
    }
}
