//! When every event loop sends (HTTP/1.1's epoll and io_uring loops,
//! HTTP/2's and HTTP/3's): the `-n` quota of the closed loop, the open
//! loop's pacer and the requests due on it, how long due requests waited
//! because every connection (or stream) was busy, the schedule lag, and
//! what the run owes at its end: the requests due and never sent.
//!
//! The loops differ in how bytes move and in what a connection is, not in
//! when a request is due, so that is kept here once, with no I/O: a loop
//! arms its own timer (a `timerfd` under epoll, the ring's wait timeout
//! under io_uring) for [`Schedule::wake`]: the earliest due send, at most
//! once per granularity (`pacer::granularity`). At each wake-up it calls
//! [`Schedule::take_due`] with the wake-up's time, then takes every request
//! due by then ([`Schedule::next_request`]) for as long as it has a free
//! connection or stream, and says when it has none ([`Schedule::all_busy`]).
//!
//! Due requests are not queued: the queue is the pacer's schedule not yet
//! taken, up to the last wake-up's time, so requests waiting for a
//! connection cost no memory however long they wait. Only requests sent
//! again (a server that said it never processed them) are kept, with their
//! intended times, and go first.
//!
//! An open loop's schedule begins once the thread can send
//! ([`Schedule::begin`]): when the first of its connections is open (its
//! TLS, HTTP/2 or QUIC handshake done), not when it starts opening them.
//! Latency runs from the intended send time, so a request due before the
//! thread had any connection would carry the generator's own setup, and
//! `explain` would name it `connection_setup`. Until then the schedule is
//! held: nothing is due, and its times run from the connect bound
//! (`--timeout` after the start), where it begins by itself if no
//! connection ever opens; it begins at once when every one failed. It does
//! not wait for all of them: a server slow to accept the rest (a full
//! accept queue) keeps requests waiting for them, and that wait is the
//! server's, as is a reconnection's later in the run.

use crate::config::LoadConfig;
use crate::core::pacer::Pacer;
use crate::core::recorder::{ErrorKind, Recorder};
use crate::core::share::{Share, Starved};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// A request on the wire, as the schedule sees it: when it was due, when it
/// went and, with a mix, its target. HTTP/2's and HTTP/3's stream slots are
/// one (`http2::session::Slot`); the schedule keeps to this much of them, so
/// core/ never reaches up into a protocol's folder.
pub trait InFlight {
    fn intended(&self) -> Instant;
    fn start(&self) -> Instant;
    fn target(&self) -> Option<usize>;
}

pub struct Schedule {
    /// Open loop: intended send times; none in closed loop.
    pacer: Option<Pacer>,
    /// Requests left to send (`-n`), or unlimited. Open loop: taken off as
    /// each is sent.
    quota: Option<u64>,
    /// Open loop: the requests due up to this instant (the last wake-up's
    /// time) may be taken; none before the first wake-up.
    horizon: Option<Instant>,
    /// Open loop: intended times of requests to send again, before any new one.
    again: VecDeque<Instant>,
    /// The stream loops' requests sent and not yet answered, reset or lost
    /// (HTTP/1.1's connections each know what they owe: `Conn::owed`).
    pub in_flight: u64,
    starved: Starved,
    max_lag_ns: u64,
    /// Open loop, until the thread's first connection is open: the latest
    /// the schedule begins (its pacer's origin meanwhile). None once begun,
    /// and in closed loop.
    held: Option<Instant>,
    start: Instant,
    measure_from: Instant,
    end: Option<Instant>,
}

impl Schedule {
    /// The schedule of a thread's share, held until its first connection
    /// is open, at most `--timeout` (`cfg.timeout`) from the start.
    pub fn new(cfg: &LoadConfig, share: &Share) -> Schedule {
        let bound = share.start.checked_add(cfg.timeout).unwrap_or(share.start);
        Schedule::paced(Pacer::for_share(cfg, share), share).held_until(bound)
    }

