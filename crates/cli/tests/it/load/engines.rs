//! The two event loops for cleartext HTTP/1.1, io_uring and epoll, through
//! the real binary. `auto` picks io_uring wherever the kernel allows it, so
//! every other test exercises that one; here both must count the same things
//! on the same servers, and a socket closed by a timeout must really close.
//! A kernel without io_uring is serial/load/io_uring_off.rs: switching it off
//! is machine-wide, so that test runs alone.

use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::load;

use load::{load_json, stampede};
use std::sync::atomic::Ordering;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);
const ENGINES: [(&str, &str); 2] = [("epoll", "epoll"), ("io-uring", "io_uring")];

#[test]
fn both_engines_count_the_same_on_every_kind_of_server() {
    for (flag, name) in ENGINES {
        let srv = Hostile::start(Trick::None);
        let r = load_json(&["--engine", flag, "-n", "3000", "-c", "8", "-t", "2", &srv.url("/")], DEADLINE);
        assert_eq!(r["engine"], name);
        assert_eq!(r["requests"], 3000, "{flag}");
        assert_eq!(srv.requests.load(Ordering::Relaxed), 3000, "{flag}: the server saw exactly -n requests");

        let srv = Hostile::start(Trick::Chunked);
        let r = load_json(&["--engine", flag, "-n", "1000", "-c", "4", &srv.url("/")], DEADLINE);
        assert_eq!((r["requests"].as_u64(), r["errors"]["parse"].as_u64()), (Some(1000), Some(0)), "{flag}");

        let srv = Hostile::start(Trick::CloseAfter(1));
        let r = load_json(&["--engine", flag, "-n", "200", "-c", "4", &srv.url("/")], DEADLINE);
        assert_eq!((r["requests"].as_u64(), r["reconnects"].as_u64()), (Some(200), Some(200)), "{flag}");
        assert_eq!(r["errors"]["read"], 0, "{flag}");

        let srv = Hostile::start(Trick::Status500);
        let r = load_json(&["--engine", flag, "-n", "500", "-c", "4", &srv.url("/")], DEADLINE);
        assert_eq!(r["status_codes"]["500"], 500, "{flag}");

        let srv = Hostile::start(Trick::Malformed);
        let r = load_json(&["--engine", flag, "-d", "500ms", "-c", "2", &srv.url("/")], DEADLINE);
        assert_eq!(r["requests"], 0, "{flag}");
        assert!(r["errors"]["parse"].as_u64().unwrap() > 0, "{flag}: {}", r["errors"]);
    }
}

#[test]
fn a_timed_out_connection_is_closed_at_the_server_not_leaked() {
    for (flag, _) in ENGINES {
        let srv = Hostile::start(Trick::Silent);
        let url = srv.url("/");
        let run = std::thread::spawn(move || {
            stampede(&["load", "--json", "--engine", flag, "-d", "2s", "-c", "3", "--timeout", "200ms", &url], DEADLINE)
        });
        // Every 200 ms each connection times out and is replaced: about 30
        // sockets in 2 s. Closed for real, the server never holds more than
        // the 3 live ones (plus one just replaced, not yet seen closing).
        let mut most = 0;
        while !run.is_finished() {
            most = most.max(srv.open.load(Ordering::Relaxed));
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = run.join().unwrap();
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let timeouts = r["errors"]["timeout"].as_u64().unwrap();
        assert!(timeouts >= 12, "{flag}: {timeouts} timeouts");
        assert!(most <= 6, "{flag}: the server had {most} connections open at once after {timeouts} timeouts");
    }
}

#[test]
fn pipelined_and_open_loop_runs_work_on_io_uring() {
    let srv = Hostile::start(Trick::None);
    let r = load_json(&["--engine", "io-uring", "-n", "1600", "-c", "2", "--pipeline", "8", &srv.url("/")], DEADLINE);
    assert_eq!((r["requests"].as_u64(), r["errors"]["parse"].as_u64()), (Some(1600), Some(0)));
    // A lenient --max-lag: the saturation check must not fire from the
    // loop's logic; a busy machine's scheduler is not what this tests.
    let r = load_json(
        &["--engine", "io-uring", "--rate", "2000", "-d", "1s", "-c", "4", "--max-lag", "20ms", &srv.url("/")],
        DEADLINE,
    );
    let sent = r["requests"].as_f64().unwrap();
    assert!((1800.0..=2200.0).contains(&sent), "{sent} requests at 2000/s for 1 s");
    assert_eq!(r["saturated"], false, "{}", r["saturation_reason"]);
}
