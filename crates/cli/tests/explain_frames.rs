//! `stampede explain` lists the slow-window profile's over-represented
//! frames: the cause server in mode `spin` (support_explain/cause_server.rs)
//! runs `stampede_distinctive_spin` on the CPU for 20 ms in one request of
//! 40 (and 0.5 ms of ordinary work in every request), so the requests that ran it, and those queued behind them on their
//! connection, are the slow ones. Under `stampede run --profile` that
//! function must be the most over-represented frame of the slow windows
//! (`cpu_profile.slow_window.over_represented` in results.json) and appear in
//! explain's frames, text and `--json`, with its whole-run share as the
//! by-chance level; and its bursts on the CPU must explain most slow
//! requests one by one (cause `function`). Needs perf: skipped with a printed reason without it.

mod support_causes;

use support_causes::{build_server, run_and_explain, Scratch};

const SPIN: &str = "stampede_distinctive_spin";

fn perf_works() -> bool {
    let ok = std::process::Command::new("perf")
        .args(["stat", "-e", "task-clock", "true"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("SKIP a_function_that_runs_in_the_slow_requests_is_their_top_frame: perf is missing or refused");
    }
    ok
}

#[test]
fn a_function_that_runs_in_the_slow_requests_is_their_top_frame() {
    if !perf_works() {
        return;
    }
    let s = Scratch::new("explain-frames");
    let Some(bin) = build_server(&s.dir) else { return };
    let e = run_and_explain(
        &s,
        &bin,
        "spin",
        "rate = 200\nconnections = 4\nslow_log = 100",
        &["--profile", "--profile-frequency", "499"],
    );
    let window = &e.run()["cpu_profile"]["slow_window"];
    let top = &window["over_represented"][0];
    assert!(top["frame"].as_str().unwrap().contains(SPIN), "top over-represented frame: {window}");
    let frames = e.explain["frames"].as_array().expect("explain --json has frames");
    let spin = frames
        .iter()
        .find(|f| f["frame"].as_str().unwrap().contains(SPIN))
        .unwrap_or_else(|| panic!("{SPIN} not among explain's frames: {frames:?}"));
    assert!(spin["slow_pct"].as_f64().unwrap() > spin["run_pct"].as_f64().unwrap(), "{spin}");
    assert!(frames[0]["frame"].as_str().unwrap().contains(SPIN), "first of explain's frames: {frames:?}");
    // The frame is a cause: its bursts on the CPU explain, request by
    // request, most of the slow requests, far above the same requests at
    // other times, and the short answer names it.
    assert!(top["bursts"].as_array().is_some_and(|b| !b.is_empty()), "the top frame's bursts are kept: {top}");
    let (share, chance) = (e.share("function"), e.chance("function"));
    assert!(share >= 0.5, "most slow requests ran or queued behind {SPIN}: {}", e.human);
    assert!(share >= chance + 0.2, "far above chance ({chance}): {}", e.human);
    assert!(e.human.contains(&format!("{SPIN} on the CPU")), "{}", e.human);
}
