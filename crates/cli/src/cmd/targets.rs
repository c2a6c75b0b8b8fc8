//! The request mix of `stampede load`: several URLs on the command line, URL
//! templates, or a targets file, turned into the engine's `Mix`. Glue only:
//! the format and the expansion are `stampede_load::{mix, targets_file}`.

use super::load::{Args, OrderArg};
use stampede_load::mix::{self, Mix, Order, TargetSpec};
use stampede_load::{targets_file, Target};
use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

/// The mix the flags ask for, or `None` for one plain URL. `method`,
/// `headers` and `body` are the flags': they make the targets of the URLs
/// on the command line, and `-H` headers go on every target of a file too.
pub fn mix(
    args: &Args,
    method: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> anyhow::Result<Option<(Target, Mix)>> {
    let templated = args.urls.iter().any(|u| u.contains('{'));
    if args.targets.is_none() && args.urls.len() == 1 && !templated {
        return Ok(None);
    }
    let mut specs: Vec<TargetSpec> = args
        .urls
        .iter()
        .map(|url| TargetSpec {
            method: method.to_string(),
            url: url.clone(),
            headers: headers.to_vec(),
            body: body.to_vec(),
            weight: 1,
        })
        .collect();
    let mut origins: Vec<String> = (1..=specs.len()).map(|n| format!("URL argument {n}")).collect();
    if let Some(path) = &args.targets {
        let (text, origin, dir) = if path.as_os_str() == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| anyhow::anyhow!("--targets -: cannot read stdin: {e}"))?;
            (text, "--targets -".to_string(), std::env::current_dir()?)
        } else {
            let shown = path.display().to_string();
            let text = stampede_load::config::limits::read_capped(path, 16 << 20)
                .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string()))
                .map_err(|e| anyhow::anyhow!("--targets {shown}: {e}"))?;
            let dir = path.parent().map(|p| p.to_path_buf()).unwrap_or_default();
            (text, shown, dir)
        };
        for parsed in targets_file::parse(&text, &origin, &dir).map_err(anyhow::Error::msg)? {
            let mut spec = parsed.spec;
            spec.headers.extend(headers.iter().cloned());
            specs.push(spec);
            origins.push(format!("{origin}:{}", parsed.line));
        }
    }
    let order = match args.order {
        OrderArg::RoundRobin => Order::RoundRobin,
        OrderArg::Random => Order::Random,
    };
    let seed =
        args.seed.unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64));
    let (target, mix) = mix::build(specs, order, seed).map_err(|(i, why)| anyhow::anyhow!("{}: {why}", origins[i]))?;
    Ok(Some((target, mix)))
}
