//! Facts about the host that every result records: CPU model, kernel release
//! and core count.

use procfs::Current;

/// The model name of CPU 0 (`Intel(R) Xeon(R) …`).
pub fn cpu_model() -> String {
    procfs::CpuInfo::current()
        .ok()
        .and_then(|info| info.model_name(0).map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// `Linux <release>` from /proc/sys/kernel/osrelease.
pub fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| format!("Linux {}", s.trim()))
        .unwrap_or_else(|_| "unknown".into())
}

/// The machine's CPU count (not the caller's affinity mask, which `taskset` narrows).
pub fn machine_cores() -> usize {
    match procfs::CpuInfo::current() {
        Ok(info) if info.num_cores() > 0 => info.num_cores(),
        _ => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_facts_are_known_on_linux() {
        assert!(super::machine_cores() >= 1);
        assert!(super::kernel().starts_with("Linux "));
        assert_ne!(super::cpu_model(), "");
    }
}