    /// Open loop: holds the schedule until [`Schedule::begin`], or `bound`
    /// at the latest, moving its times to run from there meanwhile.
    fn held_until(mut self, bound: Instant) -> Schedule {
        if let Some(pacer) = self.pacer.as_mut() {
            pacer.move_origin(bound.max(pacer.origin()));
            self.held = Some(pacer.origin());
        }
        self
    }

    /// The schedule of `share` with its send times from `pacer` (none: closed loop).
    fn paced(pacer: Option<Pacer>, share: &Share) -> Schedule {
        Schedule {
            pacer,
            quota: share.quota,
            horizon: None,
            again: VecDeque::new(),
            in_flight: 0,
            starved: Starved::until(share.end),
            max_lag_ns: 0,
            held: None,
            start: share.start,
            measure_from: share.measure_from,
            end: share.end,
        }
    }

    #[inline]
    pub fn open_loop(&self) -> bool {
        self.pacer.is_some()
    }

    /// `-n` is used up: nothing new will be sent.
    #[inline]
    pub fn used_up(&self) -> bool {
        self.quota == Some(0)
    }

    /// Open loop: nothing new will fall due (`-n` is used up, or the next
    /// send would be at or past the end of the run).
    #[inline]
    fn over(&self, pacer: &Pacer) -> bool {
        self.used_up() || self.end.is_some_and(|end| pacer.next() >= end)
    }

    /// Open loop: a request of the pacer is due by the last wake-up.
    #[inline]
    fn pacer_due(&self) -> bool {
        match (self.pacer.as_ref(), self.horizon) {
            (Some(p), Some(horizon)) => p.next() <= horizon && !self.over(p),
            _ => false,
        }
    }

    /// Open loop: requests are due and not yet sent.
    #[inline]
    pub fn waiting(&self) -> bool {
        !self.again.is_empty() || self.pacer_due()
    }

    /// Open loop: a request falls due by `now` (since the last wake-up too).
    pub fn due_by(&self, now: Instant) -> bool {
        !self.again.is_empty() || self.pacer.as_ref().is_some_and(|p| p.next() <= now && !self.over(p))
    }

    /// Whether a request could go now (closed loop: the quota; open loop: one is due).
    #[inline]
    pub fn ready(&self) -> bool {
        match self.pacer {
            None => !self.used_up(),
            Some(_) => self.waiting(),
        }
    }

    /// Open loop: a wake-up at `now`; every request due by then may be taken.
    #[inline]
    pub fn take_due(&mut self, now: Instant) {
        self.horizon = self.horizon.max(Some(now));
    }

    /// Open loop: when the loop must wake to send (at most once per
    /// granularity after the last wake-up that sent), until nothing more
    /// will fall due; none in closed loop, and none while due requests wait
    /// for a connection (a response frees one, and that wait is the lag
    /// being measured, so a response must wake the loop).
    #[inline]
    pub fn wake(&self) -> Option<Instant> {
        if self.waiting() || self.held.is_some() {
            // A connection freed (or opened) wakes the loop, not the schedule.
            return None;
        }
        let pacer = self.pacer.as_ref().filter(|p| !self.over(p))?;
        Some(self.end.map_or(pacer.wake(), |end| end.min(pacer.wake())))
    }

    /// Open loop: the schedule waits for the thread's first connection.
    #[inline]
    pub fn held(&self) -> bool {
        self.held.is_some()
    }

    /// Open loop, while held: the schedule begins at `now` unless
    /// `unready` (no connection of the thread is open, and some are still
    /// connecting or in their handshake; once one is open, or every one
    /// failed and was counted, it begins), its times moved to run from
    /// then; past its bound it already runs from the bound, and begins
    /// whatever `unready` says: a silent server is not waited for beyond
    /// `--timeout`.
    pub fn begin(&mut self, now: Instant, unready: bool) {
        let Some(bound) = self.held else { return };
        if unready && now < bound {
            return;
        }
        if let Some(pacer) = self.pacer.as_mut().filter(|_| now < bound) {
            pacer.move_origin(now);
        }
        self.held = None;
    }

