//! The reference apps as the tests see them: their manifests (`app.toml`, per
//! the manifest section of apps/CONTRACT.md) and their lifecycle: build, start
//! on a free port, wait until ready, run the real `stampede check` against it
//! (once per contract the app must pass), then SIGTERM the process group and
//! make sure nothing of it is left. A [`Variant`] starts the app with some
//! knobs off their defaults and may ask the contracts over HTTP/3 as well.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::net;
use crate::process::{self, group_members, kill_group};
use crate::Stampede;

/// Longest build (a first build may download a toolchain's dependencies,
/// or compile every one of them on a slow or busy 2-core machine): a guard
/// against a hang, not a speed requirement. Also the profiling tests' builds.
pub const BUILD_DEADLINE: Duration = Duration::from_secs(20 * 60);
/// The contract's start-up budget: ready this soon after launch.
const READY_DEADLINE: Duration = Duration::from_secs(10);
/// The contract's shutdown budget after SIGTERM.
const STOP_DEADLINE: Duration = Duration::from_secs(5);
/// Longest `stampede check` run (a correct server takes about 2 s).
const CHECK_DEADLINE: Duration = Duration::from_secs(120);

/// One app manifest, `apps/<name>/app.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub description: String,
    pub requires: Vec<String>,
    pub build: String,
    pub run: String,
    pub version: String,
    /// The contract the app claims (`stampede check --contract`); `none` for none.
    #[serde(default)]
    pub contract: Option<String>,
    #[serde(default)]
    pub knobs: BTreeMap<String, Knob>,
    /// `[profile]`: settings under `stampede run --profile` (tests/profile.rs reads them).
    #[serde(default)]
    pub profile: Option<toml::Table>,
    /// `[events]`: runtime GC events for `stampede explain` (docs/explain.md).
    #[serde(default)]
    pub events: Option<toml::Table>,
}

impl Manifest {
    /// A string table of `[profile]` (`env`, `build_env`), empty when
    /// absent; a value that is not a string panics, naming it.
    pub fn profile_strings(&self, key: &str) -> BTreeMap<String, String> {
        let table = self.profile.as_ref().and_then(|p| p.get(key)).and_then(|v| v.as_table());
        let string = |k: &String, v: &toml::Value| {
            let v = v.as_str().unwrap_or_else(|| panic!("{}: [profile] {key}.{k} is not a string", self.name));
            (k.clone(), v.to_string())
        };
        table.map(|t| t.iter().map(|(k, v)| string(k, v)).collect()).unwrap_or_default()
    }
}

/// One `[knobs.<name>]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Knob {
    pub description: String,
    pub default: String,
    pub values: BTreeMap<String, KnobValue>,
}

/// One knob value: environment added to the server's, and/or arguments
/// appended to `run`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnobValue {
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub args: Option<String>,
}

/// `apps/` at the root of the repository.
pub fn apps_root() -> PathBuf {
    crate::repo_root().join("apps")
}

/// Every `apps/<name>/app.toml`, by folder name.
pub fn manifest_paths() -> BTreeMap<String, PathBuf> {
    let mut found = BTreeMap::new();
    if let Ok(entries) = std::fs::read_dir(apps_root()) {
        for entry in entries.flatten() {
            let path = entry.path().join("app.toml");
            if path.is_file() {
                found.insert(entry.file_name().to_string_lossy().into_owned(), path);
            }
        }
    }
    found
}

/// Parses a manifest and checks what serde cannot: non-empty commands, knob
/// defaults that name a value, no knob that duplicates `PORT` or `THREADS`.
pub fn load_manifest(path: &Path) -> Result<Manifest, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let manifest: Manifest = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let at = |what: String| format!("{}: {what}", path.display());
    for (field, value) in [
        ("name", &manifest.name),
        ("description", &manifest.description),
        ("build", &manifest.build),
        ("run", &manifest.run),
        ("version", &manifest.version),
    ] {
        if value.trim().is_empty() {
            return Err(at(format!("field `{field}` is empty")));
        }
    }
    if manifest.requires.is_empty() || manifest.requires.iter().any(|p| p.trim().is_empty()) {
        return Err(at("`requires` must list the programs the app needs on PATH".into()));
    }
    for (name, knob) in &manifest.knobs {
        if name.eq_ignore_ascii_case("threads") {
            return Err(at("THREADS is given to every app by the contract; it is not a knob".into()));
        }
        if knob.description.trim().is_empty() {
            return Err(at(format!("knob `{name}` has an empty description")));
        }
        if knob.values.is_empty() {
            return Err(at(format!("knob `{name}` has no values")));
        }
        if !knob.values.contains_key(&knob.default) {
            return Err(at(format!("knob `{name}`: default {:?} is not one of its values", knob.default)));
        }
        for (value_name, value) in &knob.values {
            if let Some(var) = value.env.keys().find(|k| k.is_empty() || *k == "PORT" || *k == "THREADS") {
                return Err(at(format!("knob `{name}` value `{value_name}` sets {var:?}, which the contract owns")));
            }
        }
    }
    Ok(manifest)
}

