//! the-benchmarker/web-frameworks' `<language>/<framework>/config.yaml`: the
//! engine it picks from its language's `config.yaml` (command, bootstrap,
//! environment, build_deps), its own fields over them, rendered into the
//! engine's or the language's Dockerfile template (template.rs) as the
//! arena's Rakefile does, then read as any Dockerfile (dockerfile.rs). The rendered
//! file is kept in the build folder so an error's line can be looked up.
//! Every framework serves the arena's three routes on port 3000 and is
//! judged by the `web-frameworks` contract.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::{dockerfile, template, Derived};
use crate::scenario::manifest::ArenaInfo;

/// The-benchmarker's port.
pub const PORT: u16 = 3000;

/// The routes of its `.spec/route_spec.rb`, which every framework serves.
const ROUTES: &[&str] = &["GET /", "GET /user/{id}", "POST /user"];

fn yaml(path: &Path) -> Result<Value, (PathBuf, String)> {
    let text = std::fs::read_to_string(path).map_err(|e| (path.to_path_buf(), format!("cannot read: {e}")))?;
    serde_norway::from_str(&text).map_err(|e| (path.to_path_buf(), format!("not YAML: {e}")))
}

pub(crate) fn read(dir: &Path, root: &Path) -> Result<Derived, (PathBuf, String)> {
    let source = dir.join("config.yaml");
    let framework = yaml(&source)?;
    let language_dir = dir.parent().unwrap_or(dir);
    let language = yaml(&language_dir.join("config.yaml"))?;
    let context = context(&language, &framework).map_err(|e| (source.clone(), e))?;
    // The engine's own template (`node.Dockerfile`), else the language's.
    let engine_template = language_dir.join(format!("{}.Dockerfile", context["engine"].as_str().unwrap_or_default()));
    let template_path = if engine_template.is_file() { engine_template } else { language_dir.join("Dockerfile") };
    let recipe = match std::fs::read_to_string(&template_path) {
        Ok(text) => render(&template_path, &text, &context, dir, root),
        Err(e) => Err(dockerfile::Unsupported(format!(
            "{}: cannot read the language's Dockerfile template ({e}): give build and run in an app.toml beside config.yaml",
            template_path.display()
        ))),
    };
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let described = framework["framework"]["website"].as_str().or(framework["framework"]["github"].as_str());
    let (toolchains, skipped) = recipe.as_ref().map(|r| (r.toolchains.clone(), r.skipped.clone())).unwrap_or_default();
    Ok(Derived {
        name: format!("{}-{}", name(language_dir), name(dir)),
        description: format!("the-benchmarker {}/{} ({})", name(language_dir), name(dir), described.unwrap_or("")),
        contract: "web-frameworks",
        port: PORT,
        urls: Default::default(),
        recipe,
        env: Vec::new(),
        info: ArenaInfo {
            source,
            driven: ROUTES.iter().map(|r| r.to_string()).collect(),
            toolchains,
            skipped,
            ..ArenaInfo::default()
        },
    })
}

/// The template rendered and written beside the build, then read.
fn render(
    template_path: &Path,
    text: &str,
    context: &Value,
    folder: &Path,
    root: &Path,
) -> Result<dockerfile::Recipe, dockerfile::Unsupported> {
    let at = |e: String| dockerfile::Unsupported(format!("{}: {e}", template_path.display()));
    let rendered = template::render(text, context).map_err(at)?;
    std::fs::create_dir_all(root).map_err(|e| at(e.to_string()))?;
    let kept = root.join("Dockerfile.rendered");
    std::fs::write(&kept, &rendered).map_err(|e| at(e.to_string()))?;
    // Lines refer to the rendered file; COPY reads the framework's folder.
    dockerfile::read(&kept, &rendered, folder, root)
}

/// The template's variables: the language's engine, its framework defaults,
/// then the framework's own fields; files are the framework's whole folder.
fn context(language: &Value, framework: &Value) -> Result<Value, String> {
    let lang = &language["language"];
    let own = &framework["framework"];
    let engines = own["engines"].as_array().or(language["framework"]["engines"].as_array());
    let engine = match engines.and_then(|e| e.first()).and_then(Value::as_str) {
        Some(engine) => engine.to_string(),
        None => lang["engines"].as_object().and_then(|m| m.keys().next().cloned()).unwrap_or_default(),
    };
    let mut vars = Map::new();
    for layer in [&lang["engines"][&engine], &language["framework"], lang, own] {
        if let Value::Object(fields) = layer {
            for (k, v) in fields.iter().filter(|(k, _)| *k != "engines") {
                // Tables and lists add up (the framework's environment over
                // its language's, its bootstrap steps after), as the arena's
                // Rakefile merges them.
                match (vars.get_mut(k), v) {
                    (Some(Value::Object(have)), Value::Object(more)) => have.extend(more.clone()),
                    (Some(Value::Array(have)), Value::Array(more)) => have.extend(more.iter().cloned()),
                    _ => {
                        vars.insert(k.clone(), v.clone());
                    }
                }
            }
        }
    }
    if let Some(Value::Object(env)) = vars.get("environment").cloned() {
        let pairs =
            env.iter().map(|(k, v)| Value::from(format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_string))));
        vars.insert("environment".into(), Value::Array(pairs.collect()));
    }
    if let Some(Value::String(command)) = vars.get("command").cloned() {
        vars.insert(
            "command".into(),
            Value::from(command.replace('\\', " ").split_whitespace().collect::<Vec<_>>().join(" ")),
        );
    }
    vars.insert("files".into(), json!([{"source": ".", "target": "."}]));
    vars.insert("static_files".into(), json!([]));
    vars.insert("language".into(), lang.clone());
    vars.insert("framework".into(), own.clone());
    vars.insert("architecture".into(), json!("amd64"));
    vars.insert("if".into(), json!({"architecture": {"amd64": true}}));
    vars.insert("engine".into(), Value::from(engine));
    if vars.get("command").and_then(Value::as_str).is_none_or(str::is_empty) {
        return Err("no command for the framework's engine in it or its language's config.yaml: add run = \"<the start command>\" to an app.toml beside it".into());
    }
    Ok(Value::Object(vars))
}
