//! The "top functions" view: for each frame, the share of samples in which it
//! was running (self: the leaf of the stack) and in which it was anywhere on
//! the stack (total: it or something it called was running). The flame graph
//! shows shape; this table answers "where does the CPU go" in twenty lines,
//! as the classic `dtrace` profile one-liners do.

use std::collections::{HashMap, HashSet};

use crate::fold::Folded;

/// One row of the table (declared in stampede-schema, part of `stampede.profile/1`).
pub use stampede_schema::profile::TopFrame;

/// The `limit` frames with the most self samples (ties: more total samples,
/// then name). The first frame of each stack is the process name, which is
/// on every stack of its process, so it is not a function and is left out.
pub fn top_frames(folded: &Folded, limit: usize) -> Vec<TopFrame> {
    let all = folded.samples();
    if all == 0 {
        return Vec::new();
    }
    let mut self_count: HashMap<&str, u64> = HashMap::new();
    let mut total_count: HashMap<&str, u64> = HashMap::new();
    for (stack, count) in &folded.lines {
        let frames: Vec<&str> = stack.split(';').skip(1).collect();
        let Some(leaf) = frames.last() else { continue };
        *self_count.entry(leaf).or_default() += count;
        // A recursive frame counts once per stack in `total`.
        let mut seen = HashSet::new();
        for frame in &frames {
            if seen.insert(*frame) {
                *total_count.entry(frame).or_default() += count;
            }
        }
    }
    let mut rows: Vec<TopFrame> = total_count
        .iter()
        .map(|(frame, total)| {
            let own = self_count.get(frame).copied().unwrap_or(0);
            let (name, kind) = split_annotation(frame);
            TopFrame {
                frame: name.to_string(),
                kind: kind.to_string(),
                self_samples: own,
                self_pct: pct(own, all),
                total_samples: *total,
                total_pct: pct(*total, all),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.self_samples.cmp(&a.self_samples).then(b.total_samples.cmp(&a.total_samples)).then(a.frame.cmp(&b.frame))
    });
    rows.truncate(limit);
    rows
}

fn pct(n: u64, all: u64) -> f64 {
    (n as f64 * 10_000.0 / all as f64).round() / 100.0
}

fn split_annotation(frame: &str) -> (&str, &'static str) {
    if let Some(name) = frame.strip_suffix("_[k]") {
        (name, "kernel")
    } else if let Some(name) = frame.strip_suffix("_[j]") {
        (name, "jit")
    } else {
        (frame, "native")
    }
}

/// The table as text for a terminal, frames cut to `width` characters.
pub fn render_table(rows: &[TopFrame], samples: u64, width: usize) -> String {
    let mut out = format!("top functions ({samples} samples)\n  self%  total%  kind    frame\n");
    for row in rows {
        let mut name = row.frame.clone();
        if name.chars().count() > width {
            name = name.chars().take(width.saturating_sub(1)).collect::<String>() + "…";
        }
        out.push_str(&format!("{:>7.2} {:>7.2}  {:<6}  {}\n", row.self_pct, row.total_pct, row.kind, name));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(text: &str) -> Folded {
        Folded::parse(text).unwrap()
    }

    #[test]
    fn self_is_the_leaf_and_total_is_anywhere_on_the_stack() {
        let f = folded("srv;main;work 6\nsrv;main;io;write_[k] 3\nsrv;main 1\n");
        let rows = top_frames(&f, 20);
        let get = |name: &str| rows.iter().find(|r| r.frame == name).unwrap().clone();
        assert_eq!(rows[0].frame, "work");
        assert_eq!((get("work").self_pct, get("work").total_pct), (60.0, 60.0));
        assert_eq!((get("main").self_samples, get("main").total_samples), (1, 10));
        assert_eq!(get("write").kind, "kernel");
        assert_eq!(get("io").total_pct, 30.0);
        assert!(rows.iter().all(|r| r.frame != "srv"), "process name is not a frame");
    }

    #[test]
    fn recursion_counts_once_in_total() {
        let rows = top_frames(&folded("p;f;f;f 4\n"), 20);
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].self_samples, rows[0].total_samples), (4, 4));
    }

    #[test]
    fn the_table_keeps_the_limit_and_marks_jit_frames() {
        let text: String = (0..30).map(|i| format!("p;f{i:02}_[j] {}\n", i + 1)).collect();
        let rows = top_frames(&folded(&text), 20);
        assert_eq!(rows.len(), 20);
        assert_eq!(rows[0].frame, "f29");
        assert_eq!(rows[0].kind, "jit");
        let table = render_table(&rows, 465, 60);
        assert!(table.lines().nth(2).unwrap().contains("jit     f29"), "{table}");
    }
}
