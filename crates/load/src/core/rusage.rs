//! The load generator's own cost, from getrusage(2): CPU seconds and peak RSS.
//! Reported next to every result, because a generator that eats the core the
//! server needs changes the number it reports.

#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub user_s: f64,
    pub sys_s: f64,
    pub max_rss_kib: u64,
}

pub fn current() -> Usage {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    Usage { user_s: secs(ru.ru_utime), sys_s: secs(ru.ru_stime), max_rss_kib: peak_rss_kib() }
}

/// Peak RSS of this process image. Not `ru_maxrss`: Linux carries that over
/// `exec` from the process that forked us, so a generator started by a big
/// parent would report the parent's memory as its own.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

pub use stampede_spec::clock::monotonic_ns;

/// The calling thread's time on a CPU and waiting for one (run-queue wait),
/// from /proc/thread-self/schedstat, in nanoseconds since it started. A
/// generator thread near 100% of the wall clock in their sum has no slack
/// left to keep a schedule; the wait alone says whether other processes
/// held its CPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadTime {
    pub on_cpu_ns: u64,
    pub wait_ns: u64,
}

impl ThreadTime {
    pub fn now() -> ThreadTime {
        std::fs::read_to_string("/proc/thread-self/schedstat").ok().map_or_else(ThreadTime::default, |s| {
            let mut fields = s.split_whitespace().map(|v| v.parse::<u64>().unwrap_or(0));
            ThreadTime { on_cpu_ns: fields.next().unwrap_or(0), wait_ns: fields.next().unwrap_or(0) }
        })
    }

    /// The time since `earlier`.
    pub fn since(self, earlier: ThreadTime) -> ThreadTime {
        ThreadTime {
            on_cpu_ns: self.on_cpu_ns.saturating_sub(earlier.on_cpu_ns),
            wait_ns: self.wait_ns.saturating_sub(earlier.wait_ns),
        }
    }
}
