//! When the stream engines (HTTP/2's `http2::event_loop`, HTTP/3's `http3::event_loop`) send:
//! the `-n` quota of the closed loop, and the open loop's pacer, due queue
//! and timer, with what a request costs the record when it goes, when the
//! server never processed it, and when the run ends with requests owed.
//!
//! Both engines put due requests on free streams in the same way; only how
//! bytes move differs, so this is kept once, as `cycle::Core` is for the
//! HTTP/1.1 loops. A loop wakes for the schedule at `Pacer::wake`: the
//! earliest due send, at most once per granularity (`pacer::granularity`),
//! and takes every request due by then in one go ([`Schedule::take_due`]).

use crate::config::LoadConfig;
use crate::core::pacer::{Pacer, Timer};
use crate::core::recorder::{ErrorKind, Recorder};
use crate::core::share::{Share, Starved};
use crate::http2::session::Slot;
use mio::{Registry, Token};
use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

pub struct Schedule {
    /// Open loop: intended send times; none in closed loop.
    pub pacer: Option<Pacer>,
    timer: Option<Timer>,
    /// Requests left to send (`-n`), or unlimited.
    pub quota: Option<u64>,
    /// Requests sent and not yet answered, reset or lost.
    pub in_flight: u64,
    /// Open loop: intended times of requests due and not yet sent.
    pub due: VecDeque<Instant>,
    /// Open loop: nothing more will fall due (the end, or `-n` reached).
    pub over: bool,
    pub starved: Starved,
    pub max_lag_ns: u64,
    start: Instant,
    measure_from: Instant,
    end: Option<Instant>,
}

impl Schedule {
    /// The schedule of a thread's share; in open loop its timer is
    /// registered in `registry` under `token`.
    pub fn new(cfg: &LoadConfig, share: &Share, registry: &Registry, token: Token) -> io::Result<Schedule> {
        let timer = match share.rate {
            Some(_) => Some(Timer::new(registry, token)?),
            None => None,
        };
        Ok(Schedule {
            pacer: Pacer::for_share(cfg, share),
            timer,
            quota: share.quota,
            in_flight: 0,
            due: VecDeque::new(),
            over: false,
            starved: Starved::until(share.end),
            max_lag_ns: 0,
            start: share.start,
            measure_from: share.measure_from,
            end: share.end,
        })
    }

    pub fn open_loop(&self) -> bool {
        self.pacer.is_some()
    }

    /// Whether a request could go now (closed loop: the quota; open loop: one is due).
    pub fn ready(&self) -> bool {
        match self.pacer {
            None => self.quota != Some(0),
            Some(_) => !self.due.is_empty(),
        }
    }

    /// The next request's intended time (closed loop: any), if one is due.
    pub fn next_request(&mut self) -> Option<Instant> {
        if self.pacer.is_none() {
            return match self.quota {
                Some(0) => None,
                Some(n) => {
                    self.quota = Some(n - 1);
                    Some(self.start)
                }
                None => Some(self.start),
            };
        }
        let intended = self.due.pop_front()?;
        if self.due.is_empty() && self.starved.waiting() {
            self.starved.end(Instant::now(), self.measure_from);
        }
        Some(intended)
    }

    /// A request goes at `now`, intended at `intended`, on a stream free
    /// since `could`: counted sent and in flight, and in open loop its lag
    /// (from when it could have gone) recorded. Returns its intended time
    /// (closed loop: `now`) and when it could have gone (`Slot::ready`).
    pub fn send(&mut self, rec: &mut Recorder, intended: Instant, could: Instant, now: Instant) -> (Instant, Instant) {
        let open_loop = self.pacer.is_some();
        if open_loop && rec.measuring(now) {
            let lag = now.saturating_duration_since(intended.max(could)).as_nanos() as u64;
            rec.lag.saturating_record(lag.max(1));
            self.max_lag_ns = self.max_lag_ns.max(lag);
        }
        let intended = if open_loop { intended } else { now };
        rec.sent(1, intended);
        self.in_flight += 1;
        (intended, intended.max(could).min(now))
    }

