//! Per-target results of request mixes (`stampede load --targets`, URL
//! templates, a scenario profile with `targets`): what each target of a run
//! got, from the `targets` array of its `stampede.load/1` document. Laid out
//! once as a [`Table`] for the HTML report, the Markdown export and
//! `stampede run`'s terminal; shown only for runs with more than one target.
//! Target names come from the user's targets file: every view escapes them.

use crate::schema::Run;
use crate::table::{Cell, Column, Row, Table};

/// Whether a run's load had several targets.
pub fn has_mix(run: &Run) -> bool {
    run.load.as_ref().is_some_and(|l| l.targets.len() > 1)
}

/// One row per target of every run with several targets; `run_columns`
/// adds the app, knobs, profile and iteration in front (the report lists
/// every run in one table, the terminal one run at a time).
pub fn table<'a>(runs: impl IntoIterator<Item = &'a Run>, run_columns: bool) -> Table {
    let column = Column::new;
    let mut columns = Vec::new();
    if run_columns {
        columns.extend(crate::table::run_columns());
    }
    columns.extend([
        column("target", "target", false),
        column("weight", "weight", true),
        column("requests", "requests", true),
    ]);
    columns.extend(crate::table::error_columns());
    columns.extend([
        column("p50 latency (ms)", "p50_ms", true),
        column("p90 latency (ms)", "p90_ms", true),
        column("p99 latency (ms)", "p99_ms", true),
        column("max latency (ms)", "max_ms", true),
    ]);
    let mut rows = Vec::new();
    for run in runs.into_iter().filter(|r| has_mix(r)) {
        for target in run.load.iter().flat_map(|l| &l.targets) {
            let mut cells = Vec::new();
            if run_columns {
                cells.extend(crate::table::run_cells(run));
            }
            cells.extend([
                Cell::text(target.name.clone()),
                Cell::count(target.weight.into()),
                Cell::count(target.requests),
            ]);
            cells.extend(crate::table::error_cells(&target.errors));
            let ms = |us: f64| Cell::figure(Some(us / 1000.0));
            let l = &target.latency_us;
            cells.extend([ms(l.p50), ms(l.p90), ms(l.p99), ms(l.max)]);
            rows.push(Row { cells, invalid: !run.is_valid() });
        }
    }
    Table { columns, rows }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use stampede_schema::ErrorCategory;

    /// A results document with one two-target run (one target's path
    /// carries markup) and one plain run.
    pub fn mixed_results() -> crate::schema::Results {
        crate::schema::parse(
            r#"{"schema":"stampede.run/1","runs":[
              {"app":"go","profile":"fib","iteration":1,"load":{"rps":10.0,"targets":[
                {"name":"GET /api/fib/{1..100}","weight":3,"requests":300,"errors":{"parse":2,"status":1},
                 "latency_us":{"p50":1500,"p90":2500,"p99":4000,"max":9000}},
                {"name":"GET /<script>alert(1)</script>","weight":1,"requests":100,"errors":{},
                 "latency_us":{"p50":100,"p99":200}}]}},
              {"app":"go","profile":"plain","iteration":1,"load":{"rps":10.0,"targets":[
                {"name":"GET /only","weight":1,"requests":5,"errors":{},"latency_us":{}}]}}]}"#,
        )
        .unwrap()
    }

    #[test]
    fn each_target_of_a_mixed_run_gets_a_row_and_single_target_runs_none() {
        let results = mixed_results();
        let table = table(&results.runs, true);
        assert_eq!(table.rows.len(), 2, "the single-target run adds no row");
        let cell = |row, title: &str| table.cell(row, title).unwrap().text.clone();
        assert_eq!(cell(0, "target"), "GET /api/fib/{1..100}");
        assert_eq!((cell(0, "weight"), cell(0, "requests")), ("3".into(), "300".into()));
        assert_eq!(cell(0, ErrorCategory::SocketErrors.title()), "2");
        assert_eq!(cell(0, ErrorCategory::BadResponses.title()), "1");
        assert_eq!((cell(0, "p50 latency (ms)"), cell(0, "p99 latency (ms)")), ("1.5".into(), "4".into()));
        assert_eq!(cell(1, "target"), "GET /<script>alert(1)</script>", "the model keeps the text; views escape it");
        assert_eq!(super::table(&results.runs, false).columns[0].title, "target");
        assert!(!has_mix(&results.runs[1]));
    }
}
