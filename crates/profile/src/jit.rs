//! Naming the frames of JIT-compiled runtimes. perf only knows the code of
//! files on disk; a JIT's code lives in anonymous memory, so its frames are
//! bare addresses unless the runtime writes a perf map (`/tmp/perf-PID.map`,
//! one `START SIZE name` line per compiled function), which `perf script`
//! reads on its own. Node writes one continuously under `--perf-basic-prof`;
//! the JVM (JDK 17+) writes one on request with `jcmd PID Compiler.perfmap`,
//! so it is asked for after sampling and before `perf script`. The notes
//! returned here say when a runtime's frames will be unnamed, and why.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::tree;

const JCMD_DEADLINE: Duration = Duration::from_secs(20);

/// The runtime a process is, as far as naming its frames goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Runtime {
    Node,
    Jvm,
    Python,
    Native,
}

/// Classifies a process by its executable's file name.
pub fn runtime_of(exe: &str) -> Runtime {
    if exe == "node" || exe.starts_with("node") && exe[4..].bytes().all(|b| b.is_ascii_digit()) {
        Runtime::Node
    } else if exe == "java" {
        Runtime::Jvm
    } else if exe.starts_with("python") {
        Runtime::Python
    } else {
        Runtime::Native
    }
}

fn map_path(pid: u32) -> String {
    format!("/tmp/perf-{pid}.map")
}

/// Gets perf maps written where a runtime can be asked to, and returns notes
/// for the processes whose frames will stay unnamed.
pub fn prepare_maps(pids: &[u32]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut python_noted = false;
    for &pid in pids {
        let Some(exe) = tree::exe_name(pid) else {
            continue;
        };
        match runtime_of(&exe) {
            Runtime::Node if !Path::new(&map_path(pid)).exists() => notes.push(format!(
                "node pid {pid} wrote no {}: JavaScript frames are addresses; start node with --perf-basic-prof (NODE_OPTIONS=--perf-basic-prof)",
                map_path(pid)
            )),
            Runtime::Jvm => {
                if let Err(why) = jcmd_perfmap(pid) {
                    notes.push(format!("java pid {pid}: {why}; JIT-compiled Java frames are addresses"));
                }
            }
            Runtime::Python if !python_noted => {
                python_noted = true;
                notes.push(
                    "python: CPython 3.11 frames show as the interpreter's C functions (_PyEval_EvalFrameDefault), not Python function names; see docs/profile.md"
                        .to_string(),
                );
            }
            _ => {}
        }
    }
    notes
}

/// `jcmd PID Compiler.perfmap`, with a deadline.
fn jcmd_perfmap(pid: u32) -> Result<(), String> {
    let mut command = Command::new("jcmd");
    stampede_probe::lifeline::die_with_parent(&mut command);
    let mut child = command
        .arg(pid.to_string())
        .arg("Compiler.perfmap")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run jcmd ({e}); put the JDK's bin on PATH"))?;
    let deadline = Instant::now() + JCMD_DEADLINE;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() && Path::new(&map_path(pid)).exists() => return Ok(()),
            Ok(Some(status)) => {
                return Err(format!("jcmd Compiler.perfmap failed ({status}); it needs JDK 17 or later"))
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("jcmd Compiler.perfmap did not answer within {} s", JCMD_DEADLINE.as_secs()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtimes_are_told_apart_by_executable_name() {
        assert_eq!(runtime_of("node"), Runtime::Node);
        assert_eq!(runtime_of("node20"), Runtime::Node);
        assert_eq!(runtime_of("nodemon"), Runtime::Native);
        assert_eq!(runtime_of("java"), Runtime::Jvm);
        assert_eq!(runtime_of("python3.11"), Runtime::Python);
        assert_eq!(runtime_of("server"), Runtime::Native);
    }
}
