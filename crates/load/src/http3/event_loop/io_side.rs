//! The HTTP/3 loop's QUIC side: datagrams in, each connection's events
//! (handshake done, streams readable or reset, connection lost), datagrams
//! out, and what a reset, a lost connection or a timeout costs. A child of
//! `http3::event_loop` (it shares the loop's private state), kept in its own file so
//! that each reads as one concern.

use super::{Http3Loop, BACKOFF};
use crate::core::housekeeping::{Housekeeping, Parts, State};
use crate::core::recorder::{ErrorKind, Origin};
use crate::core::schedule::{error_of, Retry};
use crate::http3::frame::{ServerStream, REQUEST_CANCELLED, REQUEST_REJECTED};
use quinn_proto::{ConnectionError, DatagramEvent, Dir, Event, ReadError, StreamEvent, StreamId, VarInt};
use std::io;
use std::time::{Duration, Instant};

/// How a request stream ended.
enum Ended {
    Response(u16),
    /// The server broke HTTP/3 on it.
    Malformed,
    /// The server reset it, with this code.
    Reset(u64),
}

impl Http3Loop<'_> {
    /// Reads datagrams until the socket is empty and hands each to its
    /// connection, whose events are taken at once: a response ends at the
    /// kernel's receive time of the datagram that completed it.
    pub(super) fn receive(&mut self) {
        let now = self.clocks.now();
        let mut datagrams = std::mem::take(&mut self.datagrams);
        loop {
            let more = match self.udp.recv(&mut datagrams) {
                Ok((bytes, more)) => {
                    if self.rec.measuring(now) {
                        self.rec.bytes_read += bytes as u64;
                    }
                    more
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            for d in datagrams.drain(..) {
                let at = self.clocks.place(d.received, self.floor);
                let mut response = std::mem::take(&mut self.send_buf);
                response.clear();
                // No destination address or ECN: the client has one address and sends without ECN.
                match self.endpoint.handle(now, d.from, None, None, d.data, &mut response) {
                    Some(DatagramEvent::ConnectionEvent(h, event)) => match self.by_handle.get(&h).copied() {
                        Some(i) => {
                            if let Some((_, q)) = self.conns[i].quic.as_mut() {
                                q.handle_event(event);
                            }
                            self.events(i, at);
                        }
                        None => {
                            if let Some((_, q)) = self.closing.iter_mut().find(|(c, _)| *c == h) {
                                q.handle_event(event);
                            }
                        }
                    },
                    Some(DatagramEvent::Response(t)) => {
                        self.udp.send(t.destination, &response[..t.size], t.segment_size);
                    }
                    _ => {}
                }
                self.send_buf = response;
            }
            if !more {
                break;
            }
        }
        self.datagrams = datagrams;
    }

    /// Runs every connection's timers and events, fills its free streams,
    /// and sends what it has to send.
    pub(super) fn drive_all(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            self.drive(i, now);
        }
        let mut k = 0;
        while k < self.closing.len() {
            let (h, q) = &mut self.closing[k];
            if q.poll_timeout().is_some_and(|t| t <= now) {
                q.handle_timeout(now);
            }
            while q.poll().is_some() {}
            while let Some(ev) = q.poll_endpoint_events() {
                if let Some(e) = self.endpoint.handle_event(*h, ev) {
                    q.handle_event(e);
                }
            }
            let drained = q.is_drained();
            self.transmit(None, k);
            if drained {
                self.closing.swap_remove(k);
            } else {
                k += 1;
            }
        }
    }

    fn drive(&mut self, i: usize, now: Instant) {
        let Some((h, q)) = self.conns[i].quic.as_mut() else { return };
        let h = *h;
        if q.poll_timeout().is_some_and(|t| t <= now) {
            q.handle_timeout(now);
        }
        while let Some(ev) = q.poll_endpoint_events() {
            if let Some(e) = self.endpoint.handle_event(h, ev) {
                q.handle_event(e);
            }
        }
        self.events(i, now);
        if self.conns[i].quic.is_none() {
            return;
        }
        self.recycle_if_done(i, now);
        self.fill(i);
        self.transmit(Some(i), 0);
    }

    /// Takes connection `i`'s events: its handshake done, streams with
    /// data, the connection lost. `at` is when what caused them arrived.
    fn events(&mut self, i: usize, at: Instant) {
        loop {
            let Some((_, q)) = self.conns[i].quic.as_mut() else { return };
            let Some(event) = q.poll() else { break };
            match event {
                Event::Connected => self.established(i, at),
                Event::ConnectionLost { reason } => return self.lost(i, reason, at),
                Event::Stream(StreamEvent::Readable { id }) => self.readable(i, id, at),
                Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                    let ids: Vec<StreamId> = std::iter::from_fn(|| q.streams().accept(Dir::Uni)).collect();
                    for id in ids {
                        self.readable(i, id, at);
                    }
                }
                Event::Stream(StreamEvent::Writable { id }) => self.writable(i, id),
                _ => {}
            }
        }
    }

    /// Sends what connection `i` (or closing connection `k`) has to send.
    fn transmit(&mut self, i: Option<usize>, k: usize) {
        let segments = self.udp.max_segments();
        let now = Instant::now();
        loop {
            if self.udp.is_blocked() {
                return;
            }
            let q = match i {
                Some(i) => match self.conns[i].quic.as_mut() {
                    Some((_, q)) => q,
                    None => return,
                },
                None => &mut self.closing[k].1,
            };
            self.send_buf.clear();
            let Some(t) = q.poll_transmit(now, segments, &mut self.send_buf) else { return };
            self.udp.send(t.destination, &self.send_buf[..t.size], t.segment_size);
        }
    }

    /// Stream `id` of connection `i` has data, an end, or a reset, which
    /// arrived at `now`.
    fn readable(&mut self, i: usize, id: StreamId, now: Instant) {
        let c = &mut self.conns[i];
        let Some((_, q)) = c.quic.as_mut() else { return };
        let at = c.requests.iter().position(|r| r.id == id);
        let mut ended = None;
        let mut goaway = None;
        let mut recv = q.recv_stream(id);
        if let Ok(mut chunks) = recv.read(true) {
            loop {
                match chunks.next(usize::MAX) {
                    Ok(Some(chunk)) => {
                        // The server's own streams are read for a GOAWAY and dropped.
                        let Some(r) = at.map(|k| &mut c.requests[k]) else {
                            goaway = server_stream(&mut c.server_streams, id, &chunk.bytes).or(goaway);
                            continue;
                        };
                        if r.response.feed(&chunk.bytes, &mut self.huffman).is_err() {
                            ended = Some(Ended::Malformed);
                            break;
                        }
                    }
                    Ok(None) => {
                        if let Some(k) = at {
                            ended = Some(match c.requests[k].response.finish() {
                                Ok(status) => Ended::Response(status),
                                Err(_) => Ended::Malformed,
                            });
                        }
                        break;
                    }
                    Err(ReadError::Reset(code)) => {
                        ended = at.map(|_| Ended::Reset(code.into_inner()));
                        break;
                    }
                    Err(ReadError::Blocked) => break,
                }
            }
            let _ = chunks.finalize();
        }
        if let Some(last) = goaway {
            return self.goaway(i, last, now);
        }
        let (Some(k), Some(how)) = (at, ended) else { return };
        let r = c.requests.swap_remove(k);
        if matches!(how, Ended::Malformed) {
            let _ = q.recv_stream(id).stop(VarInt::from_u32(0x101)); // H3_GENERAL_PROTOCOL_ERROR
        }
        if c.free.len() < self.cfg.protocol.streams() {
            c.free.push(now);
        }
        self.sched.in_flight -= 1;
        let slot = r.slot;
        match how {
            Ended::Response(status) => {
                // A receive time before the send cannot be right (rx_time:
                // a clock step): the loop's own reading is used then.
                let end = if now < slot.start { self.clocks.now() } else { now };
                let from = Origin { connection: i as u32, ready: slot.ready, connecting: false };
                let latency = self.rec.response(slot.intended, slot.start, end, status, from);
                if let (Some(latency), Some(t)) = (latency, slot.target) {
                    self.rec.target_response(t, latency, status);
                }
            }
            Ended::Malformed => error_of(&mut self.rec, &slot, ErrorKind::Parse, now, i),
            Ended::Reset(REQUEST_REJECTED) => self.sched.requeue(&mut self.rec, &slot),
            Ended::Reset(_) => {
                if self.rec.measuring(now) {
                    self.rec.rst_stream += 1;
                }
                error_of(&mut self.rec, &slot, ErrorKind::Read, now, i);
            }
        }
    }

    /// The server sent GOAWAY with stream id `last` on connection `i`: no
    /// new stream goes on it, and the requests on streams at or above
    /// `last` were never processed (RFC 9114 §5.2): cancelled and sent
    /// again. The connection is reopened once the others end
    /// (`recycle_if_done`).
    fn goaway(&mut self, i: usize, last: u64, now: Instant) {
        let c = &mut self.conns[i];
        if !c.goaway && self.rec.measuring(now) {
            self.rec.goaway += 1;
        }
        c.goaway = true;
        let mut k = 0;
        while k < c.requests.len() {
            if u64::from(c.requests[k].id) < last {
                k += 1;
                continue;
            }
            let r = c.requests.swap_remove(k);
            if let Some((_, q)) = c.quic.as_mut() {
                let code = VarInt::from_u32(REQUEST_CANCELLED as u32);
                let _ = q.send_stream(r.id).reset(code);
                let _ = q.recv_stream(r.id).stop(code);
            }
            self.sched.in_flight -= 1;
            self.sched.requeue(&mut self.rec, &r.slot);
        }
    }

    /// After a GOAWAY, once the requests on the connection ended: closed
    /// (H3_NO_ERROR) and reopened.
    fn recycle_if_done(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        if !c.goaway || !c.requests.is_empty() {
            return;
        }
        if let Some((_, q)) = c.quic.as_mut() {
            q.close(now, VarInt::from_u32(0x100), bytes::Bytes::new());
        }
        self.transmit(Some(i), 0);
        if self.stopping || self.sched.finished() {
            self.retire(i);
            self.conns[i].goaway = false;
            self.conns[i].state = State::Backoff(now + Duration::from_secs(86_400));
        } else {
            self.open(i, now, false);
        }
    }

    /// A stream's flow control let more of its request through.
    fn writable(&mut self, i: usize, id: StreamId) {
        let c = &mut self.conns[i];
        let Some((_, q)) = c.quic.as_mut() else { return };
        let Some(r) = c.requests.iter_mut().find(|r| r.id == id) else { return };
        let mut send = q.send_stream(id);
        let written = send.write(&r.unsent).unwrap_or(0);
        r.unsent.drain(..written);
        if r.unsent.is_empty() {
            let _ = send.finish();
        }
    }

    /// The connection ended: before its handshake completed, one error of
    /// the connection; after, one per stream in flight. Then it is reopened
    /// after a pause.
    fn lost(&mut self, i: usize, reason: ConnectionError, now: Instant) {
        let handshaking = self.conns[i].state == State::Connecting;
        let kind = match &reason {
            ConnectionError::TimedOut if handshaking => ErrorKind::Connect,
            ConnectionError::TimedOut => ErrorKind::Timeout,
            _ if handshaking && crate::http3::client::crypto_alert(&reason).is_some() => ErrorKind::Tls,
            ConnectionError::TransportError(_) | ConnectionError::VersionMismatch => ErrorKind::Parse,
            ConnectionError::CidsExhausted => ErrorKind::Connect,
            _ => ErrorKind::Read,
        };
        let requests = std::mem::take(&mut self.conns[i].requests);
        let retry = Retry::of(self.conns[i].goaway, self.cfg);
        for r in &requests {
            self.sched.lost(&mut self.rec, &r.slot, kind, now, i, retry);
        }
        if handshaking {
            self.rec.error(kind, now, None);
        }
        self.retire(i);
        let c = &mut self.conns[i];
        c.state = State::Backoff(if handshaking { now + BACKOFF } else { now });
        if !handshaking && !self.stopping && !self.sched.finished() {
            self.open(i, now, false);
        }
    }

    /// Adds the packets QUIC declared lost on the connections still open.
    pub(super) fn count_lost_packets(&mut self) {
        for c in &self.conns {
            if let Some((_, q)) = &c.quic {
                self.rec.lost_packets += q.stats().path.lost_packets;
            }
        }
    }

    /// The run is over: every connection is closed (H3_NO_ERROR), so the
    /// server frees it now rather than at its idle timeout.
    pub(super) fn close_all(&mut self) {
        let now = Instant::now();
        for i in 0..self.conns.len() {
            if let Some((_, q)) = self.conns[i].quic.as_mut() {
                q.close(now, VarInt::from_u32(0x100), bytes::Bytes::new());
                self.transmit(Some(i), 0);
            }
        }
    }
}

