//! The HTTP/2 loop's byte moving and bookkeeping: writing a connection's
//! frames, reading and handing bytes to its session, recording the streams
//! that ended, and what a lost connection, a protocol error, a GOAWAY or a
//! timeout costs. A child of `http2::event_loop` (it shares the loop's private state),
//! kept in its own file so that each reads as one concern.

use super::{Http2Loop, BACKOFF};
use crate::core::housekeeping::{Housekeeping, Parts, State};
use crate::core::recorder::{ErrorKind, Origin};
use crate::core::schedule::{error_of, Retry};
use crate::core::transport::{ReadSide, Transport};
use crate::http2::session::Ended;
use std::io;
use std::time::{Duration, Instant};

impl<T: Transport> Http2Loop<'_, T> {
    /// Writes connection `i`'s queued frames, if it is open and has any
    /// (TLS: always, to flush what the TLS session has to send): requests,
    /// PING and SETTINGS acknowledgements and WINDOW_UPDATEs go out
    /// together, one write per connection per wake-up.
    pub(super) fn flush(&mut self, i: usize, now: Instant) {
        let c = &self.conns[i];
        if c.state == State::Open && (c.session.written < c.session.out.len() || T::HANDSHAKE) {
            self.write(i, now);
        }
    }

    /// Open loop, a wake-up without epoll: reads each open connection with
    /// streams in flight, or whose last read brought bytes (a PING or a
    /// GOAWAY may follow the answers). The rest are read when the
    /// housekeeping tick polls.
    pub(super) fn read_in_use(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            if c.state == State::Open && (c.watch || !c.session.slots.is_empty()) {
                self.read(i, ReadSide::Data, now);
            }
        }
    }

    /// Writes what the session has queued (for TLS: encrypts and flushes).
    fn write(&mut self, i: usize, now: Instant) {
        let c = &mut self.conns[i];
        let Some(stream) = c.stream.as_mut() else { return };
        let s = &mut c.session;
        while s.written < s.out.len() {
            match stream.write(&s.out[s.written..]) {
                Ok(n) => s.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.write_failed(i, now),
            }
        }
        s.out.clear();
        s.written = 0;
        if stream.flush().is_err() {
            self.write_failed(i, now);
        }
    }

    /// A write failed: the server closed the connection. The GOAWAY that
    /// says why (and which streams it processed) may still be unread, so
    /// what is there is read first.
    fn write_failed(&mut self, i: usize, now: Instant) {
        self.drain(i, ReadSide::Closed, now);
        if self.conns[i].state == State::Open {
            self.lost(i, ErrorKind::Write, now);
        }
    }

    pub(super) fn read(&mut self, i: usize, side: ReadSide, now: Instant) {
        self.drain(i, side, now);
        if self.conns[i].state == State::Open {
            self.recycle_if_done(i, now);
        }
        // Reopened: the old session's bytes must not reach the new socket.
        // Open loop: requests and acknowledgements go at the end of the wake-up.
        if self.conns[i].state == State::Open && !self.sched.open_loop() {
            self.fill(i);
            self.flush(i, now);
        }
    }

    /// Reads until the socket is empty, handing the bytes to the session.
    fn drain(&mut self, i: usize, side: ReadSide, now: Instant) {
        let mut buf = std::mem::take(&mut self.buf);
        self.conns[i].watch = false;
        while let Some(stream) = self.conns[i].stream.as_mut() {
            let (n, rx) = match stream.read_stamped(&mut buf) {
                Ok((0, _)) => {
                    self.lost(i, ErrorKind::Read, now);
                    break;
                }
                Ok(read) => read,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.lost(i, ErrorKind::Read, now);
                    break;
                }
            };
            if self.rec.measuring(now) {
                self.rec.bytes_read += n as u64;
            }
            self.conns[i].watch = true;
            self.conns[i].session.rx_at = self.clocks.place(rx, self.share.start);
            let received = self.conns[i].session.receive(&buf[..n], &self.bodies, &mut self.ended);
            let session = &mut self.conns[i].session;
            self.rec.gaps(&session.gaps);
            session.gaps.clear();
            self.settle(i, now, rx);
            if received.is_err() {
                self.protocol_error(i, now);
                break;
            }
            if side.drained::<T>(n, buf.len()) {
                break;
            }
        }
        self.buf = buf;
    }

    /// Records the streams that ended; a response at the receive time `rx`
    /// of the read it completed in, placed on `Instant` by this iteration's
    /// clock pair.
    fn settle(&mut self, i: usize, now: Instant, rx: Option<i128>) {
        let mut ended = std::mem::take(&mut self.ended);
        self.answered += ended.len() as u64;
        for (slot, how) in ended.drain(..) {
            self.sched.in_flight -= 1;
            // The stream is free from when its end arrived, not from when
            // this wake-up got to it: the open loop's lag counts from then.
            let at = self.clocks.place(rx, slot.start);
            match how {
                Ended::Response(status) => {
                    let from = Origin { connection: i as u32, ready: slot.ready, connecting: false };
                    let latency = match self.cfg.protocol.grpc() {
                        true => self.rec.call((slot.intended, slot.start, at), status, &slot.call, from),
                        false => self.rec.response(slot.intended, slot.start, at, status, from),
                    };
                    if let (Some(latency), Some(t)) = (latency, slot.target) {
                        self.rec.target_response(t, latency, status);
                    }
                }
                Ended::Reset => {
                    if self.rec.measuring(now) {
                        self.rec.rst_stream += 1;
                    }
                    error_of(&mut self.rec, &slot, ErrorKind::Read, now, i);
                }
                Ended::Unprocessed => self.sched.requeue(&mut self.rec, &slot),
            }
            let c = &mut self.conns[i];
            if c.free.len() < self.cfg.protocol.streams() {
                c.free.push(at);
            }
        }
        self.ended = ended;
    }

    /// The connection ended under its streams (closed, or a socket error).
    /// The streams a GOAWAY said were not processed were already sent again;
    /// those left are at or below its last stream id (`Schedule::lost`).
    fn lost(&mut self, i: usize, kind: ErrorKind, now: Instant) {
        let slots = std::mem::take(&mut self.conns[i].session.slots);
        let retry = Retry::of(self.conns[i].session.goaway, self.cfg);
        for slot in &slots {
            self.sched.lost(&mut self.rec, slot, kind, now, i, retry);
        }
        self.reopen(i, now);
    }

    /// The server broke HTTP/2: its streams are parse errors, so is the
    /// connection, and it is retried after a pause rather than in a storm.
    fn protocol_error(&mut self, i: usize, now: Instant) {
        let slots = std::mem::take(&mut self.conns[i].session.slots);
        for slot in &slots {
            self.sched.in_flight -= 1;
            error_of(&mut self.rec, slot, ErrorKind::Parse, now, i);
        }
        self.rec.error(ErrorKind::Parse, now, None);
        let c = &mut self.conns[i];
        c.stream = None;
        c.state = State::Backoff(now + BACKOFF);
    }

    /// After a GOAWAY or a timeout, once its streams are answered: reopened.
    fn recycle_if_done(&mut self, i: usize, now: Instant) {
        let c = &self.conns[i];
        if (c.session.goaway || c.retire) && c.session.slots.is_empty() {
            self.reopen(i, now);
        }
    }

    fn reopen(&mut self, i: usize, now: Instant) {
        if self.conns[i].session.goaway && self.rec.measuring(now) {
            self.rec.goaway += 1;
        }
        self.conns[i].session.goaway = false;
        self.conns[i].stream = None;
        if self.stopping || self.sched.finished() {
            self.conns[i].state = State::Backoff(now + Duration::from_secs(86_400));
        } else {
            self.open(i, now, false);
        }
    }
}

