//! Scenario files (`scenarios/*.toml`, documented in docs/scenarios.md): which
//! apps, which load profiles, how many iterations, the knob matrix and the
//! CPU pinning. `--set key=value` overrides are applied to the parsed TOML
//! before it is checked, so an override is held to the same rules as the file.

pub mod apps;
pub mod arena;
pub mod database;
pub mod duration;
pub(crate) mod error;
pub mod hosts;
pub mod latency;
pub mod manifest;
pub mod matrix;
pub(crate) mod names;
pub(crate) mod overrides;
pub(crate) mod pinning;
pub mod profile;
pub(crate) mod text;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::scenario::duration::serde_text;

/// The most iterations a scenario may ask for.
pub const MAX_ITERATIONS: u32 = 10_000;
use crate::scenario::error::ScenarioError;
use crate::scenario::hosts::Hosts;
use crate::scenario::text::Text;
pub use profile::Profile;

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
    /// Also record where the server's threads block (perf's scheduler
    /// tracepoints, one sample per context switch) under `cpu_profile`
    /// (`--profile-off-cpu`): off by default, for its cost.
    #[serde(default)]
    pub cpu_profile_off_cpu: bool,
    /// Load from other machines over ssh (docs/hosts.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Hosts>,
    /// The scenario file's directory: profiles' files are relative to it.
    #[serde(skip)]
    pub dir: PathBuf,
    /// A PostgreSQL database for the apps: a private cluster, or `url`'s (docs/database.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<database::DatabaseSpec>,
    /// Headers whose values are secret besides `Authorization`,
    /// `Proxy-Authorization` and `Cookie`: written as `***` in results.json,
    /// the report and the terminal (docs/results.md, "Secrets").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redact_headers: Vec<String>,
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
}

