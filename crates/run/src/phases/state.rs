//! What the phases of one run share: the scenario's context and this run's
//! spec (given), the run record they fill in, and what an earlier phase
//! found that a later one needs (the URLs the server answers on, the
//! contract's verdict, whether the server died while it was measured).
//! Also how a run that cannot go on ends: [`RunState::fail`].

use std::path::Path;
use std::time::Duration;

use stampede_schema::LoadResult;

use crate::database::Database;
use crate::interrupt::interrupted;
use crate::phases::contract::Checked;
use crate::phases::loadgen::{LoadError, LoadPhase};
use crate::record::RunRecord;
use crate::scenario::hosts::Hosts;
use crate::scenario::manifest::Manifest;
use crate::scenario::matrix::Combination;
use crate::scenario::names::run_stem;
use crate::scenario::{Profile, Scenario};
use crate::server::remote_server::ServerHost;
use crate::server::served::{Failure, Served};

/// What every run of a scenario shares.
pub struct RunContext<'a> {
    pub exe: &'a Path,
    pub scenario: &'a Scenario,
    pub logs: &'a Path,
    /// Called with a short phase description (for the progress bar).
    pub phase: &'a dyn Fn(&str),
    /// Profile measured phases with perf (`--profile`, and perf is usable).
    pub profiling: bool,
    /// The folder of results.json, where flame graphs are written.
    pub results_dir: &'a Path,
    /// Prints a one-line note above the progress bar.
    pub note: &'a dyn Fn(&str),
    /// `[hosts] server`: the server runs there, through `stampede agent`.
    pub server_host: Option<&'a ServerHost>,
    /// The scenario's `[database]`, when it has one.
    pub database: Option<&'a Database>,
    /// Its connection settings, given to every app (empty without one).
    pub database_env: &'a [(String, String)],
}

pub struct RunSpec<'a> {
    pub app: &'a Manifest,
    pub combo: &'a Combination,
    pub profile: &'a Profile,
    pub iteration: u32,
    pub build_time_ms: f64,
    /// Run `stampede check` (false once this app × knobs has been checked).
    pub check: bool,
    /// The contracts checked on this app × knobs' first run, when `check` is false.
    pub checked: &'a [Checked],
}

/// A finished run; `interrupted` when a signal (Ctrl-C, SIGTERM) cut it short.
pub struct Outcome {
    pub record: RunRecord,
    pub interrupted: bool,
    /// The contracts this run checked, with their verdicts (none when it checked none).
    pub contract: Option<Vec<Checked>>,
    /// The one line saying the server's host was lost (its agent died): the
    /// scenario stops after this run.
    pub host_lost: Option<String>,
}

/// One run between its phases.
pub struct RunState<'a> {
    pub ctx: &'a RunContext<'a>,
    pub spec: &'a RunSpec<'a>,
    /// Valid until a phase or the judgement says why not.
    pub record: RunRecord,
    /// The name of this run's log, interval log and flame graph files.
    pub stem: String,
    /// The spec's profile with its paths at the server's own URLs.
    pub profile: Profile,
    /// Where checks reach the server (start.rs).
    pub base_url: String,
    /// Where the load generator reaches it: `[hosts] load` reach a local
    /// server at `[hosts] server_address` (start.rs).
    pub load_base: String,
    /// The contracts checked by this run (check.rs).
    pub verdict: Option<Vec<Checked>>,
    /// The verdict broke a contract this run's profile loads: the run ends
    /// and the runner skips the profiles the contract governs.
    pub contract_broken: bool,
    /// The interval log the measured phase asked for (measure.rs).
    pub hdr_log: Option<String>,
    /// The server had exited by the end of the measured phase (latency.rs).
    pub died_measuring: bool,
}

impl<'a> RunState<'a> {
    pub fn new(ctx: &'a RunContext<'a>, spec: &'a RunSpec<'a>) -> RunState<'a> {
        let mut record = crate::record::failed(
            &spec.app.name,
            &spec.combo.knobs,
            spec.profile,
            spec.iteration,
            spec.build_time_ms,
            String::new(),
        );
        record.valid = true;
        record.invalid_reason = None;
        record.contract = spec.app.contract().unwrap_or_else(|| "none".into());
        RunState {
            ctx,
            spec,
            record,
            stem: run_stem(&spec.app.name, &spec.combo.label(), &spec.profile.name, spec.iteration),
            profile: at_own_urls(spec.profile, &spec.app.urls),
            base_url: String::new(),
            load_base: String::new(),
            verdict: None,
            contract_broken: false,
            hdr_log: None,
            died_measuring: false,
        }
    }

    /// `[hosts] load` when the load is sent from other hosts.
    pub fn load_hosts(&self) -> Option<&'a Hosts> {
        self.ctx.scenario.hosts.as_ref().filter(|h| !h.load.is_empty())
    }

    /// The generator's pinned CPUs (`[pinning] loadgen`).
    pub fn loadgen_cpus(&self) -> Option<&'a str> {
        self.ctx.scenario.pinning.loadgen.as_ref().map(|t| t.as_str())
    }

    /// A closed-loop load phase of `duration` against the server.
    pub fn load_phase(&self, duration: Duration) -> LoadPhase<'_> {
        LoadPhase {
            exe: self.ctx.exe,
            base_url: self.load_base.clone(),
            profile: &self.profile,
            dir: &self.ctx.scenario.dir,
            duration,
            cpus: self.loadgen_cpus(),
            hosts: self.load_hosts(),
            hdr_log: None,
            rate: None,
            slow_log: 0,
        }
    }

    /// The run ends here, invalid for `failure`'s reason.
    pub fn fail(mut self, failure: Failure) -> Outcome {
        let (interrupted, host_lost) = match failure {
            Failure::Run(reason) => {
                self.record.invalidate(reason);
                (false, None)
            }
            Failure::Interrupted => {
                self.record.invalidate(crate::interrupt::reason());
                (true, None)
            }
            Failure::Host(line) => {
                self.record.invalidate(line.clone());
                (false, Some(line))
            }
        };
        let contract = self.verdict.filter(|_| self.contract_broken);
        Outcome { record: self.record, interrupted, contract, host_lost }
    }
}

/// Runs `phase` against `server`, stopping when a signal comes or the
/// server's host is lost.
pub fn load(phase: &LoadPhase, server: &dyn Served) -> Result<LoadResult, LoadError> {
    phase.run(|pid| server.set_loadgen(pid), &|| interrupted() || !server.alive())
}

/// `profile` with every path it loads (`path`, `urls`, `mix`) rewritten
/// through the app's own URLs; full URLs are left as they are.
fn at_own_urls(profile: &Profile, urls: &stampede_contract::UrlMap) -> Profile {
    let mut own = profile.clone();
    let rewrite = |path: &mut String| {
        if path.starts_with('/') {
            *path = urls.rewrite(path);
        }
    };
    own.path.iter_mut().for_each(rewrite);
    own.spec.urls.iter_mut().for_each(rewrite);
    own.spec.mix.iter_mut().for_each(|target| rewrite(&mut target.url));
    own
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_loads_the_servers_own_urls() {
        let profile: Profile = toml::from_str("path = \"/queries?queries=20\"").unwrap();
        let urls = stampede_contract::UrlMap::parse_pairs(&["queries=/queries/"]).unwrap();
        assert_eq!(at_own_urls(&profile, &urls).path.as_deref(), Some("/queries/20"));
        assert_eq!(at_own_urls(&profile, &Default::default()).path.as_deref(), Some("/queries?queries=20"));
    }
}
