//! One HTTP/3 load-generator thread: a mio loop that owns one UDP socket
//! (`http3::udp`), one `quinn-proto` endpoint, and its share of the run's QUIC
//! connections, each running `--streams` concurrent request streams.
//!
//! `quinn-proto` is QUIC without I/O or a runtime: the loop hands it the
//! datagrams it receives and the time, and sends what it asks to send, so
//! the thread's one wait covers sockets, the open loop's timer and QUIC's
//! own timers, as in the HTTP/1.1 and HTTP/2 loops (`quinn` proper, or the
//! `h3` crate over it, would put a tokio runtime and its tasks in between).
//! HTTP/3 framing and QPACK are this crate's (`http3::frame`, `http3::qpack`): the
//! request's frames are prepared once and written to each new stream.
//!
//! When requests go is every loop's `Schedule` (`core/schedule.rs`): in open loop the
//! timer wakes the thread at most once per granularity (`Pacer::wake`) and
//! every request due by then is sent in that wake-up. Responses end at the
//! kernel's receive time of their last datagram (`http3::udp`), so between two
//! wake-ups of the schedule at most [`SLEEP_THROUGH`] apart the thread
//! sleeps through responses and reads them at the next one, as the HTTP/2
//! loop does: one wake-up per scheduled send instead of one for the send
//! and one for each datagram that answers it. It waits on the socket
//! instead while due requests wait for a stream, a connection is being
//! opened, or a send waits for room in the socket buffer.
//!
//! Behaviour matches the HTTP/2 engine's where the protocols allow: in open
//! loop due requests queue for the first free stream and latency runs from
//! the intended send time; a reset stream costs its request (a `read`
//! error, counted in `http3.stream_resets`), or is sent again if the
//! server says it never processed it (H3_REQUEST_REJECTED); a lost
//! connection costs its streams and is reopened. A GOAWAY on the server's
//! control stream stops new streams on that connection: requests on streams
//! at or above its stream id were never processed and are sent again, the
//! connection is reopened once the rest end, and if it is lost first those
//! are sent again only when idempotent (`Schedule::lost`, HTTP/2's rule).
//! QUIC streams do not block
//! one another, so a timed-out request is cancelled on its own stream and
//! the connection keeps serving the others.

use crate::config::LoadConfig;
use crate::core::housekeeping::{Housekeeping, State};
use crate::core::output::Output;
use crate::core::pacer::Timer;
use crate::core::recorder::Recorder;
use crate::core::rx_time::Clocks;
use crate::core::schedule::Schedule;
use crate::core::share::Share;
use crate::http2::session::Slot;
use crate::http3::client::QuicShared;
use crate::http3::frame::{Response, ServerStream};
use crate::http3::udp::{Datagram, Udp};
use crate::mix::Picker;
use loona_hpack::huffman::HuffmanDecoder;
use mio::{Events, Interest, Poll, Token};
use quinn_proto::{Connection, ConnectionHandle, Endpoint, EndpointConfig, StreamId};
use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SOCKET: Token = Token(0);
const TIMER: Token = Token(1);
const BACKOFF: Duration = Duration::from_millis(100);
/// The longest the open loop sleeps with responses unread. The server's
/// datagrams are acknowledged when read, and QUIC lets a peer wait up to
/// its max_ack_delay (25 ms by default) for that before it suspects a loss;
/// at 2 ms the acknowledgements stay far inside it. Wake-ups further apart
/// than this (rates below 500 requests a second per thread) are few enough
/// that waking for responses as well costs nothing worth saving.
const SLEEP_THROUGH: Duration = Duration::from_millis(2);

/// A request in flight on its stream.
struct Request {
    id: StreamId,
    slot: Slot,
    response: Response,
    /// Frames the stream's flow control did not take yet.
    unsent: Vec<u8>,
}

struct Conn {
    quic: Option<(ConnectionHandle, Connection)>,
    state: State,
    since: Instant,
    requests: Vec<Request>,
    /// Since when each free stream has been free (open loop's lag).
    free: Vec<Instant>,
    /// The server's unidirectional streams, read for a GOAWAY.
    server_streams: Vec<(StreamId, ServerStream)>,
    /// The server sent GOAWAY: no new streams; reopened once the requests
    /// on it end.
    goaway: bool,
}

