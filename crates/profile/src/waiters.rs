//! Off-CPU stacks as causes: which waiter stack the slow requests' windows
//! have more of than the whole phase. A request slow because it waited (a
//! lock, a queue, a pool) shows nothing on the CPU; the off-CPU profile
//! (`--profile-off-cpu`) has, for every blocked interval, the stack the
//! thread blocked at, so the frame that waits (the function taking the
//! lock) can name the cause the way an on-CPU frame names a CPU burn.
//!
//! The blocked microseconds inside the windows are compared with the whole
//! phase's, stack prefix by stack prefix (kernel frames left out: every
//! stack ends in the scheduler). A frame's share alone misleads: every
//! ancestor of a waiter (the thread's start, the request loop) inherits its
//! over-representation, and more. So the waiter is found by descending from
//! the root: at each step the child prefix with the largest gain (share in
//! the windows minus share over the phase) is taken while it carries at
//! least half its parent's gain, and the descent stops above the leaf, the
//! blocking call itself (a libc `syscall`, `futex_wait`): what remains is
//! the function that called it, the one that takes the lock
//! (`take_the_lock`, `PyThread_acquire_lock_timed`, `runtime.futexsleep`).
//! The frames' own shifts follow it in the list, to read. For the waiter
//! the blocked intervals under it become bursts on CLOCK_MONOTONIC
//! (overlapping intervals of several threads merged, `samples` counting
//! intervals) so that `stampede explain` attributes slow requests to the
//! wait one by one, and its heaviest stack inside the windows is kept.

use std::collections::HashMap;

use stampede_schema::profile::{Burst, FrameShift};

use crate::bursts::{names, symbol};
use crate::fold::Folded;
use crate::offcpu::Interval;
use crate::slow::over_represented;

/// The share of its parent's gain a child prefix must carry to descend into it.
const CARRIES: f64 = 0.5;

/// The waiter of the slow windows (with its bursts and stack), then the
/// frames whose share of blocked time is larger in `slow` than in `whole`,
/// kernel frames left out, most over-represented first; at most `limit`.
pub fn over_represented_waiters(
    whole: &Folded,
    slow: &Folded,
    intervals: &[Interval],
    limit: usize,
) -> Vec<FrameShift> {
    let mut rows: Vec<FrameShift> = Vec::new();
    if let Some(mut first) = waiter(whole, slow) {
        first.bursts = bursts(intervals, &first.frame);
        first.stack = heaviest_stack(slow, &first.frame);
        rows.push(first);
    }
    let others = over_represented(whole, slow, usize::MAX).into_iter().filter(|r| r.kind != "kernel");
    for row in others {
        if rows.len() >= limit {
            break;
        }
        if rows.first().is_none_or(|w| w.frame != row.frame) {
            rows.push(row);
        }
    }
    rows
}

/// User frames of a folded stack, process name and kernel frames left out.
fn user_frames(stack: &str) -> Vec<&str> {
    stack.split(';').skip(1).filter(|f| !f.ends_with("_[k]")).collect()
}

/// Each stack prefix's share (percent) of the samples.
fn prefix_shares(folded: &Folded) -> HashMap<Vec<&str>, f64> {
    let all = folded.samples().max(1) as f64;
    let mut shares: HashMap<Vec<&str>, f64> = HashMap::new();
    for (stack, count) in &folded.lines {
        let frames = user_frames(stack);
        for depth in 1..=frames.len() {
            *shares.entry(frames[..depth].to_vec()).or_default() += *count as f64 * 100.0 / all;
        }
    }
    shares
}

/// The descent from the root described above; `None` when no prefix gains.
fn waiter(whole: &Folded, slow: &Folded) -> Option<FrameShift> {
    let (run, inside) = (prefix_shares(whole), prefix_shares(slow));
    let gain = |p: &Vec<&str>| inside.get(p).copied().unwrap_or(0.0) - run.get(p).copied().unwrap_or(0.0);
    let children = |p: &[&str]| -> Vec<Vec<&str>> {
        let mut c: Vec<Vec<&str>> =
            inside.keys().filter(|k| k.len() == p.len() + 1 && k.starts_with(p)).cloned().collect();
        c.sort_by(|a, b| gain(b).total_cmp(&gain(a)).then(a.cmp(b)));
        c
    };
    // Frames every stack shares (the process's root) gain nothing and are
    // passed through; the waiter must gain.
    let mut at: Vec<&str> = Vec::new();
    while let Some(next) = children(&at).into_iter().next().filter(|c| gain(c) >= 0.0_f64.max(CARRIES * gain(&at))) {
        if children(&next).is_empty() && !at.is_empty() {
            break; // `next` is the blocking call itself: `at` called it
        }
        at = next;
    }
    if gain(&at) <= 0.0 {
        return None;
    }
    let frame = at.last()?.to_string();
    let (name, kind) = match frame.strip_suffix("_[j]") {
        Some(n) => (n.to_string(), "jit"),
        None => (frame, "native"),
    };
    Some(FrameShift {
        slow_pct: (inside.get(&at).copied().unwrap_or(0.0) * 100.0).round() / 100.0,
        run_pct: (run.get(&at).copied().unwrap_or(0.0) * 100.0).round() / 100.0,
        frame: name,
        kind: kind.to_string(),
        ..FrameShift::default()
    })
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
        let lock = [
            "syscall",
            "std::sys::sync::mutex::futex::Mutex::lock_contended::h0123456789abcdef",
            "serve",
            "thread_start",
        ];
        let read = ["read", "serve", "thread_start"];
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
        let rows = over_represented_waiters(&whole, &slow, &all, 5);
        let first = &rows[0];
        assert_eq!(first.frame, "std::sys::sync::mutex::futex::Mutex::lock_contended", "{rows:?}");
        assert!(rows.iter().all(|r| r.kind != "kernel" && r.frame != "serve"), "{rows:?}");
        assert_eq!(rows[1].frame, "syscall", "then the frames by their own shift");
        let spans: Vec<(u64, u64, u64)> = first
            .bursts
            .iter()
            .map(|b| (b.start_mono_ns % 1_000_000_000, b.end_mono_ns % 1_000_000_000, b.samples))
            .collect();
        assert_eq!(spans, [(100_000_000, 170_000_000, 2), (500_000_000, 560_000_000, 1)]);
        assert_eq!(
            first.stack,
            ["thread_start", "serve", "std::sys::sync::mutex::futex::Mutex::lock_contended", "syscall"]
        );
        assert!(rows[1].bursts.is_empty(), "bursts for the first frames only");
    }
}