/// Whether `program` is an executable file in a `PATH` directory.
pub fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(program)).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Writes straight to the process's stderr, past libtest's capture, so skip
/// lines show in the test output even when the test passes.
pub fn announce(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// How an app is started and asked, beyond its manifest's defaults.
#[derive(Default)]
pub struct Variant<'a> {
    /// `(knob, value)` pairs replacing the manifest's default values.
    pub knobs: &'a [(&'a str, &'a str)],
    /// Ask every contract over HTTP/3 too (`stampede check --http3 -k`
    /// on the same port number), after asking it over HTTP/1.1.
    pub http3: bool,
}

/// App tests build and run servers: on two cores, one at a time.
static ONE_APP_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The whole lifecycle for `apps/<name>`, checked against each of
/// `contracts`; panics with the evidence on any contract violation, announces
/// a skip when the app or a tool is missing.
pub fn check_app(name: &str, contracts: &[&str]) {
    check_app_as(name, contracts, &Variant::default());
}

/// [`check_app`] with the app started and asked as `variant` says.
pub fn check_app_as(name: &str, contracts: &[&str], variant: &Variant) {
    let _turn = ONE_APP_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = apps_root().join(name);
    let manifest_path = dir.join("app.toml");
    if !manifest_path.is_file() {
        announce(&format!("SKIP {name}: apps/{name}/app.toml does not exist"));
        return;
    }
    let manifest = load_manifest(&manifest_path).unwrap_or_else(|e| panic!("{e}"));
    if let Some(missing) = manifest.requires.iter().find(|p| !on_path(p)) {
        announce(&format!("SKIP {name}: {missing} not on PATH"));
        return;
    }

    // Built as under `stampede run --profile` (the manifest's `build` with
    // its `[profile] build_env`): the same code checked against the same
    // contract, and the one build that tests/profile.rs and the app's own
    // unit tests (`make app-unit-tests`, scripts/with-build-env) reuse. For
    // the Rust app that is one compile of its ~200 dependencies in `make
    // test` instead of two (LTO for `stampede run`, frame pointers for the
    // profile). `stampede run` builds with the manifest alone and cargo
    // rebuilds for it.
    let built = Instant::now();
    let build = shell_with(&manifest.build, &dir, &manifest.profile_strings("build_env"), BUILD_DEADLINE);
    assert!(
        build.status.success(),
        "{name}: `build` ({}) failed with {}\n{}",
        manifest.build,
        build.status,
        build.output()
    );
    let build_time = built.elapsed();

    let version = shell(&manifest.version, &dir, Duration::from_secs(120));
    assert!(
        version.status.success() && !version.stdout.trim().is_empty(),
        "{name}: `version` ({}) must print the runtime version on stdout and exit 0\n{}",
        manifest.version,
        version.output()
    );

    let port = net::free_port();
    let knobs: Vec<String> = variant.knobs.iter().map(|(knob, value)| format!("-{knob}-{value}")).collect();
    let log_path = crate::tmp_dir().join(format!("app-{name}{}.log", knobs.concat()));
    let mut server = Server::start(&manifest, &dir, port, &log_path, variant.knobs);
    let ready = net::wait_for_status(port, "/plaintext", 200, READY_DEADLINE, || server.exited().is_some());
    let Some(ready_after) = ready else {
        let how = match server.exited() {
            Some(status) => format!("exited with {status} before answering"),
            None => format!("did not answer GET /plaintext with 200 within {READY_DEADLINE:?}"),
        };
        panic!("{name}: the server on port {port} {how}\n{}", server.log());
    };

    let h1 = format!("http://127.0.0.1:{port}");
    let h3 = format!("https://127.0.0.1:{port}");
    let mut asks = vec![(vec![], h1)];
    if variant.http3 {
        asks.push((vec!["--http3", "-k"], h3));
    }
    let mut summaries = Vec::new();
    for contract in contracts {
        for (flags, url) in &asks {
            let mut args = vec!["check"];
            args.extend(flags);
            args.extend(["--contract", contract, url]);
            let check = process::run_with_deadline(
                &mut Stampede::new().args(&args).env("NO_COLOR", "1").command(),
                CHECK_DEADLINE,
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                check.code(),
                Some(0),
                "{name}: `stampede {}` found contract violations\n{}",
                args.join(" "),
                check.output()
            );
            let over = flags.first().map_or(String::new(), |flag| format!(" {flag}"));
            summaries.push(format!("{contract}{over}: {}", check.stdout.lines().last().unwrap_or("checked")));
        }
    }

    let stopped_after = server.stop().unwrap_or_else(|e| panic!("{name}: {e}\n{}", server.log()));
    announce(&format!(
        "PASS {name}{}: built in {:.1} s, ready in {:.2} s, check {}, stopped in {:.2} s",
        knobs.concat(),
        build_time.as_secs_f64(),
        ready_after.as_secs_f64(),
        summaries.join("; "),
        stopped_after.as_secs_f64()
    ));
}

