//! The whole machine's CPU use from the first line of `/proc/stat`, so a run
//! can show whether something besides the server and the load generator was
//! competing for the two cores.

use std::path::Path;

use procfs::FromReadSI;
use procfs::{CpuTime, KernelStats};

use crate::proc_file::ProcFile;

/// Cumulative CPU time of all CPUs, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MachineReading {
    pub user_ticks: u64,
    pub sys_ticks: u64,
    pub busy_ticks: u64,
}

/// One point of the machine's time series (declared once in stampede-schema).
pub use stampede_schema::process::MachineSample;

pub struct MachineReader {
    file: Option<ProcFile>,
    buf: Vec<u8>,
}

impl MachineReading {
    fn from_cpu_time(cpu: &CpuTime) -> MachineReading {
        let user = cpu.user + cpu.nice;
        let sys = cpu.system + cpu.irq.unwrap_or(0) + cpu.softirq.unwrap_or(0);
        let busy = user + sys + cpu.steal.unwrap_or(0);
        MachineReading { user_ticks: user, sys_ticks: sys, busy_ticks: busy }
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
        Some(MachineReading::from_cpu_time(&stats.total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_busy_time_grows_while_this_thread_spins() {
        let mut reader = MachineReader::new();
        let before = reader.read().expect("/proc/stat readable");
        let start = std::time::Instant::now();
        let mut x = 1u64;
        while start.elapsed() < std::time::Duration::from_millis(120) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let after = reader.read().unwrap();
        assert!(after.busy_ticks > before.busy_ticks, "{before:?} -> {after:?}");
        assert!(after.busy_ticks >= after.user_ticks);
    }
}
