//! The few fields the probe takes from a thread's `schedstat` and a task's
//! `stat`, parsed in place. Hand-written rather than procfs's `Schedstat` and
//! `Stat` because these run for every thread at every sample: procfs copies
//! the text into a `String`, splits it into a vector and parses all 52 fields
//! of `stat` (its comm into a new `String`), which was about a sixth of the
//! probe's CPU at a 10 ms interval (perf, 31-thread process); these read the
//! bytes once and allocate nothing.

/// The unsigned decimal fields of `text`, separated by single spaces.
fn fields(text: &[u8]) -> impl Iterator<Item = Option<u64>> + '_ {
    text.split(|b| *b == b' ' || *b == b'\n').filter(|f| !f.is_empty()).map(decimal)
}

fn decimal(field: &[u8]) -> Option<u64> {
    if field.is_empty() || field.len() > 20 {
        return None;
    }
    field.iter().try_fold(0u64, |n, b| match b {
        b'0'..=b'9' => n.checked_mul(10)?.checked_add(u64::from(b - b'0')),
        _ => None,
    })
}

/// `schedstat`: nanoseconds on a CPU and nanoseconds waiting on a run queue.
pub fn schedstat(text: &[u8]) -> Option<(u64, u64)> {
    let mut f = fields(text);
    Some((f.next()??, f.next()??))
}

/// What the probe uses of a `stat` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatFields<'a> {
    /// The command name, between the first `(` and the last `)` (it may
    /// itself hold spaces and parentheses).
    pub comm: &'a [u8],
    pub utime_ticks: u64,
    pub stime_ticks: u64,
    pub num_threads: u64,
    pub rss_pages: u64,
}

/// Parses `pid (comm) state ppid … utime stime … num_threads … rss …`
/// (proc(5): fields 14, 15, 20 and 24).
pub fn stat(text: &[u8]) -> Option<StatFields<'_>> {
    let open = text.iter().position(|b| *b == b'(')?;
    let close = text.iter().rposition(|b| *b == b')')?;
    let comm = text.get(open + 1..close)?;
    // After the `)`: field 3 (state) is the first, so field n is at n - 3.
    let mut rest = text.get(close + 2..)?.split(|b| *b == b' ');
    let mut nth = |skip: usize| rest.nth(skip).and_then(decimal);
    let utime_ticks = nth(14 - 3)?;
    let stime_ticks = nth(0)?;
    let num_threads = nth(20 - 15 - 1)?;
    let rss_pages = nth(24 - 20 - 1)?;
    Some(StatFields { comm, utime_ticks, stime_ticks, num_threads, rss_pages })
}

/// A process's CPU time so far, user + system, in seconds, read once from
/// `/proc/<pid>/stat` (for callers outside the sampler, such as the
/// profiler), or None once it is gone. The kernel scales these ticks to its
/// scheduler runtime, so they do not miss short bursts as tick samples do.
pub fn process_cpu_s(pid: u32) -> Option<f64> {
    let text = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let s = stat(&text)?;
    Some((s.utime_ticks + s.stime_ticks) as f64 / procfs::ticks_per_second() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_gives_runtime_and_wait() {
        assert_eq!(schedstat(b"123456 789 42\n"), Some((123456, 789)));
        assert_eq!(schedstat(b"12\n"), None);
        assert_eq!(schedstat(b"x 1 2\n"), None);
    }

    #[test]
    fn stat_fields_agree_with_procfs_on_a_live_process() {
        use procfs::FromRead;
        let text = std::fs::read("/proc/self/stat").unwrap();
        let ours = stat(&text).unwrap();
        let theirs = procfs::process::Stat::from_read(&text[..]).unwrap();
        assert_eq!(ours.comm, theirs.comm.as_bytes());
        assert_eq!(ours.utime_ticks, theirs.utime);
        assert_eq!(ours.stime_ticks, theirs.stime);
        assert_eq!(ours.num_threads, theirs.num_threads as u64);
        assert_eq!(ours.rss_pages, theirs.rss);
    }

    #[test]
    fn a_process_cpu_time_is_read_while_it_lives() {
        assert!(process_cpu_s(std::process::id()).is_some_and(|s| s >= 0.0));
        assert_eq!(process_cpu_s(u32::MAX), None);
    }

    #[test]
    fn a_comm_with_spaces_and_parentheses_is_taken_whole() {
        let text = b"77 (a (b) c) S 1 77 77 0 -1 4194560 10 0 0 0 5 6 0 0 20 0 3 0 100 1000 42 18446744073709551615\n";
        let s = stat(text).unwrap();
        assert_eq!(s.comm, b"a (b) c");
        assert_eq!((s.utime_ticks, s.stime_ticks, s.num_threads, s.rss_pages), (5, 6, 3, 42));
    }
}
