//! `stampede check --contract C URL` as a gate before the load, with the
//! contract the app's manifest claims: a server that does not do the
//! contract's work gets no numbers (its run is marked invalid with the
//! failing rules), since a fast wrong answer is not a result.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::subprocess::{self, last_lines, SubprocessError};

const CHECK_LIMIT: Duration = Duration::from_secs(120);

pub enum Verdict {
    Honoured,
    /// Why not, in one line.
    Broken(String),
    Interrupted,
}

pub fn check(exe: &Path, contract: &str, url: &str, interrupted: &dyn Fn() -> bool) -> Verdict {
    let mut cmd = Command::new(exe);
    cmd.args(["check", "--contract", contract, url]).env("NO_COLOR", "1");
    match subprocess::run(cmd, "stampede check", CHECK_LIMIT, None, interrupted) {
        Ok(done) => match done.status.code() {
            Some(0) => Verdict::Honoured,
            Some(1) => Verdict::Broken(format!("contract check failed: {}", failing_rules(&done.output))),
            code => Verdict::Broken(format!(
                "contract check could not run (exit {}): {}",
                code.map(|c| c.to_string()).unwrap_or_else(|| "by signal".into()),
                last_lines(&done.output, 2)
            )),
        },
        Err(SubprocessError::Interrupted) => Verdict::Interrupted,
        Err(err) => Verdict::Broken(format!("contract check: {err}")),
    }
}

/// The lines of the checker's table that report a failure, or its last lines.
fn failing_rules(output: &str) -> String {
    let failing: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| {
            let lower = l.to_ascii_lowercase();
            lower.contains("fail") && !lower.starts_with("stampede:")
        })
        .take(3)
        .collect();
    if failing.is_empty() { last_lines(output, 3) } else { failing.join(" | ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_rules_are_picked_from_the_table() {
        let out = "rule  result\n/plaintext body  ok\n/json Content-Type  FAIL  got text/html\n3 rules, 1 failed\n";
        assert_eq!(failing_rules(out), "/json Content-Type  FAIL  got text/html | 3 rules, 1 failed");
        assert_eq!(failing_rules("x\ny\n"), "x | y");
    }
}
