//! The live line of `stampede load` on a terminal: elapsed seconds of the
//! total (or requests of `-n`), requests per second, errors and the p99 of
//! the newest whole second, redrawn once a second on stderr in the style of
//! `stampede run`'s bar. Only when both stdout and stderr are terminals and
//! `--quiet` is not given: a result piped or redirected (and the `--json` a
//! `stampede run` reads) stays clean, and so does a log of stderr.

use stampede_load::progress::Live;
use stampede_load::{text, LoadConfig, Stop};
use stampede_run::terminal::progress::Progress;
use std::io::IsTerminal;

pub struct LoadProgress {
    bar: Progress,
    by_requests: bool,
}

impl LoadProgress {
    /// The line for `cfg`, or none when nothing should be drawn.
    pub fn new(cfg: &LoadConfig, quiet: bool) -> Option<LoadProgress> {
        if quiet || !std::io::stdout().is_terminal() || !std::io::stderr().is_terminal() {
            return None;
        }
        let (total, unit, by_requests) = match cfg.stop {
            Stop::Duration(d) => ((cfg.warmup + d).as_secs(), "s", false),
            Stop::Requests(n) => (n, "requests", true),
        };
        Some(LoadProgress { bar: Progress::with_unit(total, unit, true), by_requests })
    }

    pub fn show(&self, live: &Live) {
        let pos = if self.by_requests { live.requests } else { live.elapsed.as_secs() };
        self.bar.update(pos, line(live));
    }

    /// Clears the line, so the result prints as it would without it.
    pub fn finish(&self) {
        self.bar.finish();
    }
}

fn line(live: &Live) -> String {
    if live.warming_up {
        return "warming up (not recorded)".into();
    }
    format!("{:.0} req/s  {} errors  p99 {}", live.rps, live.errors, text::dur(live.p99_us))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_line_says_rate_errors_and_p99_or_that_it_warms_up() {
        let mut live = Live {
            elapsed: Duration::from_secs(3),
            warming_up: false,
            requests: 3000,
            errors: 2,
            rps: 1012.0,
            p99_us: 1250.0,
        };
        assert_eq!(line(&live), "1012 req/s  2 errors  p99 1.25ms");
        live.warming_up = true;
        assert!(line(&live).starts_with("warming up"));
    }
}
