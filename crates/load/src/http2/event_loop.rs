//! One HTTP/2 load-generator thread: an epoll loop (mio, as HTTP/1.1's)
//! that owns its connections and runs `--streams` concurrent streams on each.
//!
//! It replaces a tokio runtime driving the `h2` crate, whose HPACK encoder,
//! framing and task machinery were most of the generator's CPU per request.
//! Here a request is a prepared header block copied behind a 9-byte frame
//! header (`http2::block`, `http2::frame`), every stream a connection can take is
//! filled before one write, and the protocol state of a connection is a
//! plain struct (`http2::session`). Sockets, TLS (rustls, ALPN `h2`) and the
//! open loop's `Pacer` and `timerfd` are the HTTP/1.1 engine's own.
//!
//! Responses end at the kernel's receive time (`rx_time`), not when the
//! loop got to them, so in closed loop the thread may let responses gather
//! before it wakes, as the io_uring loop does with `min_wait`: when a wake-up
//! brought fewer than half the thread's streams back, it pauses
//! [`GATHER_US`] before waiting again. Waking per response kept client and
//! server in lockstep, one request per segment each way: on this project's
//! 2-core machine against one nginx worker (2026-11-24, 4 connections x 10
//! streams, TLS) 10-14 us of generator CPU per request and one `writev`
//! per 1.1 requests; with the pause 6-8 us, and the server, fed batches,
//! answered more. The pause only delays refills while the server still has
//! half the streams' requests to work on; below four streams, or in open
//! loop (whose send times are the schedule's), there is none.
//!
//! In open loop the thread wakes at the schedule's times (the earliest due
//! send, at most once per granularity, `Pacer::wake`: up to 1 ms for this
//! loop, `pacer::MAX_STREAM_TICK`, or `--max-granularity`) and sleeps through responses between
//! them, as HTTP/1.1's loops do, unless due requests wait for a stream, a
//! connection is being opened or a write waits for room: responses end at
//! their receive time, and a stream is free from then on. A wake-up costs
//! one read per connection with streams in flight (epoll is asked only at
//! the housekeeping tick, for the idle ones) and one write per connection:
//! the requests due, across its free streams, and the PING and SETTINGS
//! acknowledgements and WINDOW_UPDATEs its read asked for, together. At
//! 2,000 gRPC calls a second against grpc-go, which PINGs after most
//! answers, waking per call and writing each acknowledgement alone had
//! cost 3.6 system calls a call.
//!
//! Behaviour is the old engine's: in open loop due requests queue for the
//! first free stream and latency runs from the intended send time; a GOAWAY
//! lets the streams in flight finish, is counted, and the connection is
//! reopened (streams the server did not process are sent again); a
//! RST_STREAM costs only its request; a timed-out request retires its
//! connection once the other streams are answered.

use crate::config::LoadConfig;
use crate::core::housekeeping::{Housekeeping, State};
use crate::core::output::Output;
use crate::core::pacer::Timer;
use crate::core::recorder::{ErrorKind, Recorder};
use crate::core::rx_time::{self, Clocks, GATHER_US};
use crate::core::schedule::Schedule;
use crate::core::share::Share;
use crate::core::transport::{ReadSide, Transport};
use crate::http2::block::{self as h2_block, Prepared};
use crate::http2::session::{Ended, Session, Slot};
use crate::mix::Picker;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

const TIMER: Token = Token(usize::MAX);
const READ_BUF: usize = 64 * 1024;
const BACKOFF: Duration = Duration::from_millis(100);

/// What every thread of a run shares: the run's request, prepared once.
pub struct Shared {
    request: Prepared,
    https: bool,
    authority: String,
}

impl Shared {
    pub fn new(cfg: &LoadConfig) -> Shared {
        let t = &cfg.target;
        let mut block = Vec::new();
        h2_block::encode(&mut block, &cfg.method, t.tls, &t.host_header, &t.path, &cfg.headers);
        Shared { request: Prepared { block, body: cfg.body.clone() }, https: t.tls, authority: t.host_header.clone() }
    }
}

