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
//! What a response, an error or a timeout does to a connection is the
//! shared cycle (`http1/cycle.rs`); this file is how epoll moves the bytes.
//!
//! In open loop (`--rate`) the loop wakes at the schedule's times, not at
//! every response: between wake-ups it sleeps without polling
//! (`CycleState::scheduled_wake`), then takes every event at once, and responses
//! end at the kernel's receive time (`rx_time`), so the sleep costs their
//! latency nothing. It waits on epoll (and the schedule's `timerfd`) only
//! while due requests wait for a connection, while connections are being
//! opened (a handshake's time is measured), and in the drain.
//!
//! The loop is generic over the connection's `Transport`: the cleartext
//! instance has no handshake and no flush, so none of the TLS path is paid
//! for unless the URL is `https://`.

use crate::config::LoadConfig;
use crate::core::housekeeping::Parts;
use crate::core::output::Output;
use crate::core::pacer::Timer;
use crate::core::recorder::{ErrorKind, Recorder};
use crate::core::rx_time::{self, Clocks};
use crate::core::share::Share;
use crate::core::transport::{ReadSide, Transport};
use crate::http1::conn::ConnState;
use crate::http1::cycle::{peer_gone, Cycle, CycleState};
use mio::{Events, Poll, Token};
use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

const TIMER: Token = Token(usize::MAX);
const READ_BUF: usize = 64 * 1024;

pub struct EpollLoop<'a, T: Transport> {
    cycle: CycleState<'a, T>,
    /// The request repeated `--pipeline` times (once without pipelining).
    batch: &'a [u8],
    shared: &'a T::Shared,
    poll: Poll,
    buf: Box<[u8]>,
    timer: Option<Timer>,
    /// Open loop: connections were (re)opened and may still be connecting or
    /// in their handshake, whose events the loop must not sleep through.
    opening: bool,
    /// This wake-up's clock pair, placing receive times on `Instant`.
    clocks: Clocks,
}

