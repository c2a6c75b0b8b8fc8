//! Off-CPU stacks as causes: which waiter stack the slow requests' windows
//! have more of than the whole phase. A request slow because it waited (a
//! lock, a queue, a pool) shows nothing on the CPU; the off-CPU profile
//! (`--profile-off-cpu`) has, for every blocked interval, the stack the
//! thread blocked at, so the frame that waits (the function taking the
//! lock) can name the cause the way an on-CPU frame names a CPU burn.
//!
//! The blocked microseconds inside the windows are compared, frame by frame
//! (anywhere on the stack, kernel frames left out: every stack ends in the
//! scheduler), with the whole phase's. The frames of one waiter stack share
//! the same time and tie; among them the one nearest the stack's root comes
//! first: `Mutex::lock`, which the application called, rather than the futex
//! call under it. For the first frames the blocked intervals under them
//! become bursts on CLOCK_MONOTONIC (overlapping intervals of several
//! threads merged, `samples` counting intervals) so that `stampede explain`
//! attributes slow requests to the wait one by one, and their heaviest stack
//! inside the windows is kept to print.

use std::collections::HashMap;

use stampede_schema::profile::{Burst, FrameShift};

use crate::bursts::{names, symbol};
use crate::fold::Folded;
use crate::offcpu::Interval;
use crate::slow::over_represented;

/// Frames whose share of blocked time is larger in `slow` than in `whole`,
/// kernel frames left out, most over-represented first (ties: nearest the
/// root first); the first `with_bursts` carry their bursts and stack.
pub fn over_represented_waiters(
    whole: &Folded,
    slow: &Folded,
    intervals: &[Interval],
    limit: usize,
    with_bursts: usize,
) -> Vec<FrameShift> {
    let depth = depths(slow);
    let mut rows: Vec<FrameShift> =
        over_represented(whole, slow, usize::MAX).into_iter().filter(|r| r.kind != "kernel").collect();
    let key = |r: &FrameShift| ((r.slow_pct - r.run_pct) * 100.0).round() as i64;
    rows.sort_by(|a, b| {
        key(b).cmp(&key(a)).then(depth.get(&a.frame).cmp(&depth.get(&b.frame))).then(a.frame.cmp(&b.frame))
    });
    rows.truncate(limit);
    for row in rows.iter_mut().take(with_bursts) {
        row.bursts = bursts(intervals, &row.frame);
        row.stack = heaviest_stack(slow, &row.frame);
    }
    rows
}

/// Each frame's least depth (from the root, the process name left out) in
/// the folded stacks.
fn depths(folded: &Folded) -> HashMap<String, usize> {
    let mut depth: HashMap<String, usize> = HashMap::new();
    for (stack, _) in &folded.lines {
        for (i, frame) in stack.split(';').skip(1).enumerate() {
            let name = frame.strip_suffix("_[j]").unwrap_or(frame).to_string();
            let d = depth.entry(name).or_insert(i);
            *d = (*d).min(i);
        }
    }
    depth
}

/// The heaviest stack through `frame`, root first, process name and kernel
/// frames left out.
fn heaviest_stack(folded: &Folded, frame: &str) -> Vec<String> {
    let through = |stack: &str| stack.split(';').any(|f| f.strip_suffix("_[j]").unwrap_or(f) == frame);
    folded
        .lines
        .iter()
        .filter(|(stack, _)| through(stack))
        .max_by_key(|(_, count)| *count)
        .map(|(stack, _)| stack.split(';').skip(1).filter(|f| !f.ends_with("_[k]")).map(str::to_string).collect())
        .unwrap_or_default()
}

/// The stretches of the whole phase in which some thread was blocked under
/// `frame`, merged; `samples` counts the intervals. Every interval counts,
/// inside the slow windows or not, so that the same requests moved to
/// other times meet the wait as often as it happened (its chance level).
fn bursts(intervals: &[Interval], frame: &str) -> Vec<Burst> {
    let mut spans: Vec<(u64, u64)> = intervals
        .iter()
        .filter(|i| i.end_ns > i.start_ns && i.stack.iter().any(|l| symbol(l).is_some_and(|s| names(s, frame))))
        .map(|i| (i.start_ns, i.end_ns))
        .collect();
    spans.sort_unstable();
    let mut out: Vec<Burst> = Vec::new();
    for (a, b) in spans {
        match out.last_mut() {
            Some(last) if a <= last.end_mono_ns => {
                last.end_mono_ns = last.end_mono_ns.max(b);
                last.samples += 1;
            }
            _ => out.push(Burst { start_mono_ns: a, end_mono_ns: b, samples: 1 }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offcpu::{fold, intervals};
    use crate::slow::Windows;
    use stampede_schema::load::SlowRequest;

    /// A block at `at_ms` of thread `tid` under `frames` (leaf first), back on a CPU at `until_ms`.
    fn block(tid: u32, at_ms: u64, until_ms: u64, frames: &[&str]) -> String {
        let mut text = format!(
            "srv 10/{tid} 100.{:09}: sched:sched_switch: prev_comm=w prev_pid={tid} prev_prio=120 prev_state=S ==> next_comm=x next_pid=0 next_prio=120\n\tffffffff82265ec8 __schedule ([kernel.kallsyms])\n",
            at_ms * 1_000_000
        );
        for f in frames {
            text.push_str(&format!("\t  1234 {f} (/srv/srv)\n"));
        }
        text.push_str(&format!("\nsrv 10/{tid} 100.{:09}: PERF_RECORD_SWITCH IN\n\n", until_ms * 1_000_000));
        text
    }

    #[test]
    fn the_waiter_stack_of_the_slow_windows_names_the_frame_that_waits_with_its_bursts() {
        let lock =
            ["syscall", "std::sys::sync::mutex::futex::Mutex::lock_contended::h0123456789abcdef", "serve", "main"];
        let read = ["read", "serve", "main"];
        let script = [
            block(11, 0, 100, &read),
            block(12, 100, 160, &lock),
            block(13, 110, 170, &lock),
            block(11, 200, 400, &read),
            block(12, 500, 560, &lock),
        ]
        .concat();
        let all = intervals(&script);
        let names = HashMap::new();
        let whole = fold(&all, &names, |i| i.end_ns - i.start_ns).unwrap();
        let slow_request = SlowRequest {
            intended_mono_ns: 100_100_000_000,
            start_mono_ns: 100_100_000_000,
            end_mono_ns: 100_170_000_000,
            ..SlowRequest::default()
        };
        let windows = Windows::of(&[slow_request]);
        let slow = fold(&all, &names, |i| windows.overlap(i.start_ns, i.end_ns)).unwrap();
        let rows = over_represented_waiters(&whole, &slow, &all, 5, 1);
        let first = &rows[0];
        assert_eq!(first.frame, "std::sys::sync::mutex::futex::Mutex::lock_contended", "{rows:?}");
        assert!(rows.iter().all(|r| r.kind != "kernel" && r.frame != "serve"), "{rows:?}");
        assert_eq!(rows[1].frame, "syscall", "a tie: the frame nearer the root first");
        let spans: Vec<(u64, u64, u64)> = first
            .bursts
            .iter()
            .map(|b| (b.start_mono_ns % 1_000_000_000, b.end_mono_ns % 1_000_000_000, b.samples))
            .collect();
        assert_eq!(spans, [(100_000_000, 170_000_000, 2), (500_000_000, 560_000_000, 1)]);
        assert_eq!(first.stack, ["main", "serve", "std::sys::sync::mutex::futex::Mutex::lock_contended", "syscall"]);
        assert!(rows[1].bursts.is_empty(), "bursts for the first frames only");
    }
}
