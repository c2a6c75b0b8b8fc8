//! App manifests (`apps/<name>/app.toml`, format at the end of
//! apps/CONTRACT.md): how to build, run and version an app, and its knobs. An
//! app is named either by its folder in `apps/` (found by walking up from the
//! scenario file, then from the current directory) or by a manifest path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use stampede_contract::UrlMap;

use crate::scenario::error::ScenarioError;

/// Unknown fields are refused, as in scenarios and contracts: a misspelt
/// `contrat = "tfb"` would otherwise leave the app judged by the wrong contract.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub requires: Vec<String>,
    #[serde(default)]
    pub build: Option<String>,
    /// Required, except in an arena folder's app.toml (the Dockerfile's CMD).
    #[serde(default)]
    pub run: String,
    #[serde(default)]
    pub version: Option<String>,
    /// The contract the app implements, checked before its load: a built-in
    /// name or a contract file (relative to the manifest's folder), `none` for
    /// no check. Absent means `stampede`.
    #[serde(default)]
    pub contract: Option<String>,
    /// The path that answers `200` once the server is up; absent: the
    /// claimed contract's `ready`, else any response on `/` (server/ready.rs).
    #[serde(default)]
    pub ready: Option<String>,
    #[serde(default)]
    pub knobs: BTreeMap<String, Knob>,
    /// `[profile]`: what the app needs under `--profile` (docs/profile.md).
    #[serde(default)]
    pub profile: ProfileSettings,
    /// `[events]`: how to switch on and read runtime GC events (docs/explain.md).
    #[serde(default)]
    pub events: Option<EventsSettings>,
    /// The folder `build`, `run` and `version` run in, relative to the
    /// manifest's folder (e.g. `src` for an app that opens its templates by
    /// relative path); absent: the manifest's folder.
    #[serde(default)]
    pub working_dir: Option<PathBuf>,
    /// `[urls]`: the server's own URL for a contract endpoint (`queries =
    /// "/queries?q="`, the count appended to a URL ending in `=` or `/`), used
    /// by the contract check, readiness and the profiles' paths. Over the
    /// `tfb_config`'s URLs where both give one.
    #[serde(default)]
    pub urls: UrlMap,
    /// A TechEmpower implementation's `benchmark_config.json` (relative to
    /// the manifest's folder): the URLs and port of its test `tfb_test`.
    #[serde(default)]
    pub tfb_config: Option<PathBuf>,
    /// The test of `tfb_config` to use; absent: its only test.
    #[serde(default)]
    pub tfb_test: Option<String>,
    /// The port the server listens on whatever `PORT` says (an arena
    /// folder's: 8080 for HttpArena, 3000 for the-benchmarker); over the
    /// `tfb_config`'s. `PORT` is set to it too.
    #[serde(default)]
    pub port: Option<u16>,
    /// The port the server listens on whatever `PORT` says (`port`, else the
    /// `tfb_config`'s test's `port`); absent: the scenario's port.
    #[serde(skip)]
    pub fixed_port: Option<u16>,
    /// The folder the manifest is in: relative paths in it start there.
    #[serde(skip)]
    pub dir: PathBuf,
    /// What an arena folder's files said (scenario/arena/), when the
    /// manifest was made from one.
    #[serde(skip)]
    pub arena: Option<ArenaInfo>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Knob {
    #[serde(default)]
    pub description: String,
    pub default: String,
    #[serde(default)]
    pub values: BTreeMap<String, KnobValue>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KnobValue {
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub args: Option<String>,
}

/// The `[profile]` table: server environment and `run` arguments under
/// profiling (e.g. Node's `--perf-basic-prof`), and environment for the build
/// (e.g. frame pointers), so perf can walk stacks and name frames.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProfileSettings {
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub args: Option<String>,
    #[serde(default)]
    pub build_env: BTreeMap<String, String>,
}

impl Manifest {
    /// This manifest as built and run under profiling: `build` exports the
    /// `[profile]` build environment first.
    pub fn profiled(&self) -> Manifest {
        let mut m = self.clone();
        if let Some(build) = &m.build {
            if !m.profile.build_env.is_empty() {
                let exports: String = m
                    .profile
                    .build_env
                    .iter()
                    .map(|(k, v)| format!("export {k}='{}'; ", v.replace('\'', "'\\''")))
                    .collect();
                m.build = Some(format!("{exports}{build}"));
            }
        }
        m
    }

