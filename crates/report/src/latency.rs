//! Which loop a run's latency was measured in, and how the tables say so.
//! A run's latency comes from its open-loop `latency` phase when the profile
//! has one ([`Run::latency_load`]), measured from intended send times at an
//! offered rate; else from the measured load, which is closed loop unless
//! the profile gave a rate. Throughput and efficiency always come from the
//! measured load. The summary's latency columns are titled from here
//! (`open-loop p99 (ms) @70% of max`), so the terminal, Markdown, CSV and
//! HTML say the same thing about where a figure came from.

use stampede_schema::summary::SummaryRow;

use crate::schema::Run;

/// The rate the run's latency phase was offered, requests/s; `None` when
/// its latency comes from a closed loop.
pub fn offered_rps(run: &Run) -> Option<f64> {
    run.latency_load()?.open.as_ref().map(|o| o.target_rate).filter(|r| r.is_finite())
}

/// The offered rate as a share of the requests/s the closed loop measured
/// (the profile's `latency.fraction`); `None` without a latency phase.
pub fn fraction(run: &Run) -> Option<f64> {
    let offered = run.latency.as_ref()?.open.as_ref()?.target_rate;
    let closed = run.load.as_ref()?.rps;
    (closed > 0.0).then(|| offered / closed).filter(|f| f.is_finite())
}

/// The generator's p99 delay behind its schedule in the open loop, ms.
pub fn schedule_lag_p99_ms(run: &Run) -> Option<f64> {
    run.latency_load()?.open.as_ref().map(|o| o.schedule_lag_p99_us / 1000.0)
}

/// The latency columns' titles for a set of summary rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Titles {
    pub p50: String,
    pub p99: String,
    pub p999: String,
    /// Some row's latency is open loop: the offered rate and the schedule
    /// lag get columns of their own.
    pub open: bool,
}

/// Closed-loop rows keep the plain titles (`p99 latency (ms)`); when every
/// row with a latency is open loop the titles say so, with the common
/// fraction of the closed loop's requests/s when there is one
/// (`open-loop p99 (ms) @70% of max`); when some are and some are not, the
/// titles say the loop is given per row (by the offered-rate column).
pub fn titles(rows: &[SummaryRow]) -> Titles {
    let measured: Vec<&SummaryRow> = rows.iter().filter(|r| r.p99_ms.is_some()).collect();
    let open = measured.iter().filter(|r| r.latency_offered_rps.is_some()).count();
    let title = |p: &str| match open {
        0 => format!("{p} latency (ms)"),
        n if n < measured.len() => format!("{p} latency (ms), open loop where offered"),
        _ => {
            let percents: Vec<Option<i64>> =
                measured.iter().map(|r| r.latency_fraction.map(|f| (f * 100.0).round() as i64)).collect();
            match percents.first().copied().flatten() {
                Some(pct) if percents.iter().all(|p| *p == Some(pct)) => format!("open-loop {p} (ms) @{pct}% of max"),
                _ => format!("open-loop {p} (ms)"),
            }
        }
    };
    Titles { p50: title("p50"), p99: title("p99"), p999: title("p99.9"), open: open > 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(p99: f64, offered: Option<f64>, fraction: Option<f64>) -> SummaryRow {
        SummaryRow {
            p99_ms: Some(p99),
            latency_offered_rps: offered,
            latency_fraction: fraction,
            ..SummaryRow::default()
        }
    }

    #[test]
    fn titles_say_which_loop_and_at_what_share_of_max() {
        let closed = titles(&[row(1.0, None, None)]);
        assert_eq!((closed.p99.as_str(), closed.open), ("p99 latency (ms)", false));
        let open = titles(&[row(1.0, Some(700.0), Some(0.7)), row(2.0, Some(1400.0), Some(0.7001))]);
        assert_eq!(open.p99, "open-loop p99 (ms) @70% of max");
        assert_eq!(open.p999, "open-loop p99.9 (ms) @70% of max");
        assert!(open.open);
        let unequal = titles(&[row(1.0, Some(700.0), Some(0.7)), row(2.0, Some(500.0), Some(0.5))]);
        assert_eq!(unequal.p99, "open-loop p99 (ms)");
        let mixed = titles(&[row(1.0, Some(700.0), Some(0.7)), row(2.0, None, None)]);
        assert_eq!(mixed.p99, "p99 latency (ms), open loop where offered");
    }

    #[test]
    fn a_run_with_a_latency_phase_reads_its_rate_and_fraction() {
        let doc = r#"{"schema":"stampede.run/1","runs":[{"app":"go","load":{"rps":1000.0},
            "latency":{"rps":700.0,"target_rate":700.0,"achieved_rate":699.0,"service_time_us":{},
            "saturated":false,"saturation_reason":null,"max_schedule_lag_us":90.0,"schedule_lag_p99_us":40.0,
            "all_busy_s":0.0,"generator_busy":0.1}}]}"#;
        let results = crate::schema::parse(doc).unwrap();
        let run = &results.runs[0];
        assert_eq!(offered_rps(run), Some(700.0));
        assert_eq!(fraction(run), Some(0.7));
        assert_eq!(schedule_lag_p99_ms(run), Some(0.04));
        let closed = crate::schema::parse(r#"{"schema":"stampede.run/1","runs":[{"load":{"rps":1.0}}]}"#).unwrap();
        assert_eq!((offered_rps(&closed.runs[0]), fraction(&closed.runs[0])), (None, None));
    }
}