impl Housekeeping for Http3Loop<'_> {
    fn parts(&mut self) -> Parts<'_> {
        let fields = (self.cfg, &mut self.sched, &mut self.rec);
        Parts::new(fields, (&mut self.next_tick, &mut self.stopping), self.conns.len())
    }

    fn state(&self, i: usize) -> (State, Instant) {
        (self.conns[i].state, self.conns[i].since)
    }

    /// Cancels connection `i`'s requests older than `timeout`, each on its
    /// own stream: the others go on.
    fn expire(&mut self, i: usize, now: Instant, timeout: Duration) {
        let mut k = 0;
        while k < self.conns[i].requests.len() {
            if now.saturating_duration_since(self.conns[i].requests[k].slot.start) <= timeout {
                k += 1;
                continue;
            }
            let c = &mut self.conns[i];
            let r = c.requests.swap_remove(k);
            if let Some((_, q)) = c.quic.as_mut() {
                let code = VarInt::from_u32(REQUEST_CANCELLED as u32);
                let _ = q.send_stream(r.id).reset(code);
                let _ = q.recv_stream(r.id).stop(code);
            }
            if c.free.len() < self.cfg.protocol.streams() {
                c.free.push(now);
            }
            self.sched.in_flight -= 1;
            error_of(&mut self.rec, &r.slot, ErrorKind::Timeout, now, i);
        }
    }

    fn reconnect(&mut self, i: usize, now: Instant) {
        self.open(i, now, false);
    }

    /// The oldest request outstanding, for the record's silences; a
    /// connection being reopened is about to send again and keeps the
    /// silence going.
    fn outstanding(&self, now: Instant) -> Option<Instant> {
        let oldest = self.conns.iter().flat_map(|c| c.requests.iter().map(|r| r.slot.start)).min();
        let reopening = self.conns.iter().any(|c| matches!(c.state, State::Connecting));
        oldest.or_else(|| reopening.then_some(now))
    }

    fn owe_at_end(&mut self, i: usize, now: Instant, stopping: bool) {
        for r in std::mem::take(&mut self.conns[i].requests) {
            self.sched.owed_at_end(&mut self.rec, &r.slot, i, now, stopping);
        }
    }
}

/// Feeds `bytes` of the server's unidirectional stream `id` to its reader:
/// the stream id of a GOAWAY read in them. A malformed control stream is
/// read no further (its reader is kept, marked done).
fn server_stream(streams: &mut Vec<(StreamId, ServerStream)>, id: StreamId, bytes: &[u8]) -> Option<u64> {
    let k = match streams.iter().position(|(s, _)| *s == id) {
        Some(k) => k,
        None => {
            streams.push((id, ServerStream::default()));
            streams.len() - 1
        }
    };
    streams[k].1.feed(bytes).unwrap_or_else(|_| {
        streams[k].1 = ServerStream::ignoring();
        None
    })
}
