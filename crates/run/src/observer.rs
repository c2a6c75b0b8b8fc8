//! Who hears what the runner does: the terminal (progress bar, notes, each
//! run's tables: terminal/screen.rs) and the results writer (results.json
//! after every run: results.rs). The runner walks the plan and tells them;
//! it prints nothing itself, so a new listener (a live export, a test)
//! needs no change to the loop.

use std::io;

use crate::record::{RunRecord, Skipped};

/// A finished run, as the runner reports it.
pub struct Ran<'a> {
    /// `app [knobs] profile #iteration`, for people.
    pub title: &'a str,
    /// The run's file stem (names.rs).
    pub stem: &'a str,
    /// Its record, already masked as results.json will hold it.
    pub record: &'a RunRecord,
    /// A signal cut it short.
    pub interrupted: bool,
    /// The app's runtime version, for its tables.
    pub runtime_version: &'a str,
}

/// Listens to the runner; every method does nothing unless implemented.
pub trait RunObserver {
    /// A line for people: a matrix note, why an app is skipped.
    fn note(&self, _line: &str) {}
    /// What is under way: an app's build, a run's phase.
    fn doing(&self, _what: String) {}
    /// An app is built; its runs follow.
    fn prepared(&mut self, _app: &str, _runtime_version: &str) -> io::Result<()> {
        Ok(())
    }
    /// An app could not be prepared: its `runs` runs are skipped.
    fn skipped(&mut self, _skipped: &Skipped, _runs: u64) -> io::Result<()> {
        Ok(())
    }
    /// A run was not started: its profile's contract was broken on this
    /// combination's first run (its record says so).
    fn contract_skipped(&mut self, _run: &Ran) -> io::Result<()> {
        Ok(())
    }
    /// A run ended, measured or invalid.
    fn ran(&mut self, _run: &Ran) -> io::Result<()> {
        Ok(())
    }
}

/// Every observer, told in order.
pub struct Observers<'a>(pub Vec<&'a mut dyn RunObserver>);

impl Observers<'_> {
    pub fn note(&self, line: &str) {
        self.0.iter().for_each(|o| o.note(line));
    }

    pub fn doing(&self, what: &str) {
        self.0.iter().for_each(|o| o.doing(what.to_owned()));
    }

    pub fn prepared(&mut self, app: &str, runtime_version: &str) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|o| o.prepared(app, runtime_version))
    }

    pub fn skipped(&mut self, skipped: &Skipped, runs: u64) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|o| o.skipped(skipped, runs))
    }

    pub fn contract_skipped(&mut self, run: &Ran) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|o| o.contract_skipped(run))
    }

    pub fn ran(&mut self, run: &Ran) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|o| o.ran(run))
    }
}
