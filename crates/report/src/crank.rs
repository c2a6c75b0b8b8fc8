//! The load figures of crank's tables, declared once: which figures a run's
//! load shows, under which titles, in which number format. `stampede run`
//! prints them as a two-column terminal table per run (a row per figure) and
//! the HTML report as one row per run (a column per figure); both take the
//! titles and the text from here, so the two views cannot drift apart.

use stampede_schema::{ErrorCategory, LoadResult};

use crate::format::{count, num};

/// One figure: its title (with unit) and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub title: &'static str,
    pub text: String,
}

/// A run's load with what the run adds to it.
pub struct LoadRow<'a> {
    pub load: Option<&'a LoadResult>,
    /// The first successful request after start, milliseconds.
    pub first_request_ms: Option<f64>,
    /// `load.rps / server cores`.
    pub rps_per_server_core: Option<f64>,
    /// The load generator's cores, as the probe or the generator measured them.
    pub loadgen_cores: Option<f64>,
}

/// The titles, in table order.
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

/// The figures of one run, in [`TITLES`] order; "–" for what was not measured.
pub fn load_figures(row: &LoadRow<'_>) -> Vec<Figure> {
    let load = row.load;
    let ms = |pick: fn(&LoadResult) -> f64| num(load.map(|l| pick(l) / 1000.0));
    let codes = load
        .map(|l| l.status_codes.iter().map(|(code, n)| format!("{code}: {n}")).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    let texts = [
        num(row.first_request_ms),
        count(load.map(|l| l.requests)),
        num(load.map(|l| l.rps)),
        num(row.rps_per_server_core),
        ms(|l| l.latency_us.mean),
        ms(|l| l.latency_us.max),
        ms(|l| l.latency_us.p50),
        ms(|l| l.latency_us.p75),
        ms(|l| l.latency_us.p90),
        ms(|l| l.latency_us.p99),
        count(load.map(|l| ErrorCategory::BadResponses.count(&l.errors))),
        count(load.map(|l| ErrorCategory::SocketErrors.count(&l.errors))),
        num(load.map(|l| l.read_bytes_per_s() / (1024.0 * 1024.0))),
        num(row.loadgen_cores),
        codes,
    ];
    TITLES.iter().zip(texts).map(|(&title, text)| Figure { title, text }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_follow_the_titles_and_the_error_categories() {
        let mut load = LoadResult { requests: 123_456, rps: 91_006.2, ..Default::default() };
        load.errors.parse = 2;
        load.errors.status = 3;
        load.latency_us.p99 = 400.0;
        load.status_codes.insert("200".into(), 123_453);
        let row = LoadRow {
            load: Some(&load),
            first_request_ms: Some(1.5),
            rps_per_server_core: None,
            loadgen_cores: Some(0.5),
        };
        let figures = load_figures(&row);
        assert_eq!(figures.iter().map(|f| f.title).collect::<Vec<_>>(), TITLES);
        let text = |title: &str| figures.iter().find(|f| f.title == title).unwrap().text.clone();
        assert_eq!(text("Requests"), "123,456");
        assert_eq!(text("Mean RPS"), "91,006");
        assert_eq!(text("RPS per server core"), "–");
        assert_eq!(text("Latency 99th (ms)"), "0.4");
        assert_eq!(
            (text(ErrorCategory::SocketErrors.title()), text(ErrorCategory::BadResponses.title())),
            ("2".into(), "3".into())
        );
        assert_eq!(text("Status codes"), "200: 123453");
        let none = load_figures(&LoadRow {
            load: None,
            first_request_ms: None,
            rps_per_server_core: None,
            loadgen_cores: None,
        });
        assert!(none.iter().take(14).all(|f| f.text == "–"), "{none:?}");
    }
}
