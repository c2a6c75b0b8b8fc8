//! The request/response cycle of a worker's connections, apart from how
//! bytes move: when a request is due, what a response, an end of stream, an
//! error or a timeout does to a connection, and what each costs in the record.
//!
//! Two event loops move the bytes of HTTP/1.1: edge-triggered epoll
//! (`http1/epoll.rs`, also under TLS) and io_uring (`http1/uring.rs`). They differ
//! in how a write starts and how a socket is opened and closed, never in what
//! is counted, so the counting lives here once: a loop keeps a `CycleState` and
//! implements the few `Cycle` hooks, and the provided methods do the rest.
//! When a request is due, and what the run owes at its end, is every
//! loop's `Schedule` (`core/schedule.rs`), and the housekeeping tick
//! (timeouts, reconnects, Ctrl-C) and the end of the run every loop's
//! `Housekeeping` (`core/housekeeping.rs`); this file gives them connections.

use crate::config::LoadConfig;
use crate::core::housekeeping::{period, Housekeeping, Parts, State};
use crate::core::output::Output;
use crate::core::recorder::{ErrorKind, Origin, Recorder};
use crate::core::rusage::ThreadTime;
use crate::core::schedule::Schedule;
use crate::core::share::Share;
use crate::core::transport::Transport;
use crate::http1::conn::{Conn, ConnState};
use crate::http1::response::Done;
use crate::mix::Picker;
use stampede_spec::stages::{Ramp, Stages};
use std::time::{Duration, Instant};

/// What every loop keeps: its connections, its record and its schedule.
pub struct CycleState<'a, T> {
    pub cfg: &'a LoadConfig,
    pub conns: Vec<Conn<T>>,
    /// Open loop: connections free to send, most recently freed last.
    pub idle: Vec<u32>,
    pub rec: Recorder,
    /// When requests are due: the `-n` quota, or the open loop's pacer.
    pub sched: Schedule,
    pub share: Share,
    pub stopping: bool,
    /// When housekeeping (timeouts, reconnects, Ctrl-C) is due next.
    pub next_tick: Instant,
    /// The length of one request on the wire.
    pub request_len: usize,
    /// Open loop, past the end of a timed run: nothing new is sent, and the
    /// requests still in flight are waited for (up to `--timeout`).
    pub draining: bool,
    /// The method may be sent again when a server drops it unprocessed.
    idempotent: bool,
    /// With a request mix: this thread's choice of target and expansion.
    pub picker: Option<Picker>,
    /// Closed loop with `--stages`: connections ramp through these (all
    /// threads' together); the ones beyond this thread's share wait idle.
    ramp: Option<&'a Stages>,
}

