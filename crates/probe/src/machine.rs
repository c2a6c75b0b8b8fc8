//! The whole machine's CPU use from the first line of `/proc/stat`, so a run
//! can show whether something besides the server and the load generator was
//! competing for the two cores.
//!
//! Busy time is the clock less the idle time, not the sum of the busy fields:
//! on a tickless kernel the idle time is measured at every idle entry and
//! exit, while user, system, irq and softirq are whole ticks charged to what
//! each tick interrupted, and a process that naps for microseconds between
//! bursts (an event loop under load) escapes many of them. On this project's
//! VM the busy fields gave a load generator's core 1.7 s of a 4 s run whose
//! idle time and process CPU said 2.5-2.7 s (2026-11-25; bench/lib.sh's
//! `core_times` measures the same way). The ticks still split the busy time
//! into user and system.

use std::path::Path;

use procfs::FromReadSI;
use procfs::{CpuTime, KernelStats};

use crate::proc_file::ProcFile;

/// Cumulative CPU time of all CPUs, in clock ticks, and how many CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MachineReading {
    pub user_ticks: u64,
    pub sys_ticks: u64,
    /// Idle, I/O wait and steal: time no CPU worked for this machine.
    pub idle_ticks: u64,
    pub cpus: usize,
}

/// One point of the machine's time series (declared once in stampede-schema).
pub use stampede_schema::process::MachineSample;

pub struct MachineReader {
    file: Option<ProcFile>,
    buf: Vec<u8>,
}

impl MachineReading {
    fn from_cpu_time(cpu: &CpuTime, cpus: usize) -> MachineReading {
        let user = cpu.user + cpu.nice;
        let sys = cpu.system + cpu.irq.unwrap_or(0) + cpu.softirq.unwrap_or(0);
        let idle = cpu.idle + cpu.iowait.unwrap_or(0) + cpu.steal.unwrap_or(0);
        MachineReading { user_ticks: user, sys_ticks: sys, idle_ticks: idle, cpus }
    }

    /// The machine's CPU in cores between `before` and this reading, `wall_s`
    /// apart: (all, user, system), all being the CPUs less their idle time.
    pub fn cores_since(&self, before: &MachineReading, ticks_per_s: f64, wall_s: f64) -> (f64, f64, f64) {
        let idle = self.idle_ticks.saturating_sub(before.idle_ticks) as f64 / ticks_per_s / wall_s;
        let all = (self.cpus as f64 - idle).max(0.0);
        let user = self.user_ticks.saturating_sub(before.user_ticks) as f64;
        let sys = self.sys_ticks.saturating_sub(before.sys_ticks) as f64;
        let user_share = if user + sys > 0.0 { user / (user + sys) } else { 0.0 };
        (all, all * user_share, all * (1.0 - user_share))
    }
}

impl MachineReader {
    pub fn new() -> MachineReader {
        MachineReader { file: ProcFile::open(Path::new("/proc/stat")).ok(), buf: Vec::with_capacity(8192) }
    }

    pub fn read(&mut self) -> Option<MachineReading> {
        let file = self.file.as_ref()?;
        let text = file.read(&mut self.buf).ok()?;
        let stats = KernelStats::from_read(text, procfs::current_system_info()).ok()?;
        Some(MachineReading::from_cpu_time(&stats.total, stats.cpu_time.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spinning_thread_is_counted_busy() {
        let mut reader = MachineReader::new();
        let before = reader.read().expect("/proc/stat readable");
        let start = std::time::Instant::now();
        let mut x = 1u64;
        while start.elapsed() < std::time::Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let after = reader.read().unwrap();
        let ticks_per_s = procfs::ticks_per_second() as f64;
        let (all, user, sys) = after.cores_since(&before, ticks_per_s, start.elapsed().as_secs_f64());
        assert!(after.cpus >= 1);
        // This thread kept one CPU busy; the idle time has a tick's
        // resolution, so a third of a core is a wide margin.
        assert!(all > 0.66 && all <= after.cpus as f64, "{all} cores of {}", after.cpus);
        assert!((user + sys - all).abs() < 1e-9, "{user} + {sys} != {all}");
    }

    #[test]
    fn busy_cores_are_the_cpus_less_their_idle_time() {
        let at = |idle_ticks, user_ticks, sys_ticks| MachineReading { user_ticks, sys_ticks, idle_ticks, cpus: 2 };
        // One second at 100 ticks/s: 150 idle ticks of 200 leave half a core,
        // however few busy ticks were sampled (10 here), split 3:1.
        let (all, user, sys) = at(1150, 1006, 1002).cores_since(&at(1000, 1000, 1000), 100.0, 1.0);
        assert!(
            (all - 0.5).abs() < 1e-9 && (user - 0.375).abs() < 1e-9 && (sys - 0.125).abs() < 1e-9,
            "{all} {user} {sys}"
        );
        // A clock that ran ahead of the idle counters never gives below zero.
        assert_eq!(at(1300, 1000, 1000).cores_since(&at(1000, 1000, 1000), 100.0, 1.0).0, 0.0);
    }
}