    /// Open loop: where the schedule's times run from (the connect bound
    /// while it is held); none in closed loop.
    pub fn origin(&self) -> Option<Instant> {
        self.pacer.as_ref().map(Pacer::origin)
    }

    /// Closed loop: takes up to `most` requests off the `-n` quota (`most`
    /// without one); 0 once it is used up.
    #[inline]
    pub fn take_quota(&mut self, most: u64) -> u64 {
        match self.quota.as_mut() {
            Some(left) => {
                let n = most.min(*left);
                *left -= n;
                n
            }
            None => most,
        }
    }

    /// The next request's intended time, if one may go: closed loop, one
    /// off the quota (any time: the loop sends it now); open loop, the
    /// oldest due. Due requests stop waiting once none is left.
    #[inline]
    pub fn next_request(&mut self) -> Option<Instant> {
        if self.pacer.is_none() {
            return (self.take_quota(1) == 1).then_some(self.start);
        }
        let intended = match (self.again.pop_front(), self.horizon) {
            (Some(t), _) => t,
            (None, Some(horizon)) if self.pacer_due() => {
                self.take_quota(1);
                self.pacer.as_mut()?.take(horizon)
            }
            _ => return None,
        };
        if let Some(horizon) = self.horizon.filter(|_| self.starved.waiting() && !self.waiting()) {
            self.starved.end(horizon, self.measure_from);
        }
        Some(intended)
    }

    /// Open loop, after a pass that gave due requests to every free
    /// connection (or stream): those still due wait for one from `now`.
    #[inline]
    pub fn all_busy(&mut self, now: Instant) {
        if self.waiting() {
            self.starved.begin(now);
        }
    }

    /// Open loop: a request intended at `intended` goes at `now` on a
    /// connection (or stream) free since `could`: the delay the generator
    /// itself caused, from when it could have gone, is the schedule lag.
    #[inline]
    pub fn lag(&mut self, rec: &mut Recorder, intended: Instant, could: Instant, now: Instant) {
        if self.pacer.is_some() && rec.measuring(now) {
            let lag = now.saturating_duration_since(intended.max(could)).as_nanos() as u64;
            rec.lag.saturating_record(lag.max(1));
            self.max_lag_ns = self.max_lag_ns.max(lag);
        }
    }

    /// A stream loop's request goes at `now`, intended at `intended`, on a
    /// stream free since `could`: counted sent and in flight, and its lag
    /// recorded. Returns its intended time (closed loop: `now`) and when it
    /// could have gone (`Slot::ready`).
    pub fn send(&mut self, rec: &mut Recorder, intended: Instant, could: Instant, now: Instant) -> (Instant, Instant) {
        self.lag(rec, intended, could, now);
        let intended = if self.open_loop() { intended } else { now };
        rec.sent(1, intended);
        self.in_flight += 1;
        (intended, intended.max(could).min(now))
    }

    /// A request the server never processed: sent again, keeping its
    /// intended time (open loop) or back on the `-n` quota (closed loop).
    pub fn requeue(&mut self, rec: &mut Recorder, slot: &impl InFlight) {
        rec.unsent(slot.intended());
        if self.pacer.is_some() {
            self.again.push_front(slot.intended());
        } else if let Some(n) = self.quota.as_mut() {
            *n += 1;
        }
    }

    /// Request `slot`, in flight on connection `i`, was lost with the
    /// connection (a close, a socket error) as `kind`. Without a GOAWAY it is
    /// an error. After one, the requests the GOAWAY said were never processed
    /// were already sent again (`requeue`); the ones left may have been
    /// processed (RFC 9113 §6.8, RFC 9114 §5.2), so they are sent again only
    /// when every request of the run is idempotent (`LoadConfig::idempotent`),
    /// and are otherwise each an error: a POST is never sent twice. The one
    /// rule of HTTP/2 and HTTP/3.
    pub fn lost(
        &mut self,
        rec: &mut Recorder,
        slot: &impl InFlight,
        kind: ErrorKind,
        now: Instant,
        i: usize,
        retry: Retry,
    ) {
        self.in_flight -= 1;
        if retry == Retry::AfterGoaway {
            self.requeue(rec, slot);
        } else {
            error_of(rec, slot, kind, now, i);
        }
    }

