//! `stampede explain` blames the server, not the load generator, for
//! requests that waited for connections to open: the cause server in mode
//! `backlog` (support_explain/cause_server.rs) listens with a backlog of 1
//! and accepts one connection every 200 ms, so most of the generator's 32
//! connections wait in SYN retransmits while the few that are open cannot
//! keep up with the rate. The late sends must be attributed to connection
//! setup (the server's accept queue), not to the generator, and a connect
//! error that follows must be called the server's.

use crate::support_causes::{build_server, run_and_explain, Scratch};

#[test]
fn late_sends_behind_a_full_accept_queue_are_connection_setup_not_the_generator() {
    let _machine = crate::machine();
    let s = Scratch::new("explain-backlog");
    let Some(bin) = build_server(&s.dir) else { return };
    let e = run_and_explain(&s, &bin, "backlog", "rate = 200\nconnections = 32\nslow_log = 100", &[]);
    assert!(e.explain["slow_requests"].as_u64().unwrap() >= 5, "{}", e.explain);
    let (setup, generator) = (e.share("connection_setup"), e.share("send_delay"));
    assert!(setup >= 0.5, "most slow requests waited for connections to open: {}", e.human);
    assert!(setup > generator, "the server's accept queue, not the generator: {}", e.human);
    let named: Vec<&str> = e.explain["above_chance"].as_array().unwrap().iter().filter_map(|c| c.as_str()).collect();
    assert_eq!(named.first(), Some(&"connection_setup"), "{named:?}: {}", e.human);
    assert!(e.human.contains("waiting for a connection to open"), "{}", e.human);
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
