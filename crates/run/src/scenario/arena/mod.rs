//! An arena's framework folder read as an app manifest (docs/arenas.md), so
//! `stampede run` and `stampede check --arena` start a framework from
//! HttpArena (`frameworks/<name>/meta.json` + Dockerfile) or the-benchmarker
//! (`<language>/<framework>/config.yaml` + the language's config.yaml and
//! Dockerfile template) without Docker and without a hand-written manifest.
//! The arena says which profiles the framework enables (hence its contract
//! and the endpoints it serves), its fixed port, and its recipe; an
//! `app.toml` beside it overrides any field of the manifest made from them.

mod benchmarker;
pub mod dockerfile;
mod httparena;
mod scenario;
mod supplies;
mod template;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use scenario::scenario;

use crate::scenario::error::ScenarioError;
pub use crate::scenario::manifest::ArenaInfo;
use crate::scenario::manifest::Manifest;

/// Which arena a folder belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    HttpArena,
    Benchmarker,
}

/// What one arena reader makes of a folder, before any `app.toml` override.
pub(crate) struct Derived {
    pub name: String,
    pub description: String,
    pub contract: &'static str,
    pub port: u16,
    /// Endpoint -> the server's URL for it (`baseline11` -> `/baseline11`).
    pub urls: BTreeMap<String, String>,
    /// The recipe, or why the Dockerfile could not give one.
    pub recipe: Result<dockerfile::Recipe, dockerfile::Unsupported>,
    pub info: ArenaInfo,
    /// Environment for the server (where the supplied files are).
    pub env: Vec<(String, String)>,
}

/// The arena a folder is in, if any.
pub fn kind_of(dir: &Path) -> Option<Kind> {
    if dir.join("meta.json").is_file() {
        Some(Kind::HttpArena)
    } else if dir.join("config.yaml").is_file() && dir.parent().is_some_and(|p| p.join("config.yaml").is_file()) {
        Some(Kind::Benchmarker)
    } else {
        None
    }
}

/// The manifest of the arena folder `dir`, with its `app.toml` (if any) over it.
pub fn manifest(dir: &Path) -> Result<Manifest, ScenarioError> {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let kind = kind_of(&dir).ok_or_else(|| ScenarioError::Manifest {
        path: dir.clone(),
        message: "neither meta.json (HttpArena) nor config.yaml beside a language config.yaml (the-benchmarker): give a framework's own folder".into(),
    })?;
    let root = work_root(&dir);
    let derived = match kind {
        Kind::HttpArena => httparena::read(&dir, &root),
        Kind::Benchmarker => benchmarker::read(&dir, &root),
    }
    .map_err(|(path, message)| ScenarioError::Manifest { path, message })?;
    let overlay_path = dir.join("app.toml");
    let overlay: toml::Table = match std::fs::read_to_string(&overlay_path) {
        Ok(text) => toml::from_str(&text).map_err(|e| ScenarioError::Manifest {
            path: overlay_path.clone(),
            message: e.to_string().split_whitespace().collect::<Vec<_>>().join(" "),
        })?,
        Err(_) => toml::Table::new(),
    };
    refuse_unknown_fields(&overlay, &overlay_path)?;
    let table = merged(&derived, overlay)?;
    let mut manifest: Manifest =
        toml::Value::Table(table).try_into().map_err(|e: toml::de::Error| ScenarioError::Manifest {
            path: overlay_path.clone(),
            message: e.to_string().split_whitespace().collect::<Vec<_>>().join(" "),
        })?;
    manifest.dir = dir.clone();
    manifest.arena = Some(ArenaInfo { logs: root.join("logs"), ..derived.info });
    Manifest::validate(manifest, &overlay_path)
}

/// An `app.toml` field no manifest has, named before anything else is said.
fn refuse_unknown_fields(overlay: &toml::Table, path: &Path) -> Result<(), ScenarioError> {
    let mut probe = overlay.clone();
    for key in ["name", "run"] {
        probe.entry(key).or_insert_with(|| toml::Value::String("x".into()));
    }
    match toml::Value::Table(probe).try_into::<Manifest>() {
        Ok(_) => Ok(()),
        Err(e) => Err(ScenarioError::Manifest {
            path: path.to_path_buf(),
            message: e.to_string().split_whitespace().collect::<Vec<_>>().join(" "),
        }),
    }
}

/// The derived manifest as TOML with the `app.toml`'s fields over it; the
/// Dockerfile's refusal only when the app.toml does not give `run`.
fn merged(derived: &Derived, overlay: toml::Table) -> Result<toml::Table, ScenarioError> {
    let mut table = toml::Table::new();
    let text = |s: &str| toml::Value::String(s.to_string());
    table.insert("name".into(), text(&derived.name));
    table.insert("description".into(), text(&derived.description));
    table.insert("contract".into(), text(derived.contract));
    table.insert("port".into(), toml::Value::Integer(derived.port.into()));
    let urls: toml::Table = derived.urls.iter().map(|(k, v)| (k.clone(), text(v))).collect();
    table.insert("urls".into(), toml::Value::Table(urls));
    match (&derived.recipe, overlay.contains_key("run")) {
        (Ok(recipe), _) => {
            let env: String = derived.env.iter().map(|(k, v)| format!("export {k}='{v}'; ")).collect();
            table.insert("build".into(), text(&recipe.build));
            table.insert("run".into(), text(&format!("{env}{}", recipe.run)));
            table.insert("working_dir".into(), text(&recipe.workdir.display().to_string()));
            std::fs::create_dir_all(&recipe.workdir).map_err(|e| ScenarioError::Manifest {
                path: recipe.workdir.clone(),
                message: format!("cannot make the build folder: {e}"),
            })?;
            let tools = recipe.toolchains.iter().map(|(tool, _)| text(tool)).collect();
            table.insert("requires".into(), toml::Value::Array(tools));
        }
        (Err(_), true) => {}
        (Err(dockerfile::Unsupported(line)), false) => return Err(ScenarioError::Arena(line.clone())),
    }
    for (key, value) in overlay {
        table.insert(key, value);
    }
    Ok(table)
}

/// The folder standing for the framework's image: under the system's temp
/// folder, one per framework folder, kept between runs so builds are
/// incremental.
fn work_root(dir: &Path) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut hash = std::collections::hash_map::DefaultHasher::new();
    dir.hash(&mut hash);
    let name = dir.file_name().map(|n| crate::scenario::names::file_part(&n.to_string_lossy())).unwrap_or_default();
    std::env::temp_dir().join("stampede-arena").join(format!("{name}-{:016x}", hash.finish()))
}

/// The toolchains `manifest` needs that are not on PATH, as one line naming
/// the Dockerfile line that asks for the first.
pub fn missing_toolchain(manifest: &Manifest) -> Option<String> {
    let info = manifest.arena.as_ref()?;
    let (tool, line) = info.toolchains.iter().find(|(tool, _)| crate::scenario::manifest::which(tool).is_none())?;
    Some(format!(
        "{line} needs {tool}, which is not on PATH: install it, or give build and run in an app.toml beside it"
    ))
}

/// Whether the HttpArena profiles `enabled` include the one contract rule
/// `id` checks (`json-comp-25` is json-comp's, `baseline-post` baseline's or
/// limited-conn's); rules of no arena profile are always kept.
pub fn rule_enabled(id: &str, enabled: &[String]) -> bool {
    match httparena::profiles_of_rule(id) {
        Some(profiles) => profiles.iter().any(|p| enabled.iter().any(|e| e == p)),
        None => true,
    }
}

#[cfg(test)]
mod tests;
