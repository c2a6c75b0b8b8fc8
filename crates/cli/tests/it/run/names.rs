//! Names that become file names: an app manifest whose `name` is a path is
//! refused when it is read (one line naming the manifest and the field, exit
//! 2, nothing written outside `--out`); a profile named like a path
//! (`api/v1`) is a label, sanitised in file names, and its runs work.
//! Issue 20, medium 7.

use stampede_testkit::run;

use run::{assert_nothing_left, text, Scratch};

#[test]
fn an_app_name_with_dot_dot_is_refused_and_writes_nothing_outside_out() {
    let s = Scratch::new("evilname");
    let target = s.dir.join("outside");
    // From <out>/<stamp>/logs, four levels up is the scratch folder's parent.
    let name = format!("../../../../{}/outside/APP", s.dir.file_name().unwrap().to_str().unwrap());
    let manifest = s.manifest(
        "evil",
        &format!("name = \"{name}\"\nrequires = [\"true\"]\nbuild = \"true\"\nrun = \"exec false\"\n"),
    );
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\ncheck = false\n[[profiles]]\npath = \"/\"\nduration = \"1s\"\n",
        manifest.display()
    ));
    let out = s
        .stampede()
        .args(["run", scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()])
        .current_dir(&s.dir)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("stampede: error: "), "{stderr}");
    assert!(
        stderr.contains(&manifest.display().to_string()) && stderr.contains("`name`") && stderr.contains(".."),
        "{stderr}"
    );
    assert!(!target.exists(), "something was written at {}", target.display());
}

#[test]
fn two_profile_names_that_give_the_same_file_name_are_refused() {
    let s = Scratch::new("dupname");
    let app = s.app("alpha", "");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\n[[profiles]]\nname = \"a/b\"\npath = \"/\"\n[[profiles]]\nname = \"a_b\"\npath = \"/json\"\n",
        app.display()
    ));
    let out =
        s.stampede().args(["run", scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]).output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.contains("scenario.toml") && stderr.contains("profiles[1].name") && stderr.contains("used twice"),
        "{stderr}"
    );
}

#[test]
fn a_profile_named_like_a_path_runs_and_its_log_stays_in_logs() {
    let s = Scratch::new("slashprofile");
    let app = s.app("alpha", "");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\ncheck = false\n[[profiles]]\nname = \"api/v1\"\npath = \"/plaintext\"\nconnections = 2\nduration = \"1s\"\nwarmup = \"0s\"\n",
        app.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc = s.results().unwrap();
    let run = &doc["runs"][0];
    assert_eq!(run["valid"], true, "{}", run["invalid_reason"]);
    assert_eq!(run["profile"], "api/v1", "the label is kept as written");
    let stamp = std::fs::read_dir(s.out()).unwrap().flatten().next().unwrap().path();
    let logs: Vec<String> = std::fs::read_dir(stamp.join("logs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(logs.iter().any(|l| l.contains("api_v1") && l.ends_with(".log")), "{logs:?}");
    assert_nothing_left(&s);
}
