//! The periodic tick of every event loop (HTTP/1.1's epoll and io_uring
//! loops, HTTP/2's, HTTP/3's), and when they end. At each tick Ctrl-C stops
//! the run, an open connection's requests older than `--timeout` are
//! timeouts, a connection still opening after `--timeout` is a connect
//! error (a TLS handshake's, a TLS error) and is opened again, and one
//! resting after a failure is reopened once its pause is over, unless the
//! run is stopping or its `-n` is used up and answered. At every wake-up
//! until then, an open loop's held schedule begins once one of the
//! thread's connections is open, or none is still opening
//! (`begin_when_open`). The loops differ in
//! what a connection is (a TCP or TLS stream, with an HTTP/2 session, a
//! QUIC connection) and in how a request is cancelled, not in these rules,
//! so they are kept here once.

use crate::config::LoadConfig;
use crate::core::recorder::{ErrorKind, Recorder};
use crate::core::schedule::Schedule;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The time between two ticks of every loop's housekeeping: a quarter of
/// `--timeout` (5 to 100 ms), often enough to time requests out promptly.
pub fn period(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(5), Duration::from_millis(100))
}

/// Where a loop's connection is, as its tick sees it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum State {
    Connecting,
    /// TLS over TCP; QUIC's handshake is part of `Connecting`.
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
}

/// An event loop, as its tick sees it.
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

    /// Whether requests sent are still unanswered (or to be sent again).
    fn owes(&mut self) -> bool {
        self.parts().sched.in_flight > 0
    }

    /// Whether a closed connection may open again: the run goes on.
    fn may_open(&mut self) -> bool {
        let p = self.parts();
        if *p.stopping {
            return false;
        }
        !p.sched.used_up() || self.owes()
    }

    /// The tick: timeouts, reopening after a pause, and Ctrl-C. The next one
    /// is a [`period`] later.
    fn housekeeping(&mut self, now: Instant) {
        let p = self.parts();
        let (timeout, connections) = (p.cfg.timeout, p.connections);
        *p.next_tick = now + period(timeout);
        if p.cfg.interrupt.load(Ordering::Relaxed) {
            *p.stopping = true;
            return;
        }
        for i in 0..connections {
            match self.state(i) {
                (State::Open, _) => self.expire(i, now, timeout),
                (state @ (State::Connecting | State::Handshaking), since)
                    if now.saturating_duration_since(since) > timeout =>
                {
                    let kind = if state == State::Handshaking { ErrorKind::Tls } else { ErrorKind::Connect };
                    self.parts().rec.error(kind, now, None);
                    self.reconnect(i, now);
                }
                (State::Backoff(at), _) if now >= at && self.may_open() => self.reconnect(i, now),
                _ => {}
            }
        }
        self.note_outstanding(now);
    }

    /// Open loop, at a wake-up while the schedule is held: it begins at
    /// `now` once one of the thread's connections is open, or none is still
    /// opening (every one failed), or at its connect bound
    /// (`Schedule::begin`). Every loop calls this before it takes what is
    /// due; one test of a flag once the schedule has begun.
    #[inline]
    fn begin_when_open(&mut self, now: Instant) {
        let p = self.parts();
        if !p.sched.held() {
            return;
        }
        let connections = p.connections;
        let open = (0..connections).any(|i| self.state(i).0 == State::Open);
        let opening = (0..connections).any(|i| matches!(self.state(i).0, State::Connecting | State::Handshaking));
        // A fresh clock: a connection that opened in this wake-up's events
        // was free from when its event was handled, after `now`; a request
        // due before that would wait for it.
        self.parts().sched.begin(now.max(Instant::now()), opening && !open);
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
        if !stopping {
            // Asked only when the schedule may end: `owes` can cost a pass
            // over the connections.
            if !p.sched.may_end(now) {
                return false;
            }
            let owed = self.owes();
            let p = self.parts();
            if !p.sched.done(p.rec, now, p.cfg.timeout, owed) {
                return false;
            }
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