impl<T: Transport> Housekeeping for Http2Loop<'_, T> {
    fn parts(&mut self) -> Parts<'_> {
        let fields = (self.cfg, &mut self.sched, &mut self.rec);
        Parts::new(fields, (&mut self.next_tick, &mut self.stopping), self.conns.len())
    }

    /// A timed-out request retires its connection: it takes no new stream,
    /// and is reopened once the others are answered.
    fn expire(&mut self, i: usize, now: Instant, timeout: Duration) {
        let mut k = 0;
        while k < self.conns[i].session.slots.len() {
            if now.saturating_duration_since(self.conns[i].session.slots[k].start) > timeout {
                let slot = self.conns[i].session.slots.swap_remove(k);
                self.sched.in_flight -= 1;
                error_of(&mut self.rec, &slot, ErrorKind::Timeout, now, i);
                self.conns[i].retire = true;
            } else {
                k += 1;
            }
        }
        self.recycle_if_done(i, now);
    }

    fn state(&self, i: usize) -> (State, Instant) {
        (self.conns[i].state, self.conns[i].since)
    }

    fn reconnect(&mut self, i: usize, now: Instant) {
        self.open(i, now, false);
    }

    /// The oldest request outstanding, for the record's silences; a
    /// connection being reopened is about to send again and keeps the
    /// silence going.
    fn outstanding(&self, now: Instant) -> Option<Instant> {
        let oldest = self.conns.iter().flat_map(|c| c.session.slots.iter().map(|s| s.start)).min();
        let reopening = self.conns.iter().any(|c| matches!(c.state, State::Connecting | State::Handshaking));
        oldest.or_else(|| reopening.then_some(now))
    }

    fn owe_at_end(&mut self, i: usize, now: Instant, stopping: bool) {
        for slot in std::mem::take(&mut self.conns[i].session.slots) {
            self.sched.owed_at_end(&mut self.rec, &slot, i, now, stopping);
        }
    }
}
