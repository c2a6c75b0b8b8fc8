//! Where an app's manifest comes from: an `app.toml`, or an arena
//! framework's folder read as one (scenario/arena/, with its `app.toml`, if
//! any, over what the arena's files say). It stands above both so the
//! manifest type and the arena readers import only downward.

use std::path::{Path, PathBuf};

use crate::scenario::arena;
use crate::scenario::error::ScenarioError;
use crate::scenario::manifest::Manifest;

/// Reads the app at `path`: an arena framework's folder, or an `app.toml`.
pub fn load(path: &Path) -> Result<Manifest, ScenarioError> {
    if path.is_dir() {
        return arena::manifest(path);
    }
    Manifest::load(path)
}

/// Finds an app's manifest: a path to an `app.toml` (or to its folder) as
/// given, or `apps/<name>/app.toml` in the first ancestor of the scenario's
/// folder or the current directory that has it.
pub fn locate(app: &str, scenario_dir: &Path) -> Result<PathBuf, ScenarioError> {
    let given = Path::new(app);
    let looks_like_path = app.contains('/') || app.ends_with(".toml");
    if looks_like_path {
        let candidate =
            if given.is_relative() && !given.exists() { scenario_dir.join(given) } else { given.to_path_buf() };
        if candidate.is_dir() && arena::kind_of(&candidate).is_some() {
            return Ok(candidate);
        }
        let candidate = if candidate.is_dir() { candidate.join("app.toml") } else { candidate };
        if candidate.is_file() {
            return Ok(candidate);
        }
        return Err(ScenarioError::UnknownApp { name: app.into(), looked: candidate });
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let scenario_dir = if scenario_dir.is_relative() { cwd.join(scenario_dir) } else { scenario_dir.to_path_buf() };
    for start in [scenario_dir.as_path(), cwd.as_path()] {
        for dir in start.ancestors() {
            let candidate = dir.join("apps").join(app).join("app.toml");
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(ScenarioError::UnknownApp { name: app.into(), looked: PathBuf::from("apps").join(app).join("app.toml") })
}