    /// Reads an `app.toml` (an arena framework's folder is read by
    /// `scenario::apps::load`, which comes here for its `app.toml`).
    pub fn load(path: &Path) -> Result<Manifest, ScenarioError> {
        let bad = |message: String| ScenarioError::Manifest { path: path.to_path_buf(), message };
        let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read: {e}")))?;
        let mut manifest: Manifest =
            toml::from_str(&text).map_err(|e| bad(e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        manifest.dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
        Manifest::validate(manifest, path)
    }

    /// The checks every manifest passes, with `path` named in the error.
    pub(crate) fn validate(mut manifest: Manifest, path: &Path) -> Result<Manifest, ScenarioError> {
        let bad = |message: String| ScenarioError::Manifest { path: path.to_path_buf(), message };
        if let Some(problem) = crate::scenario::names::app_name_problem(&manifest.name) {
            return Err(bad(problem));
        }
        if manifest.run.trim().is_empty() {
            return Err(bad("`run` is empty: say how to start the server".into()));
        }
        for (name, knob) in &manifest.knobs {
            if !knob.values.contains_key(&knob.default) {
                return Err(bad(format!("knobs.{name}: default {:?} is not one of its values", knob.default)));
            }
        }
        if let Some(ready) = &manifest.ready {
            if !ready.starts_with('/') || ready.bytes().any(|b| !b.is_ascii_graphic()) {
                return Err(bad(format!("ready: {ready:?} must be a path starting with / (e.g. \"/health\")")));
            }
        }
        if let Some(events) = &manifest.events {
            events.validate().map_err(bad)?;
        }
        if manifest.tfb_test.is_some() && manifest.tfb_config.is_none() {
            return Err(bad("tfb_test: give tfb_config, the benchmark_config.json it is a test of".into()));
        }
        if let Some(config) = &manifest.tfb_config {
            let test = tfb_test(&manifest.dir.join(config), manifest.tfb_test.as_deref()).map_err(bad)?;
            let mut urls = test.urls.entries().clone();
            urls.extend(manifest.urls.entries().clone());
            manifest.urls = UrlMap::new(urls).map_err(bad)?;
            manifest.fixed_port = Some(test.port);
        }
        if let Some(port) = manifest.port {
            manifest.fixed_port = Some(port);
        }
        if manifest.working_dir.is_some() && !manifest.command_dir().is_dir() {
            let wd = manifest.command_dir();
            return Err(bad(format!(
                "working_dir: {} is not a folder (it is relative to the manifest's)",
                wd.display()
            )));
        }
        Ok(manifest)
    }

    /// The contract to check the app against (`stampede` unless it says; with
    /// a `tfb_config`, `tfb` if its test has plaintext or json URLs, else none:
    /// its database URLs are checked by `db`), a relative file path resolved
    /// against the manifest's folder; `None` for `contract = "none"`.
    pub fn contract(&self) -> Option<String> {
        match self.contract.as_deref().map(str::trim) {
            None | Some("") if self.tfb_config.is_some() => {
                let served = self.urls.entries();
                (served.contains_key("plaintext") || served.contains_key("json")).then(|| "tfb".into())
            }
            None | Some("") => Some("stampede".into()),
            Some("none") => None,
            Some(c) if (c.contains('/') || c.ends_with(".toml")) && Path::new(c).is_relative() => {
                Some(self.dir.join(c).to_string_lossy().into_owned())
            }
            Some(c) => Some(c.to_string()),
        }
    }

    /// The folder every command of the app runs in: `working_dir` under the
    /// manifest's folder, or that folder.
    pub fn command_dir(&self) -> PathBuf {
        match &self.working_dir {
            Some(sub) => self.dir.join(sub),
            None => self.dir.clone(),
        }
    }

    /// Programs in `requires` that are not on PATH.
    pub fn missing_tools(&self) -> Vec<String> {
        self.requires.iter().filter(|tool| which(tool).is_none()).cloned().collect()
    }
}

/// The test of a TechEmpower config the manifest names: `name`, or its only one.
fn tfb_test(config: &Path, name: Option<&str>) -> Result<stampede_contract::tfb_config::TfbTest, String> {
    let mut tests = stampede_contract::tfb_config::read(config, name).map_err(|e| format!("tfb_config: {e}"))?;
    if tests.len() > 1 {
        let names: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
        return Err(format!("tfb_test: {} declares tests {}; name one", config.display(), names.join(", ")));
    }
    Ok(tests.remove(0))
}

/// The full path of `program` on PATH.
pub fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Path::new(program).is_file().then(|| PathBuf::from(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|candidate| {
        use std::os::unix::fs::PermissionsExt;
        candidate.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    })
}

/// What the arena's files say beyond the manifest: shown by `check --arena`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArenaInfo {
    /// `meta.json` or `config.yaml`, the file the folder was read from.
    pub source: PathBuf,
    /// The profiles the framework enables that Stampede drives.
    pub driven: Vec<String>,
    /// The ones it enables that Stampede does not drive.
    pub not_driven: Vec<String>,
    /// Toolchains the recipe needs, each with the line that named it.
    pub toolchains: Vec<(String, String)>,
    /// Dockerfile lines left out, each with why.
    pub skipped: Vec<String>,
    /// The files supplied where the arena mounts them (dataset, certificate).
    pub supplied: Vec<String>,
    /// Where the build's and the server's output go outside a run.
    pub logs: PathBuf,
}

/// The `[events]` table of a manifest.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EventsSettings {
    /// The parser: go, jvm, node, python.
    pub runtime: String,
    /// `output` (the server's stdout and stderr) or `file` (at `{events}`).
    #[serde(default = "output")]
    pub source: String,
    /// Variables that switch the events on; `{events}` is the file path.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

fn output() -> String {
    "output".into()
}

impl EventsSettings {
    /// Checks the table; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        stampede_explain::events::Runtime::parse(&self.runtime).map_err(|e| format!("events.runtime: {e}"))?;
        if self.source != "output" && self.source != "file" {
            return Err(format!("events.source: {:?} is neither \"output\" nor \"file\"", self.source));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contract_example_parses() {
        let dir = std::env::temp_dir().join(format!("stampede-manifest-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("apps/demo")).unwrap();
        let path = dir.join("apps/demo/app.toml");
        std::fs::write(
            &path,
            r#"
name = "demo"
requires = ["sh"]
build = "true"
run = "exec ./server"
version = "echo 1"
[knobs.gc]
default = "100"
values.100 = { env = { GOGC = "100" } }
values.off = { env = { GOGC = "off" }, args = "--x" }
"#,
        )
        .unwrap();
        let m = Manifest::load(&path).unwrap();
        assert_eq!(m.name, "demo");
        assert_eq!(m.knobs["gc"].values["off"].args.as_deref(), Some("--x"));
        assert!(m.missing_tools().is_empty());
        assert_eq!(m.contract().as_deref(), Some("stampede"), "no contract field means stampede");
        assert_eq!(crate::scenario::apps::locate("demo", &dir.join("scenarios")).unwrap(), path);
        assert!(crate::scenario::apps::locate("nope", &dir).unwrap_err().to_string().contains("apps/nope/app.toml"));
        std::fs::write(&path, "name = \"x\"\nrun = \"r\"\n[knobs.gc]\ndefault = \"a\"\nvalues.b = {}\n").unwrap();
        assert!(Manifest::load(&path).unwrap_err().to_string().contains("knobs.gc"));
        std::fs::write(&path, "name = \"x\"\nrun = \"r\"\ncontrat = \"tfb\"\n").unwrap();
        let misspelt = Manifest::load(&path).unwrap_err().to_string();
        assert!(misspelt.contains("app.toml") && misspelt.contains("unknown field `contrat`"), "{misspelt}");
        std::fs::create_dir_all(dir.join("apps/demo/src")).unwrap();
        std::fs::write(&path, "name = \"x\"\nrun = \"r\"\nworking_dir = \"src\"\n").unwrap();
        assert_eq!(Manifest::load(&path).unwrap().command_dir(), dir.join("apps/demo/src"));
        std::fs::write(&path, "name = \"x\"\nrun = \"r\"\nworking_dir = \"nope\"\n").unwrap();
        assert!(Manifest::load(&path).unwrap_err().to_string().contains("working_dir: "));
        std::fs::write(&path, "name = \"x\"\nrun = \"r\"\nready = \"health\"\n").unwrap();
        assert!(Manifest::load(&path).unwrap_err().to_string().contains("ready: \"health\" must be a path"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_tfb_config_gives_the_urls_and_port_and_urls_override_it() {
        let dir = std::env::temp_dir().join(format!("stampede-manifest-tfb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("benchmark_config.json"),
            r#"{"tests": [{"default": {"plaintext_url": "/plaintext", "port": 8080},
                           "pg": {"db_url": "/db", "query_url": "/queries?q=", "port": 8081}}]}"#,
        )
        .unwrap();
        let path = dir.join("app.toml");
        let load = |text: &str| {
            std::fs::write(&path, format!("name = \"x\"\nrun = \"r\"\n{text}")).unwrap();
            Manifest::load(&path)
        };
        let m = load("tfb_config = \"benchmark_config.json\"\ntfb_test = \"pg\"\n[urls]\ndb = \"/dbs\"\n").unwrap();
        assert_eq!(m.fixed_port, Some(8081));
        assert_eq!(m.urls.rewrite("/queries?queries=3"), "/queries?q=3");
        assert_eq!(m.urls.rewrite("/db"), "/dbs", "[urls] over the config's");
        let e = load("tfb_config = \"benchmark_config.json\"\n").unwrap_err().to_string();
        assert!(e.contains("tfb_test: ") && e.contains("declares tests default, pg; name one"), "{e}");
        let e = load("tfb_config = \"nope.json\"\n").unwrap_err().to_string();
        assert!(e.contains("tfb_config: ") && e.contains("nope.json: cannot read"), "{e}");
        let e = load("tfb_test = \"pg\"\n").unwrap_err().to_string();
        assert!(e.contains("tfb_test: give tfb_config"), "{e}");
        let e = load("[urls]\nqueries = \"queries\"\n").unwrap_err().to_string();
        assert!(e.contains("app.toml") && e.contains("url queries=\"queries\""), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn profile_settings_export_build_env_quoted_and_never_override_a_knob() {
        let m: Manifest = toml::from_str(
            r#"
name = "p"
build = "cargo build"
run = "exec ./p"
[profile]
env = { NODE_OPTIONS = "--perf-basic-prof", GOGC = "1" }
args = "--x"
build_env = { RUSTFLAGS = "-C force-frame-pointers=yes", Q = "it's" }
"#,
        )
        .unwrap();
        let built = m.profiled().build.unwrap();
        assert_eq!(built, "export Q='it'\\''s'; export RUSTFLAGS='-C force-frame-pointers=yes'; cargo build");
        let knob = crate::scenario::matrix::Combination {
            env: BTreeMap::from([("GOGC".into(), "off".into())]),
            args: "--nogc".into(),
            ..Default::default()
        };
        let c = knob.profiled(&m.profile);
        assert_eq!(c.env["GOGC"], "off", "the knob's value is what is measured");
        assert_eq!(c.env["NODE_OPTIONS"], "--perf-basic-prof");
        assert_eq!(c.args, "--nogc --x");
        let none: Manifest = toml::from_str("name = \"p\"\nrun = \"r\"\ncontract = \"none\"\n").unwrap();
        assert_eq!(none.contract(), None);
        let mut own: Manifest = toml::from_str("name = \"p\"\nrun = \"r\"\ncontract = \"api.toml\"\n").unwrap();
        own.dir = PathBuf::from("apps/p");
        assert_eq!(own.contract().as_deref(), Some("apps/p/api.toml"));
        let bad = toml::from_str::<Manifest>("name = \"p\"\nrun = \"r\"\n[profile]\nenvv = {}\n");
        assert!(bad.unwrap_err().to_string().contains("envv"));
    }
}
