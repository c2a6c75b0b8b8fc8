//! One client connection: its socket, where it is in the request/response
//! cycle, and the timestamps of the requests in flight. A connection belongs to
//! exactly one worker thread for its whole life. It is generic over its
//! transport (cleartext TCP or TLS) so the cleartext loop stays monomorphic.

use crate::config::LoadConfig;
use crate::core::recorder::Origin;
use crate::core::transport::Transport;
use crate::http1::response::ResponseParser;
use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use std::io;
use std::net::SocketAddr;
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnState {
    /// Waiting for the TCP handshake to finish.
    Connecting,
    /// TCP is up; the TLS handshake is under way.
    Handshaking,
    /// Open, nothing in flight (open loop: waiting for the schedule).
    Idle,
    /// The request is partly written; the number is bytes written so far.
    Writing(usize),
    /// The request is written; waiting for (the rest of) the response.
    Reading,
    /// The last connect failed; retried at the next housekeeping tick.
    Backoff,
}

pub struct Conn<T> {
    pub id: u32,
    pub stream: Option<T>,
    pub state: ConnState,
    pub parser: ResponseParser,
    /// When the request in flight should have been sent (open loop) or was (closed loop).
    pub intended: Instant,
    /// When the request in flight was actually sent.
    pub start: Instant,
    /// When the connection last became free to send.
    pub idle_since: Instant,
    /// Where the request in flight came from, for the slow log: when it
    /// could have gone, and whether it is the socket's first.
    pub origin: Origin,
    /// Requests written and not yet answered: 1, or up to `--pipeline`. All
    /// of a batch share `intended` and `start`: they were written at once,
    /// and their responses come back in order.
    pub batch: u32,
    /// Requests in the batch as it was written (`batch` counts down from it).
    pub batch_len: u32,
    /// Responses read on this socket since it was opened.
    pub served: u32,
    /// Requests the server dropped unprocessed (behind a closing response,
    /// or by closing a used keep-alive connection before answering): sent
    /// again, keeping their intended time, as soon as a new socket is up.
    pub retry: u32,
    /// With a request mix: this connection's batch, and for each request
    /// in it, its target and where its bytes end. (Without one, every
    /// connection writes the run's one encoded batch and these stay empty.)
    pub out: Vec<u8>,
    pub reqs: Vec<(u16, u32)>,
}

impl<T: Transport> Conn<T> {
    /// A connection not yet open, its parser set for the run's requests
    /// (HEAD: no bodies; compression asked: bodies decoded).
    pub fn new(id: u32, cfg: &LoadConfig, now: Instant) -> Conn<T> {
        Conn {
            id,
            stream: None,
            state: ConnState::Backoff,
            parser: ResponseParser::new(cfg.is_head()).decoding(cfg.asks_compression()),
            intended: now,
            start: now,
            idle_since: now,
            origin: Origin { connection: id, ready: now, connecting: false },
            batch: 0,
            batch_len: 0,
            served: 0,
            retry: 0,
            out: Vec::new(),
            reqs: Vec::new(),
        }
    }

    /// Starts a non-blocking connect. The socket is registered once for both
    /// directions, edge-triggered: it is never re-armed per request, which
    /// saves the two `epoll_ctl` calls per request a level-triggered client makes.
    pub fn open(&mut self, addr: SocketAddr, shared: &T::Shared, registry: &Registry, now: Instant) -> io::Result<()> {
        let mut stream = self.connect(addr, now)?;
        registry.register(&mut stream, Token(self.id as usize), Interest::READABLE | Interest::WRITABLE)?;
        self.stream = Some(T::wrap(stream, shared)?);
        self.state = ConnState::Connecting;
        Ok(())
    }

    /// Drops the old socket and starts a non-blocking connect of a new one;
    /// the caller decides how to wait for it.
    pub fn connect(&mut self, addr: SocketAddr, now: Instant) -> io::Result<TcpStream> {
        self.stream = None;
        self.parser.reset();
        self.start = now;
        self.batch = 0;
        self.served = 0;
        self.state = ConnState::Backoff;
        TcpStream::connect(addr)
    }

    /// Closing the socket also removes it from epoll: no deregister call needed.
    pub fn close(&mut self) {
        self.stream = None;
        self.parser.reset();
        self.batch = 0;
        self.served = 0;
        self.state = ConnState::Backoff;
    }

    /// After an event on a connecting socket: `Ok(true)` once established.
    pub fn finish_connect(&mut self) -> io::Result<bool> {
        let stream = self.stream.as_ref().ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))?.tcp();
        if let Some(e) = stream.take_error()? {
            return Err(e);
        }
        match stream.peer_addr() {
            Ok(_) => {
                stream.set_nodelay(true)?;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub fn in_flight(&self) -> bool {
        matches!(self.state, ConnState::Writing(_) | ConnState::Reading)
    }

    /// Requests sent (or to be sent again) that have no answer yet.
    pub fn owed(&self) -> u32 {
        if self.in_flight() {
            self.batch + self.retry
        } else {
            self.retry
        }
    }
}
