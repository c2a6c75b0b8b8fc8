//! A private PostgreSQL cluster for one `stampede run`: `initdb` into a
//! fresh temporary folder, `postgres` on a free loopback port (TCP only, no
//! Unix socket), started like every other child of `stampede` (its own
//! process group, SIGKILL from the kernel if `stampede` dies), and stopped
//! with a fast shutdown (SIGINT) when dropped, then SIGKILL to whatever is
//! left, then its folder removed. PostgreSQL refuses to run as root, so under
//! root the cluster runs as the `stampede` user (scripts/deps.sh creates it)
//! or else `nobody`.

use std::fs::File;
use std::os::unix::fs::{chown, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use stampede_probe::lifeline::{self, Lineage};

use crate::database::seed::{PASSWORD, USER};
use crate::server::subprocess::{self, last_lines};

/// How long `initdb` and the first connection may take.
const INITDB_LIMIT: Duration = Duration::from_secs(120);
const START_LIMIT: Duration = Duration::from_secs(60);
/// Between the fast shutdown and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("[database]: PostgreSQL's {0} is not installed (apt-get install postgresql, or run scripts/deps.sh; or give [database] url = \"postgres://…\" of a server of your own)")]
    Missing(&'static str),
    #[error("[database]: {what}: {reason}")]
    Setup { what: String, reason: String },
    #[error("[database]: initdb failed ({status}): {tail}")]
    Initdb { status: String, tail: String },
    #[error("[database]: postgres did not accept connections within {secs} s: {tail} (its log: {log})")]
    Start { secs: u64, tail: String, log: PathBuf },
    #[error("interrupted")]
    Interrupted,
}

/// The user the cluster runs as: ourselves, or an unprivileged one under root.
#[derive(Debug, Clone, Copy)]
struct Owner {
    uid: u32,
    gid: u32,
}

pub struct Cluster {
    child: Child,
    pid: i32,
    port: u16,
    /// The backends (they call `setsid()`, leaving the postmaster's group).
    lineage: Lineage,
    folder: PathBuf,
    version: String,
    stopped: bool,
}

impl Cluster {
    /// Creates the cluster and waits until it accepts connections.
    pub fn start(log: &Path, interrupted: &dyn Fn() -> bool) -> Result<Cluster, ClusterError> {
        let initdb = binary("initdb").ok_or(ClusterError::Missing("initdb"))?;
        let postgres = binary("postgres").ok_or(ClusterError::Missing("postgres"))?;
        let owner = owner()?;
        let folder = make_folder(owner)?;
        let cluster = start_in(&folder, &initdb, &postgres, owner, log, interrupted);
        if cluster.is_err() {
            let _ = std::fs::remove_dir_all(&folder);
        }
        cluster
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// `postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:<port>/<database>`.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{database}", self.port)
    }

    /// `postgres --version`'s number, e.g. "15.8".
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Fast shutdown (SIGINT: backends end their transactions and go), then
    /// SIGKILL to the postmaster's group and every backend seen.
    pub fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        self.lineage.refresh();
        // SAFETY: signals only the postmaster this cluster started.
        unsafe {
            libc::kill(self.pid, libc::SIGINT);
        }
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline {
            if self.child.try_wait().ok().flatten().is_some() && self.lineage.living().is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: the group is the postmaster's own (process_group(0)).
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
        }
        self.lineage.signal(libc::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

fn setup(what: &str) -> impl Fn(std::io::Error) -> ClusterError + '_ {
    move |e| ClusterError::Setup { what: what.to_string(), reason: e.to_string() }
}

fn start_in(
    folder: &Path,
    initdb: &Path,
    postgres: &Path,
    owner: Owner,
    log: &Path,
    interrupted: &dyn Fn() -> bool,
) -> Result<Cluster, ClusterError> {
    let data = folder.join("data");
    let pwfile = folder.join("password");
    std::fs::write(&pwfile, PASSWORD).map_err(setup("write the password file"))?;
    chown(&pwfile, Some(owner.uid), Some(owner.gid)).map_err(setup("hand the password file to its user"))?;
    let mut cmd = Command::new(initdb);
    cmd.arg("-D")
        .arg(&data)
        .args(["-U", USER, "-A", "scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync"])
        .arg(format!("--pwfile={}", pwfile.display()))
        .current_dir(folder)
        .uid(owner.uid)
        .gid(owner.gid);
    let done = subprocess::run(cmd, "initdb", INITDB_LIMIT, None, interrupted).map_err(|e| match e {
        subprocess::SubprocessError::Interrupted => ClusterError::Interrupted,
        other => ClusterError::Setup { what: "initdb".into(), reason: other.to_string() },
    })?;
    if !done.status.success() {
        return Err(ClusterError::Initdb { status: done.status.to_string(), tail: last_lines(&done.output, 3) });
    }
    let version = Command::new(postgres)
        .arg("--version")
        .output()
        // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)" → "15.18"
        .map(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().nth(2).unwrap_or("").to_string())
        .unwrap_or_default();
    let port = crate::server::http::free_port().map_err(setup("find a free port"))?;
    let log_file = File::create(log).map_err(setup("create logs/database.log"))?;
    let mut cmd = Command::new(postgres);
    cmd.arg("-D").arg(&data).arg("-p").arg(port.to_string());
    for setting in SETTINGS {
        cmd.arg("-c").arg(setting);
    }
    // Preloaded only where it is installed: a missing library stops the server.
    if statement_counts_installed(postgres) {
        cmd.arg("-c").arg("shared_preload_libraries=pg_stat_statements");
    }
    cmd.current_dir(folder)
        .uid(owner.uid)
        .gid(owner.gid)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().map_err(setup("open logs/database.log"))?)
        .stderr(log_file)
        .process_group(0);
    lifeline::die_with_parent(&mut cmd);
    let child = cmd.spawn().map_err(setup("start postgres"))?;
    let pid = child.id() as i32;
    let mut cluster =
        Cluster { child, pid, port, lineage: Lineage::new(pid), folder: folder.to_path_buf(), version, stopped: false };
    let started = Instant::now();
    loop {
        if interrupted() {
            return Err(ClusterError::Interrupted);
        }
        // (Returning drops the cluster, which stops it.)
        if cluster.child.try_wait().ok().flatten().is_some() || started.elapsed() > START_LIMIT {
            let tail = crate::server::process::tail(log, 3);
            return Err(ClusterError::Start { secs: START_LIMIT.as_secs(), tail, log: log.to_path_buf() });
        }
        if crate::database::seed::reachable(&cluster.url("postgres")).is_ok() {
            cluster.lineage.refresh();
            return Ok(cluster);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Server settings: loopback TCP only; `synchronous_commit = off` as in
/// TechEmpower's own configuration (the updates test measures the apps, not
/// the disk's flush); enough connections for a pool of 16 per app plus the
/// checker; no background log collector.
const SETTINGS: &[&str] = &[
    "listen_addresses=127.0.0.1",
    "unix_socket_directories=",
    "max_connections=200",
    "synchronous_commit=off",
    "logging_collector=off",
];

/// True when the `pg_stat_statements` module (PostgreSQL's contrib, which
/// Debian's postgresql package ships) is beside `postgres`, or where
/// `pg_config` says modules are. With it preloaded, `stampede check` counts
/// the statements and rows each database endpoint costs (crates/check's
/// counting.rs), which is how a server that caches rows or batches queries
/// is told from one that does the prescribed work.
fn statement_counts_installed(postgres: &Path) -> bool {
    const MODULE: &str = "pg_stat_statements.so";
    let beside = postgres.parent().and_then(Path::parent).map(|prefix| prefix.join("lib").join(MODULE));
    if beside.is_some_and(|p| p.is_file()) {
        return true;
    }
    Command::new("pg_config")
        .arg("--pkglibdir")
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()).join(MODULE))
        .is_some_and(|p| p.is_file())
}

/// `name` on PATH, else in the newest /usr/lib/postgresql/<version>/bin
/// (Debian keeps PostgreSQL's server programs there, off PATH).
fn binary(name: &str) -> Option<PathBuf> {
    if let Some(path) = crate::scenario::manifest::which(name) {
        return Some(path);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin").join(name))))
        .filter(|(_, p): &(u32, PathBuf)| p.is_file())
        .collect();
    versions.sort();
    versions.pop().map(|(_, p)| p)
}

fn owner() -> Result<Owner, ClusterError> {
    // SAFETY: geteuid/getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if uid != 0 {
        return Ok(Owner { uid, gid });
    }
    for name in [c"stampede", c"nobody"] {
        // SAFETY: getpwnam reads a NUL-terminated name; the result is copied
        // out at once, before any other call could reuse its buffer.
        let entry = unsafe { libc::getpwnam(name.as_ptr()) };
        if !entry.is_null() {
            let (uid, gid) = unsafe { ((*entry).pw_uid, (*entry).pw_gid) };
            return Ok(Owner { uid, gid });
        }
    }
    Err(ClusterError::Setup {
        what: "choose a user".into(),
        reason: "PostgreSQL refuses to run as root and there is neither a `stampede` nor a `nobody` user (run scripts/deps.sh)".into(),
    })
}

/// A new folder in the temporary directory, private to the cluster's user.
fn make_folder(owner: Owner) -> Result<PathBuf, ClusterError> {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().subsec_nanos();
    let folder = std::env::temp_dir().join(format!("stampede-db-{}-{nanos}", std::process::id()));
    std::fs::create_dir(&folder).map_err(setup("create a folder in the temporary directory"))?;
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700))
        .and_then(|()| chown(&folder, Some(owner.uid), Some(owner.gid)))
        .map_err(|e| {
            let _ = std::fs::remove_dir_all(&folder);
            ClusterError::Setup {
                what: format!("hand {} to the cluster's user", folder.display()),
                reason: e.to_string(),
            }
        })?;
    Ok(folder)
}
