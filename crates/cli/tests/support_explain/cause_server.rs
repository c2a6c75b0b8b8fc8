//! A test server with one known cause of slow requests, for `stampede
//! explain`'s end-to-end tests (crates/cli/tests/explain_*.rs). The test
//! compiles this one file with `rustc` (standard library only, frame pointers
//! and symbols on, so perf names its functions) and starts it through a
//! scenario's app manifest. Usage: `cause_server MODE` with `PORT` set; every
//! path answers `200 ok` on a keep-alive HTTP/1.1 connection, one thread per
//! connection (`worker-N`). Modes:
//!
//! - `plain`: nothing injected.
//! - `lock`: each request takes a mutex (in `take_the_lock`) that a
//!   `holder` thread keeps for 60 ms, releasing it for 40 ms, over and
//!   over: the workers queue on it for the long stretches and run freely in
//!   between.
//! - `spin`: one request in 40 runs `stampede_distinctive_spin` on the CPU
//!   for 20 ms before it answers; every request first spends 0.5 ms in
//!   `ordinary_request_work`, so the server's frames (`serve`, the thread's
//!   start) are on the CPU all along and only the spin stands out.
//! - `backlog`: a listen backlog of 1 and an acceptor that takes one
//!   connection every 200 ms, each request answered after 20 ms: the
//!   generator's connections wait in SYN retransmits (the kernel drops SYNs
//!   while the accept queue is full), and too few are open for the rate.
//! - `parked`: nothing injected on the request path, and eight `pool-N`
//!   threads that wait on a condition variable (a futex) with a 20 ms
//!   timeout, wake, find no work and wait again, as Go's idle Ms and a JVM
//!   pool's idle threads park: they use a little CPU every second, so they
//!   count as working threads, and spend nearly all their time on a futex.
//! - `burner`: no server; spins on the CPU for 20 ms of every 100 ms (the
//!   test runs it at a real-time priority on the load generator's core, so
//!   the generator is starved of CPU).
//!
//! It ends on SIGTERM (the default action) or after 120 s, whichever is first.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

static REQUESTS: AtomicU64 = AtomicU64::new(0);

#[inline(never)]
#[no_mangle]
pub extern "C" fn stampede_distinctive_spin(ms: u64) -> u64 {
    busy(Duration::from_millis(ms))
}

#[inline(never)]
#[no_mangle]
pub extern "C" fn ordinary_request_work(us: u64) -> u64 {
    busy(Duration::from_micros(us))
}

/// The frame a worker waits in when the holder has the mutex: the off-CPU
/// profile's waiter stack must name it (explain_frames.rs).
#[inline(never)]
fn take_the_lock(lock: &Mutex<u64>) {
    *lock.lock().unwrap() += 1;
}

#[inline(always)]
fn busy(how_long: Duration) -> u64 {
    let start = Instant::now();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while start.elapsed() < how_long {
        for _ in 0..1000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
    }
    std::hint::black_box(x)
}

fn serve(mut stream: TcpStream, mode: &str, lock: &Mutex<u64>) {
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        buf.drain(..end);
        let n = REQUESTS.fetch_add(1, Ordering::Relaxed);
        match mode {
            "lock" => take_the_lock(lock),
            "backlog" => std::thread::sleep(Duration::from_millis(20)),
            "spin" => {
                ordinary_request_work(500);
                if n % 40 == 39 {
                    stampede_distinctive_spin(20);
                }
            }
            _ => {}
        }
        let response = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok";
        if stream.write_all(response).is_err() {
            return;
        }
    }
}

/// An idle pool thread: waits for work that never comes on a condition
/// variable (a futex wait), waking every 20 ms to look.
fn park_idle() {
    let work = (Mutex::new(false), Condvar::new());
    let mut ready = work.0.lock().unwrap();
    loop {
        ready = work.1.wait_timeout(ready, Duration::from_millis(20)).unwrap().0;
        std::hint::black_box(&*ready);
    }
}

extern "C" {
    fn listen(fd: i32, backlog: i32) -> i32;
}

fn main() {
    let mode: &'static str = Box::leak(std::env::args().nth(1).unwrap_or_else(|| "plain".into()).into_boxed_str());
    let started = Instant::now();
    if mode == "burner" {
        while started.elapsed() < Duration::from_secs(120) {
            busy(Duration::from_millis(20));
            std::thread::sleep(Duration::from_millis(80));
        }
        return;
    }
    let port = std::env::var("PORT").unwrap_or_else(|_| "8080".into());
    let listener = TcpListener::bind(format!("127.0.0.1:{port}")).expect("bind 127.0.0.1:$PORT");
    if mode == "backlog" {
        use std::os::fd::AsRawFd;
        // Listening again on a listening socket sets its backlog (Linux):
        // the accept queue then holds two connections.
        // SAFETY: a valid listening socket's descriptor.
        assert_eq!(unsafe { listen(listener.as_raw_fd(), 1) }, 0, "listen(1)");
    }
    let lock = Arc::new(Mutex::new(0u64));
    if mode == "lock" {
        let lock = lock.clone();
        std::thread::Builder::new()
            .name("holder".into())
            .spawn(move || loop {
                {
                    let _held = lock.lock().unwrap();
                    std::thread::sleep(Duration::from_millis(60));
                }
                std::thread::sleep(Duration::from_millis(40));
            })
            .unwrap();
    }
    if mode == "parked" {
        for i in 0..8 {
            std::thread::Builder::new().name(format!("pool-{i}")).spawn(park_idle).unwrap();
        }
    }
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(120));
        std::process::exit(0);
    });
    for (i, stream) in listener.incoming().enumerate() {
        let Ok(stream) = stream else { continue };
        let lock = lock.clone();
        let _ = std::thread::Builder::new().name(format!("worker-{i}")).spawn(move || serve(stream, mode, &lock));
        if mode == "backlog" {
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
