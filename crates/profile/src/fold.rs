//! From `perf script` text to folded stacks (`proc;frame;…;leaf COUNT`), the
//! format flame graphs, top-function tables and differentials are computed
//! from. Folding is `inferno::collapse::perf`'s; this module only names the
//! root of each stack after its process: perf labels threads created after
//! it attached as `:TID`, which would scatter one server over many roots.

use std::collections::HashMap;
use std::path::Path;

use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;

use crate::error::ProfileError;

/// Folded stacks, one `stack count` line each, sorted by stack.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Folded {
    pub lines: Vec<(String, u64)>,
}

impl Folded {
    /// Folds `perf script -F comm,pid,tid,time,event,ip,sym,dso` output.
    /// `names` maps a pid to its process name; other pids keep perf's comm.
    pub fn from_perf_script(script: &str, names: &HashMap<u32, String>) -> Result<Folded, ProfileError> {
        let renamed = rename_roots(script, names);
        let mut options = Options::default();
        options.annotate_jit = true;
        options.annotate_kernel = true;
        let mut folder = Folder::from(options);
        let mut out = Vec::new();
        folder.collapse(renamed.as_bytes(), &mut out).map_err(ProfileError::Fold)?;
        Folded::parse(&String::from_utf8_lossy(&out)).map_err(|line| {
            ProfileError::Fold(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("inferno wrote an unreadable line {line}"),
            ))
        })
    }

    /// Reads a folded file written by `write` (or by any FlameGraph tool).
    pub fn read(path: &Path) -> Result<Folded, ProfileError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ProfileError::File { path: path.to_path_buf(), source })?;
        Folded::parse(&text).map_err(|line| ProfileError::BadFolded { path: path.to_path_buf(), line })
    }

    /// Parses `stack count` lines; the error is the 1-based bad line.
    pub fn parse(text: &str) -> Result<Folded, usize> {
        let mut lines = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (stack, count) = line.rsplit_once(' ').ok_or(i + 1)?;
            let count: u64 = count.parse().map_err(|_| i + 1)?;
            if stack.is_empty() {
                return Err(i + 1);
            }
            lines.push((stack.to_string(), count));
        }
        lines.sort();
        Ok(Folded { lines })
    }

    /// Total samples.
    pub fn samples(&self) -> u64 {
        self.lines.iter().map(|(_, n)| n).sum()
    }

    /// The folded text, one `stack count` line each.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        for (stack, count) in &self.lines {
            text.push_str(stack);
            text.push(' ');
            text.push_str(&count.to_string());
            text.push('\n');
        }
        text
    }
}

/// Replaces the comm of each sample's header line with its process's name.
/// The header is `comm pid/tid time: event:`; comm may contain spaces.
fn rename_roots(script: &str, names: &HashMap<u32, String>) -> String {
    let mut out = String::with_capacity(script.len());
    for line in script.lines() {
        if line.is_empty() || line.starts_with(char::is_whitespace) {
            out.push_str(line);
        } else {
            match header_pid(line).and_then(|(at, pid)| names.get(&pid).map(|n| (at, n))) {
                Some((at, name)) => {
                    out.push_str(&name.replace(' ', "_"));
                    out.push(' ');
                    out.push_str(&line[at..]);
                }
                None => out.push_str(line),
            }
        }
        out.push('\n');
    }
    out
}

/// The byte offset of the `pid/tid` word in a header line, and the pid.
fn header_pid(line: &str) -> Option<(usize, u32)> {
    let mut offset = 0;
    for word in line.split(' ') {
        if let Some((pid, tid)) = word.split_once('/') {
            if !pid.is_empty()
                && pid.bytes().all(|b| b.is_ascii_digit())
                && !tid.is_empty()
                && tid.bytes().all(|b| b.is_ascii_digit())
                && offset > 0
            {
                return Some((offset, pid.parse().ok()?));
            }
        }
        offset += word.len() + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "\
server 100/100 10.000001: cpu-clock: 
\t  245225 main.xorshift+0x45 (/srv/server)
\t  244a56 main.cpu+0x76 (/srv/server)

:101 100/101 10.010001: cpu-clock: 
\t  245225 main.xorshift+0x45 (/srv/server)
\t  244a56 main.cpu+0x76 (/srv/server)

:101 100/101 10.020001: cpu-clock: 
\tffffffff8201eef9 tcp_ack+0xa09 ([kernel.kallsyms])
\t  97ae syscall.write+0xe (/srv/server)

node 200/200 10.030001: cpu-clock: 
\t  7f0001 LazyCompile:*xorshift /app/work.js:18 (/tmp/perf-200.map)
";

    #[test]
    fn threads_named_by_tid_are_folded_under_their_process() {
        let names = HashMap::from([(100, "server".to_string())]);
        let folded = Folded::from_perf_script(SCRIPT, &names).unwrap();
        let text = folded.to_text();
        assert!(text.contains("server;main.cpu;main.xorshift 2\n"), "{text}");
        assert!(text.contains("server;syscall.write;tcp_ack_[k] 1\n"), "{text}");
        assert!(!text.contains(":101"), "{text}");
        assert_eq!(folded.samples(), 4);
    }

    #[test]
    fn jit_frames_from_perf_maps_are_marked() {
        let folded = Folded::from_perf_script(SCRIPT, &HashMap::new()).unwrap();
        assert!(folded.to_text().contains("node;LazyCompile:*xorshift /app/work.js:18_[j] 1"), "{}", folded.to_text());
    }

    #[test]
    fn a_line_without_a_count_is_named() {
        assert_eq!(Folded::parse("a;b 3\na;c\n"), Err(2));
        assert_eq!(Folded::parse("a;b 3\n\na;c 1\n").unwrap().samples(), 4);
    }

    #[test]
    fn header_pid_skips_a_comm_with_spaces() {
        assert_eq!(header_pid("Worker 1 7/9 1.0: cpu-clock:"), Some((9, 7)));
        assert_eq!(header_pid("no pid here"), None);
    }
}
