//! Scenario files (`scenarios/*.toml`, documented in docs/scenarios.md): which
//! apps, which load profiles, how many iterations, the knob matrix and the
//! CPU pinning. `--set key=value` overrides are applied to the parsed TOML
//! before it is checked, so an override is held to the same rules as the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::duration::serde_text;
use stampede_load::config::limits;

/// The most iterations a scenario may ask for.
pub const MAX_ITERATIONS: u32 = 10_000;
use crate::error::ScenarioError;
use crate::hosts::Hosts;
use crate::overrides;
use crate::text::Text;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// App names (`apps/<name>/app.toml`) or paths of manifests.
    pub apps: Vec<String>,
    #[serde(default = "defaults::iterations")]
    pub iterations: u32,
    pub profiles: Vec<Profile>,
    #[serde(default)]
    pub matrix: Matrix,
    #[serde(default)]
    pub pinning: Pinning,
    /// The server's port; 0 picks a free one for every run.
    #[serde(default)]
    pub port: u16,
    #[serde(default = "defaults::sample_interval", with = "serde_text")]
    pub sample_interval: Duration,
    /// How long a server may take from exec to its first `200` on /plaintext.
    #[serde(default = "defaults::start_timeout", with = "serde_text")]
    pub start_timeout: Duration,
    /// Time between SIGTERM and SIGKILL when a server is stopped.
    #[serde(default = "defaults::stop_grace", with = "serde_text")]
    pub stop_grace: Duration,
    /// Run `stampede check` before loading (a failure marks the run invalid).
    #[serde(default = "defaults::yes")]
    pub check: bool,
    /// Run each app's build command (once per scenario).
    #[serde(default = "defaults::yes")]
    pub build: bool,
    /// Sample the server with perf during each measured phase and store a
    /// flame graph beside results.json (`--profile`, docs/profile.md).
    #[serde(default)]
    pub cpu_profile: bool,
    /// perf's sampling frequency under `cpu_profile`, per second per thread.
    #[serde(default = "defaults::cpu_profile_frequency")]
    pub cpu_profile_frequency: u32,
    /// Load from other machines over ssh (docs/hosts.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Hosts>,
    /// A PostgreSQL database for the apps: a private cluster, or `url`'s (docs/database.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<crate::database::DatabaseSpec>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Defaults to the path without its slashes (`/values/5` → `values-5`).
    #[serde(default)]
    pub name: String,
    pub path: String,
    #[serde(default = "defaults::connections")]
    pub connections: u32,
    #[serde(default = "defaults::threads")]
    pub threads: u32,
    #[serde(default = "defaults::duration", with = "serde_text")]
    pub duration: Duration,
    #[serde(default = "defaults::warmup", with = "serde_text")]
    pub warmup: Duration,
    /// Requests per second (open loop); absent means closed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Keep the N slowest requests (`stampede load --slow-log`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_log: Option<u32>,
}

/// The knob matrix: `threads` sets the contract's THREADS, `env` raw
/// variables, and any other key names a manifest knob (`gc = ["default", "off"]`,
/// `"*"` for every value the app's manifest lists).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Matrix {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<Text>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, Vec<Text>>,
    #[serde(flatten)]
    pub knobs: BTreeMap<String, Vec<Text>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Pinning {
    /// CPU list for the server (`taskset -c`), e.g. "0".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<Text>,
    /// CPU list for the load generator, e.g. "1".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loadgen: Option<Text>,
}

mod defaults {
    use std::time::Duration;
    pub fn cpu_profile_frequency() -> u32 {
        99
    }
    pub fn iterations() -> u32 {
        1
    }
    pub fn sample_interval() -> Duration {
        Duration::from_millis(100)
    }
    pub fn start_timeout() -> Duration {
        Duration::from_secs(30)
    }
    pub fn stop_grace() -> Duration {
        Duration::from_secs(5)
    }
    pub fn yes() -> bool {
        true
    }
    pub fn connections() -> u32 {
        32
    }
    pub fn threads() -> u32 {
        1
    }
    pub fn duration() -> Duration {
        Duration::from_secs(5)
    }
    pub fn warmup() -> Duration {
        Duration::from_secs(1)
    }
}

