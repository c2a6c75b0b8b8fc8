//! A scenario is code (issue 42, item 7): `stampede run` says which commands
//! it will execute and which ssh configuration it will hand to ssh before it
//! starts, and `--print-plan` says so and runs nothing. The commands here
//! would leave marker files behind if they ran.

use stampede_testkit::run::{text, Scratch};

#[test]
fn print_plan_names_every_command_and_the_ssh_config_and_runs_none() {
    let s = Scratch::new("plan");
    let built = s.dir.join("built");
    let proxied = s.dir.join("proxied");
    let manifest = s.manifest(
        "demo",
        &format!(
            "name = \"demo\"\nbuild = \"touch {}\"\nrun = \"exec ./server --port $PORT\"\nversion = \"./server --version\"\n",
            built.display()
        ),
    );
    let ssh_config = s.dir.join("ssh_config");
    let proxy = format!("ProxyCommand sh -c 'touch {}; nc %h %p'", proxied.display());
    std::fs::write(&ssh_config, format!("Host lg1\n  HostName 127.0.0.1\n  {proxy}\n")).unwrap();
    let scenario = s.scenario(&format!(
        "apps = [{:?}]\n[[profiles]]\npath = \"/plaintext\"\n[matrix]\nenv = {{ LD_PRELOAD = [\"/tmp/hook.so\"] }}\n[hosts]\nload = [\"lg1\"]\nserver_address = \"127.0.0.1\"\nssh_config = {:?}\n",
        manifest.display().to_string(),
        ssh_config.display().to_string()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--print-plan", "--out", s.out().to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    for want in [
        "code: run only ones you trust".to_string(),
        format!("demo ({}), in {}:", manifest.display(), manifest.parent().unwrap().display()),
        format!("build    touch {}", built.display()),
        "run      exec ./server --port $PORT".into(),
        "version  ./server --version".into(),
        "with LD_PRELOAD=/tmp/hook.so".into(),
        "ssh to lg1 (load)".into(),
        format!("ssh config: {} (ssh -F)", ssh_config.display()),
        format!("runs here: {proxy}"),
    ] {
        assert!(stdout.contains(&want), "{want:?} not in the plan:\n{stdout}");
    }
    assert!(!built.exists() && !proxied.exists(), "--print-plan ran a command");
    assert!(!s.out().exists(), "--print-plan wrote results");
}

#[test]
fn a_run_prints_its_plan_on_stderr_before_it_starts() {
    let s = Scratch::new("plan-run");
    let app = s.app("alpha", "");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\ncheck = false\n[[profiles]]\npath = \"/plaintext\"\nconnections = 2\nduration = \"300ms\"\nwarmup = \"0s\"\n",
        app.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let plan = stderr.find("this run executes").unwrap_or_else(|| panic!("no plan on stderr:\n{stderr}"));
    assert!(stderr[plan..].contains("run      ") && stderr.contains("exec python3"), "{stderr}");
    assert!(!stdout.contains("this run executes"), "the plan is for people, on stderr: {stdout}");
    stampede_testkit::run::assert_nothing_left(&s);
}
