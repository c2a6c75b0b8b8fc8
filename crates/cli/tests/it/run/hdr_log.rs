//! `stampede run` keeps the measured phase's HdrHistogram interval log beside
//! results.json, names it in the run's record, and `stampede report` draws
//! latency percentiles over time from it.

use stampede_testkit::run;

use run::{assert_nothing_left, text, Scratch};

#[test]
fn each_run_keeps_its_interval_log_and_the_report_plots_it() {
    let s = Scratch::new("hlog");
    let app = s.app("alpha", "");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\niterations = 2\n[[profiles]]\npath = \"/plaintext\"\nconnections = 2\nduration = \"2s\"\n",
        app.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let doc = s.results().expect("results.json");
    let dir = std::fs::read_dir(s.out())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.join("results.json").is_file())
        .unwrap();
    let mut names = Vec::new();
    for run in doc["runs"].as_array().unwrap() {
        let name = run["hdr_log"].as_str().expect("hdr_log named in the run").to_string();
        let log = std::fs::read_to_string(dir.join(&name)).expect("the log is beside results.json");
        assert!(log.contains("#[StartTime:") && log.lines().any(|l| l.starts_with("0.000,1.000,")), "{log}");
        names.push(name);
    }
    names.dedup();
    assert_eq!(names.len(), 2, "one log per run: {names:?}");
    let html = dir.join("report.html");
    let rep = run::stampede()
        .args(["report", dir.join("results.json").to_str().unwrap(), "-o", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(rep.status.success(), "{}", text(&rep.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    for index in 0..2 {
        let start = page.find(&format!(r#"id="chart-intervals-{index}""#)).expect("an interval chart per run");
        let svg = &page[start..start + page[start..].find("</svg>").unwrap()];
        assert_eq!(svg.matches("<path").count(), 4, "p50, p99, p99.9 and max");
    }
    assert_nothing_left(&s);
}
