//! `stampede load --hosts …`: the flags of a multi-host run turned into a
//! `stampede_remote::Plan`, and its outcome printed: the merged total in the
//! usual layout, one row per host, and one line per failed host. The work is
//! done by the `stampede-remote` crate.

use super::load::{Args, OnHostFailure};
use stampede_load::{text, LoadConfig, Stop};
use stampede_remote::share::{self, Total};
use stampede_remote::{Plan, Ssh};
use stampede_schema::LoadResult;
use std::fmt::Write;
use std::time::Duration;

/// `stampede load --hosts …`: the flags of `stampede load`, sent from other machines.
pub fn run_args(args: Args) -> anyhow::Result<i32> {
    let mut cfg = super::load::config(&args)?;
    cfg.interrupt = super::load::interrupt_flag()?;
    run(&args, &cfg)
}

pub fn run(args: &Args, cfg: &LoadConfig) -> anyhow::Result<i32> {
    let hosts: Vec<String> = args.hosts.iter().map(|h| h.trim().to_string()).filter(|h| !h.is_empty()).collect();
    if let Some(bad) = hosts.iter().find(|h| h.starts_with('-') || h.contains(char::is_whitespace)) {
        anyhow::bail!("--hosts {bad:?} is not a host; use user@host or a Host name from your ssh config");
    }
    if args.targets.is_some() {
        anyhow::bail!("--targets cannot be sent to --hosts yet; give the URLs (templates allowed) on the command line");
    }
    if let Some(cfg_file) = args.ssh_config.as_ref().filter(|p| !p.is_file()) {
        anyhow::bail!("--ssh-config {}: no such file", cfg_file.display());
    }
    let total = Total {
        connections: args.connections,
        max_connections: args.max_connections,
        rate: args.rate,
        requests: args.requests,
    };
    share::split(&total, hosts.len()).map_err(anyhow::Error::msg)?;
    let copy_binary = match args.copy_binary {
        true => {
            Some(std::env::current_exe().map_err(|e| anyhow::anyhow!("--copy-binary: cannot find this binary: {e}"))?)
        }
        false => None,
    };
    let plan = Plan {
        hosts: hosts.clone(),
        ssh: Ssh {
            config: args.ssh_config.clone(),
            connect_timeout: args.connect_timeout,
            remote_path: args.remote_path.clone().unwrap_or_else(|| "stampede".into()),
        },
        copy_binary,
        max_clock_offset: args.max_clock_offset,
        continue_on_failure: args.on_host_failure == OnHostFailure::Continue,
        total,
        threads: args.threads,
        args: forwarded(args, cfg)?,
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
        _ => 0,
    })
}

/// The `stampede load` flags every host gets unchanged (the URL last); the
/// split ones (connections, rate, requests) are added per host.
fn forwarded(args: &Args, cfg: &LoadConfig) -> anyhow::Result<Vec<String>> {
    let us = |d: Duration| format!("{}us", d.as_micros());
    let mut a: Vec<String> = Vec::new();
    let mut flag = |name: &str, value: String| {
        a.push(name.to_string());
        a.push(value);
    };
    if let Stop::Duration(d) = cfg.stop {
        flag("--duration", us(d));
        flag("--warmup", us(cfg.warmup));
    }
    flag("--method", cfg.method.clone());
    for (name, value) in &cfg.headers {
        flag("--header", format!("{name}: {value}"));
    }
    if !cfg.body.is_empty() {
        let body = String::from_utf8(cfg.body.clone()).map_err(|_| {
            anyhow::anyhow!("--body-file: with --hosts the body is sent on the command line and must be UTF-8 text")
        })?;
        flag("--body", body);
    }
    flag("--timeout", us(cfg.timeout));
    if cfg.rate.is_some() {
        flag(
            "--arrival",
            if matches!(cfg.arrival, stampede_load::Arrival::Poisson) { "poisson" } else { "uniform" }.into(),
        );
    }
    flag("--max-lag", us(cfg.max_lag));
    flag("--slow-log", cfg.slow_log.to_string());
    flag("--pipeline", cfg.pipeline.to_string());
    flag("--streams", cfg.streams.to_string());
    match cfg.engine {
        stampede_load::Engine::Auto => {}
        stampede_load::Engine::Epoll => flag("--engine", "epoll".into()),
        stampede_load::Engine::IoUring => flag("--engine", "io-uring".into()),
    }
    if let Some(ca) = &args.ca {
        flag("--ca", ca.display().to_string());
    }
    if !args.alpn.is_empty() {
        flag("--alpn", args.alpn.join(","));
    }
    if args.http2 {
        a.push("--http2".into());
    }
    if args.insecure {
        a.push("--insecure".into());
    }
    a.extend(args.urls.iter().cloned());
    Ok(a)
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
