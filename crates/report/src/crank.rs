//! Crank's tables, declared once: which figures a run shows about the
//! application (its CPU, memory, threads, build and start time) and about
//! the load (requests, RPS, latency, errors), under which titles, in which
//! number format. `stampede run` prints them as two two-column terminal
//! tables per run (a row per figure) and the HTML report as one row per run
//! (a column per figure); both take the titles and the text from here, so
//! the two views cannot drift apart.

use stampede_schema::run::RunRecord;
use stampede_schema::ErrorCategory;

use crate::format::{count, num};
use crate::summary::Metric;

/// One figure: its title (with unit) and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub title: &'static str,
    pub text: String,
}

fn figures(titles: &[&'static str], texts: Vec<String>) -> Vec<Figure> {
    titles.iter().zip(texts).map(|(&title, text)| Figure { title, text }).collect()
}

/// The application titles, in table order.
pub const APPLICATION_TITLES: [&str; 10] = [
    "CPU usage (%)",
    "CPU usage, max (%)",
    "Cores usage",
    "Working set (MiB)",
    "Threads (max)",
    "Context switches (vol / invol)",
    "Run-queue wait (ms)",
    "Build time (ms)",
    "Start time (ms)",
    "Runtime version",
];

/// The application figures of one run; `cores` is the machine's (for the
/// CPU percentage), `runtime_version` the app's `version` output.
pub fn application_figures(run: &RunRecord, runtime_version: &str, cores: usize) -> Vec<Figure> {
    let s = &run.server;
    let texts = vec![
        num(Some(s.cpu_cores_avg / cores.max(1) as f64 * 100.0)),
        num(Some(s.cpu_pct_max)),
        num(Some(s.cpu_cores_avg)),
        num(Some(s.rss_max_mib)),
        count(Some(s.threads_max)),
        format!("{} / {}", count(Some(s.ctx_voluntary)), count(Some(s.ctx_involuntary))),
        num(Some(s.runqueue_wait_ms)),
        num(Some(run.build_time_ms)),
        num(Some(run.start_time_ms)),
        if runtime_version.is_empty() { "–".to_owned() } else { runtime_version.to_owned() },
    ];
    let mut all = figures(&APPLICATION_TITLES, texts);
    // With a scenario's [database], its own figures follow the server's.
    if let Some(db) = &run.database {
        let texts = vec![num(db.cpu_cores_avg), num(db.rss_max_mib), num(Some(db.rps_per_core))];
        all.extend(figures(&DATABASE_TITLES, texts));
    }
    all
}

/// The database's application figures (runs with a scenario `[database]`).
pub const DATABASE_TITLES: [&str; 3] =
    ["Database cores usage", "Database working set (MiB)", "RPS per core (server + database)"];

/// The load titles, in table order.
pub const TITLES: [&str; 15] = [
    "First request (ms)",
    "Requests",
    "Mean RPS",
    "RPS per server core",
    "Mean latency (ms)",
    "Max latency (ms)",
    "Latency 50th (ms)",
    "Latency 75th (ms)",
    "Latency 90th (ms)",
    "Latency 99th (ms)",
    "Bad responses",
    "Socket errors",
    "Read throughput (MiB/s)",
    "Load generator CPU (cores)",
    "Status codes",
];

/// The load figures of one run, in [`TITLES`] order; "–" for what was not
/// measured (everything but the first request when the run has no load).
pub fn load_figures(run: &RunRecord) -> Vec<Figure> {
    let load = run.load.as_ref();
    let ms = |pick: fn(&stampede_schema::LoadResult) -> f64| num(load.map(|l| pick(l) / 1000.0));
    let codes = load
        .map(|l| l.status_codes.iter().map(|(code, n)| format!("{code}: {n}")).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    let texts = vec![
        num(Some(run.first_request_ms).filter(|ms| *ms > 0.0)),
        count(load.map(|l| l.requests)),
        num(load.map(|l| l.rps)),
        num(load.and(run.rps_per_core())),
        ms(|l| l.latency_us.mean),
        ms(|l| l.latency_us.max),
        ms(|l| l.latency_us.p50),
        ms(|l| l.latency_us.p75),
        ms(|l| l.latency_us.p90),
        ms(|l| l.latency_us.p99),
        count(load.map(|l| ErrorCategory::BadResponses.count(&l.errors))),
        count(load.map(|l| ErrorCategory::SocketErrors.count(&l.errors))),
        num(load.map(|l| l.read_bytes_per_s() / (1024.0 * 1024.0))),
        num(load.and(Metric::LoadgenCpu.of(run))),
        codes,
    ];
    figures(&TITLES, texts)
}

/// The latency phase's titles (runs whose profile has `latency`: open loop
/// at a share of the measured load's requests/s, latency from intended send
/// times).
pub const LATENCY_TITLES: [&str; 8] = [
    "Offered rate (req/s)",
    "Share of the measured RPS (%)",
    "Achieved rate (req/s)",
    "Latency 50th (ms)",
    "Latency 99th (ms)",
    "Latency 99.9th (ms)",
    "Service time 99th (ms)",
    "Schedule lag 99th (ms)",
];

/// The figures of the run's open-loop latency phase, in [`LATENCY_TITLES`]
/// order; `None` when the run has none.
pub fn latency_figures(run: &RunRecord) -> Option<Vec<Figure>> {
    let latency = run.latency.as_ref()?;
    let open = latency.open.as_ref();
    let ms = |us: Option<f64>| num(us.map(|us| us / 1000.0));
    let texts = vec![
        num(open.map(|o| o.target_rate)),
        num(crate::latency::fraction(run).map(|f| f * 100.0)),
        num(open.map(|o| o.achieved_rate)),
        ms(Some(latency.latency_us.p50)),
        ms(Some(latency.latency_us.p99)),
        ms(Some(latency.latency_us.p999)),
        ms(open.map(|o| o.service_time_us.p99)),
        ms(open.map(|o| o.schedule_lag_p99_us)),
    ];
    Some(figures(&LATENCY_TITLES, texts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_schema::LoadResult;

    #[test]
    fn load_figures_follow_the_titles_and_the_error_categories() {
        let mut load = LoadResult { requests: 123_456, rps: 91_006.2, ..Default::default() };
        load.errors.parse = 2;
        load.errors.status = 3;
        load.latency_us.p99 = 400.0;
        load.loadgen.cpu_cores = 0.5;
        load.status_codes.insert("200".into(), 123_453);
        let mut run = RunRecord { first_request_ms: 1.5, load: Some(load), ..RunRecord::default() };
        let figures = load_figures(&run);
        assert_eq!(figures.iter().map(|f| f.title).collect::<Vec<_>>(), TITLES);
        let text = |figures: &[Figure], title: &str| figures.iter().find(|f| f.title == title).unwrap().text.clone();
        assert_eq!(text(&figures, "Requests"), "123,456");
        assert_eq!(text(&figures, "Mean RPS"), "91,006");
        assert_eq!(text(&figures, "RPS per server core"), "–", "no server CPU measured");
        assert_eq!(text(&figures, "Latency 99th (ms)"), "0.4");
        assert_eq!(text(&figures, "Load generator CPU (cores)"), "0.5");
        assert_eq!(
            (text(&figures, ErrorCategory::SocketErrors.title()), text(&figures, ErrorCategory::BadResponses.title())),
            ("2".into(), "3".into())
        );
        assert_eq!(text(&figures, "Status codes"), "200: 123453");
        run.server.cpu_cores_avg = 0.5;
        assert_eq!(text(&load_figures(&run), "RPS per server core"), "182,012", "recomputed from the server's CPU");
        run.load = None;
        let none = load_figures(&run);
        assert_eq!(none[0].text, "1.5");
        assert!(none.iter().skip(1).take(13).all(|f| f.text == "–"), "{none:?}");
    }

    #[test]
    fn latency_figures_come_from_the_latency_phase() {
        let closed = LoadResult { rps: 1000.0, ..Default::default() };
        let mut run = RunRecord { load: Some(closed), ..RunRecord::default() };
        assert_eq!(latency_figures(&run), None, "no latency phase, no table");
        let mut open: LoadResult = serde_json::from_str(
            r#"{"rps":699.0,"target_rate":700.0,"achieved_rate":699.0,"service_time_us":{"p99":800.0},
                "saturated":false,"saturation_reason":null,"max_schedule_lag_us":90.0,
                "schedule_lag_p99_us":40.0,"all_busy_s":0.0,"generator_busy":0.1}"#,
        )
        .unwrap();
        open.latency_us.p99 = 90_000.0;
        run.latency = Some(open);
        let figures = latency_figures(&run).unwrap();
        assert_eq!(figures.iter().map(|f| f.title).collect::<Vec<_>>(), LATENCY_TITLES);
        let text = |title: &str| figures.iter().find(|f| f.title == title).unwrap().text.clone();
        assert_eq!(text("Offered rate (req/s)"), "700");
        assert_eq!(text("Share of the measured RPS (%)"), "70");
        assert_eq!(text("Latency 99th (ms)"), "90");
        assert_eq!(text("Service time 99th (ms)"), "0.8");
        assert_eq!(text("Schedule lag 99th (ms)"), "0.04");
    }

    #[test]
    fn application_figures_follow_their_titles() {
        let mut run = RunRecord { build_time_ms: 1234.0, ..RunRecord::default() };
        run.server.cpu_cores_avg = 1.0;
        run.server.ctx_voluntary = 12_000;
        let figures = application_figures(&run, "go1.22", 4);
        assert_eq!(figures.iter().map(|f| f.title).collect::<Vec<_>>(), APPLICATION_TITLES);
        let text = |title: &str| figures.iter().find(|f| f.title == title).unwrap().text.clone();
        assert_eq!(text("CPU usage (%)"), "25");
        assert_eq!(text("Context switches (vol / invol)"), "12,000 / 0");
        assert_eq!(text("Build time (ms)"), "1,234");
        assert_eq!(text("Runtime version"), "go1.22");
        assert_eq!(application_figures(&run, "", 4)[9].text, "–");
    }
}
