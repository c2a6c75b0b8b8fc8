//! `stampede run --arena DIR…`: a scenario made from arena folders, with the
//! load profiles of the arena that Stampede has the shape of (HttpArena's
//! baseline, limited-conn, pipelined, json, json-comp, upload; the
//! the-benchmarker's three routes) that every framework given enables. It
//! is written beside the first framework's build folder and read as any
//! scenario file, so `--set`, `--duration` and the plan apply to it.

use std::path::{Path, PathBuf};

use super::{kind_of, manifest, work_root, Kind};
use crate::scenario::error::ScenarioError;

/// One profile as scenario TOML, for the arena's profile `name`.
fn profile(name: &str) -> Option<&'static str> {
    Some(match name {
        "baseline" => "name = \"baseline\"\npath = \"/baseline11?a=13&b=42\"\n",
        "limited-conn" => "name = \"limited-conn\"\npath = \"/baseline11?a=13&b=42\"\nrequests_per_connection = 10\n",
        "pipelined" => "name = \"pipelined\"\npath = \"/pipeline\"\npipeline = 16\n",
        "json" => "name = \"json\"\npath = \"/json/25?m=3\"\n",
        "json-comp" => "name = \"json-comp\"\npath = \"/json/25?m=3\"\nheaders = [\"Accept-Encoding: gzip, br\"]\n",
        "upload" => "name = \"upload\"\npath = \"/upload\"\nmethod = \"POST\"\nbody = \"@upload-500k.bin\"\n",
        "GET /" => "name = \"root\"\npath = \"/\"\n",
        "GET /user/{id}" => "name = \"user\"\npath = \"/user/0\"\n",
        "POST /user" => {
            "name = \"user-post\"\npath = \"/user\"\nmethod = \"POST\"\nheaders = [\"Content-Type: text/plain\"]\n"
        }
        _ => return None,
    })
}

/// The scenario file for `dirs`, and one line per framework naming the
/// profiles it enables that are not driven.
pub fn scenario(dirs: &[PathBuf]) -> Result<(PathBuf, Vec<String>), ScenarioError> {
    let refuse = |message: String| ScenarioError::Field { field: "--arena".into(), reason: message };
    let mut kinds = dirs.iter().map(|d| kind_of(d));
    let kind = kinds.next().flatten().ok_or_else(|| refuse(format!("{}: not a framework's folder", first(dirs))))?;
    if kinds.any(|k| k != Some(kind)) {
        return Err(refuse("give frameworks of one arena per run: their profiles differ".into()));
    }
    let mut shared: Option<Vec<String>> = None;
    let mut notes = Vec::new();
    for dir in dirs {
        let app = manifest(dir)?;
        let info = app.arena.clone().unwrap_or_default();
        let mut missing: Vec<String> = info.not_driven.clone();
        if let Some(before) = &shared {
            missing.extend(before.iter().filter(|p| !info.driven.contains(p)).map(|p| format!("{p} (not enabled)")));
        }
        shared = Some(match shared {
            None => info.driven.clone(),
            Some(before) => before.into_iter().filter(|p| info.driven.contains(p)).collect(),
        });
        if !missing.is_empty() {
            notes.push(format!("{}: not driven: {}", app.name, missing.join(", ")));
        }
    }
    let shared = shared.unwrap_or_default();
    if shared.is_empty() {
        return Err(refuse("the frameworks share no profile Stampede drives: name them in a scenario file".into()));
    }
    let apps: Vec<String> = dirs.iter().map(|d| format!("{:?}", std::path::absolute(d).unwrap_or(d.clone()))).collect();
    let mut text = format!("name = \"arena\"\napps = [{}]\n", apps.join(", "));
    for name in &shared {
        if let Some(profile) = profile(name) {
            text.push_str(&format!("\n[[profiles]]\n{profile}"));
        }
    }
    let root = work_root(&std::path::absolute(&dirs[0]).unwrap_or(dirs[0].clone()));
    let write = |path: &Path, bytes: &[u8]| {
        std::fs::write(path, bytes).map_err(|e| refuse(format!("cannot write {}: {e}", path.display())))
    };
    std::fs::create_dir_all(&root).map_err(|e| refuse(format!("cannot make {}: {e}", root.display())))?;
    if kind == Kind::HttpArena {
        // HttpArena's smallest upload template: 500 KB of fixed bytes.
        write(&root.join("upload-500k.bin"), &vec![b'x'; 500 * 1024])?;
    }
    let path = root.join("arena.toml");
    write(&path, text.as_bytes())?;
    Ok((path, notes))
}

fn first(dirs: &[PathBuf]) -> String {
    dirs.first().map(|d| d.display().to_string()).unwrap_or_default()
}
