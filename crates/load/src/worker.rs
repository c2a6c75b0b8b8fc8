//! One load-generator thread: an event loop that owns its connections.
//!
//! The cost per request is the point of this file. A request costs one
//! `write` and one `read` plus its share of an `epoll_wait`: sockets are
//! registered once, edge-triggered, for both directions, so there is no
//! `epoll_ctl` per request; the next request is written as soon as the last
//! response ends, without waiting for a writable event; a read shorter than
//! the buffer means the socket is drained, so no read is spent on `EAGAIN`;
//! the buffer is one per thread, not per connection; and bodies are skipped,
//! never copied. With `--pipeline N` a connection writes N requests in that
//! one write and reads their responses in order before writing the next N.
//!
//! The loop is generic over the connection's `Transport`: the cleartext
//! instance has no handshake and no flush, so none of the TLS path is paid
//! for unless the URL is `https://`.

use crate::config::LoadConfig;
use crate::conn::{Conn, State};
use crate::pacer::{Pacer, Timer};
use crate::recorder::{ErrorKind, Recorder, Slow};
use crate::response::Done;
use crate::transport::Transport;
use mio::{Events, Poll, Token};
use std::io;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const TIMER: Token = Token(usize::MAX);
const READ_BUF: usize = 64 * 1024;

/// This thread's share of the run.
pub struct Share {
    pub index: usize,
    pub connections: usize,
    pub max_connections: usize,
    /// Requests this thread may send (`-n`), or unlimited.
    pub quota: Option<u64>,
    /// This thread's requests per second (open loop).
    pub rate: Option<f64>,
    pub start: Instant,
    pub measure_from: Instant,
    /// The end of the measured phase (`-d`), or none (`-n`).
    pub end: Option<Instant>,
}

pub struct Output {
    pub recorder: Recorder,
    pub slow: Vec<Slow>,
    pub finished: Instant,
    pub max_lag_ns: u64,
    /// Time during which every connection was busy and due requests waited.
    pub starved: Duration,
    /// Share of the thread's life it spent on or waiting for a CPU (0..1).
    pub busy: f64,
}

pub struct Worker<'a, T: Transport> {
    cfg: &'a LoadConfig,
    /// The request repeated `--pipeline` times (once without pipelining).
    batch: &'a [u8],
    /// The length of one request in `batch`.
    request_len: usize,
    shared: &'a T::Shared,
    poll: Poll,
    conns: Vec<Conn<T>>,
    idle: Vec<u32>,
    buf: Box<[u8]>,
    rec: Recorder,
    pacer: Option<Pacer>,
    timer: Option<Timer>,
    share: Share,
    stopping: bool,
    max_lag_ns: u64,
    starved: Duration,
    starved_since: Option<Instant>,
}

