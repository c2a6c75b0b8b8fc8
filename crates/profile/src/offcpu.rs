//! The off-CPU profile: where the server's threads were blocked, by stack,
//! weighted by how long they stayed blocked. perf records a
//! `sched:sched_switch` sample, with the call stack, each time a profiled
//! thread leaves the CPU, and a context-switch record (`--switch-events`) each
//! time it gets one back, both on CLOCK_MONOTONIC. A switch whose
//! `prev_state` is not runnable (`R`) is a block; its interval runs to the
//! thread's next switch-in (so it includes the wait for a CPU after the
//! wake-up, as Brendan Gregg's `offcpu` tools count it); a thread still
//! blocked when recording stopped counts to the last event seen. Preemptions
//! (`prev_state=R`) are run-queue waits, which the microstates count, and are
//! left out. The weighted stacks are rewritten as `perf script` samples whose
//! period is the blocked microseconds, and folded by inferno like the on-CPU
//! profile (frames named the same way, JIT maps included).

use std::collections::HashMap;
use std::path::Path;

use stampede_schema::profile::OffCpuSummary;

use crate::error::ProfileError;
use crate::fold::Folded;
use crate::perf::Recording;
use crate::{flame, top};

/// One blocked interval of one thread, on CLOCK_MONOTONIC.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    pub tid: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The sample's `perf script` text: its header line, then its stack lines.
    header: String,
    pub(crate) stack: Vec<String>,
}

impl Interval {
    /// The interval as a `perf script` sample weighted by `weight_us`.
    fn sample_text(&self, weight_us: u64, out: &mut String) {
        out.push_str(&self.header);
        out.push_str(&format!(" {weight_us} offcpu:\n"));
        for line in &self.stack {
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
    }
}

/// A header line's tid, time (ns) and the length of its `comm pid/tid time:` prefix.
pub(crate) fn header_parts(line: &str) -> Option<(u32, u64, usize)> {
    let mut tid = None;
    let mut offset = 0;
    for word in line.split(' ') {
        let end = offset + word.len();
        offset = end + 1;
        if word.is_empty() {
            continue;
        }
        if tid.is_none() {
            if let Some((p, t)) = word.split_once('/') {
                if p.bytes().all(|b| b.is_ascii_digit()) && !p.is_empty() {
                    tid = t.parse().ok();
                }
            }
            continue;
        }
        if let Some(time) = word.strip_suffix(':') {
            return Some((tid?, time_ns(time)?, end));
        }
    }
    None
}

/// `13281.228660057` (seconds, `--ns`) as nanoseconds.
fn time_ns(text: &str) -> Option<u64> {
    let (s, frac) = text.split_once('.').unwrap_or((text, "0"));
    let mut ns: u64 =
        frac.bytes().take(9).try_fold(0u64, |n, b| b.is_ascii_digit().then(|| n * 10 + (b - b'0') as u64))?;
    for _ in frac.len().min(9)..9 {
        ns *= 10;
    }
    Some(s.parse::<u64>().ok()? * 1_000_000_000 + ns)
}

/// The blocked intervals of a `perf script --show-switch-events` text.
pub fn intervals(script: &str) -> Vec<Interval> {
    let mut done = Vec::new();
    let mut open: HashMap<u32, Interval> = HashMap::new();
    let mut last_ns = 0;
    let mut lines = script.lines().peekable();
    while let Some(line) = lines.next() {
        if line.is_empty() || line.starts_with(char::is_whitespace) {
            continue;
        }
        let Some((tid, at, prefix)) = header_parts(line) else { continue };
        last_ns = last_ns.max(at);
        let mut stack = Vec::new();
        while let Some(next) = lines.peek().filter(|l| l.starts_with(char::is_whitespace) && !l.trim().is_empty()) {
            stack.push(next.to_string());
            lines.next();
        }
        let rest = &line[prefix..];
        if rest.contains("PERF_RECORD_SWITCH IN") || rest.contains("PERF_RECORD_SWITCH_CPU_WIDE IN") {
            if let Some(mut interval) = open.remove(&tid) {
                interval.end_ns = at;
                done.push(interval);
            }
        } else if let Some(state) = rest.split("prev_state=").nth(1) {
            if !state.starts_with('R') && !stack.is_empty() {
                let header = line[..prefix].to_string();
                open.insert(tid, Interval { tid, start_ns: at, end_ns: at, header, stack });
            }
        }
    }
    for (_, mut interval) in open {
        interval.end_ns = last_ns;
        done.push(interval);
    }
    done.sort_by_key(|i| (i.start_ns, i.tid));
    done
}

/// Folds intervals into stacks weighted by blocked microseconds; `keep`
/// gives the part of an interval (ns) to count, 0 to leave it out.
pub fn fold(
    intervals: &[Interval],
    names: &HashMap<u32, String>,
    keep: impl Fn(&Interval) -> u64,
) -> Result<Folded, ProfileError> {
    let mut text = String::new();
    for interval in intervals {
        let us = keep(interval) / 1000;
        if us > 0 {
            interval.sample_text(us, &mut text);
        }
    }
    Folded::from_perf_script(&text, names)
}

/// An off-CPU profile ready to write.
pub struct OffCpu {
    pub intervals: Vec<Interval>,
    pub folded: Folded,
    pub names: HashMap<u32, String>,
}

impl OffCpu {
    pub fn from_recording(rec: &Recording) -> Result<OffCpu, ProfileError> {
        let intervals = intervals(&rec.script);
        let folded = fold(&intervals, &rec.names, |i| i.end_ns - i.start_ns)?;
        if folded.samples() == 0 {
            return Err(ProfileError::NoSamples(rec.root));
        }
        Ok(OffCpu { intervals, folded, names: rec.names.clone() })
    }