impl Scenario {
    /// Reads `path`, applies the `--set` overrides in order, and checks the result.
    pub fn load(path: &Path, sets: &[String]) -> Result<Scenario, ScenarioError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ScenarioError::Read { path: path.to_path_buf(), source })?;
        Scenario::parse(&text, path, sets)
    }

    pub fn parse(text: &str, path: &Path, sets: &[String]) -> Result<Scenario, ScenarioError> {
        let parse_error = |message: String| ScenarioError::Parse { path: path.to_path_buf(), message };
        let mut value: toml::Value = toml::from_str(text).map_err(|e| parse_error(one_line(&e.to_string())))?;
        for set in sets {
            overrides::apply(&mut value, set)?;
        }
        let mut scenario: Scenario = value.try_into().map_err(|e: toml::de::Error| {
            let message = one_line(&e.to_string());
            if sets.is_empty() {
                parse_error(message)
            } else {
                parse_error(format!("{message} (after the --set overrides)"))
            }
        })?;
        if scenario.name.is_empty() {
            scenario.name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario").to_string();
        }
        scenario.validate().map_err(|err| match err {
            ScenarioError::Field { field, reason } => {
                ScenarioError::FieldInFile { path: path.to_path_buf(), field, reason }
            }
            other => other,
        })?;
        Ok(scenario)
    }

    fn validate(&mut self) -> Result<(), ScenarioError> {
        let field = |field: &str, reason: &str| ScenarioError::Field { field: field.into(), reason: reason.into() };
        if self.apps.is_empty() {
            return Err(field("apps", "no apps: name at least one (e.g. apps = [\"go\"] or --apps go)"));
        }
        if !(1..=MAX_ITERATIONS).contains(&self.iterations) {
            return Err(field("iterations", &format!("must be between 1 and {MAX_ITERATIONS}")));
        }
        if self.profiles.is_empty() {
            return Err(field("profiles", "no load profile: add a [[profiles]] table with a path"));
        }
        if self.sample_interval < Duration::from_millis(1) {
            return Err(field("sample_interval", "must be at least 1ms"));
        }
        if !(1..=10_000).contains(&self.cpu_profile_frequency) {
            return Err(field("cpu_profile_frequency", "must be between 1 and 10000 samples per second (99 is usual)"));
        }
        let mut names = Vec::new();
        for (i, profile) in self.profiles.iter_mut().enumerate() {
            let at = |f: &str| format!("profiles[{i}].{f}");
            if !profile.path.starts_with('/') {
                return Err(field(&at("path"), &format!("{:?} must start with / (e.g. /plaintext)", profile.path)));
            }
            // The same ranges as `stampede load`'s flags, so a profile fails
            // here, naming its field, and not in the load generator mid-run.
            if !(1..=limits::MAX_CONNECTIONS).contains(&(profile.connections as usize)) {
                return Err(field(&at("connections"), &format!("must be between 1 and {}", limits::MAX_CONNECTIONS)));
            }
            if !(1..=limits::MAX_THREADS).contains(&(profile.threads as usize)) {
                return Err(field(&at("threads"), &format!("must be between 1 and {}", limits::MAX_THREADS)));
            }
            if profile.threads > profile.connections {
                return Err(field(&at("threads"), "must not exceed connections: each thread needs a connection"));
            }
            if profile.duration.is_zero() {
                return Err(field(&at("duration"), "must be longer than 0s"));
            }
            if let Some(rate) = profile.rate {
                if !(rate > 0.0 && rate <= limits::MAX_RATE_PER_S) {
                    return Err(field(
                        &at("rate"),
                        &format!(
                            "must be a positive number of requests per second, at most {}",
                            limits::MAX_RATE_PER_S
                        ),
                    ));
                }
            }
            if profile.slow_log.is_some_and(|n| n as usize > limits::MAX_SLOW_LOG) {
                return Err(field(&at("slow_log"), &format!("must be at most {}", limits::MAX_SLOW_LOG)));
            }
            if profile.name.is_empty() {
                profile.name = profile_name(&profile.path);
            }
            if profile.name.chars().any(char::is_control) {
                return Err(field(
                    &at("name"),
                    &format!("{:?} must not contain NUL or other control characters", profile.name),
                ));
            }
            // Names become file names sanitised (`api/v1` → `api_v1`): two
            // that sanitise alike would share their logs.
            let file_name = crate::names::file_part(&profile.name);
            if names.contains(&file_name) {
                return Err(field(&at("name"), &format!("{:?} is used twice (in file names, where `/` and other signs become `_`): give each profile its own name", profile.name)));
            }
            names.push(file_name);
        }
        for (role, cpus) in [("pinning.server", &self.pinning.server), ("pinning.loadgen", &self.pinning.loadgen)] {
            if let Some(cpus) = cpus {
                crate::pinning::parse_cpu_list(cpus.as_str()).map_err(|reason| field(role, &reason))?;
            }
        }
        if let Some(hosts) = &self.hosts {
            hosts.validate(self.pinning.loadgen.is_some(), self.cpu_profile)?;
        }
        if let Some(database) = &self.database {
            database.validate().map_err(|reason| field("database.url", &reason))?;
            if self.hosts.as_ref().is_some_and(|h| h.server.is_some()) {
                return Err(field(
                    "database",
                    "not yet supported with [hosts] server: run the server here, or leave out [database]",
                ));
            }
        }
        Ok(())
    }

    /// Where the default scenario lives, relative to the repository root.
    pub fn default_path() -> PathBuf {
        PathBuf::from("scenarios/shootout.toml")
    }
}

