//! The progress bar on stderr while a scenario runs (which run of how many,
//! and what phase it is in) or while `stampede load` runs (seconds of how
//! many, and the live figures): one style for both. Hidden when stderr is not
//! a terminal (indicatif's stderr target draws nothing then), so logs and CI
//! output stay clean; without colour when `NO_COLOR` is set.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// The bar of `stampede run`: `total` runs, redrawn five times a second.
    pub fn new(total: u64) -> Progress {
        let p = Progress::with_unit(total, "runs", true);
        p.bar.enable_steady_tick(Duration::from_millis(200));
        p
    }

    /// A bar counting `total` of `unit`, drawn on stderr when `shown` (and
    /// stderr is a terminal), redrawn when told.
    pub fn with_unit(total: u64, unit: &str, shown: bool) -> Progress {
        let target = if shown { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        bar.set_style(style(unit, colour_wanted()));
        Progress { bar }
    }

    pub fn set_message(&self, message: String) {
        self.bar.set_message(message);
    }

    pub fn inc(&self) {
        self.bar.inc(1);
    }

    /// Moves the bar to `pos` and shows `message` beside it, in one redraw.
    pub fn update(&self, pos: u64, message: String) {
        self.bar.set_position(pos);
        self.bar.set_message(message);
        self.bar.tick();
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

/// `NO_COLOR` set to anything non-empty turns colour off (no-color.org).
fn colour_wanted() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Spinner, elapsed time, the bar, `pos/len unit`, then the message.
fn style(unit: &str, colour: bool) -> ProgressStyle {
    let bar = if colour { "{bar:30.cyan/blue}" } else { "{bar:30}" };
    ProgressStyle::with_template(&format!("{{spinner}} [{{elapsed_precise}}] {bar} {{pos}}/{{len}} {unit}  {{msg}}"))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}