    /// Writes `offcpu-<stem>.svg` and `offcpu-<stem>.folded` into `dir`.
    pub fn write(&self, dir: &Path, stem: &str, title: &str) -> Result<OffCpuSummary, ProfileError> {
        let flame_svg = format!("offcpu-{stem}.svg");
        let folded = format!("offcpu-{stem}.folded");
        let blocked_us = self.folded.samples();
        let subtitle = format!(
            "off-CPU: {} blocked intervals, {:.3} s blocked in all; widths are time blocked",
            self.intervals.len(),
            blocked_us as f64 / 1e6
        );
        let svg = flame::render_counted(&self.folded, &format!("{title}: off-CPU"), Some(subtitle), "µs")?;
        crate::write_file(&dir.join(&flame_svg), &svg)?;
        crate::write_file(&dir.join(&folded), self.folded.to_text().as_bytes())?;
        Ok(OffCpuSummary {
            event: "sched:sched_switch + switch records".to_string(),
            intervals: self.intervals.len() as u64,
            blocked_us,
            flame_svg,
            folded,
            top: blocked_top(&self.folded),
        })
    }
}

/// The frames under which the most time was spent blocked, by total (every
/// blocked stack ends in the scheduler, so self time says nothing), kernel
/// frames left out.
pub fn blocked_top(folded: &Folded) -> Vec<top::TopFrame> {
    let mut rows = top::top_frames(folded, usize::MAX);
    rows.retain(|r| r.kind != "kernel");
    rows.sort_by(|a, b| b.total_samples.cmp(&a.total_samples).then(a.frame.cmp(&b.frame)));
    rows.truncate(crate::TOP_FRAMES);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "\
srv 10/11 100.000000000: PERF_RECORD_SWITCH IN
srv 10/11 100.001000000: sched:sched_switch: prev_comm=w prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=x next_pid=0 next_prio=120
\tffffffff82265ec8 __schedule ([kernel.kallsyms])
\t  97ae futex_wait (/lib/libc.so.6)
\t  1234 handler (/srv/srv)

srv 10/11 100.001010000: PERF_RECORD_SWITCH OUT
srv 10/12 100.002000000: sched:sched_switch: prev_comm=w prev_pid=12 prev_prio=120 prev_state=R ==> next_comm=x next_pid=0 next_prio=120
\tffffffff82265ec8 __schedule ([kernel.kallsyms])
\t  1234 handler (/srv/srv)

srv 10/11 100.011000000: PERF_RECORD_SWITCH IN
srv 10/13 100.012000000: sched:sched_switch: prev_comm=w prev_pid=13 prev_prio=120 prev_state=S ==> next_comm=x next_pid=0 next_prio=120
\tffffffff82265ec8 __schedule ([kernel.kallsyms])
\t  5678 epoll_wait (/lib/libc.so.6)

srv 10/12 100.020000000: PERF_RECORD_SWITCH IN
";

    #[test]
    fn blocks_run_to_the_next_switch_in_and_preemptions_are_left_out() {
        let found = intervals(SCRIPT);
        let spans: Vec<(u32, u64)> = found.iter().map(|i| (i.tid, i.end_ns - i.start_ns)).collect();
        // tid 11 blocked 10 ms; tid 12 was preempted (R); tid 13 still blocked at the end (8 ms).
        assert_eq!(spans, [(11, 10_000_000), (13, 8_000_000)]);
        let names = HashMap::from([(10, "srv".to_string())]);
        let folded = fold(&found, &names, |i| i.end_ns - i.start_ns).unwrap();
        let text = folded.to_text();
        assert!(text.contains("srv;handler;futex_wait;__schedule_[k] 10000\n"), "{text}");
        assert!(text.contains("srv;epoll_wait;__schedule_[k] 8000\n"), "{text}");
        let top = blocked_top(&folded);
        assert_eq!(top[0].frame, "futex_wait", "{top:?}");
    }

    #[test]
    fn nanosecond_times_are_read_exactly() {
        assert_eq!(time_ns("13281.228660057"), Some(13_281_228_660_057));
        assert_eq!(time_ns("5.5"), Some(5_500_000_000));
        assert_eq!(header_parts("V8 Worker 7/9 1.000000001: x"), Some((9, 1_000_000_001, 26)));
    }
}
