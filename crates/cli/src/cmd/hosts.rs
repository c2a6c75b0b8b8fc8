//! `stampede load --hosts …` (or a spec with `from_hosts`): the load spec and
//! where it goes from turned into a `stampede_remote::Plan`, and its outcome printed: the merged total in the
//! usual layout, one row per host, and one line per failed host. The work is
//! done by the `stampede-remote` crate.

use super::load::Args;
use stampede_load::{text, Stop};
use stampede_remote::share::{self, Total};
use stampede_remote::{Plan, Ssh};
use stampede_schema::hosts::{HostsSpec, OnHostFailure};
use stampede_schema::{LoadResult, LoadSpec};
use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

/// Sends `spec` from `from.hosts`: its files are read here and travel inside
/// it, and its seed is fixed here so every host's seed derives from one
/// printed value. `args` gives only the output (`--json`) and the flags that
/// cannot go with hosts.
pub fn run(args: &Args, from: &HostsSpec, spec: &LoadSpec, dir: &Path) -> anyhow::Result<i32> {
    let mut cfg = stampede_load::spec::config(spec, dir).map_err(|e| args.spec_error(e))?;
    cfg.interrupt = super::load::interrupt_flag()?;
    let hosts: Vec<String> = from.hosts.iter().map(|h| h.trim().to_string()).filter(|h| !h.is_empty()).collect();
    if let Some(bad) = hosts.iter().find(|h| !stampede_schema::hosts::is_host_name(h)) {
        anyhow::bail!("--hosts {bad:?} is not a host; use user@host or a Host name from your ssh config");
    }
    if let Some(cfg_file) = from.ssh_config.as_ref().filter(|p| !p.is_file()) {
        anyhow::bail!("--ssh-config {}: no such file", cfg_file.display());
    }
    if args.find_max || args.start_at.is_some() {
        anyhow::bail!("--find-max and --start-at cannot be used with --hosts (or a spec's from_hosts)");
    }
    if spec.stages.is_some() {
        anyhow::bail!("--stages cannot be used with --hosts (or a spec's from_hosts): send a --rate from the hosts");
    }
    if spec.hdr_log.is_some() {
        anyhow::bail!("--hdr-log cannot be used with --hosts: each host would write its own file there");
    }
    let mut sent = stampede_load::spec::inline(spec, dir, None).map_err(|e| args.spec_error(e))?;
    sent.seed = Some(spec.seed.unwrap_or_else(stampede_load::spec::clock_seed));
    share::split(&Total::of(&sent), hosts.len()).map_err(anyhow::Error::msg)?;
    let copy_binary = match from.copy_binary {
        true => {
            Some(std::env::current_exe().map_err(|e| anyhow::anyhow!("--copy-binary: cannot find this binary: {e}"))?)
        }
        false => None,
    };
    let plan = Plan {
        hosts: hosts.clone(),
        ssh: Ssh {
            config: from.ssh_config.clone(),
            connect_timeout: from.connect_timeout,
            remote_path: from.remote_path.clone().unwrap_or_else(|| "stampede".into()),
        },
        copy_binary,
        max_clock_offset: from.max_clock_offset,
        continue_on_failure: from.on_host_failure == OnHostFailure::Continue,
        spec: sent,
        run_length: match cfg.stop {
            Stop::Duration(d) => Some(d + cfg.warmup),
            Stop::Requests(_) => None,
        },
        start_margin: Duration::from_secs(2),
        interrupt: cfg.interrupt.clone(),
    };
    if !args.json {
        let what = match cfg.stop {
            Stop::Duration(d) => format!("{} test", humantime::format_duration(d)),
            Stop::Requests(n) => format!("{n} requests"),
        };
        eprintln!("Measuring the clocks of {} host{} over ssh…", hosts.len(), if hosts.len() == 1 { "" } else { "s" });
        print!("{}", text::banner(&cfg.target.url, cfg.threads, cfg.connections, &what));
        println!("  from {} host{}: {}", hosts.len(), if hosts.len() == 1 { "" } else { "s" }, hosts.join(", "));
    }
    let outcome = stampede_remote::run(&plan);
    if let Some(m) = &outcome.merged {
        if args.json {
            println!("{}", serde_json::to_string_pretty(m)?);
        } else {
            print!("{}", text::render(m));
            print!("{}", host_table(m));
        }
    }
    for f in &outcome.failures {
        eprintln!("stampede: error: {}", f.line());
    }
    let failed = !outcome.failures.is_empty();
    Ok(match (outcome.merged.is_some(), failed, plan.continue_on_failure) {
        (false, _, _) => 2,
        (true, true, false) => 2,
        _ => outcome.merged.as_ref().map_or(0, LoadResult::exit_status),
    })
}

/// One row per host: where each host's share went and what it cost.
fn host_table(m: &LoadResult) -> String {
    let mut o = String::new();
    let width = m
        .hosts()
        .iter()
        .map(|h| h.host.len())
        .chain(m.failed_hosts().iter().map(|f| f.host.len()))
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(o, "Hosts:");
    let _ = writeln!(
        o,
        "  {:<width$}  {:>12}  {:>10}  {:>10}  {:>11}  {:>7}  {:>9}  {:>9}",
        "host", "clock offset", "rtt", "requests", "req/s", "errors", "p99", "CPU cores"
    );
    for h in m.hosts() {
        let _ = writeln!(
            o,
            "  {:<width$}  {:>+9.2} ms  {:>7.2} ms  {:>10}  {:>11.2}  {:>7}  {:>9}  {:>9.2}",
            h.host,
            h.clock_offset_ms,
            h.rtt_ms,
            h.requests,
            h.rps,
            h.errors,
            text::dur(h.p99_us),
            h.loadgen.cpu_cores
        );
    }
    for f in m.failed_hosts() {
        let _ = writeln!(o, "  {:<width$}  FAILED: {}", f.host, f.reason);
    }
    if m.partial() {
        let _ = writeln!(
            o,
            "PARTIAL: {} of {} hosts failed; the total covers the others only.",
            m.failed_hosts().len(),
            m.hosts().len() + m.failed_hosts().len()
        );
    }
    o
}
