//! The terminal's microstates table after each run: the server's thread
//! groups (`netty-worker-*`), busiest first (as `prstat` sorts), with the `prstat -mLc` shares
//! of their thread-seconds. Groups rather than threads keep it short for a
//! runtime with a hundred workers; results.json and the report have every thread.

use comfy_table::presets::ASCII_MARKDOWN;
use comfy_table::{CellAlignment, Table};
use stampede_schema::microstates::Microstates;

/// Rows shown: the busiest groups.
const TOP_GROUPS: usize = 8;

pub fn table(m: &Microstates) -> String {
    if m.groups.is_empty() {
        return String::new();
    }
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(vec!["threads", "n", "USR %", "SYS %", "LAT %", "LCK %", "IO %", "SLP %"]);
    for g in m.groups.iter().take(TOP_GROUPS) {
        let s = &g.shares;
        let pct = |x: f64| format!("{x:.1}");
        t.add_row(vec![
            g.group.clone(),
            g.threads.to_string(),
            pct(s.usr_pct),
            pct(s.sys_pct),
            pct(s.lat_pct),
            pct(s.lck_pct),
            pct(s.io_pct),
            pct(s.slp_pct),
        ]);
    }
    for i in 1..8 {
        if let Some(col) = t.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    let more = m.groups.len().saturating_sub(TOP_GROUPS);
    let tail = if more > 0 { format!(" ({more} more groups in results.json)") } else { String::new() };
    format!("{t}\nmicrostates: share of each thread group's wall time, sampled every {:.0} ms{tail}\n", m.interval_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_schema::microstates::{StateSeconds, ThreadStates};

    #[test]
    /// Regression: idle JVM threads parked on futexes (LCK 100%) filled the
    /// table and hid the Netty event loops that served the requests.
    fn groups_are_listed_busiest_first_and_capped() {
        let mut threads: Vec<ThreadStates> = (0..12)
            .map(|i| ThreadStates {
                tid: i,
                name: format!("{}-{i}", ["pool", "gc", "io"][i as usize % 3]) + &"x".repeat(i as usize),
                seconds: StateSeconds { lck_s: 9.0, slp_s: i as f64, ..StateSeconds::default() },
                ..ThreadStates::default()
            })
            .collect();
        threads.push(ThreadStates {
            tid: 99,
            name: "zz-worker-1".into(),
            seconds: StateSeconds { usr_s: 1.0, lat_s: 1.0, lck_s: 2.0, ..StateSeconds::default() },
            ..ThreadStates::default()
        });
        let m = Microstates::from_threads(100.0, threads, Vec::new(), Vec::new());
        let text = table(&m);
        assert!(text.contains("LCK %") && text.contains("every 100 ms"), "{text}");
        assert!(text.contains("more groups in results.json"), "{text}");
        let first = text.lines().nth(2).unwrap();
        assert!(first.contains("zz-worker-*") && first.contains("50.0"), "the worker first: {text}");
        let second = text.lines().nth(3).unwrap();
        assert!(second.contains("pool-*") && second.contains("100.0"), "then the least asleep: {text}");
    }
}