impl Scenario {
    /// Reads `path`, applies the `--set` overrides in order, and checks the result.
    pub fn load(path: &Path, sets: &[String]) -> Result<Scenario, ScenarioError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ScenarioError::Read { path: path.to_path_buf(), source })?;
        Scenario::parse(&text, path, sets)
    }

    pub fn parse(text: &str, path: &Path, sets: &[String]) -> Result<Scenario, ScenarioError> {
        // TOML's messages quote the line at fault, which may hold a secret.
        let parse_error = |message: String| ScenarioError::Parse {
            path: path.to_path_buf(),
            message: stampede_schema::redact::Redaction::default().text(&message),
        };
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
        scenario.dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
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
            let at = |f: &str| match f {
                "" => format!("profiles[{i}]"),
                f => format!("profiles[{i}].{f}"),
            };
            // The same checks as `stampede load`'s, so a profile fails here,
            // naming its field, and not in the load generator mid-run.
            profile.validate(&self.dir).map_err(|(f, reason)| field(&at(&f), &reason))?;
            if profile.name.is_empty() {
                profile.name = match (&profile.path, profile.spec.urls.first()) {
                    (Some(p), _) | (None, Some(p)) => profile_name(p),
                    (None, None) => format!("mix-{}", i + 1),
                };
            }
            if profile.name.chars().any(char::is_control) {
                return Err(field(
                    &at("name"),
                    &format!("{:?} must not contain NUL or other control characters", profile.name),
                ));
            }
            // Names become file names sanitised (`api/v1` → `api_v1`): two
            // that sanitise alike would share their logs.
            let file_name = crate::scenario::names::file_part(&profile.name);
            if names.contains(&file_name) {
                return Err(field(&at("name"), &format!("{:?} is used twice (in file names, where `/` and other signs become `_`): give each profile its own name", profile.name)));
            }
            names.push(file_name);
        }
        for name in &self.redact_headers {
            if let Some(why) = stampede_spec::headers::header_problem(name, "") {
                return Err(field("redact_headers", &format!("{name:?} is not a header name: {why}")));
            }
        }
        for (role, cpus) in [("pinning.server", &self.pinning.server), ("pinning.loadgen", &self.pinning.loadgen)] {
            if let Some(cpus) = cpus {
                crate::scenario::pinning::parse_cpu_list(cpus.as_str()).map_err(|reason| field(role, &reason))?;
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

    /// What is secret in what this scenario writes (stampede_schema::redact).
    pub fn redaction(&self) -> stampede_schema::redact::Redaction {
        stampede_schema::redact::Redaction::new(&self.redact_headers)
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
        assert_eq!(s.profiles[0].duration(), Duration::from_secs(2));
        assert_eq!(s.profiles[0].spec.warmup, Duration::from_secs(1));
        assert_eq!(s.profiles[1].name, "values-5");
        assert_eq!(s.profiles[1].spec.connections, 8);
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
        assert!(s.profiles.iter().all(|p| p.duration() == Duration::from_millis(500)));
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

    #[test]
    fn a_profile_takes_the_whole_load_spec_with_files_beside_the_scenario() {
        let dir = std::env::temp_dir().join(format!("stampede-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("item.json"), b"{}").unwrap();
        std::fs::write(dir.join("mix.txt"), "GET /a\nPOST /b weight=2\nbody @item.json\n").unwrap();
        let text = "apps = [\"go\"]\n[[profiles]]\nname = \"write\"\npath = \"/items\"\nmethod = \"POST\"\nbody = \"@item.json\"\nheaders = [\"X-A: 1\"]\nhttp2 = true\nstreams = 4\n[[profiles]]\nname = \"mix\"\ntargets = \"mix.txt\"\norder = \"random\"\nseed = 3\n";
        let s = Scenario::parse(text, &dir.join("s.toml"), &[]).unwrap();
        let write = s.profiles[0].phase_spec(&s.dir, "http://127.0.0.1:9", Duration::from_secs(1)).unwrap();
        assert_eq!(write.urls, ["http://127.0.0.1:9/items"]);
        assert_eq!((write.method.as_str(), write.http2, write.streams), ("POST", true, 4));
        assert_eq!(write.body, Some(stampede_schema::spec::Body::Bytes(b"{}".to_vec())));
        let mix = s.profiles[1].phase_spec(&s.dir, "http://127.0.0.1:9", Duration::from_secs(1)).unwrap();
        assert_eq!(
            mix.mix.iter().map(|t| t.url.as_str()).collect::<Vec<_>>(),
            ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]
        );
        assert_eq!(mix.mix[1].body, Some(stampede_schema::spec::Body::Bytes(b"{}".to_vec())));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn profile_mistakes_name_the_profile_and_the_field() {
        let base = "apps = [\"go\"]\n[[profiles]]\nname = \"p\"\npath = \"/x\"\n";
        for (extra, want) in [
            ("methd = \"POST\"", "profile \"p\": methd: unknown field"),
            ("timeout = \"soon\"", "profile \"p\": timeout: \"soon\" is not a duration"),
            ("engine = \"kqueue\"", "profile \"p\": engine: unknown variant"),
            ("body = \"@missing.json\"", "profiles[0].body: body @missing.json"),
            ("streams = 4", "profiles[0].streams: streams needs HTTP/2"),
            ("threads = 64\nconnections = 2", "profiles[0].threads: threads (64) must not exceed connections"),
            ("requests = 10", "profiles[0].requests: "),
            ("targets = \"none.txt\"", "profiles[0].targets: targets "),
            ("urls = [\"http://10.0.0.1/\"]", "profiles[0].urls: "),
            ("from_hosts = { hosts = [\"me@a\"] }", "profiles[0].from_hosts: not in a profile"),
        ] {
            let err = parse(&format!("{base}{extra}\n"), &[]).unwrap_err().to_string();
            assert!(err.contains(want), "{extra}: {err}");
        }
    }

    /// A profile's gRPC call was named as a top-level field (`data`, not
    /// `grpc.data`) and a URL template as `stampede load`'s `URL argument
    /// 1`: words of the command line the scenario's author never typed.
    #[test]
    fn spec_errors_name_the_profile_s_own_field_never_a_flag_or_url_argument() {
        let base = "apps = [\"go\"]\n[[profiles]]\nname = \"p\"\n";
        for (extra, want) in [
            (
                "path = \"/x\"\ngrpc = { call = \"p.S/M\", data = \"@nope.json\" }",
                "profiles[0].grpc.data: grpc.data @nope.json: cannot read it",
            ),
            ("path = \"/f/{1..x}\"", "profiles[0].path: path: "),
            ("urls = [\"/a\", \"/f/{1..x}\"]", "profiles[0].urls: urls[1]: "),
            (
                "path = \"/x\"\nmax_connections = 4000000",
                "profiles[0].max_connections: max_connections 4000000 is above",
            ),
        ] {
            let err = parse(&format!("{base}{extra}\n"), &[]).unwrap_err().to_string();
            assert!(err.contains(want), "{extra}: {err}");
            assert!(!err.contains("--") && !err.contains("URL argument"), "{extra}: {err}");
        }
    }

    #[test]
    fn every_scenario_file_of_the_repository_loads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                Scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                seen += 1;
            }
        }
        assert!(seen >= 4, "found {seen} scenario files in {}", dir.display());
    }

    #[test]
    fn a_latency_phase_is_parsed_strictly_naming_the_file_and_field() {
        let base = "apps = [\"go\"]\n[[profiles]]\nname = \"p\"\npath = \"/x\"\n";
        let s = parse(&format!("{base}latency = {{ fraction = 0.7, duration = \"4s\" }}\n"), &[]).unwrap();
        let latency = s.profiles[0].latency.as_ref().unwrap();
        assert_eq!((latency.fraction, latency.duration), (0.7, Some(Duration::from_secs(4))));
        let s = parse(&format!("{base}latency = {{ fraction = 1 }}\n"), &["profiles.*.latency.fraction=0.5"]).unwrap();
        assert_eq!(s.profiles[0].latency.as_ref().unwrap().fraction, 0.5, "--set reaches it");
        for (extra, want) in [
            ("latency = { fractoin = 0.7 }", "profile \"p\": latency.fractoin: unknown field"),
            ("latency = { fraction = \"most\" }", "profile \"p\": latency.fraction: "),
            ("latency = { fraction = 0.7, duration = \"soon\" }", "latency.duration: \"soon\" is not a duration"),
            ("latency = { fraction = 1.5 }", "profiles[0].latency.fraction: 1.5 must be above 0 and at most 1"),
            ("latency = { fraction = 0.5, duration = \"1ms\" }", "profiles[0].latency.duration: must be at least"),
            ("latency = { fraction = 0.5 }\nrate = 100.0", "profiles[0].latency: needs a closed-loop profile"),
            ("latency = 0.7", "profile \"p\": latency"),
        ] {
            let err = parse(&format!("{base}{extra}\n"), &[]).unwrap_err().to_string();
            assert!(err.contains("small.toml") && err.contains(want), "{extra}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }

    #[test]
    fn an_http3_profile_reaches_the_server_over_https() {
        let text = "apps = [\"rust\"]\n[[profiles]]\npath = \"/plaintext\"\nhttp3 = true\ninsecure = true\n";
        let s = parse(text, &[]).unwrap();
        let spec = s.profiles[0].phase_spec(Path::new("."), "http://127.0.0.1:1", Duration::from_secs(1)).unwrap();
        assert_eq!(spec.urls, ["https://127.0.0.1:1/plaintext"]);
        assert!(spec.http3 && spec.insecure);
    }

    #[test]
    fn a_staged_profile_lasts_as_long_as_its_stages_and_sends_them() {
        let text = "apps = [\"go\"]\n[[profiles]]\npath = \"/json\"\nstages = \"2s:100,3s:300\"\n";
        let s = parse(text, &[]).unwrap();
        let profile = &s.profiles[0];
        assert_eq!(profile.duration(), Duration::from_secs(5));
        assert!(profile.spec.warmup.is_zero(), "a ramp is its own warm-up");
        let spec = profile.phase_spec(Path::new("."), "http://127.0.0.1:1", profile.duration()).unwrap();
        assert_eq!((spec.stages.as_deref(), spec.duration), (Some("2s:100,3s:300"), None));
        // A duration beside stages is refused, naming the profile.
        let err = parse(&format!("{text}duration = \"9s\"\n"), &[]).unwrap_err().to_string();
        assert!(err.contains("profiles[0].stages") && err.contains("drop duration"), "{err}");
    }

    #[test]
    fn a_grpc_profile_without_a_proto_is_checked_and_left_to_reflection_and_a_bad_call_is_named() {
        let text = "apps = [\"go\"]\n[[profiles]]\nhttp2 = true\n\
                    grpc = { call = \"stampede.bench.v1.Bench/Unary\", data = '{\"a\": 1}' }\n";
        let s = parse(text, &[]).unwrap();
        let spec = s.profiles[0].phase_spec(Path::new("."), "http://127.0.0.1:1", Duration::from_secs(1)).unwrap();
        let g = spec.grpc.unwrap();
        assert!(g.proto.is_empty() && g.descriptors.is_none(), "the generator asks the server: {g:?}");
        let err = parse(&text.replace("stampede.bench.v1.Bench/Unary", "Unary"), &[]).unwrap_err().to_string();
        assert!(err.contains("profiles[0].grpc.call") && err.contains("not a method name"), "{err}");
    }
}
