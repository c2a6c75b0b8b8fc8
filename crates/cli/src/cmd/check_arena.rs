//! `stampede check --arena DIR`: an arena framework's folder (HttpArena's
//! meta.json + Dockerfile, the-benchmarker's config.yaml) built, started at
//! its fixed port, checked with its arena's contract kept to the profiles it
//! enables, and stopped. Glue only: reading the folder and the server's
//! lifecycle live in `stampede-run`, the check in `stampede-check`.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use stampede_run::scenario::arena;
use stampede_run::scenario::manifest::Manifest;
use stampede_run::server::standalone::Standalone;

use crate::cmd::check::Args;

/// How long a framework may take from its start to its first ready answer.
const START_TIMEOUT: Duration = Duration::from_secs(60);

pub fn run(dir: &Path, args: &Args) -> anyhow::Result<i32> {
    if arena::kind_of(dir).is_none() {
        anyhow::bail!("{}", not_a_framework(dir));
    }
    let app = stampede_run::scenario::apps::load(dir).map_err(anyhow::Error::msg)?;
    if let Some(missing) = arena::missing_toolchain(&app) {
        anyhow::bail!("{missing}");
    }
    let Some(claimed) = app.contract() else {
        anyhow::bail!("--arena {}: its app.toml says contract = \"none\": nothing to check", dir.display());
    };
    let mut contract = stampede_check::resolve(&claimed).context("--arena")?;
    let info = app.arena.clone().unwrap_or_default();
    if !app.urls.is_empty() {
        contract = app.urls.restrict(&contract);
        contract.rules.retain(|rule| arena::rule_enabled(&rule.id, &info.driven));
    }
    eprintln!("stampede: {}", describe(&app, &info, &contract.name));
    let server = Standalone::start(&app, &info.logs, START_TIMEOUT, &|| false).map_err(anyhow::Error::msg)?;
    let options = stampede_check::Options {
        timeout: args.timeout,
        database: args.database.clone(),
        http3: None,
        urls: app.urls.clone(),
        tls: None,
    };
    let url = format!("http://127.0.0.1:{}", server.port);
    let report = stampede_check::check_contract(&url, &contract, &options)?;
    drop(server);
    crate::cmd::check::print_report(&report, &contract, args.json)
}

/// What was read from the folder, in two lines: the app and its profiles.
fn describe(app: &Manifest, info: &arena::ArenaInfo, contract: &str) -> String {
    let port = app.fixed_port.map_or("any".to_string(), |p| p.to_string());
    let mut text = format!(
        "{} from {}: contract {contract} at port {port}; profiles driven: {}",
        app.name,
        info.source.display(),
        list(&info.driven)
    );
    if !info.not_driven.is_empty() {
        text.push_str(&format!("; not driven: {}", list(&info.not_driven)));
    }
    for line in info.skipped.iter().chain(&info.supplied) {
        text.push_str(&format!("\nstampede:   {line}"));
    }
    text
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// Why `dir` is no framework folder: the frameworks inside it, if it holds any.
fn not_a_framework(dir: &Path) -> String {
    let mut inside: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| arena::kind_of(&e.path()).is_some())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    inside.sort();
    match inside.first() {
        Some(first) => format!(
            "--arena {}: holds {} framework folder(s) ({}): check one at a time, e.g. --arena {}",
            dir.display(),
            inside.len(),
            inside.iter().take(5).cloned().collect::<Vec<_>>().join(", ") + if inside.len() > 5 { ", …" } else { "" },
            dir.join(first).display()
        ),
        None => format!(
            "--arena {}: no meta.json (HttpArena) nor config.yaml beside a language's config.yaml (the-benchmarker): give a framework's own folder",
            dir.display()
        ),
    }
}
