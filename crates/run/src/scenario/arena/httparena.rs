//! HttpArena's `frameworks/<name>/meta.json` and Dockerfile: the `tests` it
//! enables become the `httparena` contract's endpoints and the profiles
//! Stampede can drive; the server listens on 8080 whatever PORT says; the
//! dataset and certificate the arena mounts at `/data` and `/certs` are
//! supplied under the build folder and named by `DATASET_PATH`, `TLS_CERT`
//! and `TLS_KEY`, which most of its frameworks read before the fixed path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{dockerfile, supplies, Derived};
use crate::scenario::manifest::ArenaInfo;

/// HttpArena's HTTP/1.1 port.
pub const PORT: u16 = 8080;

/// The fields of meta.json Stampede reads; the others (type, engine,
/// maintainers, …) describe the entry, not how to run it.
#[derive(Deserialize)]
struct Meta {
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    language: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    tests: Vec<String>,
}

/// Profiles Stampede drives, each with the endpoint it serves.
const DRIVEN: &[(&str, &str, &str)] = &[
    ("baseline", "baseline11", "/baseline11"),
    ("limited-conn", "baseline11", "/baseline11"),
    ("pipelined", "pipeline", "/pipeline"),
    ("json", "json", "/json/"),
    ("json-comp", "json", "/json/"),
    ("upload", "upload", "/upload"),
];

/// The profiles whose validation a rule of the `httparena` contract stands
/// for, by its id's first word.
pub fn profiles_of_rule(id: &str) -> Option<&'static [&'static str]> {
    let profiles: &[&str] = match id {
        _ if id.starts_with("json-comp") => &["json-comp"],
        _ if id.starts_with("json-") => &["json"],
        _ if id.starts_with("baseline") => &["baseline", "limited-conn"],
        _ if id.starts_with("pipeline") => &["pipelined"],
        _ if id.starts_with("upload") => &["upload"],
        _ => return None,
    };
    Some(profiles)
}

pub(crate) fn read(dir: &Path, root: &Path) -> Result<Derived, (PathBuf, String)> {
    let source = dir.join("meta.json");
    let text = std::fs::read_to_string(&source).map_err(|e| (source.clone(), format!("cannot read: {e}")))?;
    let meta: Meta = serde_json::from_str(&text)
        .map_err(|e| (source.clone(), format!("not HttpArena's meta.json: {e} (it needs a `tests` list)")))?;
    let (driven, not_driven): (Vec<String>, Vec<String>) =
        meta.tests.iter().cloned().partition(|t| DRIVEN.iter().any(|(p, _, _)| p == t));
    let urls: BTreeMap<String, String> = DRIVEN
        .iter()
        .filter(|(p, _, _)| driven.iter().any(|d| d == p))
        .map(|(_, endpoint, url)| (endpoint.to_string(), url.to_string()))
        .collect();
    let dockerfile_path = dir.join("Dockerfile");
    let recipe = match std::fs::read_to_string(&dockerfile_path) {
        Ok(text) => dockerfile::read(&dockerfile_path, &text, dir, root),
        Err(e) => Err(dockerfile::Unsupported(format!(
            "{}: cannot read ({e}): give build and run in an app.toml beside meta.json",
            dockerfile_path.display()
        ))),
    };
    let supplied = supplies::httparena(root).map_err(|e| (root.to_path_buf(), e))?;
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or(meta.display_name.clone());
    let description = format!("HttpArena {} ({}): {}", meta.display_name, meta.language, meta.description);
    let (toolchains, skipped) = recipe.as_ref().map(|r| (r.toolchains.clone(), r.skipped.clone())).unwrap_or_default();
    Ok(Derived {
        name,
        description: description.trim_end_matches(": ").to_string(),
        contract: "httparena",
        port: PORT,
        urls,
        recipe,
        env: supplied.env,
        info: ArenaInfo {
            source,
            driven,
            not_driven,
            toolchains,
            skipped,
            supplied: supplied.notes,
            ..Default::default()
        },
    })
}
