//! `stampede profile`: samples a running process tree with `perf` for a while
//! and writes an interactive flame graph, the folded stacks and a summary,
//! then prints the top functions. It is useful on its own (point it at any
//! server while you load it) and is the same machinery `stampede run
//! --profile` uses. `--diff` renders a differential flame graph of two folded
//! files instead. The work is done by `stampede_profile`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use stampede_load::units::parse_duration;
use stampede_profile::{flame, top, Folded, Profile, Recorder, DEFAULT_FREQUENCY_HZ, TOP_FRAMES};

const EXAMPLES: &str = "Examples:
  stampede profile --pid 4242 --duration 5s --out /tmp/prof
      while something loads the server: writes flame-4242.svg, stacks-4242.folded
      and profile.json (stampede.profile/1) and prints the top 20 functions
  stampede profile --pid $(pgrep -o node) -d 10s --out prof --frequency 499 --json
  stampede profile --diff before/stacks-1.folded after/stacks-2.folded --out diff
      writes flame-diff.svg: red frames grew, blue frames shrank
Needs perf (Debian: apt-get install linux-perf) and, when not root,
kernel.perf_event_paranoid <= 2. JIT runtimes need flags to name their frames:
see docs/profile.md.";

#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Root of the process tree to sample (it and every descendant)
    #[arg(long, value_name = "PID", required_unless_present = "diff", conflicts_with = "diff")]
    pub pid: Option<u32>,

    /// How long to sample (e.g. 5s, 500ms)
    #[arg(short = 'd', long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    pub duration: Duration,

    /// Samples per second per thread
    #[arg(short = 'F', long, value_name = "HZ", default_value_t = DEFAULT_FREQUENCY_HZ)]
    pub frequency: u32,

    /// Folder for the flame graph, folded stacks and profile.json (created if missing)
    #[arg(short = 'o', long, value_name = "DIR")]
    pub out: PathBuf,

    /// Print profile.json on stdout instead of the top-functions table
    #[arg(long)]
    pub json: bool,

    /// Render a differential flame graph of two folded files instead of profiling
    #[arg(long, num_args = 2, value_names = ["BEFORE", "AFTER"])]
    pub diff: Option<Vec<PathBuf>>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("--out {}: cannot create the folder", args.out.display()))?;
    if let Some(files) = &args.diff {
        return diff(&files[0], &files[1], &args.out);
    }
    let pid = args.pid.expect("clap requires --pid without --diff");
    if args.duration.is_zero() {
        bail!("--duration 0s: sample for at least a few hundred milliseconds (e.g. 5s)");
    }
    let recorder = Recorder::start(pid, args.frequency)?;
    eprintln!(
        "stampede: sampling pid {pid} and its children ({}) for {:?} at {} Hz",
        recorder.pids.len(),
        args.duration,
        args.frequency
    );
    stampede_profile::wait_while_alive(pid, args.duration);
    let profile = Profile::from_recording(recorder.stop()?)?;
    let title = format!("pid {pid} ({})", stampede_profile::tree::name(pid).unwrap_or_else(|| "exited".into()));
    let summary = profile.write(&args.out, &pid.to_string(), &title)?;
    let json = serde_json::to_string_pretty(&summary)? + "\n";
    let json_path = args.out.join("profile.json");
    std::fs::write(&json_path, &json).with_context(|| format!("{}: cannot write", json_path.display()))?;
    for note in &summary.notes {
        eprintln!("stampede: note: {note}");
    }
    let text = if args.json { json } else { human(&profile, &args.out, &summary.flame_svg) };
    std::io::stdout().write_all(text.as_bytes()).context("cannot write to stdout")?;
    Ok(0)
}

fn human(profile: &Profile, out: &Path, svg: &str) -> String {
    let mut text = top::render_table(&profile.top(), profile.folded.samples(), 100);
    if profile.top().len() == TOP_FRAMES {
        text.push_str(&format!("(top {TOP_FRAMES} by self samples)\n"));
    }
    text.push_str(&format!("flame graph: {}\n", out.join(svg).display()));
    text
}

fn diff(before: &Path, after: &Path, out: &Path) -> anyhow::Result<i32> {
    let before = Folded::read(before).context("--diff BEFORE")?;
    let after = Folded::read(after).context("--diff AFTER")?;
    let svg = flame::render_differential(&before, &after, "differential flame graph")?;
    let path = out.join("flame-diff.svg");
    std::fs::write(&path, svg).with_context(|| format!("{}: cannot write", path.display()))?;
    println!("differential flame graph: {}", path.display());
    Ok(0)
}
