//! What `stampede run` is about to execute, said before it starts. A
//! scenario and the manifests it names are code: their `build`, `run` and
//! `version` commands run through `sh -c`, a matrix `env` can set
//! `LD_PRELOAD` or `NODE_OPTIONS`, and `[hosts] ssh_config` hands ssh a file
//! whose `ProxyCommand` runs on this machine. Nothing of that is checked or
//! sandboxed (docs/scenarios.md, "Trust"); instead the plan names every
//! command, every environment a server gets from the matrix, and the ssh
//! configuration with the local commands in it, on stderr before anything
//! runs, and `stampede run --print-plan` prints it and runs nothing.

use std::fmt::Write as _;
use std::path::Path;

use crate::scenario::manifest::Manifest;
use crate::scenario::matrix::Combination;
use crate::scenario::Scenario;

/// ssh configuration keywords whose value runs on this machine (ssh_config(5)).
const LOCAL_COMMAND_KEYWORDS: [&str; 4] = ["proxycommand", "localcommand", "knownhostscommand", "include"];

/// The plan of `scenario` over `apps` (each manifest's path, the manifest
/// and its knob combinations).
pub fn render<'a>(
    scenario: &Scenario,
    apps: impl IntoIterator<Item = (&'a Path, &'a Manifest, &'a [Combination])>,
) -> String {
    let redaction = scenario.redaction();
    let mut out = String::from(
        "stampede: this run executes the commands of the scenario and its manifests (code: run only ones you trust):\n",
    );
    let server_host = scenario.hosts.as_ref().and_then(|h| h.server.as_deref());
    for (path, app, combos) in apps {
        let at = match server_host {
            Some(host) => format!("on {host} over ssh"),
            None => format!("in {}", app.command_dir().display()),
        };
        let _ = writeln!(out, "  {} ({}), {at}:", app.name, path.display());
        match (&app.build, scenario.build) {
            (Some(build), true) => line(&mut out, "build", build),
            (Some(_), false) => line(&mut out, "build", "(skipped: build = false)"),
            (None, _) => {}
        }
        if let Some(version) = &app.version {
            line(&mut out, "version", version);
        }
        line(&mut out, "run", &app.run);
        for combo in combos.iter().filter(|c| !c.env.is_empty() || !c.args.is_empty()) {
            let mut with: Vec<String> = combo.env.iter().map(|(k, v)| redaction.text(&format!("{k}={v}"))).collect();
            if !combo.args.is_empty() {
                with.push(format!("+ {}", combo.args));
            }
            let _ = writeln!(out, "      with {}", with.join(" "));
        }
    }
    match scenario.database.as_ref().map(|d| d.url.as_deref()) {
        Some(None) => out.push_str("  database: a private PostgreSQL cluster (initdb, postgres), stopped at the end\n"),
        Some(Some(url)) => {
            let _ = writeln!(out, "  database: {}", stampede_schema::redact::url(url));
        }
        None => {}
    }
    if let Some(hosts) = &scenario.hosts {
        ssh(&mut out, hosts);
    }
    out
}

fn line(out: &mut String, what: &str, command: &str) {
    let _ = writeln!(out, "    {what:<8} {}", command.trim());
}

/// The ssh part: which hosts, which configuration, and the local commands in it.
fn ssh(out: &mut String, hosts: &crate::scenario::hosts::Hosts) {
    let mut reached: Vec<String> = hosts.load.iter().map(|h| format!("{h} (load)")).collect();
    reached.extend(hosts.server.iter().map(|h| format!("{h} (server)")));
    let remote = hosts.remote_path.as_deref().unwrap_or("stampede");
    let _ = writeln!(out, "  ssh to {}, running {remote} there", reached.join(", "));
    let Some(config) = &hosts.ssh_config else {
        let _ = writeln!(out, "    ssh config: your own (~/.ssh/config)");
        return;
    };
    let _ = writeln!(out, "    ssh config: {} (ssh -F)", config.display());
    match local_commands(config) {
        Ok(lines) if lines.is_empty() => {
            let _ =
                writeln!(out, "      no ProxyCommand, LocalCommand, KnownHostsCommand, Match exec or Include in it");
        }
        Ok(lines) => {
            for l in lines {
                let _ = writeln!(out, "      runs here: {l}");
            }
        }
        Err(e) => {
            let _ = writeln!(out, "      cannot read it: {e}");
        }
    }
}