pub struct Http3Loop<'a> {
    cfg: &'a LoadConfig,
    shared: &'a QuicShared,
    poll: Poll,
    udp: Udp,
    endpoint: Endpoint,
    /// Connection `i` by its endpoint handle.
    by_handle: HashMap<ConnectionHandle, usize>,
    /// Closed connections still sending their close, driven until drained.
    closing: Vec<(ConnectionHandle, Connection)>,
    sched: Schedule,
    /// Open loop: wakes the thread for the schedule while it waits on the socket.
    timer: Option<Timer>,
    conns: Vec<Conn>,
    rec: Recorder,
    share: Share,
    picker: Option<Picker>,
    /// Bodies: the run's (0), then each mix target's (1 + t).
    bodies: Vec<Vec<u8>>,
    block: Vec<u8>,
    frames: Vec<u8>,
    huffman: HuffmanDecoder,
    datagrams: Vec<Datagram>,
    send_buf: Vec<u8>,
    stopping: bool,
    next_tick: Instant,
    /// The clocks read at this wake-up, to place receive times on `Instant`.
    clocks: Clocks,
    /// The previous wake-up: no datagram read now arrived before it.
    floor: Instant,
}

impl<'a> Http3Loop<'a> {
    pub fn new(cfg: &'a LoadConfig, shared: &'a QuicShared, share: Share, rec: Recorder) -> io::Result<Http3Loop<'a>> {
        let poll = Poll::new()?;
        let mut udp = Udp::new(cfg.target.addr)?;
        poll.registry().register(&mut udp.socket, SOCKET, Interest::READABLE | Interest::WRITABLE)?;
        let sched = Schedule::new(cfg, &share);
        let timer = Timer::for_rate(share.rate, poll.registry(), TIMER)?;
        let mut bodies = vec![cfg.body.clone()];
        if let Some(mix) = &cfg.mix {
            bodies.extend(mix.templates.iter().map(|t| t.spec.body.clone()));
        }
        let conns = (0..share.connections)
            .map(|_| Conn {
                quic: None,
                state: State::Backoff(share.start),
                since: share.start,
                requests: Vec::new(),
                free: Vec::new(),
                server_streams: Vec::new(),
                goaway: false,
            })
            .collect();
        Ok(Http3Loop {
            cfg,
            shared,
            poll,
            udp,
            endpoint: Endpoint::new(Arc::new(EndpointConfig::default()), None, true, None),
            by_handle: HashMap::new(),
            closing: Vec::new(),
            sched,
            timer,
            conns,
            rec,
            next_tick: share.start,
            floor: share.start,
            picker: cfg.mix.clone().map(|mix| Picker::new(mix, share.index)),
            share,
            bodies,
            block: Vec::new(),
            frames: Vec::new(),
            huffman: HuffmanDecoder::new(),
            datagrams: Vec::new(),
            send_buf: Vec::with_capacity(64 * 1024),
            stopping: false,
            clocks: Clocks::read(),
        })
    }

    pub fn run(mut self) -> Output {
        let mut events = Events::with_capacity(64);
        let start = Instant::now();
        let busy_from = crate::core::rusage::ThreadTime::now();
        for i in 0..self.conns.len() {
            self.open(i, start, true);
        }
        loop {
            let mut deadline = match self.share.end {
                Some(end) if end > Instant::now() => end.min(self.next_tick),
                _ => self.next_tick,
            };
            for (_, q) in self.conns.iter_mut().filter_map(|c| c.quic.as_mut()).chain(self.closing.iter_mut()) {
                if let Some(t) = q.poll_timeout() {
                    deadline = deadline.min(t);
                }
            }
            let now = Instant::now();
            let mut read = true;
            match self.sleep_until(deadline, now) {
                Some(wake) => std::thread::sleep(wake.saturating_duration_since(now)),
                None => {
                    if let (Some(at), Some(timer)) = (self.sched.wake(), self.timer.as_mut()) {
                        timer.arm(at);
                    }
                    if let Err(e) = self.poll.poll(&mut events, Some(deadline.saturating_duration_since(now))) {
                        if e.kind() != io::ErrorKind::Interrupted {
                            break;
                        }
                    }
                    read = false;
                    for ev in events.iter() {
                        match ev.token() {
                            TIMER => self.timer.as_mut().map_or((), Timer::fired),
                            _ => {
                                if ev.is_writable() {
                                    self.udp.unblock();
                                }
                                read |= ev.is_readable();
                            }
                        }
                    }
                }
            }
            self.clocks = Clocks::read();
            if read {
                self.receive();
            }
            let now = self.clocks.now();
            self.floor = now;
            if self.sched.open_loop() {
                self.begin_when_open(now);
                self.sched.take_due(now);
            }
            self.drive_all(now);
            self.sched.all_busy(now);
            if now >= self.next_tick {
                self.housekeeping(now);
            }
            if self.done(now) {
                break;
            }
        }
        self.count_lost_packets();
        self.close_all();
        Output::at_end(self.rec, &self.sched, &self.share, start, busy_from)
    }

    /// Open loop: when to wake if the thread may sleep through responses
    /// (see the module's note), or `None` to wait on the socket.
    fn sleep_until(&self, deadline: Instant, now: Instant) -> Option<Instant> {
        let wake = self.sched.wake()?.min(deadline);
        let calm = !self.udp.is_blocked() && self.conns.iter().all(|c| c.state != State::Connecting);
        (calm && wake.saturating_duration_since(now) <= SLEEP_THROUGH).then_some(wake)
    }

    /// Opens (or reopens) connection `i`.
    fn open(&mut self, i: usize, now: Instant, first: bool) {
        if !first && self.rec.measuring(now) {
            self.rec.reconnects += 1;
        }
        self.retire(i);
        let c = &mut self.conns[i];
        c.goaway = false;
        c.server_streams.clear();
        c.since = now;
        c.state = State::Backoff(now + BACKOFF);
        let addr = self.cfg.target.addr;
        match self.endpoint.connect(now, self.shared.client.clone(), addr, &self.shared.server_name) {
            Ok((h, q)) => {
                c.quic = Some((h, q));
                c.state = State::Connecting;
                self.by_handle.insert(h, i);
            }
            Err(_) => {
                self.rec.error(crate::core::recorder::ErrorKind::Connect, now, None);
            }
        }
    }

    /// Moves connection `i`'s QUIC state, if any, to the closing list.
    fn retire(&mut self, i: usize) {
        if let Some((h, q)) = self.conns[i].quic.take() {
            self.by_handle.remove(&h);
            self.rec.lost_packets += q.stats().path.lost_packets;
            self.closing.push((h, q));
        }
    }

    /// The handshake is done: the control stream goes out with the first requests.
    fn established(&mut self, i: usize, now: Instant) {
        let took = now.saturating_duration_since(self.conns[i].since);
        self.rec.handshake(now, took, false);
        let c = &mut self.conns[i];
        c.state = State::Open;
        c.free = vec![now; self.cfg.protocol.streams()];
        if let Some((_, q)) = c.quic.as_mut() {
            if let Some(id) = q.streams().open(quinn_proto::Dir::Uni) {
                let _ = q.send_stream(id).write(&crate::http3::frame::CONTROL_STREAM);
            }
        }
        self.fill(i);
    }

    /// Puts as many requests on connection `i` as it can take.
    fn fill(&mut self, i: usize) {
        if self.conns[i].state != State::Open || self.conns[i].goaway || self.stopping {
            return;
        }
        let mut start = None;
        while self.conns[i].requests.len() < self.cfg.protocol.streams() && self.sched.ready() {
            let Some((_, q)) = self.conns[i].quic.as_mut() else { return };
            let Some(id) = q.streams().open(quinn_proto::Dir::Bi) else { break };
            let intended = self.sched.next_request().expect("a request is ready");
            let now = *start.get_or_insert_with(Instant::now);
            let could = match self.conns[i].free.pop() {
                Some(t) => t,
                None => now,
            };
            let (intended, ready) = self.sched.send(&mut self.rec, intended, could, now);
            let pick = self.picker.as_mut().map(|p| {
                let t = p.next_target();
                (t, p.expansion(t))
            });
            let frames: &[u8] = match (pick, &self.cfg.mix) {
                (Some((t, k)), Some(mix)) => {
                    let spec = &mix.templates[t].spec;
                    let path = mix.templates[t].path_of(k);
                    let (https, authority) = (self.shared.https, &self.shared.authority);
                    crate::http3::qpack::encode(&mut self.block, &spec.method, https, authority, &path, &spec.headers);
                    crate::http3::frame::request(&mut self.frames, &self.block, &self.bodies[1 + t]);
                    &self.frames
                }
                _ => &self.shared.request,
            };
            let Some((_, q)) = self.conns[i].quic.as_mut() else { return };
            let mut send = q.send_stream(id);
            let written = send.write(frames).unwrap_or(0);
            let unsent = frames[written..].to_vec();
            if unsent.is_empty() {
                let _ = send.finish();
            }
            let mut slot = Slot::new(intended, now, pick.map(|(t, _)| t));
            slot.ready = ready;
            self.conns[i].requests.push(Request { id, slot, response: Response::default(), unsent });
        }
    }
}

mod io_side;
