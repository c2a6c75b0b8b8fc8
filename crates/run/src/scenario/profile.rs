//! One load profile of a scenario: a name, a path, an optional open-loop
//! latency phase and a whole load spec, read from the scenario's
//! `[[profiles]]` with every field checked as `stampede load` would check
//! it, and turned into the spec of each phase of a run.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use stampede_schema::LoadSpec;
use stampede_spec::stages::Stages;
use stampede_spec::{Field, SpecError};

use crate::scenario::latency::LatencyPhase;

/// A profile's `duration` when it gives none (`stampede load`: 10s).
const DEFAULT_DURATION: Duration = Duration::from_secs(5);
/// The same, as a profile writes it.
const DEFAULT_DURATION_TEXT: &str = "5s";
/// A profile's `warmup` when it gives none (`stampede load`: 0s).
const DEFAULT_WARMUP_TEXT: &str = "1s";

/// One load profile: a name and a whole load spec (`stampede load`'s
/// options, docs/load.md "The load spec"), its URLs paths on the server
/// `stampede run` starts. Files it names (`targets`, `body = "@FILE"`) are
/// relative to the scenario file. Profiles measure for `duration` (default
/// 5s) after `warmup` (default 1s), each a separate phase.
#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    /// Defaults to the path without its slashes (`/values/5` → `values-5`).
    pub name: String,
    /// The one path to load (or the spec's `urls`, several paths).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The open-loop phase after the measured one that the run's latency
    /// comes from (phases/latency.rs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyPhase>,
    #[serde(flatten)]
    pub spec: LoadSpec,
}

impl<'de> Deserialize<'de> for Profile {
    /// `name` and `path` are the profile's; every other field is the spec's,
    /// read with its unknown fields refused and named.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Profile, D::Error> {
        use serde::de::Error;
        let mut table = toml::Table::deserialize(d)?;
        let text = |table: &mut toml::Table, key: &str| match table.remove(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(D::Error::custom(format!("{key}: expected a string, found {}", other.type_str()))),
        };
        let name = text(&mut table, "name")?.unwrap_or_default();
        let path = text(&mut table, "path")?;
        let label = match (&name, &path) {
            (n, _) if !n.is_empty() => format!("profile {n:?}: "),
            (_, Some(p)) => format!("profile {p:?}: "),
            _ => "profile: ".into(),
        };
        let latency = match table.remove("latency") {
            None => None,
            Some(value) => Some(
                serde_path_to_error::deserialize::<_, LatencyPhase>(value)
                    .map_err(|e| D::Error::custom(format!("{label}latency.{}: {}", e.path(), e.inner())))?,
            ),
        };
        // Stages set the measured phase's length, and a ramp is its own
        // warm-up: a staged profile gets neither default.
        if !table.contains_key("stages") {
            table.entry("duration").or_insert_with(|| DEFAULT_DURATION_TEXT.into());
            table.entry("warmup").or_insert_with(|| DEFAULT_WARMUP_TEXT.into());
        }
        let spec: LoadSpec = serde_path_to_error::deserialize(toml::Value::Table(table))
            .map_err(|e| D::Error::custom(format!("{label}{}: {}", e.path(), e.inner())))?;
        Ok(Profile { name, path, latency, spec })
    }
}

impl Profile {
    /// What the profile loads, for records and tables: its path, its URLs,
    /// or its targets.
    pub fn path_label(&self) -> String {
        match (&self.path, self.spec.urls.is_empty()) {
            (Some(p), _) => p.clone(),
            (None, false) => self.spec.urls.join(" "),
            (None, true) => "mix".into(),
        }
    }

    /// The measured phase's duration.
    pub fn duration(&self) -> Duration {
        let staged = self.spec.stages.as_deref().and_then(|s| Stages::parse(s, self.spec.ramp).ok());
        staged.map_or(self.spec.duration.unwrap_or(DEFAULT_DURATION), |s| s.total())
    }