impl<'a, T: Transport> CycleState<'a, T> {
    pub fn new(cfg: &'a LoadConfig, share: Share, rec: Recorder, request_len: usize) -> CycleState<'a, T> {
        let share_start = share.start;
        let share_index = share.index;
        CycleState {
            cfg,
            conns: (0..share.connections).map(|i| Conn::new(i as u32, cfg, share.start)).collect(),
            idle: Vec::with_capacity(share.max_connections),
            rec,
            sched: Schedule::new(cfg, &share),
            share,
            stopping: false,
            next_tick: share_start,
            request_len,
            draining: false,
            idempotent: cfg.idempotent(),
            picker: cfg.mix.clone().map(|mix| Picker::new(mix, share_index)),
            ramp: cfg.stages.as_ref().filter(|s| s.ramp == Ramp::Connections),
        }
    }

    /// Closed loop with connection stages: whether connection `i` is beyond
    /// this thread's share of the connections due at `now`, and waits.
    fn parked(&self, i: usize, now: Instant) -> bool {
        let Some(ramp) = self.ramp else { return false };
        let t = now.saturating_duration_since(self.share.measure_from).as_secs_f64();
        let total = ramp.value_at(t).round() as usize;
        let threads = self.cfg.threads;
        let mine = total / threads + usize::from(self.share.index < total % threads);
        i >= mine
    }

    /// The housekeeping period (`housekeeping::period`).
    fn tick(&self) -> Duration {
        period(self.cfg.timeout)
    }

    /// When the loop must wake at the latest for its own sake: the next
    /// housekeeping tick or the end of the run.
    pub fn deadline(&self) -> Instant {
        match self.share.end {
            Some(end) if !self.draining => end.min(self.next_tick),
            _ => self.next_tick,
        }
    }

    /// Open loop: when the loop must wake next to send what is due, if no
    /// response needs to wake it sooner. That is the schedule's next wake-up
    /// (`Schedule::wake`: the earliest due send, at most one per granularity), or the
    /// loop's own deadline if sooner. None in closed loop, when due requests
    /// wait for a connection (also those due since the last wake-up: every
    /// connection is busy, and a response frees one), and when the
    /// schedule is over (the drain waits for the last responses). Responses
    /// handled at the wake-up lose nothing: they end at the kernel's receive
    /// time (`rx_time`), and the connection they free is free from then on
    /// (`idle_since`), so the lag of its next request counts from it.
    pub fn scheduled_wake(&self, now: Instant) -> Option<Instant> {
        let wake = self.sched.wake()?;
        let starved = self.idle.is_empty() && self.sched.due_by(now);
        (!starved).then(|| wake.min(self.deadline()))
    }

    /// Counts `kind` against the last `owed` requests of connection `i`'s
    /// batch, each against its target with a mix; one error with no request
    /// when `owed` is 0.
    fn count_lost(&mut self, i: usize, owed: usize, kind: ErrorKind, now: Instant) {
        let c = &self.conns[i];
        if owed == 0 {
            self.rec.error(kind, now, None);
            return;
        }
        let request = Some((c.intended, c.start, c.id));
        // With a mix, the requests owed are the last `owed` of the batch.
        let first = c.reqs.len().saturating_sub(owed);
        for k in 0..owed {
            if self.rec.error(kind, now, request) {
                if let Some(&(t, _)) = self.conns[i].reqs.get(first + k) {
                    self.rec.target_error(t as usize, kind);
                }
            }
        }
    }

    /// Fills connection `i`'s own batch with `n` requests of the mix.
    fn fill(&mut self, i: usize, n: u32) {
        let Some(picker) = self.picker.as_mut() else { return };
        let c = &mut self.conns[i];
        c.out.clear();
        c.reqs.clear();
        for _ in 0..n {
            let t = picker.next_target();
            picker.write(t, &mut c.out);
            c.reqs.push((t as u16, c.out.len() as u32));
        }
    }

    /// The bytes of connection `i`'s batch.
    #[inline]
    pub fn batch_bytes(&self, i: usize) -> usize {
        let c = &self.conns[i];
        if self.picker.is_some() {
            c.out.len()
        } else {
            c.batch_len as usize * self.request_len
        }
    }

    /// Where the bytes of the first `n` requests of connection `i`'s batch end.
    #[inline]
    fn request_end(&self, i: usize, n: usize) -> usize {
        // Without a mix `reqs` is empty: every request is `request_len` long.
        match self.conns[i].reqs.get(n.wrapping_sub(1)) {
            Some(&(_, end)) => end as usize,
            None => n * self.request_len,
        }
    }

    /// The requests of connection `i`'s batch still unanswered are to be
    /// sent again on its next socket; with a mix, only their bytes are kept.
    fn resend_rest(&mut self, i: usize) {
        let c = &mut self.conns[i];
        let answered = (c.batch_len - c.batch) as usize;
        c.retry += std::mem::take(&mut c.batch);
        if self.picker.is_some() && answered > 0 {
            let cut = c.reqs[answered - 1].1;
            c.out.drain(..cut as usize);
            c.reqs.drain(..answered);
            c.reqs.iter_mut().for_each(|r| r.1 -= cut);
        }
    }

    /// Records the response to the next request of connection `i`'s batch;
    /// true when it came before that request was all written.
    fn answer(&mut self, i: usize, done: Done, now: Instant) -> bool {
        let conn = &mut self.conns[i];
        let answered = (conn.batch_len - conn.batch + 1) as usize;
        let latency = self.rec.response(conn.intended, conn.start, now, done.status, conn.origin);
        if let Some(body) = done.body.filter(|_| self.rec.measuring(now)) {
            self.rec.encodings.count(body);
        }
        if let (Some(latency), Some(&(t, _))) = (latency, conn.reqs.get(answered - 1)) {
            self.rec.target_response(t as usize, latency, done.status);
        }
        conn.batch = conn.batch.saturating_sub(1);
        conn.served += 1;
        let state = conn.state;
        matches!(state, ConnState::Writing(off) if off < self.request_end(i, answered))
    }

    /// What the housekeeping tick reads and updates (`Housekeeping::parts`).
    pub fn parts(&mut self) -> Parts<'_> {
        let connections = self.conns.len();
        Parts::new((self.cfg, &mut self.sched, &mut self.rec), (&mut self.next_tick, &mut self.stopping), connections)
    }

