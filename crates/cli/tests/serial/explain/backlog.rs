//! `stampede explain` blames the server, not the load generator, for
//! requests that waited on its accept queue: the cause server in mode
//! `backlog` (crates/testkit/fixtures/cause_server.rs) listens with a backlog of 1
//! and accepts one connection every 200 ms, so most of the generator's 32
//! connections wait in SYN retransmits (their own wait for a connection to
//! open: `connection_setup`), and a request written on a connection whose
//! handshake the client saw complete while the full queue dropped its last
//! ACK waits for the kernel's retransmissions (`kernel_drops`, the server's
//! own listener's drops). Both are the server's accept queue; neither may be
//! called the generator's, and a connect error that follows must be called
//! the server's. (Each request's own wait explains that request alone: when
//! a neighbour's wait counted too, every slow request here read as
//! `connection_setup`.)

use stampede_testkit::causes::{build_server, run_and_explain, Scratch};

#[test]
fn late_sends_behind_a_full_accept_queue_are_the_servers_accept_queue_not_the_generator() {
    let _machine = crate::machine();
    let s = Scratch::new("explain-backlog");
    let Some(bin) = build_server(&s.dir) else { return };
    let e = run_and_explain(&s, &bin, "backlog", "rate = 200\nconnections = 32\nslow_log = 100", &[]);
    assert!(e.explain["slow_requests"].as_u64().unwrap() >= 5, "{}", e.explain);
    let queue = e.share("connection_setup") + e.share("kernel_drops");
    let generator = e.share("send_delay");
    assert!(queue >= 0.5, "most slow requests waited on the accept queue: {}", e.human);
    assert!(queue > generator, "the server's accept queue, not the generator: {}", e.human);
    let named: Vec<&str> = e.explain["above_chance"].as_array().unwrap().iter().filter_map(|c| c.as_str()).collect();
    assert!(matches!(named.first(), Some(&"connection_setup") | Some(&"kernel_drops")), "{named:?}: {}", e.human);
    assert!(!named.contains(&"send_delay"), "{named:?}: {}", e.human);
    assert!(!e.human.contains("load generator late"), "{}", e.human);
    // The evidence explain takes for the note: the server's own listener's
    // drops, kept in the run record (never the host's counters).
    let own = e.run()["listen_drops"]["measured"].as_u64().unwrap_or(0);
    assert!(own > 0, "the backlog-1 listener dropped SYNs: {}", e.run()["listen_drops"]);
    let connect_errors = e.run()["load"]["errors"]["connect"].as_u64().unwrap_or(0);
    let notes = e.explain["notes"].to_string();
    if connect_errors > 0 {
        assert!(notes.contains("connect errors are the server's"), "{notes}");
    }
}
