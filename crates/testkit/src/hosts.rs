//! A small network of namespaces for `tests/hosts.rs`: two load hosts and a
//! server host, each running its own `sshd` (Debian's openssh-server) with
//! keys this fixture generates, all on one bridge that the test (in the
//! root namespace, playing the controller) also reaches. Addresses are in
//! 198.18.0.0/15, the range set aside for benchmarking (RFC 2544), and exist
//! only inside the namespaces made here. Everything is removed on drop, also
//! when a test panics: deleting the namespaces deletes their links.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Net {
    pub tag: String,
    pub dir: PathBuf,
    /// ssh client config for `--ssh-config`: the generated key, the generated
    /// host keys in a known_hosts file, host-key checking on.
    pub ssh_config: PathBuf,
    /// `root@ADDR` of the two load hosts.
    pub load_hosts: Vec<String>,
    pub load_ns: Vec<String>,
    pub server_ns: String,
    pub server_ip: String,
    /// `root@ADDR` of the server host (its sshd runs `stampede agent`).
    pub server_host: String,
    /// An address on the bridge with no sshd.
    pub dead_ip: String,
    /// The root namespace's (the controller's) address on the bridge.
    pub controller_ip: String,
    hub: String,
    sshd: Vec<Child>,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?}: {}", String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Why this machine cannot run the test, if it cannot.
pub fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root, so no network namespaces can be made".into());
    }
    for tool in ["ip", "ssh", "ssh-keygen"] {
        if Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().map_or(true, |o| !o.status.success())
        {
            return Some(format!("{tool} is not on PATH (scripts/deps.sh installs it)"));
        }
    }
    if !Path::new("/usr/sbin/sshd").exists() {
        return Some("/usr/sbin/sshd is missing (apt-get install openssh-server; scripts/deps.sh does)".into());
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let probe = format!("stp{}probe{nanos}", std::process::id());
    if let Err(e) = ip(&["netns", "add", &probe]) {
        return Some(format!("cannot create a network namespace ({e})"));
    }
    let _ = ip(&["netns", "del", &probe]);
    None
}

/// The test network, or `None` after a visible `SKIP <test>: why` line
/// (written to the real stderr, not with eprintln!, which the harness
/// captures, so the skip shows in every test run's output).
pub fn net_or_skip(test: &str) -> Option<Net> {
    if let Some(why) = unavailable() {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIP {test}: {why}");
        return None;
    }
    Some(Net::new().unwrap_or_else(|e| panic!("cannot build the test network: {e}")))
}