    /// A stream loop's `-n` is used up: nothing left to send, due or in flight.
    pub fn finished(&self) -> bool {
        self.used_up() && self.in_flight == 0 && self.again.is_empty()
    }

    /// Whether the loop may end at `now` (`done` is false otherwise): the
    /// end of a timed run has come, or `-n` is used up.
    #[inline]
    pub fn may_end(&self, now: Instant) -> bool {
        self.used_up() || self.end.is_some_and(|end| now >= end)
    }

    /// Whether the loop ends at `now`, `owed` saying whether requests sent
    /// are still unanswered: at the end of a timed run (open loop: once the
    /// requests in flight and due are answered, up to `timeout` later), or
    /// once `-n` is used up and answered. The due requests never sent are
    /// counted then, in the latency from their intended time to the end.
    pub fn done(&mut self, rec: &mut Recorder, now: Instant, timeout: Duration, owed: bool) -> bool {
        let Some(end) = self.end.filter(|end| now >= *end) else {
            return self.used_up() && self.again.is_empty() && !owed;
        };
        if self.pacer.is_none() {
            return true;
        }
        // Open loop: the requests in flight at the end are the slowest of
        // the run; they are waited for, up to `--timeout`.
        if (self.waiting() || owed) && now < end + timeout {
            return false;
        }
        self.never_sent(rec, end);
        true
    }

    /// Open loop: every request that fell due by `until` (and before
    /// the end) and was not sent (every connection stayed busy) is counted
    /// never sent.
    pub fn never_sent(&mut self, rec: &mut Recorder, until: Instant) {
        if self.pacer.is_none() {
            return;
        }
        self.horizon = Some(until);
        while let Some(intended) = self.next_request() {
            rec.never_sent(intended, until);
        }
    }

    /// Whether a request still owed when the loop ends at `now` timed out:
    /// at the end of an open loop's drain (it waited `--timeout` past the
    /// end). Otherwise (a closed loop's end, Ctrl-C: `stopping`) it is
    /// unanswered, its age so far in its latency.
    pub fn drained(&self, now: Instant, stopping: bool) -> bool {
        self.pacer.is_some() && !stopping && self.end.is_some_and(|end| now >= end)
    }

    /// The loop has ended at `now` with `slot` (on connection `i`) owed:
    /// a timeout after an open loop's drain, otherwise unanswered (`drained`).
    pub fn owed_at_end(&mut self, rec: &mut Recorder, slot: &impl InFlight, i: usize, now: Instant, stopping: bool) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.drained(now, stopping) {
            error_of(rec, slot, ErrorKind::Timeout, now, i);
        } else {
            rec.unanswered(slot.intended(), slot.start(), now, i as u32);
        }
    }

    /// What the thread reports of its schedule: how long due requests
    /// waited for a connection, and the longest lag.
    pub fn figures(&self) -> (Starved, u64) {
        (self.starved, self.max_lag_ns)
    }
}

/// Whether the requests a lost connection held may be sent again.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Retry {
    /// Each is an error.
    Never,
    /// The server sent GOAWAY and every request of the run is idempotent.
    AfterGoaway,
}

impl Retry {
    /// The rule for a connection that did (`goaway`) or did not get a GOAWAY.
    pub fn of(goaway: bool, cfg: &LoadConfig) -> Retry {
        if goaway && cfg.idempotent() {
            Retry::AfterGoaway
        } else {
            Retry::Never
        }
    }
}

/// Request `slot` on connection `i` failed with `kind`: counted, and for
/// its mix target too.
pub fn error_of(rec: &mut Recorder, slot: &impl InFlight, kind: ErrorKind, now: Instant, i: usize) {
    if rec.error(kind, now, Some((slot.intended(), slot.start(), i as u32))) {
        if let Some(t) = slot.target() {
            rec.target_error(t, kind);
        }
    }
}

#[cfg(test)]
mod tests;
