//! Helpers for the `stampede explain` end-to-end tests: CLOCK_MONOTONIC, a
//! server whose output is read by a thread that stamps each line with the
//! monotonic time it was read (`<mono_ns>\t<line>`, what `stampede explain`
//! reads), free ports, readiness polling with a deadline, and the real
//! binary run with its stdout kept in a file when the test asks.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};

use crate::{Outcome, Stampede};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn scratch(name: &str) -> PathBuf {
    // Unique per call: tests run in parallel threads of one process, and two
    // of them sharing a folder would truncate each other's output files.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("stampede-explain-{}-{name}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A server process whose stdout and stderr lines are stamped into `log`.
pub struct Stamped {
    pub child: Child,
    pub exec_mono_ns: u64,
    readers: Vec<JoinHandle<()>>,
}

impl Stamped {
    pub fn spawn(mut cmd: Command, log: &Path) -> Stamped {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).stdin(Stdio::null());
        let exec_mono_ns = mono_ns();
        let mut child = cmd.spawn().expect("start the server");
        let file = std::sync::Arc::new(std::sync::Mutex::new(std::fs::File::create(log).unwrap()));
        let mut readers = Vec::new();
        let out: Box<dyn std::io::Read + Send> = Box::new(child.stdout.take().unwrap());
        let err: Box<dyn std::io::Read + Send> = Box::new(child.stderr.take().unwrap());
        for stream in [out, err] {
            let file = file.clone();
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { break };
                    let stamp = mono_ns();
                    let _ = writeln!(file.lock().unwrap(), "{stamp}\t{line}");
                }
            }));
        }
        Stamped { child, exec_mono_ns, readers }
    }

    /// SIGTERM, wait, and let the readers drain the pipes.
    pub fn stop(mut self) {
        // SAFETY: signalling our own child by its pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.wait();
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
    }
}

impl Drop for Stamped {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `GET /plaintext` until the server answers 200 or the deadline passes.
pub fn wait_ready(port: u16, deadline: Duration) {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = s.write_all(b"GET /plaintext HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            let mut buf = [0u8; 12];
            if std::io::Read::read_exact(&mut s, &mut buf).is_ok() && &buf[9..12] == b"200" {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("server on port {port} not ready after {deadline:?}");
}

/// Runs the real binary with stdout into `out` (if given); returns (status code, stdout, stderr).
pub fn stampede(args: &[&str], out: Option<&Path>, deadline: Duration) -> (i32, String, String) {
    let output = Stampede::new().args(args).deadline(deadline).output();
    if let Some(out) = out {
        std::fs::write(out, &output.stdout).unwrap();
    }
    (output.status.code().unwrap_or(-1), output.stdout_text(), output.stderr_text())
}

/// Says why a test is skipped, visibly, and returns true when `program` is missing.
pub fn missing(program: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        eprintln!("SKIP: {program} is not on PATH");
    }
    !found
}
