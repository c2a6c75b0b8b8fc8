//! The check phase: `stampede check` of the app's claimed contract, then
//! with a database its rules (contracts/db.toml), which read the rows back
//! through the database. Each governs the profiles on its own endpoints
//! (contract.rs `governing`): a broken one ends this run, and the runner
//! skips the other profiles it governs. Only an app × knobs' first run
//! checks; the later ones are given its verdicts.

use crate::database::Database;
use crate::interrupt::interrupted;
use crate::phases::contract::{self, Verdict};
use crate::phases::state::RunState;
use crate::server::served::Failure;

/// The built-in contract of the database endpoints, checked with a database.
const DATABASE_CONTRACT: &str = "db";

/// Checks the contracts (when this run is the one that checks) and ends the
/// run when one that governs its profile is broken.
pub fn check(run: &mut RunState) -> Result<(), Failure> {
    let (ctx, spec) = (run.ctx, run.spec);
    let claimed = spec.app.contract();
    let database_url = ctx.database.map(Database::url);
    // An app that claims `db` itself is checked once, with the database.
    let own = claimed.as_deref().filter(|c| *c != DATABASE_CONTRACT || database_url.is_none());
    let contracts = [own.map(|c| (c, None, true)), database_url.map(|url| (DATABASE_CONTRACT, Some(url), false))];
    let mut checked = spec.checked.to_vec();
    for (contract, database, claimed) in contracts.into_iter().flatten().filter(|_| spec.check) {
        (ctx.phase)("checking the contract");
        match contract::check(ctx.exe, contract, claimed, &run.base_url, database, spec.app, &interrupted) {
            Verdict::Checked(one) => checked.push(one),
            Verdict::Interrupted => return Err(Failure::Interrupted),
        }
    }
    run.verdict = spec.check.then(|| checked.clone());
    let governing = contract::governing(&checked, &run.record.path);
    run.record.verdicts = governing.iter().map(|c| c.verdict.clone()).collect();
    let broken: Vec<&str> = governing.iter().filter_map(|c| c.broken.as_deref()).collect();
    if !broken.is_empty() {
        run.contract_broken = true;
        return Err(Failure::Run(broken.join("; ")));
    }
    Ok(())
}