/// The lines of an ssh configuration that run a command on this machine
/// (or pull in another file that may).
fn local_commands(config: &Path) -> std::io::Result<Vec<String>> {
    let text = std::fs::read_to_string(config)?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| {
            let keyword = l.split(|c: char| c.is_whitespace() || c == '=').next().unwrap_or("").to_ascii_lowercase();
            LOCAL_COMMAND_KEYWORDS.contains(&keyword.as_str())
                || (keyword == "match" && l.to_ascii_lowercase().split_whitespace().any(|w| w == "exec"))
        })
        .map(String::from)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn manifest(text: &str) -> Manifest {
        let mut m: Manifest = toml::from_str(text).unwrap();
        m.dir = "/apps/demo".into();
        m
    }

    #[test]
    fn the_plan_names_each_command_and_the_environment_of_each_combination() {
        let scenario =
            Scenario::parse("apps = [\"demo\"]\n[[profiles]]\npath = \"/\"\n", Path::new("s.toml"), &[]).unwrap();
        let app = manifest("name = \"demo\"\nbuild = \"make all\"\nrun = \"./server\"\nversion = \"./server -v\"\n");
        let combos = [
            Combination::default(),
            Combination {
                env: BTreeMap::from([("LD_PRELOAD".into(), "/tmp/x.so".into()), ("PGPASSWORD".into(), "pw".into())]),
                args: "--fast".into(),
                ..Combination::default()
            },
        ];
        let plan = render(&scenario, [(Path::new("/apps/demo/app.toml"), &app, &combos[..])]);
        assert!(plan.contains("code: run only ones you trust"), "{plan}");
        for want in ["demo (/apps/demo/app.toml), in /apps/demo:", "build    make all", "version  ./server -v"] {
            assert!(plan.contains(want), "{want:?} in {plan}");
        }
        assert!(plan.contains("run      ./server\n"), "{plan}");
        assert!(plan.contains("with LD_PRELOAD=/tmp/x.so PGPASSWORD=*** + --fast"), "{plan}");
        assert!(!plan.contains("ssh"), "no [hosts], no ssh: {plan}");

        let unbuilt =
            Scenario::parse("apps = [\"demo\"]\nbuild = false\n[[profiles]]\npath = \"/\"\n", Path::new("s.toml"), &[]);
        let plan = render(&unbuilt.unwrap(), [(Path::new("/apps/demo/app.toml"), &app, &combos[..1])]);
        assert!(plan.contains("build    (skipped: build = false)") && !plan.contains("with "), "{plan}");
    }

    #[test]
    fn the_ssh_config_and_the_commands_it_runs_here_are_named() {
        let dir = std::env::temp_dir().join(format!("stampede-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("ssh_config");
        let text = "Host lg1\n  HostName 10.0.0.2\n  ProxyCommand sh -c 'touch /tmp/pwned; nc %h %p'\nMatch exec \"true\"\n  User me\n";
        std::fs::write(&config, text).unwrap();
        let scenario_text = format!(
            "apps = [\"demo\"]\n[[profiles]]\npath = \"/\"\n[hosts]\nload = [\"lg1\"]\nserver_address = \"10.0.0.9\"\nssh_config = {:?}\n",
            config.display().to_string()
        );
        let scenario = Scenario::parse(&scenario_text, Path::new("s.toml"), &[]).unwrap();
        let app = manifest("name = \"demo\"\nrun = \"./server\"\n");
        let plan = render(&scenario, [(Path::new("/apps/demo/app.toml"), &app, &[][..])]);
        assert!(plan.contains("ssh to lg1 (load), running stampede there"), "{plan}");
        assert!(plan.contains(&format!("ssh config: {} (ssh -F)", config.display())), "{plan}");
        assert!(plan.contains("runs here: ProxyCommand sh -c 'touch /tmp/pwned; nc %h %p'"), "{plan}");
        assert!(plan.contains("runs here: Match exec \"true\""), "{plan}");
        assert!(!plan.contains("HostName"), "only the lines that run something: {plan}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