    /// The spec of one phase `duration` long, against the server at
    /// `base_url`, with every file (relative to `dir`) read into it.
    pub fn phase_spec(&self, dir: &Path, base_url: &str, duration: Duration) -> Result<LoadSpec, SpecError> {
        let mut spec = self.spec.clone();
        spec.urls.splice(0..0, self.path.iter().cloned());
        // A gRPC call names its own path (`/package.Service/Method`): a
        // profile without `path` loads the server's address.
        if spec.grpc.is_some() && spec.urls.is_empty() {
            spec.urls.push("/".into());
        }
        // A staged phase lasts as long as its stages (the measured phase; a
        // staged profile has no warm-up phase).
        if spec.stages.is_none() {
            spec.duration = Some(duration);
        }
        spec.warmup = Duration::ZERO;
        // HTTP/3 is always encrypted: the server's port number, over QUIC.
        let base_url = match spec.http3 {
            true => base_url.replacen("http://", "https://", 1),
            false => base_url.to_string(),
        };
        stampede_spec::inline::inline(&spec, dir, Some(&base_url))
    }

    /// Checks the profile as `stampede load` would check its spec, naming the field.
    pub(super) fn validate(&self, dir: &Path) -> Result<(), (String, String)> {
        let paths = self.path.iter().map(|p| ("path", p)).chain(self.spec.urls.iter().map(|u| ("urls", u)));
        let paths = paths.chain(self.spec.mix.iter().map(|t| ("mix", &t.url)));
        for (field, p) in paths {
            if !p.starts_with('/') {
                return Err((
                    field.into(),
                    format!("{p:?} must start with / (e.g. /plaintext): stampede run picks the server's address"),
                ));
            }
        }
        if self.path.is_some() && !self.spec.urls.is_empty() {
            return Err(("urls".into(), "give path or urls, not both".into()));
        }
        if self.spec.requests.is_some() {
            return Err(("requests".into(), "stampede run measures for a duration; use duration".into()));
        }
        if self.spec.from_hosts.is_some() {
            return Err((
                "from_hosts".into(),
                "not in a profile: list the load hosts in the scenario's [hosts] load".into(),
            ));
        }
        if let Some(latency) = &self.latency {
            latency.validate().map_err(|(f, reason)| (format!("latency.{f}"), reason))?;
            if self.spec.rate.is_some() || self.spec.stages.is_some() {
                return Err((
                    "latency".into(),
                    "needs a closed-loop profile (no rate or stages): its rate is a fraction of the closed loop's"
                        .into(),
                ));
            }
        }
        if self.spec.hdr_log.is_some() {
            return Err(("hdr_log".into(), "not in a scenario: every phase would write the same file".into()));
        }
        let spec = self.phase_spec(dir, "http://127.0.0.1:1", self.duration()).map_err(|e| self.spec_error(&e))?;
        // A gRPC call without a .proto is checked but for its schema, which
        // the generator asks the running server for (reflection).
        let spec = LoadSpec { warmup: self.spec.warmup, ..spec };
        stampede_spec::check::check_before_reflection(&spec, dir).map_err(|e| self.spec_error(&e))?;
        Ok(())
    }

    /// An error of the load spec as this profile's: the field it is about
    /// as the profile spells it (`max_lag`, `grpc.data`; `path`, which
    /// the spec's first URL is when the profile gives one) and the line in
    /// the profile's words, never a flag of `stampede load`.
    pub(crate) fn spec_error(&self, e: &SpecError) -> (String, String) {
        // `path` and `urls` exclude each other: with a path, it is the only URL.
        let (field, line) = match (e.field, &self.path) {
            (Field::Urls, Some(_)) => ("path", e.in_document_naming_urls(&|_| "path".into())),
            (field, _) => (field.key(), e.in_document()),
        };
        (field.to_string(), line)
    }
}
