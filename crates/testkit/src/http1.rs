//! Test servers for the load engine's tests: small HTTP/1.1 servers on port 0
//! that misbehave on purpose (chunked bodies, closing after every response,
//! 500s, malformed replies, silence, periodic stalls), plus a helper to run
//! the real `stampede` binary with a deadline so no test can hang.

use crate::Stampede;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Output;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// Keep-alive, Content-Length, `Hello, World!`.
    Ok,
    /// The body in three chunks.
    Chunked,
    /// `Connection: close` and a close after every response.
    CloseEach,
    /// Every answer is a 500.
    Status500,
    /// Bytes that are not HTTP.
    Malformed,
    /// Reads requests, never answers.
    Silent,
    /// Answers at once, except that nothing is answered during the first
    /// `stall` of every `period`: requests arriving then wait for its end.
    Hiccup { stall: Duration, period: Duration },
}

pub struct TestServer {
    pub addr: SocketAddr,
    /// Requests received (complete request heads).
    pub requests: Arc<AtomicU64>,
    /// Connections open at this moment: a client that leaks sockets shows here.
    pub open: Arc<AtomicU64>,
    /// When the server started: the origin of the hiccup schedule.
    pub t0: Instant,
    stop: Arc<AtomicBool>,
}

impl TestServer {
    pub fn start(mode: Mode) -> TestServer {
        TestServer::start_on(TcpListener::bind("127.0.0.1:0").expect("bind test server"), mode)
    }

    /// Serves on a listener the test bound itself (e.g. inside a network namespace).
    pub fn start_on(listener: TcpListener, mode: Mode) -> TestServer {
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicU64::new(0));
        let open = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let t0 = Instant::now();
        let (req, st, op) = (requests.clone(), stop.clone(), open.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (req, st, op) = (req.clone(), st.clone(), op.clone());
                op.fetch_add(1, Ordering::Relaxed);
                std::thread::spawn(move || {
                    serve(conn, mode, t0, &req, &st);
                    op.fetch_sub(1, Ordering::Relaxed);
                });
            }
        });
        TestServer { addr, requests, open, t0, stop }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(mut conn: TcpStream, mode: Mode, t0: Instant, requests: &AtomicU64, stop: &AtomicBool) {
    let _ = conn.set_nodelay(true);
    let mut buf = vec![0u8; 16 * 1024];
    let mut have = 0;
    loop {
        let n = match conn.read(&mut buf[have..]) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        have += n;
        while let Some(end) = find(&buf[..have], b"\r\n\r\n") {
            buf.copy_within(end + 4..have, 0);
            have -= end + 4;
            requests.fetch_add(1, Ordering::Relaxed);
            if stop.load(Ordering::Relaxed) {
                return;
            }
            if !respond(&mut conn, mode, t0) {
                return;
            }
        }
        if have == buf.len() {
            return;
        }
    }
}

/// Writes one response; false when the connection is to be closed.
fn respond(conn: &mut TcpStream, mode: Mode, t0: Instant) -> bool {
    const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!";
    let wrote = match mode {
        Mode::Ok => conn.write_all(OK),
        Mode::Chunked => conn.write_all(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n2\r\n, \r\n6\r\nWorld!\r\n0\r\n\r\n",
        ),
        Mode::CloseEach => {
            let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
            return false;
        }
        Mode::Status500 => conn.write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops"),
        Mode::Malformed => {
            let _ = conn.write_all(b"this is not http\r\n\r\n");
            return false;
        }
        Mode::Silent => Ok(()),
        Mode::Hiccup { stall, period } => {
            let phase = t0.elapsed().as_nanos() % period.as_nanos();
            if phase < stall.as_nanos() {
                std::thread::sleep(Duration::from_nanos((stall.as_nanos() - phase) as u64));
            }
            conn.write_all(OK)
        }
    };
    wrote.is_ok()
}

/// Pins the calling thread (and the threads it starts afterwards) to one CPU.
pub fn pin_to_cpu(cpu: usize) {
    // SAFETY: plain syscall on a zeroed cpu_set_t we own, for the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A port with nothing listening on it.
pub fn refused_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Runs the real binary; kills it and fails the test past `deadline`.
pub fn stampede(args: &[&str], deadline: Duration) -> Output {
    stampede_on(None, args, deadline)
}

/// Like `stampede`, pinned with `taskset -c CPUS` when given.
pub fn stampede_on(cpus: Option<&str>, args: &[&str], deadline: Duration) -> Output {
    Stampede::pinned(cpus).args(args).deadline(deadline).output()
}

/// Runs `stampede load --json …` and returns the parsed result.
pub fn load_json(args: &[&str], deadline: Duration) -> serde_json::Value {
    load_json_on(None, args, deadline)
}

/// `stampede load --json` that may measure a stall: its result, whose exit
/// status must say whether it did (1 with `stalled`, 0 without).
pub fn load_json_any(args: &[&str], deadline: Duration) -> serde_json::Value {
    let mut all = vec!["load", "--json"];
    all.extend_from_slice(args);
    let out = stampede(&all, deadline);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("stampede {all:?}: no JSON: {}", String::from_utf8_lossy(&out.stderr)));
    let stalled = r.get("stalled").is_some_and(|s| !s.is_null());
    assert_eq!(out.status.code(), Some(i32::from(stalled)), "stampede {all:?}: exit 1 if and only if stalled: {r}");
    r
}

pub fn load_json_on(cpus: Option<&str>, args: &[&str], deadline: Duration) -> serde_json::Value {
    let mut all = vec!["load", "--json"];
    all.extend_from_slice(args);
    let out = stampede_on(cpus, &all, deadline);
    assert!(out.status.success(), "stampede {all:?} failed: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}
