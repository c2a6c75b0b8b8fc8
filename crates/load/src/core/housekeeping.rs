//! The periodic tick of the stream loops (HTTP/2 and HTTP/3), and when they
//! end. At each tick Ctrl-C stops
//! the run, an open connection's requests older than `--timeout` are
//! timeouts, a connection still opening after `--timeout` is a connect
//! error and is opened again, and one resting after a failure is reopened
//! once its pause is over, unless the run is stopping or its `-n` is used
//! up. The loops differ in what a connection is (a TCP or TLS stream with
//! an HTTP/2 session, a QUIC connection) and in how a request is cancelled,
//! not in these rules, so they are kept here once.

use crate::config::LoadConfig;
use crate::core::recorder::{ErrorKind, Recorder};
use crate::core::schedule::Schedule;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Where a stream loop's connection is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum State {
    Connecting,
    /// TLS over TCP (HTTP/2); QUIC's handshake is part of `Connecting`.
    Handshaking,
    Open,
    /// Closed; reopened at the next tick from this instant on.
    Backoff(Instant),
}

/// The loop's fields the tick reads or updates.
pub struct Parts<'a> {
    cfg: &'a LoadConfig,
    sched: &'a mut Schedule,
    rec: &'a mut Recorder,
    next_tick: &'a mut Instant,
    stopping: &'a mut bool,
    connections: usize,
}

impl<'a> Parts<'a> {
    pub fn new(
        (cfg, sched, rec): (&'a LoadConfig, &'a mut Schedule, &'a mut Recorder),
        (next_tick, stopping): (&'a mut Instant, &'a mut bool),
        connections: usize,
    ) -> Parts<'a> {
        Parts { cfg, sched, rec, next_tick, stopping, connections }
    }

    /// Whether a closed connection may open again: the run goes on.
    fn may_open(&self) -> bool {
        !*self.stopping && !self.sched.finished()
    }
}

/// A stream loop, as its tick sees it.
pub trait Housekeeping {
    fn parts(&mut self) -> Parts<'_>;
    /// Connection `i`'s state, and since when it has been in it.
    fn state(&self, i: usize) -> (State, Instant);
    /// Open connection `i`: its requests started more than `timeout` before
    /// `now` are timeouts, cancelled as the protocol allows.
    fn expire(&mut self, i: usize, now: Instant, timeout: Duration);
    /// Opens connection `i` again.
    fn reconnect(&mut self, i: usize, now: Instant);
    /// The oldest request outstanding at `now` (or `now` while a connection
    /// is being reopened), for the record's silences.
    fn outstanding(&self, now: Instant) -> Option<Instant>;
    /// At the end, accounts for every request connection `i` still owes
    /// (`Schedule::owed_at_end`).
    fn owe_at_end(&mut self, i: usize, now: Instant, stopping: bool);

    /// The tick: timeouts, reopening after a pause, and Ctrl-C. The next one
    /// is a quarter of `--timeout` later (5 to 100 ms).
    fn housekeeping(&mut self, now: Instant) {
        let p = self.parts();
        let (timeout, connections) = (p.cfg.timeout, p.connections);
        *p.next_tick = now + (timeout / 4).clamp(Duration::from_millis(5), Duration::from_millis(100));
        if p.cfg.interrupt.load(Ordering::Relaxed) {
            *p.stopping = true;
            return;
        }
        for i in 0..connections {
            match self.state(i) {
                (State::Open, _) => self.expire(i, now, timeout),
                (State::Connecting | State::Handshaking, since) if now.saturating_duration_since(since) > timeout => {
                    self.parts().rec.error(ErrorKind::Connect, now, None);
                    self.reconnect(i, now);
                }
                (State::Backoff(at), _) if now >= at && self.parts().may_open() => self.reconnect(i, now),
                _ => {}
            }
        }
        self.note_outstanding(now);
    }

    /// Tells the recorder what is outstanding, for its silences.
    fn note_outstanding(&mut self, now: Instant) {
        let oldest = self.outstanding(now);
        self.parts().rec.outstanding(oldest, now);
    }

    /// Whether the loop ends at `now`: Ctrl-C, or the schedule says so. When
    /// it does, every request still owed is accounted for, and in an open
    /// loop stopped early every request due and never sent.
    fn done(&mut self, now: Instant) -> bool {
        let p = self.parts();
        let (stopping, connections) = (*p.stopping, p.connections);
        if !(stopping || p.sched.done(p.rec, now, p.cfg.timeout)) {
            return false;
        }
        self.note_outstanding(now);
        for i in 0..connections {
            self.owe_at_end(i, now, stopping);
        }
        let p = self.parts();
        if stopping && p.sched.open_loop() {
            p.sched.never_sent(p.rec, now);
        }
        true
    }
}