impl<'a, T: Transport> EpollLoop<'a, T> {
    pub fn new(
        cfg: &'a LoadConfig,
        batch: &'a [u8],
        shared: &'a T::Shared,
        share: Share,
        rec: Recorder,
    ) -> io::Result<EpollLoop<'a, T>> {
        let poll = Poll::new()?;
        let timer = Timer::for_rate(share.rate, poll.registry(), TIMER)?;
        Ok(EpollLoop {
            cycle: CycleState::new(cfg, share, rec, batch.len() / cfg.protocol.pipeline().max(1)),
            batch,
            shared,
            poll,
            buf: vec![0u8; READ_BUF].into_boxed_slice(),
            timer,
            opening: true,
            clocks: Clocks::read(),
        })
    }

    pub fn run(mut self) -> Output {
        let mut events = Events::with_capacity(1024);
        let start = Instant::now();
        let busy_from = crate::core::rusage::ThreadTime::now();
        self.begin(start);
        loop {
            if let Err(e) = self.wait(&mut events) {
                if e.kind() != io::ErrorKind::Interrupted {
                    break;
                }
            }
            let now = if self.cycle.sched.open_loop() {
                self.clocks = Clocks::read();
                self.clocks.now()
            } else {
                Instant::now()
            };
            for ev in events.iter() {
                match ev.token() {
                    TIMER => self.timer.as_mut().map_or((), Timer::fired),
                    Token(i) => self.on_event(i, ReadSide::of(ev), now),
                }
            }
            if self.end_batch(now) {
                break;
            }
        }
        self.cycle.finish(start, busy_from)
    }

    /// Waits for the next batch of events. Open loop, between the
    /// schedule's wake-ups, the thread sleeps and then takes whatever events
    /// came; otherwise it waits on epoll, with the schedule's own timer (a
    /// `timerfd`: epoll's timeout has millisecond resolution) armed for the
    /// wake-up.
    fn wait(&mut self, events: &mut Events) -> io::Result<()> {
        let now = Instant::now();
        let wake = self.cycle.scheduled_wake(now);
        if self.opening {
            self.opening =
                self.cycle.conns.iter().any(|c| matches!(c.state, ConnState::Connecting | ConnState::Handshaking));
        }
        match (wake, self.timer.as_mut()) {
            (Some(at), _) if !self.opening => {
                std::thread::sleep(at.saturating_duration_since(now));
                self.poll.poll(events, Some(Duration::ZERO))
            }
            (wake, timer) => {
                if let (Some(at), Some(timer)) = (wake, timer) {
                    timer.arm(at);
                }
                self.poll.poll(events, Some(self.cycle.deadline().saturating_duration_since(now)))
            }
        }
    }

    /// `side`: whether the socket has data, an end or an error to read. An event
    /// that only says it is writable again (an ACK freed send space) costs
    /// no read: the last readable edge already drained it.
    fn on_event(&mut self, i: usize, side: ReadSide, now: Instant) {
        match self.cycle.conns[i].state {
            ConnState::Connecting => match self.cycle.conns[i].finish_connect() {
                Ok(true) if T::HANDSHAKE => {
                    self.cycle.conns[i].state = ConnState::Handshaking;
                    self.cycle.conns[i].start = now;
                    self.handshake(i, now);
                }
                Ok(true) => self.ready(i, now),
                Ok(false) => {}
                Err(_) => {
                    self.cycle.rec.error(ErrorKind::Connect, now, None);
                    self.cycle.conns[i].close();
                }
            },
            ConnState::Handshaking => self.handshake(i, now),
            ConnState::Writing(off) => {
                self.write(i, off);
                // Pipelined responses may already be waiting: an edge-triggered
                // socket will not announce them again. And a batch larger
                // than the socket buffers is only written while its first
                // responses are read: the server stops reading while its
                // answers have nowhere to go.
                if side.readable() || self.cycle.conns[i].state == ConnState::Reading {
                    self.read(i, side, now);
                }
            }
            ConnState::Reading | ConnState::Idle if side.readable() => self.read(i, side, now),
            ConnState::Reading | ConnState::Idle | ConnState::Backoff => {}
        }
    }

    /// Drives a TLS handshake; its time is recorded apart from request latency.
    fn handshake(&mut self, i: usize, now: Instant) {
        let Some(stream) = self.cycle.conns[i].stream.as_mut() else { return };
        match stream.handshake() {
            Ok(true) => {
                // A fresh clock: a fast server can finish the handshake within
                // the very event that started it.
                let done = Instant::now();
                let resumed = stream.resumed();
                let took = done.saturating_duration_since(self.cycle.conns[i].start);
                self.cycle.rec.handshake(done, took, resumed);
                self.ready(i, done);
            }
            Ok(false) => {}
            Err(_) => {
                // Retried at the next housekeeping tick, not in a tight loop.
                self.cycle.rec.error(ErrorKind::Tls, now, None);
                self.cycle.conns[i].close();
            }
        }
    }

    fn write(&mut self, i: usize, mut off: usize) {
        let len = self.cycle.batch_bytes(i);
        let mixed = self.cycle.picker.is_some();
        let batch = self.batch;
        let conn = &mut self.cycle.conns[i];
        // A mix gives each connection its own batch; else all share one.
        let bytes: &[u8] = if mixed { &conn.out } else { batch };
        let Some(stream) = conn.stream.as_mut() else { return };
        loop {
            if off == len {
                match stream.flush() {
                    Ok(true) => self.cycle.conns[i].state = ConnState::Reading,
                    Ok(false) => self.cycle.conns[i].state = ConnState::Writing(off),
                    Err(_) => self.fail(i, ErrorKind::Write, Instant::now()),
                }
                return;
            }
            match stream.write(&bytes[off..len]) {
                Ok(n) => off += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.cycle.conns[i].state = ConnState::Writing(off);
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error().is_some_and(peer_gone) => {
                    return self.peer_closed(i, ErrorKind::Write, Instant::now())
                }
                Err(_) => {
                    self.fail(i, ErrorKind::Write, Instant::now());
                    return;
                }
            }
        }
    }

    fn read(&mut self, i: usize, side: ReadSide, now: Instant) {
        // The buffer is lent to the parser while `self` records what it finds.
        let mut buf = std::mem::take(&mut self.buf);
        self.read_into(i, &mut buf, side, now);
        self.buf = buf;
    }

    fn read_into(&mut self, i: usize, buf: &mut [u8], side: ReadSide, now: Instant) {
        let stamped = self.cycle.sched.open_loop();
        loop {
            let Some(stream) = self.cycle.conns[i].stream.as_mut() else { return };
            // Open loop, a response may have waited for the wake-up: it ends
            // when the kernel received it.
            let read = if stamped { stream.read_stamped(buf) } else { stream.read(buf).map(|n| (n, None)) };
            let (n, at) = match read {
                Ok((0, _)) => return self.eof(i, now),
                Ok((n, rx)) => (n, if stamped { self.clocks.place(rx, self.cycle.conns[i].start) } else { now }),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.raw_os_error().is_some_and(peer_gone) => return self.peer_closed(i, ErrorKind::Read, now),
                Err(_) => return self.fail(i, ErrorKind::Read, now),
            };
            if !self.received(i, &buf[..n], at) {
                return; // reconnecting: the rest was the old socket's
            }
            if side.drained::<T>(n, buf.len()) {
                // A short read drained the socket; the next edge will wake us.
                return;
            }
        }
    }
}

impl<'a, T: Transport> Cycle<'a> for EpollLoop<'a, T> {
    type Stream = T;

    fn cycle(&mut self) -> &mut CycleState<'a, T> {
        &mut self.cycle
    }

    fn cycle_ref(&self) -> &CycleState<'a, T> {
        &self.cycle
    }

    fn tick_parts(&mut self) -> Parts<'_> {
        self.cycle.parts()
    }

    fn open(&mut self, i: usize, now: Instant) {
        if self.cycle.stopping {
            self.cycle.conns[i].close();
            return;
        }
        let registry = self.poll.registry();
        if self.cycle.conns[i].open(self.cycle.cfg.target.addr, self.shared, registry, now).is_err() {
            self.cycle.rec.error(ErrorKind::Connect, now, None);
            return;
        }
        if self.cycle.sched.open_loop() {
            self.opening = true;
            if let Some(stream) = self.cycle.conns[i].stream.as_ref() {
                // Without receive times (an old kernel) responses end when read.
                let _ = rx_time::enable(stream.tcp().as_raw_fd());
            }
        }
    }

    fn write_request(&mut self, i: usize) {
        self.write(i, 0);
    }

    /// A fresh clock: the request goes out within this call, and the batch
    /// may have spent a while on earlier events.
    fn send_time(&self, _now: Instant) -> Instant {
        Instant::now()
    }
}