impl Net {
    pub fn new() -> Result<Net, String> {
        // Two networks may be up at once (the tests run in parallel): each
        // has its own tag and subnet, 198.18.x.0/24 then 198.19.x.0/24.
        static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        assert!(n < 2, "at most two test networks per process");
        let pid = std::process::id();
        let tag = format!("stp{n}{pid}");
        let subnet = format!("198.{}.{}", 18 + n, pid % 250 + 1);
        let dir = std::env::temp_dir().join(format!("stampede-hosts-{pid}-{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let mut net = Net {
            hub: format!("{tag}hub"),
            load_ns: vec![format!("{tag}a"), format!("{tag}b")],
            server_ns: format!("{tag}s"),
            server_ip: format!("{subnet}.4"),
            server_host: format!("root@{subnet}.4"),
            dead_ip: format!("{subnet}.9"),
            controller_ip: format!("{subnet}.1"),
            load_hosts: vec![format!("root@{subnet}.2"), format!("root@{subnet}.3")],
            ssh_config: dir.join("ssh_config"),
            tag,
            dir,
            sshd: Vec::new(),
        };
        net.links(&subnet)?;
        net.keys_and_sshd(&subnet)?;
        Ok(net)
    }

    fn links(&self, subnet: &str) -> Result<(), String> {
        let hub = self.hub.as_str();
        ip(&["netns", "add", hub])?;
        ip(&["-n", hub, "link", "set", "lo", "up"])?;
        ip(&["-n", hub, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", hub, "link", "set", "br0", "up"])?;
        // The controller's end, in the root namespace; its peer is in the hub,
        // so deleting the hub deletes both.
        let root_if = format!("{}r", self.tag);
        ip(&["link", "add", &root_if, "type", "veth", "peer", "name", "up_r", "netns", hub])?;
        ip(&["addr", "add", &format!("{subnet}.1/24"), "dev", &root_if])?;
        ip(&["link", "set", &root_if, "up"])?;
        ip(&["-n", hub, "link", "set", "up_r", "master", "br0", "up"])?;
        let members = [(&self.load_ns[0], 2), (&self.load_ns[1], 3), (&self.server_ns, 4)];
        for (i, (ns, host)) in members.iter().enumerate() {
            ip(&["netns", "add", ns])?;
            let port = format!("up_{i}");
            ip(&["-n", hub, "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns", ns])?;
            ip(&["-n", hub, "link", "set", &port, "master", "br0", "up"])?;
            ip(&["-n", ns, "addr", "add", &format!("{subnet}.{host}/24"), "dev", "eth0"])?;
            ip(&["-n", ns, "link", "set", "eth0", "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        Ok(())
    }

    fn keys_and_sshd(&mut self, subnet: &str) -> Result<(), String> {
        let d = &self.dir;
        for key in ["client", "host"] {
            run(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", "stampede-test", "-f"])
                .arg(d.join(key)))?;
        }
        let read = |p: PathBuf| std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()));
        std::fs::write(d.join("authorized_keys"), read(d.join("client.pub"))?).map_err(|e| e.to_string())?;
        let host_pub = read(d.join("host.pub"))?;
        let host_pub = host_pub.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
        let known: String = [2, 3, 4].iter().map(|h| format!("{subnet}.{h} {host_pub}\n")).collect();
        std::fs::write(d.join("known_hosts"), known).map_err(|e| e.to_string())?;
        std::fs::write(
            &self.ssh_config,
            format!(
                "Host *\n  User root\n  IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n  ConnectTimeout 3\n",
                d.join("client").display(),
                d.join("known_hosts").display()
            ),
        )
        .map_err(|e| e.to_string())?;
        // Load hosts a and b, then the server host: sshd i listens on .(i + 2).
        let hosts: Vec<String> = self.load_ns.iter().chain([&self.server_ns]).cloned().collect();
        for i in 0..hosts.len() {
            std::fs::create_dir_all(self.home(i)).map_err(|e| e.to_string())?;
        }
        std::fs::create_dir_all("/run/sshd").map_err(|e| format!("/run/sshd: {e}"))?;
        for (i, ns) in hosts.iter().enumerate() {
            let addr = format!("{subnet}.{}", i + 2);
            let cfg = d.join(format!("sshd_{i}.conf"));
            std::fs::write(
                &cfg,
                format!(
                    "Port 22\nListenAddress {addr}\nHostKey {}\nAuthorizedKeysFile {}\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile {}\nSetEnv HOME={}\n",
                    d.join("host").display(),
                    d.join("authorized_keys").display(),
                    d.join(format!("sshd_{i}.pid")).display(),
                    self.home(i).display()
                ),
            )
            .map_err(|e| e.to_string())?;
            let log = std::fs::File::create(d.join(format!("sshd_{i}.log"))).map_err(|e| e.to_string())?;
            let child = Command::new("ip")
                .args(["netns", "exec", ns, "/usr/sbin/sshd", "-D", "-e", "-f"])
                .arg(&cfg)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .map_err(|e| format!("sshd: {e}"))?;
            self.sshd.push(child);
            wait_for(&format!("{addr}:22").parse().unwrap(), Duration::from_secs(10)).map_err(|e| {
                format!(
                    "sshd in {ns}: {e}; log: {}",
                    std::fs::read_to_string(d.join(format!("sshd_{i}.log"))).unwrap_or_default()
                )
            })?;
        }
        Ok(())
    }

    /// Host `i`'s home directory as its ssh sessions see it (sshd sets HOME
    /// there, so `--copy-binary` writes into the test's temp dir): 0 and 1
    /// are the load hosts, 2 the server host.
    pub fn home(&self, i: usize) -> PathBuf {
        self.dir.join(format!("home_{i}"))
    }

    /// A listener bound inside the server namespace (the socket stays there;
    /// any thread may then serve on it).
    pub fn server_listener(&self) -> TcpListener {
        let ns = format!("/run/netns/{}", self.server_ns);
        let addr = format!("{}:0", self.server_ip);
        std::thread::spawn(move || {
            let f = std::fs::File::open(&ns).expect("open the server namespace");
            // SAFETY: setns on this short-lived thread only; the fd is valid.
            assert_eq!(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }, 0, "setns");
            TcpListener::bind(addr).expect("bind in the server namespace")
        })
        .join()
        .expect("bind thread")
    }

    /// The inode of a namespace's network namespace, to find its processes.
    pub fn ns_id(&self, ns: &str) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(format!("/run/netns/{ns}")).expect("netns file").ino()
    }
}

/// Polls until `addr` accepts a TCP connection.
pub fn wait_for(addr: &SocketAddr, deadline: Duration) -> Result<(), String> {
    let start = Instant::now();
    loop {
        if TcpStream::connect_timeout(addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if start.elapsed() > deadline {
            return Err(format!("nothing listens on {addr} after {deadline:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Processes whose network namespace is `ns_ino` and whose command line
/// contains every one of `words`.
pub fn processes_in(ns_ino: u64, words: &[&str]) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let in_ns = std::fs::read_link(format!("/proc/{pid}/ns/net"))
                .ok()
                .and_then(|l| l.to_str().map(|s| s == format!("net:[{ns_ino}]")))
                .unwrap_or(false);
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<String> = cmd.split(|&b| b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
            in_ns && words.iter().all(|w| args.iter().any(|a| a == w))
        })
        .collect()
}

impl Drop for Net {
    fn drop(&mut self) {
        for c in &mut self.sshd {
            let _ = c.kill();
            let _ = c.wait();
        }
        // sshd's session processes, if any outlived their connection.
        for ns in self.load_ns.iter().chain([&self.server_ns, &self.hub]) {
            let _ = Command::new("ip").args(["netns", "pids", ns]).output().map(|o| {
                for pid in String::from_utf8_lossy(&o.stdout).split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
                    // SAFETY: kill(2) on processes inside this test's own namespaces.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            });
            let _ = ip(&["netns", "del", ns]);
        }
        // Namespaces die lazily; take the root end of the bridge down now.
        let _ = ip(&["link", "del", &format!("{}r", self.tag)]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
