//! `stampede check --contract C URL` as a gate before the load, with the
//! contract the app's manifest claims: a server that does not do the
//! contract's work gets no numbers (its run is marked invalid with the
//! failing rules), since a fast wrong answer is not a result. The checker's
//! verdict comes back as its `stampede.check/1` document (`check --json`),
//! read into the one declared type, never parsed from its human table.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use stampede_check::UrlMap;
use stampede_schema::check::CheckReport;

use crate::subprocess::{self, last_lines, SubprocessError};

const CHECK_LIMIT: Duration = Duration::from_secs(120);

pub enum Verdict {
    Honoured,
    /// Why not, in one line.
    Broken(String),
    Interrupted,
}

pub fn check(
    exe: &Path,
    contract: &str,
    url: &str,
    database: Option<&str>,
    urls: &UrlMap,
    interrupted: &dyn Fn() -> bool,
) -> Verdict {
    let mut cmd = Command::new(exe);
    cmd.args(["check", "--json", "--contract", contract, url]).env("NO_COLOR", "1");
    for pair in urls.pairs() {
        cmd.arg(format!("--url={pair}"));
    }
    if let Some(database) = database {
        cmd.args(["--database", database]);
    }
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

/// The failed rules of the checker's `stampede.check/1` document: every
/// failing rule's id, then the first one's reason (`id: reason`), and the
/// rules that passed with a warning; the output's last lines when it
/// printed no document.
fn failing_rules(output: &str) -> String {
    let report = serde_json::Deserializer::from_str(output).into_iter::<CheckReport>().next().and_then(Result::ok);
    let Some(report) = report.filter(|r| r.failed > 0) else {
        return last_lines(output, 3);
    };
    let failing: Vec<&str> = report.results.iter().filter(|r| !r.passed).map(|r| r.id.as_str()).collect();
    let first = report.failures().into_iter().next().unwrap_or_default();
    let mut line = format!(
        "{} of {} rules of {} fail ({})",
        failing.len(),
        report.results.len(),
        report.contract,
        failing.join(", ")
    );
    line.push_str(&format!("; first: {first}"));
    let warned: Vec<&str> = report.results.iter().filter(|r| r.passed && r.warning).map(|r| r.id.as_str()).collect();
    if !warned.is_empty() {
        line.push_str(&format!("; with a warning: {}", warned.join(", ")));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_schema::check::RuleResult;

    #[test]
    fn failing_rules_are_read_from_the_check_document() {
        let broken =
            RuleResult { id: "json-type".into(), reason: Some("got text/html".into()), ..RuleResult::default() };
        let report = CheckReport::new(
            "stampede",
            "2",
            "http://x/".into(),
            vec![RuleResult::pass("plaintext", "GET /plaintext"), broken],
        );
        let output = format!("{}\nstderr line\n", serde_json::to_string_pretty(&report).unwrap());
        assert_eq!(
            failing_rules(&output),
            "1 of 2 rules of stampede fail (json-type); first: json-type: got text/html"
        );
        assert_eq!(failing_rules("x\ny\n"), "x | y");
    }
}