    /// Open loop: moves the requests whose time has come onto the due
    /// queue, taking them off the schedule at this wake-up's `now`.
    pub fn take_due(&mut self, now: Instant) {
        let Some(pacer) = self.pacer.as_mut() else { return };
        while !self.over && pacer.next() <= now {
            if self.end.is_some_and(|end| pacer.next() >= end) || self.quota == Some(0) {
                self.over = true;
                break;
            }
            if let Some(n) = self.quota.as_mut() {
                *n -= 1;
            }
            if !self.due.is_empty() {
                self.starved.begin(now); // due requests pile up: every stream is busy
            }
            self.due.push_back(pacer.take(now));
        }
    }

    /// Open loop: when the loop must wake for the schedule (at most once per
    /// granularity after the last wake-up that sent), until it is over.
    pub fn wake(&self) -> Option<Instant> {
        let pacer = self.pacer.as_ref().filter(|_| !self.over)?;
        Some(self.end.map_or(pacer.wake(), |end| end.min(pacer.wake())))
    }

    /// Open loop, before a wait on epoll: the schedule's timer (a `timerfd`:
    /// epoll's timeout has millisecond resolution) armed for the next wake-up.
    pub fn arm_timer(&mut self) {
        if let (Some(at), Some(timer)) = (self.wake(), self.timer.as_mut()) {
            timer.arm(at);
        }
    }

    /// The timer's event arrived.
    pub fn timer_fired(&mut self) {
        if let Some(timer) = self.timer.as_mut() {
            timer.fired();
        }
    }

    /// A request the server never processed: sent again, keeping its
    /// intended time (open loop) or back on the `-n` quota (closed loop).
    pub fn requeue(&mut self, rec: &mut Recorder, slot: &Slot) {
        rec.unsent(slot.intended);
        if self.pacer.is_some() {
            self.due.push_front(slot.intended);
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
    pub fn lost(&mut self, rec: &mut Recorder, slot: &Slot, kind: ErrorKind, now: Instant, i: usize, retry: Retry) {
        self.in_flight -= 1;
        if retry == Retry::AfterGoaway {
            self.requeue(rec, slot);
        } else {
            error_of(rec, slot, kind, now, i);
        }
    }

    /// `-n` is used up: nothing left to send, queued or in flight.
    pub fn finished(&self) -> bool {
        self.quota == Some(0) && self.in_flight == 0 && self.due.is_empty()
    }

    /// Whether the loop ends at `now`: at the end of a timed run (open loop:
    /// once the requests in flight are answered, up to `timeout` later), or
    /// once `-n` is used up. The due requests never sent are counted then,
    /// in the latency from their intended time to the schedule's end.
    pub fn done(&mut self, rec: &mut Recorder, now: Instant, timeout: Duration) -> bool {
        let Some(end) = self.end.filter(|end| now >= *end) else { return self.finished() };
        if self.pacer.is_none() {
            return true;
        }
        // Open loop: the requests in flight at the end are the slowest of
        // the run; they are waited for, up to `--timeout`.
        let owed = self.in_flight > 0 || !self.due.is_empty();
        if owed && now < end + timeout {
            return false;
        }
        self.never_sent(rec, end);
        true
    }

    /// Open loop: every request that fell due before `until` and was not
    /// sent (every stream stayed busy) is counted never sent.
    pub fn never_sent(&mut self, rec: &mut Recorder, until: Instant) {
        self.take_due(until);
        for intended in std::mem::take(&mut self.due) {
            rec.never_sent(intended, until);
        }
    }

    /// The loop has ended at `now` with `slot` (on connection `i`) owed: at
    /// the end of an open-loop drain it timed out, otherwise (a closed
    /// loop's end, Ctrl-C) it is unanswered; its age is in the latency.
    pub fn owed_at_end(&mut self, rec: &mut Recorder, slot: &Slot, i: usize, now: Instant, stopping: bool) {
        self.in_flight = self.in_flight.saturating_sub(1);
        let drained = self.pacer.is_some() && !stopping && self.end.is_some_and(|end| now >= end);
        if drained {
            error_of(rec, slot, ErrorKind::Timeout, now, i);
        } else {
            rec.unanswered(slot.intended, slot.start, now, i as u32);
        }
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
pub fn error_of(rec: &mut Recorder, slot: &Slot, kind: ErrorKind, now: Instant, i: usize) {
    if rec.error(kind, now, Some((slot.intended, slot.start, i as u32))) {
        if let Some(t) = slot.target {
            rec.target_error(t, kind);
        }
    }
}