/// `/values/5` → `values-5`, `/` → `root`.
pub fn profile_name(path: &str) -> String {
    let name: String =
        path.trim_matches('/').chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    if name.is_empty() {
        "root".into()
    } else {
        name
    }
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
        apps = ["go", "rust"]
        iterations = 2
        [[profiles]]
        path = "/plaintext"
        duration = "2s"
        [[profiles]]
        path = "/values/5"
        connections = 8
        [matrix]
        threads = [1, 2]
        gc = ["default", "off"]
        env = { GODEBUG = ["", "madvdontneed=1"] }
        [pinning]
        server = 0
        loadgen = "1"
    "#;

    fn parse(text: &str, sets: &[&str]) -> Result<Scenario, ScenarioError> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        Scenario::parse(text, Path::new("small.toml"), &sets)
    }

    #[test]
    fn a_small_scenario_with_defaults() {
        let s = parse(SMALL, &[]).unwrap();
        assert_eq!(s.name, "small");
        assert_eq!(s.iterations, 2);
        assert_eq!(s.profiles[0].name, "plaintext");
        assert_eq!(s.profiles[0].duration, Duration::from_secs(2));
        assert_eq!(s.profiles[0].warmup, Duration::from_secs(1));
        assert_eq!(s.profiles[1].name, "values-5");
        assert_eq!(s.profiles[1].connections, 8);
        assert_eq!(s.matrix.threads, vec![Text("1".into()), Text("2".into())]);
        assert_eq!(s.matrix.knobs["gc"].len(), 2);
        assert_eq!(s.matrix.env["GODEBUG"][1].as_str(), "madvdontneed=1");
        assert_eq!(s.pinning.server.as_ref().unwrap().as_str(), "0");
        assert_eq!(s.sample_interval, Duration::from_millis(100));
    }

    #[test]
    fn overrides_reach_every_profile_and_lists() {
        let s = parse(
            SMALL,
            &["iterations=1", "profiles.*.duration=500ms", "apps=go", "matrix.threads=[4]", "pinning.server=1"],
        )
        .unwrap();
        assert_eq!(s.iterations, 1);
        assert!(s.profiles.iter().all(|p| p.duration == Duration::from_millis(500)));
        assert_eq!(s.apps, vec!["go".to_string()]);
        assert_eq!(s.matrix.threads, vec![Text("4".into())]);
        assert_eq!(s.pinning.server.as_ref().unwrap().as_str(), "1");
    }

    #[test]
    fn a_misspelt_field_is_named() {
        let err = parse(SMALL, &["iteratons=1"]).unwrap_err().to_string();
        assert!(err.contains("iteratons") && err.contains("--set"), "{err}");
        let err = parse("apps = [\"go\"]\n[[profiles]]\npath = \"plaintext\"\n", &[]).unwrap_err().to_string();
        assert!(err.contains("profiles[0].path") && err.contains("start with /"), "{err}");
    }

    #[test]
    fn out_of_range_values_name_the_file_and_the_field() {
        let err = parse(SMALL, &["profiles.0.duration=9223372036854775807s"]).unwrap_err().to_string();
        assert!(err.contains("small.toml") && err.contains("duration") && err.contains("365 days"), "{err}");
        let err = parse(SMALL, &["profiles.0.warmup=1e300"]).unwrap_err().to_string();
        assert!(err.contains("warmup") && err.contains("365 days"), "{err}");
        let err = parse(SMALL, &["profiles.0.connections=4294967295"]).unwrap_err().to_string();
        assert!(err.contains("small.toml") && err.contains("profiles[0].connections"), "{err}");
        let err = parse(SMALL, &["iterations=100000"]).unwrap_err().to_string();
        assert!(err.contains("iterations"), "{err}");
    }

    #[test]
    fn profile_names_are_labels_and_must_differ_as_file_names() {
        let s = parse(SMALL, &["profiles.0.name=\"api/v1\""]).unwrap();
        assert_eq!(s.profiles[0].name, "api/v1");
        let err = parse(SMALL, &["profiles.0.name=\"a/b\"", "profiles.1.name=\"a_b\""]).unwrap_err().to_string();
        assert!(err.contains("profiles[1].name") && err.contains("used twice"), "{err}");
    }

    #[test]
    fn bad_values_say_what_to_write() {
        let err = parse(SMALL, &["profiles.0.duration=fast"]).unwrap_err().to_string();
        assert!(err.contains("fast") && err.contains("e.g. 500ms"), "{err}");
        let err = parse(SMALL, &["iterations=0"]).unwrap_err().to_string();
        assert!(err.contains("iterations"), "{err}");
        let err = parse(SMALL, &["pinning.server=zero"]).unwrap_err().to_string();
        assert!(err.contains("pinning.server"), "{err}");
    }
}
