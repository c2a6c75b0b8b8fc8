//! `stampede compare`: says which differences between two results files are
//! real. Pairs runs by app, knobs and profile, compares each metric's
//! per-iteration figures (one per server start) with a confidence interval
//! that holds the noise between starts, and exits 1 when a `--fail-if` rule
//! is broken, for CI. The statistics live in
//! `stampede_report::compare`.

use std::path::PathBuf;

use anyhow::{bail, Context};
use stampede_profile::{flame, Folded};
use stampede_report::compare::{self, FailIf};
use stampede_report::summary::ConfigKey;
use stampede_report::Results;

const EXAMPLES: &str = "Examples:
  stampede compare main/results.json branch/results.json
  stampede compare base.json candidate.json --fail-if 'rps<-5%'
      exit 1 if requests/s dropped by more than 5%, beyond noise
  stampede compare base.json candidate.json --fail-if 'rps<-5%,p99>+10%' --json
Metrics: rps, rps_per_core, p50, p99, cpu (server cores), rss (server max RSS).
A rule fails when the change is significant and its whole 95% confidence
interval is beyond the threshold. Each iteration is one server start and gives
one figure per metric; the interval holds the noise between starts (Welch's t
on the figures' logarithms), so a verdict needs 2 iterations a side where the
figure is valid, and more iterations give narrower intervals (docs/compare.md).";

#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The results.json to compare against (e.g. from the main branch)
    #[arg(value_name = "BASE")]
    pub base: PathBuf,

    /// The results.json under test
    #[arg(value_name = "CANDIDATE")]
    pub candidate: PathBuf,

    /// Print the comparison as JSON (stampede.compare/2) instead of a table
    #[arg(long)]
    pub json: bool,

    /// Exit 1 when a regression beyond this threshold is significant: METRIC<-N% or
    /// METRIC>+N%, e.g. 'rps<-5%' or 'p99>10%'; repeat or separate with commas
    #[arg(long = "fail-if", value_name = "RULE")]
    pub fail_if: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let mut rules = Vec::new();
    for text in &args.fail_if {
        rules.extend(FailIf::parse_list(text)?);
    }
    // Compare uses no slow request: it reads results.json alone.
    let base = stampede_report::schema::read_figures(&args.base)?;
    let candidate = stampede_report::schema::read_figures(&args.candidate)?;
    let comparison = compare::compare(&base, &candidate, &rules);
    if comparison.pairs.is_empty() {
        bail!(
            "no run in {} has the same app, knobs and profile as a run in {}; compare results of the same scenario",
            args.base.display(),
            args.candidate.display()
        );
    }
    let text = if args.json { compare::json(&comparison) } else { compare::human(&comparison) };
    use std::io::Write;
    std::io::stdout().write_all(text.as_bytes()).context("cannot write to stdout")?;
    for pair in &comparison.pairs {
        if let Some(path) = differential_flame(&args, &base, &candidate, &pair.key, &pair.label)? {
            eprintln!("differential flame graph ({}): {}", pair.label, path.display());
        }
    }
    Ok(if comparison.failed { 1 } else { 0 })
}

/// When both sides of a pair were run with `--profile`, a differential flame
/// graph of their first profiled runs (red: grew in the candidate; blue:
/// shrank), written beside the candidate's results.json.
fn differential_flame(
    args: &Args,
    base: &Results,
    candidate: &Results,
    key: &ConfigKey,
    label: &str,
) -> anyhow::Result<Option<PathBuf>> {
    let folded = |results: &Results, file: &std::path::Path| {
        results
            .runs
            .iter()
            .filter(|r| ConfigKey::of(r) == *key)
            .find_map(|r| Some(r.cpu_profile.as_ref()?.folded.clone()).filter(|f| !f.is_empty()))
            .map(|rel| file.parent().unwrap_or(std::path::Path::new(".")).join(rel))
    };
    let (Some(before), Some(after)) = (folded(base, &args.base), folded(candidate, &args.candidate)) else {
        return Ok(None);
    };
    let before = Folded::read(&before).with_context(|| format!("{}: profile of {label}", args.base.display()))?;
    let after = Folded::read(&after).with_context(|| format!("{}: profile of {label}", args.candidate.display()))?;
    let svg = flame::render_differential(&before, &after, &format!("{label}: base → candidate"))?;
    let stem: String = label.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let dir = args.candidate.parent().unwrap_or(std::path::Path::new("."));
    let path = dir.join(format!("flame-diff-{stem}.svg"));
    std::fs::write(&path, svg).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(Some(path))
}
