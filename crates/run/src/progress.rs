//! The progress bar on stderr while a scenario runs: which run of how many,
//! and what phase it is in. Hidden when stderr is not a terminal (indicatif's
//! stderr target draws nothing then), so logs and CI output stay clean.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    pub fn new(total: u64) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs  {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar }
    }

    pub fn set_message(&self, message: String) {
        self.bar.set_message(message);
    }

    pub fn inc(&self) {
        self.bar.inc(1);
    }

    /// Prints above the bar (to stdout, or stderr for notes) without tearing it.
    pub fn println(&self, text: &str) {
        self.bar.suspend(|| println!("{text}"));
    }

    pub fn note(&self, text: &str) {
        self.bar.suspend(|| eprintln!("{text}"));
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