/// Runs a manifest command with `sh -c` in the app's folder.
fn shell(command: &str, dir: &Path, deadline: Duration) -> process::Finished {
    shell_with(command, dir, &BTreeMap::new(), deadline)
}

fn shell_with(command: &str, dir: &Path, env: &BTreeMap<String, String>, deadline: Duration) -> process::Finished {
    process::run_with_deadline(Command::new("sh").arg("-c").arg(command).current_dir(dir).envs(env), deadline)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// A started app server, leading its own process group. Dropping it kills
/// the group, so a failing test leaves nothing running.
pub struct Server {
    child: Child,
    log_path: PathBuf,
    stopped: bool,
}

impl Server {
    /// Starts `manifest`'s `run` with every knob at its default but those
    /// `knobs` names (`(knob, value)` pairs).
    pub fn start(manifest: &Manifest, dir: &Path, port: u16, log_path: &Path, knobs: &[(&str, &str)]) -> Server {
        let mut command_line = manifest.run.clone();
        let mut command = Command::new("sh");
        for (name, _) in knobs {
            assert!(manifest.knobs.contains_key(*name), "{}: no knob {name:?} in its app.toml", manifest.name);
        }
        for (name, knob) in &manifest.knobs {
            let chosen = knobs.iter().find(|(knob, _)| knob == name).map_or(knob.default.as_str(), |(_, value)| value);
            let value = knob
                .values
                .get(chosen)
                .unwrap_or_else(|| panic!("{}: knob {name} has no value {chosen:?}", manifest.name));
            command.envs(&value.env);
            if let Some(args) = &value.args {
                command_line = format!("{command_line} {args}");
            }
        }
        let log = File::create(log_path).unwrap_or_else(|e| panic!("{}: {e}", log_path.display()));
        let log_err = log.try_clone().expect("duplicate the log file handle");
        let child = command
            .arg("-c")
            .arg(&command_line)
            .current_dir(dir)
            .env("PORT", port.to_string())
            .env_remove("THREADS")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `sh -c {command_line}` in {}: {e}", dir.display()));
        Server { child, log_path: log_path.to_path_buf(), stopped: false }
    }

    /// The process group of the server (its leader's pid).
    pub fn pgid(&self) -> u32 {
        self.child.id()
    }

    fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The server's output so far, for failure messages.
    fn log(&self) -> String {
        let text = std::fs::read_to_string(&self.log_path).unwrap_or_default();
        format!("--- server output ({}) ---\n{text}", self.log_path.display())
    }

    /// SIGTERM to the group; the leader must exit with 0 or the usual
    /// SIGTERM status, and every process of the group must be gone, within
    /// [`STOP_DEADLINE`]. Returns how long that took.
    pub fn stop(&mut self) -> Result<Duration, String> {
        use std::os::unix::process::ExitStatusExt;
        let start = Instant::now();
        let pgid = self.child.id();
        kill_group(&mut self.child, libc::SIGTERM);
        let mut status = None;
        while start.elapsed() < STOP_DEADLINE {
            if status.is_none() {
                status = self.child.try_wait().map_err(|e| format!("cannot wait for the server: {e}"))?;
            }
            if status.is_some() && group_members(pgid).is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let left = group_members(pgid);
        let took = start.elapsed();
        self.kill();
        let Some(status) = status else {
            return Err(format!("the server did not exit within {STOP_DEADLINE:?} of SIGTERM; left running: {left:?}"));
        };
        if !left.is_empty() {
            return Err(format!(
                "the server exited ({status}) but processes of its group outlived SIGTERM by {STOP_DEADLINE:?}: {left:?}"
            ));
        }
        let clean = status.code() == Some(0)
            || status.code() == Some(128 + libc::SIGTERM)
            || status.signal() == Some(libc::SIGTERM);
        if !clean {
            return Err(format!(
                "after SIGTERM the server exited with {status}, expected 0 or the usual SIGTERM status"
            ));
        }
        Ok(took)
    }

    /// SIGKILL whatever is left of the group and reap the leader.
    fn kill(&mut self) {
        if !self.stopped {
            if !group_members(self.child.id()).is_empty() || self.child.try_wait().ok().flatten().is_none() {
                kill_group(&mut self.child, libc::SIGKILL);
            }
            let _ = self.child.wait();
            self.stopped = true;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}
