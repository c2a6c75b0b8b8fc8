//! `stampede check --contract C URL` as a gate before the load, with the
//! contract the app's manifest claims: a server that does not do the
//! contract's work gets no numbers (its run is marked invalid with the
//! failing rules), since a fast wrong answer is not a result. The checker's
//! verdict comes back as its `stampede.check/1` document (`check --json`),
//! read into the one declared type, never parsed from its human table.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use std::collections::BTreeSet;

use crate::scenario::manifest::Manifest;
use stampede_schema::check::CheckReport;
use stampede_schema::run::ContractVerdict;

use crate::server::subprocess::{self, last_lines, SubprocessError};

/// The checker's per-request timeout (`stampede check --timeout`'s default,
/// which run does not change).
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);
/// Beyond the contract's own budget: starting the checker, connecting to the
/// database, reading its tables before and after.
const CHECK_MARGIN: Duration = Duration::from_secs(30);

/// How long `stampede check` of `contract` may run: what the checker allows
/// itself for every request and phase of it (`Contract::time_budget`) and a
/// margin, so a slow machine makes the check slower, never invalid by a
/// clock. A contract that cannot be read (the checker then says why) gets
/// the margin alone.
fn check_limit(contract: &str) -> Duration {
    stampede_contract::resolve(contract).map_or(Duration::ZERO, |c| c.time_budget(CHECK_TIMEOUT)) + CHECK_MARGIN
}

/// One contract checked on an app × knobs: what it governs and its verdict.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The endpoints its rules ask (`db`, `queries`, …); empty: every one
    /// (a contract that could not be read).
    pub endpoints: BTreeSet<String>,
    /// The contract the app claims (it also governs the profiles no checked
    /// contract names), not one added for the scenario's database.
    pub claimed: bool,
    pub verdict: ContractVerdict,
    /// Why it is broken, in one line naming every failing rule; `None` when it passed.
    pub broken: Option<String>,
}

pub enum Verdict {
    Checked(Checked),
    Interrupted,
}

/// The contracts of `all` that govern a profile loading `path`: those whose
/// endpoints include it, else the claimed one.
pub fn governing<'a>(all: &'a [Checked], path: &str) -> Vec<&'a Checked> {
    let endpoint = stampede_contract::endpoint_of(path);
    let named: Vec<&Checked> =
        all.iter().filter(|c| c.endpoints.is_empty() || c.endpoints.contains(endpoint)).collect();
    if named.is_empty() {
        all.iter().filter(|c| c.claimed).collect()
    } else {
        named
    }
}

pub fn check(
    exe: &Path,
    contract: &str,
    claimed: bool,
    url: &str,
    database: Option<&str>,
    app: &Manifest,
    interrupted: &dyn Fn() -> bool,
) -> Verdict {
    let mut cmd = Command::new(exe);
    cmd.args(["check", "--json", "--contract", contract, url]).env("NO_COLOR", "1");
    for pair in app.urls.pairs() {
        cmd.arg(format!("--url={pair}"));
    }
    // An arena framework is held to the rules of the profiles it enables.
    if let Some(arena) = app.arena.as_ref().filter(|_| claimed && !app.urls.is_empty()) {
        cmd.arg(format!("--profiles={}", arena.driven.join(",")));
    }
    if let Some(database) = database {
        cmd.args(["--database", database]);
    }
    let endpoints = stampede_contract::resolve(contract).map(|c| c.endpoints()).unwrap_or_default();
    let checked = |verdict: ContractVerdict, broken: Option<String>| {
        Verdict::Checked(Checked { endpoints: endpoints.clone(), claimed, verdict, broken })
    };
    let unjudged = || ContractVerdict { contract: contract.to_string(), verdict: "fail".into(), ..Default::default() };
    match subprocess::run(cmd, "stampede check", check_limit(contract), None, interrupted) {
        Ok(done) => match done.status.code() {
            Some(0) => checked(verdict_of(&done.output).unwrap_or_else(unjudged), None),
            Some(1) => checked(
                verdict_of(&done.output).unwrap_or_else(unjudged),
                Some(format!("contract check failed: {}", failing_rules(&done.output))),
            ),
            code => checked(
                unjudged(),
                Some(format!(
                    "contract {contract} check could not run (exit {}): {}",
                    code.map(|c| c.to_string()).unwrap_or_else(|| "by signal".into()),
                    last_lines(&done.output, 2)
                )),
            ),
        },
        Err(SubprocessError::Interrupted) => Verdict::Interrupted,
        Err(err) => checked(unjudged(), Some(format!("contract check: {err}"))),
    }
}

/// The checker's `stampede.check/1` document, first in its output.
fn report_of(output: &str) -> Option<CheckReport> {
    serde_json::Deserializer::from_str(output).into_iter::<CheckReport>().next().and_then(Result::ok)
}

/// The verdict recorded with each profile: pass, warn or fail and the rule ids.
fn verdict_of(output: &str) -> Option<ContractVerdict> {
    let report = report_of(output)?;
    let ids = |keep: fn(&stampede_schema::check::RuleResult) -> bool| {
        report.results.iter().filter(|r| keep(r)).map(|r| r.id.clone()).collect::<Vec<_>>()
    };
    let failed = ids(|r| !r.passed);
    let warned = ids(|r| r.passed && r.warning);
    let verdict = if !failed.is_empty() {
        "fail"
    } else if !warned.is_empty() {
        "warn"
    } else {
        "pass"
    };
    Some(ContractVerdict {
        contract: report.contract.clone(),
        verdict: verdict.into(),
        rules: report.results.len() as u32,
        failed,
        warned,
    })
}

/// The failed rules of the checker's `stampede.check/1` document: every
/// failing rule's id, then the first one's reason (`id: reason`), and the
/// rules that passed with a warning; the output's last lines when it
/// printed no document.
fn failing_rules(output: &str) -> String {
    let Some(report) = report_of(output).filter(|r| r.failed > 0) else {
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
    /// Issue 42: two correct servers were invalid with "`stampede check` did
    /// not finish within 120s" on a busy machine, while the db check's own
    /// concurrent phases allow 30 s a request each.
    #[test]
    fn the_check_limit_follows_the_contracts_own_budget() {
        let db = super::check_limit("db");
        assert!(db > std::time::Duration::from_secs(120), "{db:?}");
        assert!(super::check_limit("stampede") < db);
        assert_eq!(super::check_limit("no-such-contract"), super::CHECK_MARGIN);
    }

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
        let verdict = verdict_of(&output).unwrap();
        assert_eq!((verdict.verdict.as_str(), verdict.rules), ("fail", 2));
        assert_eq!(verdict.failed, ["json-type"]);
    }

    #[test]
    fn a_failing_db_contract_governs_only_the_database_endpoints() {
        let contract = |name: &str, claimed: bool, broken: bool| Checked {
            endpoints: stampede_contract::resolve(name).unwrap().endpoints(),
            claimed,
            verdict: ContractVerdict { contract: name.into(), ..Default::default() },
            broken: broken.then(|| "contract check failed".into()),
        };
        let all = [contract("tfb", true, false), contract("db", false, true)];
        let names = |path: &str| governing(&all, path).iter().map(|c| c.verdict.contract.clone()).collect::<Vec<_>>();
        assert_eq!(names("/plaintext"), ["tfb"]);
        assert_eq!(names("/queries?queries=20"), ["db"]);
        assert_eq!(names("/updates?queries=5"), ["db"]);
        assert_eq!(names("/other"), ["tfb"], "what no contract names, the claimed one governs");
        assert!(governing(&all[1..], "/plaintext").is_empty(), "db alone governs no /plaintext");
    }
}
