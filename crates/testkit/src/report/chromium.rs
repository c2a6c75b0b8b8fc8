//! Headless Chromium for tests of the HTML report: loads a page, dumps the
//! DOM after its scripts ran and takes a screenshot, in its own process group
//! with a fresh profile, and always ends every process it started. Standard
//! library only, so `crates/report/tests/` can include it too (`#[path]`).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What headless Chromium produced for a page.
pub struct Rendered {
    /// The DOM after scripts ran (`--dump-dom`).
    pub dom: String,
    /// A screenshot of the page.
    pub screenshot: PathBuf,
}

const CHROMIUM_NAMES: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

/// The Chromium binary, or a panic that says how to install it. The HTML
/// tests must fail, not skip, when it is missing: CI installs it.
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("STAMPEDE_CHROMIUM") {
        return PathBuf::from(path);
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path_var) {
        for name in CHROMIUM_NAMES {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "headless Chromium is needed to check the HTML report but none of {CHROMIUM_NAMES:?} is on PATH: \
         install Debian's package with `apt-get install -y chromium` (.ci/run does), or set STAMPEDE_CHROMIUM"
    );
}

/// Loads `page` in headless Chromium: dumps the DOM after scripts ran and
/// takes a screenshot of `width`×`height` pixels.
pub fn render_in_chromium(page: &Path, work: &Path, width: u32, height: u32) -> Rendered {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    // The same window for both, so chart positions in the DOM match the picture.
    let size_arg = format!("--window-size={width},{height}");
    let scale_arg = "--force-device-scale-factor=1";
    let dom_out = chromium_run(work, "dom", &["--dump-dom", &size_arg, scale_arg, "--virtual-time-budget=5000", &url]);
    let screenshot = work.join("screenshot.png");
    let _ = std::fs::remove_file(&screenshot);
    let shot_arg = format!("--screenshot={}", screenshot.display());
    chromium_run(
        work,
        "shot",
        &[&shot_arg, &size_arg, scale_arg, "--hide-scrollbars", "--virtual-time-budget=5000", &url],
    );
    assert!(screenshot.is_file(), "Chromium wrote no screenshot at {}", screenshot.display());
    Rendered { dom: dom_out, screenshot }
}

/// Runs Chromium once in its own process group with a fresh profile, waits
/// with a deadline, and always ends the whole group.
fn chromium_run(work: &Path, tag: &str, args: &[&str]) -> String {
    let profile = work.join(format!("chromium-profile-{tag}"));
    let _ = std::fs::remove_dir_all(&profile);
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start Chromium ({}): {err}", chromium().display()));
    let pgid = child.id();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // End anything Chromium left behind in its group (helpers, zygotes).
    let _ = Command::new("kill").args(["-KILL", "--", &format!("-{pgid}")]).stderr(Stdio::null()).status();
    let _ = child.wait();
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    let _ = std::fs::remove_dir_all(&profile);
    match status {
        Some(status) if status.success() => out,
        Some(status) => panic!("Chromium failed ({status}):\n{err}"),
        None => panic!("Chromium did not finish within 90 s:\n{err}"),
    }
}
