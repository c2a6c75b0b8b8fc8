//! `stampede report`: renders a results file as a self-contained HTML report,
//! or exports its summary as Markdown, CSV or JSON. The work is done by the
//! `stampede-report` crate; this module maps flags to it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use stampede_report::Format;

const EXAMPLES: &str = "Examples:
  stampede report results/2026-11-21T10-00-00/results.json
      writes report.html beside results.json
  stampede report results.json -o /tmp/report.html
  stampede report results.json --format md > summary.md
  stampede report results.json --format csv -o summary.csv
  stampede report results.json --format openmetrics > results.prom
      every run's figures as OpenMetrics text, labelled by app, knobs,
      profile and iteration (for a Pushgateway or a textfile collector)
  stampede report --demo -o demo.html
      renders the synthetic demo results shipped with stampede";

#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The results.json written by `stampede run` (a `stampede load --json` file also works)
    #[arg(value_name = "RESULTS", required_unless_present = "demo", conflicts_with = "demo")]
    pub results: Option<PathBuf>,

    /// Where to write, or `-` for stdout [default: report.html beside RESULTS for html
    /// (stampede-demo-report.html with --demo), stdout for md, csv and json]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Output format: html (the full report), md, csv or json (the summary: medians per app,
    /// knobs and profile), or openmetrics (every run, OpenMetrics text)
    #[arg(long, value_name = "FORMAT", default_value = "html",
          value_parser = ["html", "md", "markdown", "csv", "json", "openmetrics"])]
    pub format: String,

    /// Render the small synthetic results file shipped with stampede, to see a report
    /// without running a benchmark
    #[arg(long)]
    pub demo: bool,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let format = Format::from_name(&args.format)
        .with_context(|| format!("--format {:?}: use html, md, csv, json or openmetrics", args.format))?;
    let results = match &args.results {
        Some(path) => stampede_report::schema::read(path)?,
        None => stampede_report::schema::parse(stampede_report::DEMO_RESULTS)
            .context("the built-in demo results are broken; please report this bug")?,
    };
    let bytes = format.exporter().export(&results)?;
    let output = match (&args.output, format, &args.results) {
        (Some(path), _, _) => path.clone(),
        (None, Format::Html, Some(results)) => beside(results, "report.html"),
        (None, Format::Html, None) => PathBuf::from("stampede-demo-report.html"),
        (None, _, _) => PathBuf::from("-"),
    };
    if output == Path::new("-") {
        std::io::stdout().write_all(&bytes).context("cannot write to stdout")?;
    } else {
        stampede_report::write_bytes(&output, &bytes)?;
        eprintln!("stampede: wrote {}", output.display());
    }
    Ok(0)
}

/// `name` in the directory of `file`.
fn beside(file: &Path, name: &str) -> PathBuf {
    match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(name),
        _ => PathBuf::from(name),
    }
}