impl<'a, T: Transport> Worker<'a, T> {
    pub fn new(
        cfg: &'a LoadConfig,
        batch: &'a [u8],
        shared: &'a T::Shared,
        share: Share,
        rec: Recorder,
    ) -> io::Result<Worker<'a, T>> {
        let poll = Poll::new()?;
        let (pacer, timer) = match share.rate {
            Some(rate) => {
                let phase = share.index as f64 / cfg.threads as f64;
                let pacer = Pacer::new(share.measure_from.min(share.start), rate, cfg.arrival, phase, share.index as u64 + 1);
                (Some(pacer), Some(Timer::new(poll.registry(), TIMER)?))
            }
            None => (None, None),
        };
        let head = cfg.is_head();
        let conns = (0..share.connections).map(|i| Conn::new(i as u32, head, share.start)).collect();
        Ok(Worker {
            cfg,
            batch,
            request_len: batch.len() / cfg.pipeline.max(1),
            shared,
            poll,
            conns,
            idle: Vec::with_capacity(share.max_connections),
            buf: vec![0u8; READ_BUF].into_boxed_slice(),
            rec,
            pacer,
            timer,
            share,
            stopping: false,
            max_lag_ns: 0,
            starved: Duration::ZERO,
            starved_since: None,
        })
    }

    pub fn run(mut self) -> Output {
        let mut events = Events::with_capacity(1024);
        let start = Instant::now();
        let busy_from = crate::rusage::thread_busy_ns();
        for i in 0..self.conns.len() {
            self.open(i, start);
        }
        let tick = (self.cfg.timeout / 4).clamp(Duration::from_millis(5), Duration::from_millis(100));
        let mut next_tick = start + tick;
        loop {
            let now = Instant::now();
            let mut wake = next_tick;
            if let Some(end) = self.share.end {
                wake = wake.min(end);
            }
            if let Err(e) = self.poll.poll(&mut events, Some(wake.saturating_duration_since(now))) {
                if e.kind() != io::ErrorKind::Interrupted {
                    break;
                }
            }
            let now = Instant::now();
            for ev in events.iter() {
                match ev.token() {
                    TIMER => self.timer.as_mut().map_or((), Timer::fired),
                    Token(i) => self.on_event(i, ev.is_readable() || ev.is_read_closed() || ev.is_error(), now),
                }
            }
            if self.pacer.is_some() {
                self.dispatch(now);
            }
            if now >= next_tick {
                self.housekeeping(now);
                next_tick = now + tick;
            }
            if self.done(now) {
                break;
            }
        }
        let finished = Instant::now();
        if let Some(since) = self.starved_since {
            self.starved += finished.saturating_duration_since(since.max(self.share.measure_from));
        }
        let slow = self.rec.finish();
        let busy_ns = crate::rusage::thread_busy_ns().saturating_sub(busy_from);
        let busy = busy_ns as f64 / finished.saturating_duration_since(start).as_nanos().max(1) as f64;
        Output { recorder: self.rec, slow, finished, max_lag_ns: self.max_lag_ns, starved: self.starved, busy }
    }

    fn done(&mut self, now: Instant) -> bool {
        if self.stopping {
            return true;
        }
        if let Some(end) = self.share.end {
            return now >= end;
        }
        self.share.quota == Some(0) && !self.conns.iter().any(Conn::<T>::in_flight)
    }

    /// `readable`: the socket has data, an end or an error to read. An event
    /// that only says it is writable again (an ACK freed send space) costs
    /// no read: the last readable edge already drained it.
    fn on_event(&mut self, i: usize, readable: bool, now: Instant) {
        match self.conns[i].state {
            State::Connecting => match self.conns[i].finish_connect() {
                Ok(true) if T::HANDSHAKE => {
                    self.conns[i].state = State::Handshaking;
                    self.conns[i].start = now;
                    self.handshake(i, now);
                }
                Ok(true) => self.ready(i, now),
                Ok(false) => {}
                Err(_) => {
                    self.rec.error(ErrorKind::Connect, now, None);
                    self.conns[i].close();
                }
            },
            State::Handshaking => self.handshake(i, now),
            State::Writing(off) => {
                self.write(i, off);
                // Pipelined responses may already be waiting: an edge-triggered
                // socket will not announce them again.
                if self.conns[i].state == State::Reading {
                    self.read(i, now);
                }
            }
            State::Reading | State::Idle if readable => self.read(i, now),
            State::Reading | State::Idle | State::Backoff => {}
        }
    }

    /// Drives a TLS handshake; its time is recorded apart from request latency.
    fn handshake(&mut self, i: usize, now: Instant) {
        let Some(stream) = self.conns[i].stream.as_mut() else { return };
        match stream.handshake() {
            Ok(true) => {
                // A fresh clock: a fast server can finish the handshake within
                // the very event that started it.
                let done = Instant::now();
                let resumed = stream.resumed();
                let took = done.saturating_duration_since(self.conns[i].start);
                self.rec.handshake(done, took, resumed);
                self.ready(i, done);
            }
            Ok(false) => {}
            Err(_) => {
                // Retried at the next housekeeping tick, not in a tight loop.
                self.rec.error(ErrorKind::Tls, now, None);
                self.conns[i].close();
            }
        }
    }

    /// The connection can take a request: closed loop sends at once, open
    /// loop waits for the schedule.
    fn ready(&mut self, i: usize, now: Instant) {
        let conn = &mut self.conns[i];
        conn.state = State::Idle;
        conn.idle_since = now;
        if self.pacer.is_some() {
            self.idle.push(i as u32);
        } else {
            let t = Instant::now();
            self.send(i, t, t);
        }
    }

    /// Writes the request (or a batch of `--pipeline` of them). The caller
    /// has taken `start` from the clock.
    fn send(&mut self, i: usize, intended: Instant, start: Instant) {
        let mut batch = self.cfg.pipeline as u64;
        if let Some(q) = self.share.quota.as_mut() {
            if *q == 0 {
                return;
            }
            batch = batch.min(*q);
            *q -= batch;
        }
        let conn = &mut self.conns[i];
        conn.intended = intended;
        conn.start = start;
        conn.batch = batch as u32;
        if self.rec.measuring(start) {
            self.rec.sent += batch;
        }
        self.write(i, 0);
    }

    fn write(&mut self, i: usize, mut off: usize) {
        let len = self.conns[i].batch as usize * self.request_len;
        let Some(stream) = self.conns[i].stream.as_mut() else { return };
        loop {
            if off == len {
                match stream.flush() {
                    Ok(true) => self.conns[i].state = State::Reading,
                    Ok(false) => self.conns[i].state = State::Writing(off),
                    Err(_) => self.fail(i, ErrorKind::Write, Instant::now()),
                }
                return;
            }
            match stream.write(&self.batch[off..len]) {
                Ok(n) => off += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.conns[i].state = State::Writing(off);
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.fail(i, ErrorKind::Write, Instant::now());
                    return;
                }
            }
        }
    }

    fn read(&mut self, i: usize, now: Instant) {
        loop {
            let Some(stream) = self.conns[i].stream.as_mut() else { return };
            let n = match stream.read(&mut self.buf) {
                Ok(0) => return self.eof(i, now),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return self.fail(i, ErrorKind::Read, now),
            };
            if self.rec.measuring(now) {
                self.rec.bytes_read += n as u64;
            }
            if self.conns[i].state != State::Reading {
                // Bytes nobody asked for: the server is not speaking HTTP/1.1.
                return self.fail(i, ErrorKind::Parse, now);
            }
            let mut off = 0;
            while off < n {
                match self.conns[i].parser.feed(&self.buf[off..n]) {
                    Ok((used, None)) => off += used,
                    Ok((used, Some(done))) => {
                        off += used;
                        if off < n && self.conns[i].batch == 1 {
                            // Bytes after the last response asked for.
                            return self.fail(i, ErrorKind::Parse, now);
                        }
                        if !self.complete(i, done, now) {
                            return; // reconnecting: the rest was the old socket's
                        }
                    }
                    Err(_) => return self.fail(i, ErrorKind::Parse, now),
                }
            }
            if T::drained(n, self.buf.len()) {
                // A short read drained the socket; the next edge will wake us.
                return;
            }
        }
    }

    /// Records a response; false when the connection was reopened.
    fn complete(&mut self, i: usize, done: Done, now: Instant) -> bool {
        let conn = &mut self.conns[i];
        self.rec.response(conn.intended, conn.start, now, done.status, conn.id);
        conn.batch = conn.batch.saturating_sub(1);
        if done.close {
            // Pipelined requests behind a closing response are never answered.
            let (intended, start, id) = (conn.intended, conn.start, conn.id);
            for _ in 0..conn.batch {
                self.rec.error(ErrorKind::Read, now, Some((intended, start, id)));
            }
            self.rec.reconnects += 1;
            self.open(i, now);
            false
        } else {
            if conn.batch == 0 {
                self.ready(i, now);
            }
            true
        }
    }

    fn eof(&mut self, i: usize, now: Instant) {
        match self.conns[i].state {
            State::Reading => match self.conns[i].parser.eof() {
                Some(done) => {
                    self.complete(i, done, now);
                }
                None => self.fail(i, ErrorKind::Read, now),
            },
            _ => {
                // The server closed an idle keep-alive connection.
                self.rec.reconnects += 1;
                self.open(i, now);
            }
        }
    }

    /// Counts the failure against each request in flight and reconnects.
    fn fail(&mut self, i: usize, kind: ErrorKind, now: Instant) {
        let c = &self.conns[i];
        let in_flight = c.in_flight().then_some((c.intended, c.start, c.id));
        self.rec.error(kind, now, in_flight);
        for _ in 1..if c.in_flight() { c.batch } else { 0 } {
            self.rec.error(kind, now, in_flight);
        }
        self.open(i, now);
    }

    fn open(&mut self, i: usize, now: Instant) {
        if self.stopping {
            self.conns[i].close();
            return;
        }
        let registry = self.poll.registry();
        if self.conns[i].open(self.cfg.target.addr, self.shared, registry, now).is_err() {
            self.rec.error(ErrorKind::Connect, now, None);
        }
    }

    /// Open loop: sends every request that is due on an idle connection.
    fn dispatch(&mut self, now: Instant) {
        loop {
            let Some(next) = self.pacer.as_ref().map(Pacer::next) else { return };
            if next > now || self.share.quota == Some(0) {
                break;
            }
            let Some(i) = self.idle.pop().map(|i| i as usize) else {
                // Every connection is busy: due requests wait, and their wait
                // counts in their latency because it runs from the intended time.
                self.starved_since.get_or_insert(now);
                if self.conns.len() < self.share.max_connections {
                    let id = self.conns.len();
                    self.conns.push(Conn::<T>::new(id as u32, self.cfg.is_head(), now));
                    self.open(id, now);
                }
                return;
            };
            if self.conns[i].state != State::Idle {
                continue; // a stale entry: the connection was reopened since
            }
            if let Some(since) = self.starved_since.take() {
                self.starved += now.saturating_duration_since(since.max(self.share.measure_from));
            }
            let intended = self.pacer.as_mut().expect("open loop").take();
            let start = Instant::now();
            // The delay the generator itself caused: from when the request
            // could have gone (due, and a connection free) to when it went.
            let could = intended.max(self.conns[i].idle_since);
            let lag = start.saturating_duration_since(could).as_nanos() as u64;
            if self.rec.measuring(start) {
                self.rec.lag.saturating_record(lag.max(1));
                self.max_lag_ns = self.max_lag_ns.max(lag);
            }
            self.send(i, intended, start);
        }
        if let (Some(pacer), Some(timer)) = (self.pacer.as_ref(), self.timer.as_mut()) {
            if !self.idle.is_empty() {
                timer.arm(pacer.next());
            }
        }
    }

    fn housekeeping(&mut self, now: Instant) {
        if self.cfg.interrupt.load(Ordering::Relaxed) {
            self.stopping = true;
            return;
        }
        let timeout = self.cfg.timeout;
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            let overdue = now.saturating_duration_since(c.start) > timeout;
            match c.state {
                State::Writing(_) | State::Reading if overdue => self.fail(i, ErrorKind::Timeout, now),
                State::Connecting if overdue => self.fail(i, ErrorKind::Connect, now),
                State::Handshaking if overdue => self.fail(i, ErrorKind::Tls, now),
                State::Backoff => self.open(i, now),
                _ => {}
            }
        }
    }
}
