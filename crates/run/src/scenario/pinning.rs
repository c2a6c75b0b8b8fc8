//! CPU pinning with `taskset -c`: the server on some cores, the load
//! generator on others, so on a two-core machine the two do not steal each
//! other's time slices and the numbers mean the same thing run after run.

use std::process::Command;

/// Checks a `taskset -c` CPU list ("0", "0,1", "0-3") against the machine.
pub fn parse_cpu_list(list: &str) -> Result<Vec<usize>, String> {
    let cores = stampede_probe::machine_cores();
    let mut cpus = Vec::new();
    for part in list.split(',').map(str::trim) {
        let bad = || format!("{list:?} is not a CPU list; write e.g. \"0\", \"0,1\" or \"0-1\"");
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => {
                (a.trim().parse::<usize>().map_err(|_| bad())?, b.trim().parse::<usize>().map_err(|_| bad())?)
            }
            None => {
                let n = part.parse::<usize>().map_err(|_| bad())?;
                (n, n)
            }
        };
        if lo > hi {
            return Err(bad());
        }
        for cpu in lo..=hi {
            if cpu >= cores {
                return Err(format!("CPU {cpu} does not exist: this machine has CPUs 0-{}", cores - 1));
            }
            cpus.push(cpu);
        }
    }
    Ok(cpus)
}

/// A command that runs `program args…`, under `taskset -c cpus` when pinned.
pub fn command(cpus: Option<&str>, program: &str) -> Command {
    match cpus {
        Some(cpus) => {
            let mut cmd = Command::new("taskset");
            cmd.args(["-c", cpus, program]);
            cmd
        }
        None => Command::new(program),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("0-0").unwrap(), vec![0]);
        assert!(parse_cpu_list("a").unwrap_err().contains("CPU list"));
        assert!(parse_cpu_list("4096").unwrap_err().contains("does not exist"));
    }
}
