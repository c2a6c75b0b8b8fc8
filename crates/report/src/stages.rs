//! Per-stage results of ramped loads (`--stages`, a scenario profile with
//! `stages`): what each stage asked for and what it got, from the `stages`
//! array of a run's `stampede.load/1` document. Laid out once as a
//! [`Table`] for the HTML report, the Markdown export and `stampede run`'s
//! terminal, like the per-target table; shown only for staged runs.

use stampede_schema::stages::Ramp;

use crate::schema::Run;
use crate::table::{Cell, Column, Row, Table};

/// Whether a run's load was ramped through stages.
pub fn has_stages(run: &Run) -> bool {
    run.load.as_ref().is_some_and(|l| !l.stages.is_empty())
}

/// One row per stage of every staged run; `run_columns` adds the app,
/// knobs, profile and iteration in front (the report lists every run in one
/// table, the terminal one run at a time).
pub fn table<'a>(runs: impl IntoIterator<Item = &'a Run>, run_columns: bool) -> Table {
    let column = Column::new;
    let mut columns = Vec::new();
    if run_columns {
        columns.extend(crate::table::run_columns());
    }
    columns.extend([
        column("stage", "stage", true),
        column("start (s)", "start_s", true),
        column("length (s)", "duration_s", true),
        column("ramps", "ramp", false),
        column("from", "from", true),
        column("to", "to", true),
        column("target requests/s", "target_rate", true),
        column("achieved requests/s", "achieved_rate", true),
        column("requests", "requests", true),
    ]);
    columns.extend(crate::table::error_columns());
    columns.extend([
        column("p50 latency (ms)", "p50_ms", true),
        column("p99 latency (ms)", "p99_ms", true),
        column("max latency (ms)", "max_ms", true),
    ]);
    let mut rows = Vec::new();
    for run in runs.into_iter().filter(|r| has_stages(r)) {
        for (i, stage) in run.load.iter().flat_map(|l| &l.stages).enumerate() {
            let mut cells = Vec::new();
            if run_columns {
                cells.extend(crate::table::run_cells(run));
            }
            let ramp = match stage.ramp {
                Ramp::Rate => "rate",
                Ramp::Connections => "connections",
            };
            cells.extend([
                Cell::count(i as u64 + 1),
                Cell::figure(Some(stage.start_s)),
                Cell::figure(Some(stage.duration_s)),
                Cell::text(ramp.to_owned()),
                Cell::figure(Some(stage.from)),
                Cell::figure(Some(stage.to)),
                Cell::figure(stage.target_rate()),
                Cell::figure(Some(stage.achieved_rate)),
                Cell::count(stage.requests),
            ]);
            cells.extend(crate::table::error_cells(&stage.errors));
            let ms = |us: f64| Cell::figure(Some(us / 1000.0));
            let l = &stage.latency_us;
            cells.extend([ms(l.p50), ms(l.p99), ms(l.max)]);
            rows.push(Row { cells, invalid: !run.is_valid() });
        }
    }
    Table { columns, rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_stage_of_staged_runs_only() {
        let results = crate::schema::parse(
            r#"{"schema":"stampede.run/1","runs":[
              {"app":"go","profile":"ramp","iteration":1,"load":{"rps":300.0,"stages":[
                {"ramp":"rate","start_s":0,"duration_s":2,"from":0,"to":200,"requests":200,
                 "errors":{"timeout":1},"achieved_rate":100,"latency_us":{"p50":1000,"p99":4000,"max":9000}},
                {"ramp":"rate","start_s":2,"duration_s":1,"from":200,"to":400,"requests":300,
                 "achieved_rate":300,"latency_us":{"p50":1500,"p99":5000,"max":7000}}]}},
              {"app":"go","profile":"flat","iteration":1,"load":{"rps":100.0}}]}"#,
        )
        .unwrap();
        assert!(has_stages(&results.runs[0]) && !has_stages(&results.runs[1]));
        let t = table(&results.runs, true);
        assert_eq!(t.rows.len(), 2);
        let text = |row: usize, key: &str| {
            let i = t.columns.iter().position(|c| c.key == key).unwrap();
            t.rows[row].cells[i].text.clone()
        };
        assert_eq!((text(0, "stage"), text(1, "stage")), ("1".to_owned(), "2".to_owned()));
        assert_eq!((text(0, "target_rate"), text(1, "target_rate")), ("100".to_owned(), "300".to_owned()));
        assert_eq!(text(0, "socket_errors"), "1", "a timeout is a socket error");
        assert_eq!(text(1, "p99_ms"), "5");
    }
}
