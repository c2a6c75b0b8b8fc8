//! The live progress line of `stampede load`: drawn and redrawn on a terminal
//! (a real one, tmux's, driven by the test), cleared before the result, and
//! absent when stdout or stderr is not a terminal or with `--quiet`, so that
//! piped output and logs stay exactly what they were.

use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::load::stampede;
use std::process::Command;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);

/// A progress line: `[00:00:02] …  2/4 s  812 req/s  0 errors  p99 …`.
fn progress_lines(screen: &str) -> Vec<String> {
    screen.lines().filter(|l| l.contains(" req/s ") && l.contains(" errors ")).map(str::to_string).collect()
}

#[test]
fn no_progress_when_output_is_not_a_terminal() {
    let srv = Hostile::start(Trick::None);
    let out = stampede(&["load", "-d", "2s", "-c", "2", "--rate", "200", &srv.url("/")], DEADLINE);
    assert!(out.status.success());
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("Requests/sec"), "{stdout}");
    assert!(progress_lines(&stdout).is_empty() && progress_lines(&stderr).is_empty(), "{stdout}\n{stderr}");
    assert!(!stderr.contains('\r') && !stderr.contains('\u{1b}'), "nothing drawn on stderr: {stderr:?}");
}

/// A tmux server of the test's own (its own socket), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(name: &str, shell_command: &str) -> Option<Tmux> {
        let tmux = Tmux { socket: format!("stampede-{name}-{}", std::process::id()) };
        let ok = tmux
            .cmd(&["new-session", "-d", "-x", "160", "-y", "30", "-s", "t"])
            .arg(format!("{shell_command}; echo EXITED; sleep 60"))
            .status()
            .ok()?
            .success();
        ok.then_some(tmux)
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]).args(args);
        c
    }

    /// The screen, with colour escapes when `escapes`.
    fn screen(&self, escapes: bool) -> String {
        let args: &[&str] =
            if escapes { &["capture-pane", "-p", "-e", "-t", "t"] } else { &["capture-pane", "-p", "-t", "t"] };
        String::from_utf8_lossy(&self.cmd(args).output().expect("tmux capture-pane").stdout).into_owned()
    }

    /// Captures the screen until the command has exited; every capture.
    fn watch_until_exit(&self, escapes: bool) -> Vec<String> {
        let start = Instant::now();
        let mut screens = Vec::new();
        loop {
            let screen = self.screen(escapes);
            let exited = screen.contains("EXITED");
            screens.push(screen);
            if exited {
                return screens;
            }
            assert!(start.elapsed() < DEADLINE, "stampede did not finish in tmux:\n{}", screens.last().unwrap());
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]).status();
    }
}

fn tmux_available() -> bool {
    let found = Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success());
    if !found {
        println!("SKIP progress: tmux is not installed (scripts/deps.sh installs it)");
    }
    found
}

fn load_command(srv: &Hostile, extra: &str) -> String {
    format!("{extra} {} load -d 4s -c 2 --rate 300 {}", stampede_testkit::bin().display(), srv.url("/"))
}

#[test]
fn progress_updates_on_a_terminal_and_is_cleared_before_the_result() {
    if !tmux_available() {
        return;
    }
    let srv = Hostile::start(Trick::None);
    let tmux = Tmux::start("live", &load_command(&srv, "")).expect("tmux starts");
    let screens = tmux.watch_until_exit(true);
    let mut positions: Vec<String> = screens
        .iter()
        .flat_map(|s| progress_lines(s))
        .filter_map(|l| l.split_whitespace().find(|w| w.ends_with("/4")).map(str::to_string))
        .collect();
    positions.dedup();
    assert!(positions.len() >= 2, "the line is redrawn as the run goes: {positions:?}\n{screens:#?}");
    assert!(screens.iter().flat_map(|s| progress_lines(s)).any(|l| l.contains("\u{1b}[36m")), "the bar is in colour");
    let last = screens.last().unwrap();
    assert!(last.contains("Requests/sec"), "{last}");
    assert!(progress_lines(last).is_empty(), "the line is gone once the result prints:\n{last}");
}

#[test]
fn no_colour_with_no_color() {
    if !tmux_available() {
        return;
    }
    let srv = Hostile::start(Trick::None);
    let tmux = Tmux::start("nocolor", &load_command(&srv, "NO_COLOR=1")).expect("tmux starts");
    let lines: Vec<String> = tmux.watch_until_exit(true).iter().flat_map(|s| progress_lines(s)).collect();
    assert!(!lines.is_empty(), "still drawn");
    assert!(lines.iter().all(|l| !l.contains("\u{1b}[")), "{lines:?}");
}

#[test]
fn no_progress_on_a_terminal_with_quiet_or_stdout_redirected() {
    if !tmux_available() {
        return;
    }
    let srv = Hostile::start(Trick::None);
    let file = std::env::temp_dir().join(format!("stampede-progress-{}.txt", std::process::id()));
    let redirected = format!("{} > {}", load_command(&srv, ""), file.display());
    let quiet = load_command(&srv, "").replacen(" load ", " load --quiet ", 1);
    for (name, command) in [("redirected", redirected), ("quiet", quiet)] {
        let tmux = Tmux::start(name, &command).expect("tmux starts");
        let screens = tmux.watch_until_exit(false);
        assert!(screens.iter().all(|s| progress_lines(s).is_empty()), "{name}: {screens:#?}");
    }
    let written = std::fs::read_to_string(&file).unwrap();
    let _ = std::fs::remove_file(&file);
    assert!(written.contains("Requests/sec") && progress_lines(&written).is_empty(), "{written}");
}