    /// The thread's result, once its loop has ended.
    pub fn finish(self, started: Instant, busy_from: ThreadTime) -> Output {
        Output::at_end(self.rec, &self.sched, &self.share, started, busy_from)
    }
}

/// The error number of a read or write on a socket the server reset or
/// closed under it: both loops hand such a connection to `peer_closed`.
pub fn peer_gone(errno: i32) -> bool {
    matches!(errno, libc::ECONNRESET | libc::EPIPE)
}

/// The hooks a loop provides; the provided methods are the cycle itself.
pub trait Cycle<'a> {
    type Stream: Transport;

    fn cycle(&mut self) -> &mut CycleState<'a, Self::Stream>;
    fn cycle_ref(&self) -> &CycleState<'a, Self::Stream>;
    /// `CycleState::parts`, for the housekeeping tick. (A loop's own method: only
    /// there is `'a` known to outlive the borrow.)
    fn tick_parts(&mut self) -> Parts<'_>;

    /// (Re)opens connection `i`; a failure to even start is a connect error.
    fn open(&mut self, i: usize, now: Instant);

    /// Starts writing connection `i`'s request batch from its first byte.
    fn write_request(&mut self, i: usize);

    /// Closed loop: the send time of a request sent during the batch of
    /// events that began at `now`.
    fn send_time(&self, now: Instant) -> Instant;

    /// Opens every connection; the first housekeeping tick follows. An open
    /// loop's schedule begins once one is open (`begin_when_open`): now,
    /// if every one failed at once.
    fn begin(&mut self, start: Instant)
    where
        Self: Housekeeping,
    {
        for i in 0..self.cycle().conns.len() {
            self.open(i, start);
        }
        let cycle = self.cycle();
        cycle.next_tick = start + cycle.tick();
        self.begin_when_open(start);
    }

    /// After a batch of events: sends what is due (open loop), does the
    /// housekeeping when its tick has come; true when the run is over.
    fn end_batch(&mut self, now: Instant) -> bool
    where
        Self: Housekeeping,
    {
        if self.cycle().sched.open_loop() {
            self.begin_when_open(now);
            let cycle = self.cycle();
            cycle.draining = cycle.share.end.is_some_and(|end| now >= end);
            self.dispatch(now);
        }
        if now >= self.cycle().next_tick {
            self.housekeeping(now);
        }
        self.done(now)
    }

    /// The connection can take a request: closed loop sends at once, open
    /// loop waits for the schedule.
    fn ready(&mut self, i: usize, now: Instant) {
        let cycle = self.cycle();
        let conn = &mut cycle.conns[i];
        conn.state = ConnState::Idle;
        conn.idle_since = now;
        if conn.retry > 0 {
            // Sent again, already counted as sent and taken off `-n`.
            let n = std::mem::take(&mut conn.retry);
            let open_loop = cycle.sched.open_loop();
            let intended = conn.intended;
            let start = self.send_time(now);
            return self.transmit(i, n, if open_loop { intended } else { start }, start, false);
        }
        if cycle.sched.open_loop() {
            cycle.idle.push(i as u32);
        } else if !cycle.parked(i, now) {
            // The request, or a batch of `--pipeline` of them, within `-n`.
            let n = cycle.sched.take_quota(cycle.cfg.protocol.pipeline() as u64);
            if n > 0 {
                let t = self.send_time(now);
                self.send(i, n, t, t);
            }
        }
    }

    /// Sends a batch of `n` new requests, intended at `intended`.
    fn send(&mut self, i: usize, n: u64, intended: Instant, start: Instant) {
        self.cycle().rec.sent(n, intended);
        self.transmit(i, n as u32, intended, start, true);
    }

    /// Writes a batch of `n` requests on connection `i`: new ones (`fresh`),
    /// or the ones a server dropped, sent again.
    fn transmit(&mut self, i: usize, n: u32, intended: Instant, start: Instant, fresh: bool) {
        let cycle = self.cycle();
        if fresh {
            cycle.fill(i, n);
        }
        let conn = &mut cycle.conns[i];
        conn.intended = intended;
        conn.start = start;
        // Until the connection was free (or open), the request waited for
        // the server; from then to `start`, for the generator.
        let ready = intended.max(conn.idle_since).min(start);
        let first = conn.served == 0;
        // A request that waited while some connections were still opening
        // (a connect or handshake pending, or a failed one to retry) waited
        // for connection setup: with them up it would have had one.
        let opening =
            |c: &Conn<_>| matches!(c.state, ConnState::Connecting | ConnState::Handshaking | ConnState::Backoff);
        let connecting = ready > intended && (first || cycle.conns.iter().any(opening));
        let conn = &mut cycle.conns[i];
        conn.origin = Origin { connection: conn.id, ready, connecting };
        conn.batch = n;
        conn.batch_len = n;
        self.write_request(i);
    }

    /// Records a response; false when the connection was reopened.
    fn complete(&mut self, i: usize, done: Done, now: Instant) -> bool {
        let cycle = self.cycle();
        let early = cycle.answer(i, done, now);
        if done.close || early {
            // An answer before its request was all written: the rest would
            // reach the server as a new request, so the socket goes. The
            // requests behind it (pipelined) were not processed: a server
            // that closes says so, and one that answered early stopped
            // reading. They are sent again on the new socket.
            cycle.resend_rest(i);
            cycle.rec.reconnects += 1;
            self.open(i, now);
            return false;
        }
        if cycle.conns[i].batch == 0 {
            let churn = cycle.cfg.requests_per_connection.is_some_and(|n| cycle.conns[i].served >= n);
            if churn && !cycle.sched.used_up() {
                // Connection churn: the client's own choice, so neither a
                // reconnect nor an error; the new socket sends the next one
                // (none is opened once `-n` has nothing left to send).
                self.open(i, now);
                return false;
            }
            self.ready(i, now);
        }
        true
    }

    /// The server closed the connection, or reset it, with `kind` the error
    /// this is unless it can be retried. A keep-alive connection that
    /// answered before and now ends with nothing of the next response read
    /// was closed by the server between requests (idle, or a server that
    /// closes after every response without saying so): RFC 9112 §9.3.1 lets
    /// a client send an idempotent request again, and that is a reconnect,
    /// not an error.
    fn peer_closed(&mut self, i: usize, kind: ErrorKind, now: Instant) {
        let cycle = self.cycle();
        let c = &mut cycle.conns[i];
        if !c.in_flight() {
            cycle.rec.reconnects += 1;
            return self.open(i, now);
        }
        if c.served > 0 && c.parser.is_idle() && cycle.idempotent {
            cycle.resend_rest(i);
            cycle.rec.reconnects += 1;
            return self.open(i, now);
        }
        self.fail(i, kind, now)
    }

    /// The server ended the stream.
    fn eof(&mut self, i: usize, now: Instant) {
        let cycle = self.cycle();
        let conn = &mut cycle.conns[i];
        if conn.state == ConnState::Reading {
            if let Some(done) = conn.parser.eof() {
                self.complete(i, done, now);
                return;
            }
        }
        self.peer_closed(i, ErrorKind::Read, now);
    }

    /// Counts the failure against each request in flight and reconnects.
    fn fail(&mut self, i: usize, kind: ErrorKind, now: Instant) {
        let cycle = self.cycle();
        let c = &cycle.conns[i];
        let lost = if c.in_flight() { c.batch as usize } else { 0 };
        cycle.count_lost(i, lost, kind, now);
        self.open(i, now);
    }

    /// Feeds `bytes` read from connection `i` to its parser and completes
    /// every response they end. False when the connection was reopened (the
    /// rest belonged to the old socket).
    fn received(&mut self, i: usize, bytes: &[u8], now: Instant) -> bool {
        let cycle = self.cycle();
        if cycle.rec.measuring(now) {
            cycle.rec.bytes_read += bytes.len() as u64;
        }
        if !cycle.conns[i].in_flight() {
            // Bytes nobody asked for: the server is not speaking HTTP/1.1.
            self.fail(i, ErrorKind::Parse, now);
            return false;
        }
        let mut off = 0;
        while off < bytes.len() {
            match self.cycle().conns[i].parser.feed(&bytes[off..]) {
                Ok((used, None)) => off += used,
                Ok((used, Some(done))) => {
                    off += used;
                    let cycle = self.cycle();
                    if off < bytes.len() && cycle.conns[i].batch == 1 {
                        // Bytes after the last response asked for (a second
                        // answer to one request): the answer counts, the
                        // extra bytes are the error, and the socket goes.
                        cycle.answer(i, done, now);
                        cycle.rec.error(ErrorKind::Parse, now, None);
                        self.open(i, now);
                        return false;
                    }
                    if !self.complete(i, done, now) {
                        return false;
                    }
                }
                Err(_) => {
                    self.fail(i, ErrorKind::Parse, now);
                    return false;
                }
            }
        }
        true
    }

    /// Open loop, a wake-up at `now`: sends every request due by then on an
    /// idle connection.
    fn dispatch(&mut self, now: Instant) {
        self.cycle().sched.take_due(now);
        loop {
            let cycle = self.cycle();
            if !cycle.sched.waiting() {
                break;
            }
            let Some(i) = cycle.idle.pop().map(|i| i as usize) else {
                // Every connection is busy: due requests wait, and their wait
                // counts in their latency because it runs from the intended time.
                cycle.sched.all_busy(now);
                if cycle.conns.len() < cycle.share.max_connections {
                    let id = cycle.conns.len();
                    cycle.conns.push(Conn::new(id as u32, cycle.cfg, now));
                    self.open(id, now);
                }
                return;
            };
            if cycle.conns[i].state != ConnState::Idle {
                continue; // a stale entry: the connection was reopened since
            }
            let intended = cycle.sched.next_request().expect("a request is due");
            let start = Instant::now();
            // The delay the generator itself caused: from when the request
            // could have gone (due, and a connection free) to when it went.
            cycle.sched.lag(&mut cycle.rec, intended, cycle.conns[i].idle_since, start);
            self.send(i, 1, intended, start);
        }
    }
}