struct Conn<T> {
    stream: Option<T>,
    state: State,
    since: Instant,
    session: Session,
    /// A request on it timed out: it takes no new stream, and is reopened
    /// once the others are answered.
    retire: bool,
    /// Since when each free stream has been free (open loop's lag).
    free: Vec<Instant>,
    /// Open loop: its last read brought bytes (or it just opened), so the
    /// next wake-up reads it even with no stream in flight (see `run`).
    watch: bool,
}

pub struct Http2Loop<'a, T: Transport> {
    cfg: &'a LoadConfig,
    shared: &'a Shared,
    tls: &'a T::Shared,
    poll: Poll,
    sched: Schedule,
    /// Open loop: wakes the thread for the schedule while it waits on epoll.
    timer: Option<Timer>,
    conns: Vec<Conn<T>>,
    rec: Recorder,
    share: Share,
    picker: Option<Picker>,
    /// Bodies: the run's (0), then each mix target's (1 + t).
    bodies: Vec<Vec<u8>>,
    block: Vec<u8>,
    buf: Box<[u8]>,
    ended: Vec<(Slot, Ended)>,
    stopping: bool,
    next_tick: Instant,
    /// This iteration's clock pair, placing receive times on `Instant`.
    clocks: Clocks,
    /// Closed loop: a wake-up that brings fewer responses than this pauses
    /// before the next wait (0: never).
    gather: usize,
    /// Responses and resets so far (counted per wake-up for `gather`).
    answered: u64,
}

