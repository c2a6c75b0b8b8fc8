//! The terminal as an observer of the runner: the progress bar and its
//! message (the app being built, the run's phase), notes above it, and after
//! each run its tables (tables.rs, microstates.rs, the profile's table);
//! at the end the summary table and where the results are.

use std::io;

use crate::observer::{Ran, RunObserver};
use crate::record::{RunRecord, Skipped};
use crate::terminal::progress::Progress;
use crate::terminal::tables;

pub struct Screen {
    progress: Progress,
    /// The server machine's cores, for the tables' per-core figures.
    cores: usize,
}

impl Screen {
    /// A screen for `runs` runs on a server machine of `cores` cores.
    pub fn new(runs: u64, cores: usize) -> Screen {
        Screen { progress: Progress::new(runs), cores }
    }

    /// The runs are over: the bar goes, the summary of `runs` and the path
    /// of the results follow on stdout.
    pub fn finish(&self, runs: &[RunRecord], results: &std::path::Path) {
        self.progress.finish();
        if !runs.is_empty() {
            println!("\nsummary (median over valid iterations)\n{}", tables::summary_table(runs));
        }
        println!("\nresults: {}", results.display());
    }
}

impl RunObserver for Screen {
    fn note(&self, line: &str) {
        self.progress.note(line);
    }

    fn doing(&self, what: String) {
        self.progress.set_message(what);
    }

    fn skipped(&mut self, skipped: &Skipped, runs: u64) -> io::Result<()> {
        self.progress.note(&format!("stampede: {}: {}", skipped.app, skipped.reason));
        (0..runs).for_each(|_| self.progress.inc());
        Ok(())
    }

    fn contract_skipped(&mut self, _run: &Ran) -> io::Result<()> {
        self.progress.inc();
        Ok(())
    }

    fn ran(&mut self, run: &Ran) -> io::Result<()> {
        let (title, record) = (run.title, run.record);
        self.progress.inc();
        for warning in &record.warnings {
            self.progress.note(&format!("stampede: {title}: warning: {warning}"));
        }
        if !record.valid && !run.interrupted {
            self.progress
                .note(&format!("stampede: {title}: invalid: {}", record.invalid_reason.as_deref().unwrap_or("")));
        }
        self.progress.println(&format!("\n{title}\n{}", tables::run_tables(record, run.runtime_version, self.cores)));
        if let Some(m) = &record.server.microstates {
            self.progress.println(&crate::terminal::microstates::table(m));
        }
        if let Some(profile) = &record.cpu_profile {
            self.progress.println(&crate::phases::profiling::table(profile));
        }
        Ok(())
    }
}