/// Every HTTP/1.1 loop's tick and end of run are the shared ones
/// (`core/housekeeping.rs`), over its connections.
impl<'a, C: Cycle<'a>> Housekeeping for C {
    fn parts(&mut self) -> Parts<'_> {
        self.tick_parts()
    }

    /// A connection that failed rests until the next tick, with no pause.
    fn state(&self, i: usize) -> (State, Instant) {
        let c = &self.cycle_ref().conns[i];
        let state = match c.state {
            ConnState::Connecting => State::Connecting,
            ConnState::Handshaking => State::Handshaking,
            ConnState::Backoff => State::Backoff(c.start),
            ConnState::Idle | ConnState::Writing(_) | ConnState::Reading => State::Open,
        };
        (state, c.start)
    }

    /// A batch unanswered after `timeout` is a timeout and its connection is
    /// reopened; with connection stages, an idle connection a ramp parked
    /// sends once it is due.
    fn expire(&mut self, i: usize, now: Instant, timeout: Duration) {
        let cycle = self.cycle();
        let c = &cycle.conns[i];
        match c.state {
            ConnState::Writing(_) | ConnState::Reading if now.saturating_duration_since(c.start) > timeout => {
                self.fail(i, ErrorKind::Timeout, now)
            }
            ConnState::Idle if cycle.ramp.is_some() && c.retry == 0 => self.ready(i, now),
            _ => {}
        }
    }

    fn reconnect(&mut self, i: usize, now: Instant) {
        self.open(i, now);
    }

    /// A connection being reopened (after a timeout, a close, a failed
    /// connect) is about to send again: it keeps the silence going.
    fn outstanding(&self, now: Instant) -> Option<Instant> {
        let conns = &self.cycle_ref().conns;
        let reopening =
            |c: &Conn<_>| matches!(c.state, ConnState::Connecting | ConnState::Handshaking | ConnState::Backoff);
        let oldest = conns.iter().filter(|c| c.in_flight()).map(|c| c.start).min();
        oldest.or_else(|| conns.iter().any(reopening).then_some(now))
    }

    /// Every request of connection `i`'s batch unanswered, and every one to
    /// be sent again: a timeout after an open loop's drain, otherwise
    /// unanswered (`Schedule::drained`).
    fn owe_at_end(&mut self, i: usize, now: Instant, stopping: bool) {
        let cycle = self.cycle();
        let owed = cycle.conns[i].owed() as usize;
        if owed > 0 && cycle.sched.drained(now, stopping) {
            cycle.count_lost(i, owed, ErrorKind::Timeout, now);
        } else if owed > 0 {
            let c = &cycle.conns[i];
            let (intended, start, id) = (c.intended, c.start, c.id);
            (0..owed).for_each(|_| cycle.rec.unanswered(intended, start, now, id));
        }
        cycle.conns[i].batch = 0;
        cycle.conns[i].retry = 0;
    }

    fn owes(&mut self) -> bool {
        self.cycle_ref().conns.iter().any(|c| c.owed() > 0)
    }
}