impl<'a, T: Transport> Http2Loop<'a, T> {
    pub fn new(
        cfg: &'a LoadConfig,
        shared: &'a Shared,
        tls: &'a T::Shared,
        share: Share,
        rec: Recorder,
    ) -> io::Result<Http2Loop<'a, T>> {
        let poll = Poll::new()?;
        let sched = Schedule::new(cfg, &share);
        let timer = Timer::for_rate(share.rate, poll.registry(), TIMER)?;
        let mut bodies = vec![shared.request.body.clone()];
        if let Some(mix) = &cfg.mix {
            bodies.extend(mix.templates.iter().map(|t| t.spec.body.clone()));
        }
        let share_index = share.index;
        let capacity = share.connections * cfg.protocol.streams();
        let gather = if share.rate.is_none() && capacity >= 4 { capacity / 2 } else { 0 };
        let conns = (0..share.connections)
            .map(|_| Conn {
                stream: None,
                state: State::Backoff(share.start),
                since: share.start,
                session: Session::carrying(cfg.protocol.grpc()),
                retire: false,
                free: Vec::new(),
                watch: false,
            })
            .collect();
        Ok(Http2Loop {
            cfg,
            shared,
            tls,
            poll,
            sched,
            timer,
            conns,
            rec,
            next_tick: share.start,
            share,
            picker: cfg.mix.clone().map(|mix| Picker::new(mix, share_index)),
            bodies,
            block: Vec::new(),
            buf: vec![0u8; READ_BUF].into_boxed_slice(),
            ended: Vec::new(),
            stopping: false,
            clocks: Clocks::read(),
            gather,
            answered: 0,
        })
    }

    pub fn run(mut self) -> Output {
        let mut events = Events::with_capacity(1024);
        let start = Instant::now();
        let busy_from = crate::core::rusage::ThreadTime::now();
        if self.gather > 0 {
            precise_sleeps();
        }
        for i in 0..self.conns.len() {
            self.open(i, start, true);
        }
        loop {
            let deadline = match self.share.end {
                Some(end) if end > Instant::now() => end.min(self.next_tick),
                _ => self.next_tick,
            };
            let now = Instant::now();
            let mut direct = false;
            let polled = match self.scheduled_wake() {
                // Between two housekeeping ticks the connections in use are
                // read without asking epoll which are readable (one system
                // call per wake-up less); idle ones are polled at the tick.
                Some(wake) if wake.min(deadline) < self.next_tick => {
                    std::thread::sleep(wake.min(deadline).saturating_duration_since(now));
                    direct = true;
                    events.clear();
                    Ok(())
                }
                Some(wake) => {
                    std::thread::sleep(wake.min(deadline).saturating_duration_since(now));
                    self.poll.poll(&mut events, Some(Duration::ZERO))
                }
                None => {
                    if let (Some(at), Some(timer)) = (self.sched.wake(), self.timer.as_mut()) {
                        timer.arm(at);
                    }
                    self.poll.poll(&mut events, Some(deadline.saturating_duration_since(now)))
                }
            };
            if let Err(e) = polled {
                if e.kind() != io::ErrorKind::Interrupted {
                    break;
                }
            }
            self.clocks = Clocks::read();
            let now = self.clocks.now();
            let answered = self.answered;
            for ev in events.iter() {
                match ev.token() {
                    TIMER => self.timer.as_mut().map_or((), Timer::fired),
                    Token(i) => self.on_event(i, ReadSide::of(ev), now),
                }
            }
            if self.sched.open_loop() {
                if direct {
                    self.read_in_use(now);
                }
                self.begin_when_open(now);
                self.sched.take_due(now);
                for i in 0..self.conns.len() {
                    self.fill(i);
                    self.flush(i, now);
                }
                self.sched.all_busy(now);
            }
            if now >= self.next_tick {
                self.housekeeping(now);
            }
            if self.done(now) {
                break;
            }
            let brought = (self.answered - answered) as usize;
            if brought > 0 && brought < self.gather {
                std::thread::sleep(Duration::from_micros(GATHER_US.into()));
            }
        }
        Output::at_end(self.rec, &self.sched, &self.share, start, busy_from)
    }

    fn on_event(&mut self, i: usize, side: ReadSide, now: Instant) {
        match self.conns[i].state {
            State::Connecting => {
                let connected = self.conns[i].stream.as_ref().map(|s| finish_connect(s.tcp()));
                match connected {
                    Some(Ok(true)) if T::HANDSHAKE => {
                        self.conns[i].state = State::Handshaking;
                        self.conns[i].since = now;
                        self.handshake(i, now);
                    }
                    Some(Ok(true)) => self.established(i, now),
                    Some(Ok(false)) | None => {}
                    Some(Err(_)) => self.broken(i, ErrorKind::Connect, now),
                }
            }
            State::Handshaking => self.handshake(i, now),
            State::Open => {
                // Open loop: written once at the end of the wake-up (`run`).
                if !self.sched.open_loop() {
                    self.flush(i, now);
                }
                if side.readable() {
                    self.read(i, side, now);
                }
            }
            State::Backoff(_) => {}
        }
    }

    fn handshake(&mut self, i: usize, now: Instant) {
        let Some(stream) = self.conns[i].stream.as_mut() else { return };
        match stream.handshake() {
            Ok(true) if stream.agreed_h2() => {
                let done = Instant::now();
                let resumed = stream.resumed();
                self.rec.handshake(done, done.saturating_duration_since(self.conns[i].since), resumed);
                self.established(i, done);
            }
            Ok(true) => self.broken(i, ErrorKind::Parse, now),
            Ok(false) => {}
            Err(_) => self.broken(i, ErrorKind::Tls, now),
        }
    }

    /// Open loop: when to wake next if no event needs to wake the thread
    /// sooner (`CycleState::scheduled_wake` is HTTP/1.1's): none while due requests
    /// wait for a stream (`Schedule::wake`), while a connection is being opened (a handshake's
    /// time is measured) or waits for room to write, and once the schedule
    /// is over (the drain).
    fn scheduled_wake(&self) -> Option<Instant> {
        let wake = self.sched.wake()?;
        let unsettled = || {
            self.conns.iter().any(|c| {
                matches!(c.state, State::Connecting | State::Handshaking) || c.session.written < c.session.out.len()
            })
        };
        (!unsettled()).then_some(wake)
    }

    /// Opens (or reopens) connection `i`.
    fn open(&mut self, i: usize, now: Instant, first: bool) {
        if !first && self.rec.measuring(now) {
            self.rec.reconnects += 1;
        }
        let c = &mut self.conns[i];
        c.stream = None;
        c.since = now;
        c.retire = false;
        // Nothing of the old connection may reach the new socket.
        c.session.out.clear();
        c.session.written = 0;
        c.state = State::Backoff(now + BACKOFF);
        let opened = TcpStream::connect(self.cfg.target.addr).and_then(|mut tcp| {
            // Without stamping, responses end when read, as before.
            let _ = rx_time::enable(tcp.as_raw_fd());
            self.poll.registry().register(&mut tcp, Token(i), Interest::READABLE | Interest::WRITABLE)?;
            T::wrap(tcp, self.tls)
        });
        match opened {
            Ok(stream) => {
                c.stream = Some(stream);
                c.state = State::Connecting;
            }
            Err(_) => {
                self.rec.error(ErrorKind::Connect, now, None);
            }
        }
    }

    /// The handshake is done: the preface and settings go out with the first requests.
    fn established(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        c.session = Session::carrying(self.cfg.protocol.grpc());
        c.state = State::Open;
        c.free = vec![now; self.cfg.protocol.streams()];
        c.watch = true; // the server's SETTINGS are on their way
        self.fill(i);
        self.flush(i, now);
    }

    /// Opening failed: counted, and retried after a pause.
    fn broken(&mut self, i: usize, kind: ErrorKind, now: Instant) {
        self.rec.error(kind, now, None);
        self.conns[i].stream = None;
        self.conns[i].state = State::Backoff(now + BACKOFF);
    }

    /// Puts as many requests on connection `i` as it can take (written by
    /// `flush`).
    fn fill(&mut self, i: usize) {
        let c = &self.conns[i];
        if c.state != State::Open || c.retire || self.stopping {
            return;
        }
        let mut start = None;
        while self.conns[i].session.can_open(self.cfg.protocol.streams()) {
            let Some(intended) = self.sched.next_request() else { break };
            let now = *start.get_or_insert_with(Instant::now);
            let could = match self.conns[i].free.is_empty() {
                true => now,
                false => self.conns[i].free.remove(0),
            };
            let (intended, ready) = self.sched.send(&mut self.rec, intended, could, now);
            let pick = self.picker.as_mut().map(|p| {
                let t = p.next_target();
                (t, p.expansion(t))
            });
            let mut slot = Slot::new(intended, now, pick.map(|(t, _)| t));
            slot.ready = ready;
            let c = &mut self.conns[i];
            match (pick, &self.cfg.mix) {
                (Some((t, k)), Some(mix)) => {
                    let spec = &mix.templates[t].spec;
                    let path = mix.templates[t].path_of(k);
                    let (https, authority) = (self.shared.https, &self.shared.authority);
                    h2_block::encode(&mut self.block, &spec.method, https, authority, &path, &spec.headers);
                    c.session.open(&self.block, &self.bodies, 1 + t, slot);
                }
                _ => c.session.open(&self.shared.request.block, &self.bodies, 0, slot),
            }
        }
    }
}

/// Makes this thread's short sleeps as long as asked: the kernel otherwise
/// lets a sleep overrun by the thread's timer slack (50 us by default),
/// more than the gather pause itself.
fn precise_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes a nanosecond count, affects only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
}

/// After an event on a connecting socket: `Ok(true)` once established.
fn finish_connect(tcp: &TcpStream) -> io::Result<bool> {
    if let Some(e) = tcp.take_error()? {
        return Err(e);
    }
    match tcp.peer_addr() {
        Ok(_) => tcp.set_nodelay(true).map(|_| true),
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
        Err(e) => Err(e),
    }
}

mod io_side;
