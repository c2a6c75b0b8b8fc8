//! One HTTP/2 connection's protocol state, apart from the socket: its open
//! streams, both sides' flow-control windows, the server's settings, the
//! HPACK decoder, and the bytes waiting to be written.
//!
//! Kept apart from the event loop (`http2::event_loop`) so the loop reads as the load
//! loop it is and this file as the protocol it is. Bytes go in through
//! `receive`, which hands back the streams that ended; frames to send are
//! appended to `out`, which the loop writes in one go. Windows this side
//! grants are the largest HTTP/2 allows and are topped up in bulk, once half
//! is used, never per DATA frame; the server's windows and its
//! SETTINGS_MAX_CONCURRENT_STREAMS are respected for what this side sends.
//!
//! A session carrying gRPC calls also reads what gRPC puts in a stream: the
//! content-type and `grpc-status` of its header blocks (the trailers, or a
//! Trailers-Only answer) and the length-prefixed messages of its DATA,
//! counted as they arrive without keeping them.

use crate::core::grpc_tally::{CallEnd, Gaps};
use crate::http2::frame::{self as frame, ProtocolError};
use stampede_grpc::{Deframer, DEFAULT_MAX_MESSAGE_BYTES};
use std::time::Instant;

/// A stream in flight.
pub struct Slot {
    pub id: u32,
    pub intended: Instant,
    pub start: Instant,
    /// When it could have gone (due, and a stream free): see `recorder::Origin`.
    pub ready: Instant,
    /// With a mix: the target this request went to.
    pub target: Option<usize>,
    status: u16,
    /// How much of the body is sent; the body is `bodies[body]`.
    body: usize,
    body_sent: usize,
    /// The server's window for this stream (what it lets this side send).
    window: i64,
    /// Bytes received on this stream not yet given back by WINDOW_UPDATE.
    unacked: u32,
    /// A gRPC call: what its answer said so far.
    pub call: CallEnd,
    messages: Deframer,
}

/// How a stream ended.
pub enum Ended {
    Response(u16),
    /// The server reset it (RST_STREAM).
    Reset,
    /// Above a GOAWAY's last stream id: never processed (RFC 9113 §6.8).
    Unprocessed,
}

pub struct Session {
    pub slots: Vec<Slot>,
    /// Frames to write; `written` of them are already.
    pub out: Vec<u8>,
    pub written: usize,
    /// The start of a frame split across reads.
    partial: Vec<u8>,
    decoder: crate::http2::hpack::Decoder,
    next_id: u32,
    max_streams: usize,
    /// What the server lets this side send: the connection's window, a new
    /// stream's window, and the largest frame.
    conn_window: i64,
    initial_window: i64,
    max_frame: usize,
    unacked: u32,
    /// A header block continued in CONTINUATION frames: its stream, its bytes
    /// so far, and whether its HEADERS ended the stream.
    block_stream: u32,
    block: Vec<u8>,
    block_ends: bool,
    /// The server sent GOAWAY: no new streams.
    pub goaway: bool,
    /// The streams carry gRPC calls.
    grpc: bool,
    /// When the bytes being received arrived (set by the loop before
    /// [`Session::receive`]): a gRPC stream's messages are stamped with it.
    pub rx_at: Instant,
    /// The gaps between gRPC messages the last reads found, for the loop
    /// to record and clear (kept, so no read allocates once it has grown).
    pub gaps: Vec<Gaps>,
}

/// Why a connection whose server allows no streams is given up.
pub const NO_STREAMS: &str = "the server allows no streams (SETTINGS_MAX_CONCURRENT_STREAMS 0)";

/// Flow control is given back once this much of a window is used.
const TOP_UP: u32 = frame::MAX_WINDOW / 2;

impl Session {
    /// A session whose streams carry gRPC calls when `grpc`.
    pub fn carrying(grpc: bool) -> Session {
        Session { grpc, ..Session::new() }
    }

    pub fn new() -> Session {
        let mut out = Vec::with_capacity(16 * 1024);
        frame::client_start(&mut out);
        Session {
            slots: Vec::new(),
            out,
            written: 0,
            partial: Vec::new(),
            decoder: crate::http2::hpack::Decoder::new(),
            next_id: 1,
            max_streams: usize::MAX,
            conn_window: 65_535,
            initial_window: 65_535,
            max_frame: 16_384,
            unacked: 0,
            block_stream: 0,
            block: Vec::new(),
            block_ends: false,
            goaway: false,
            grpc: false,
            rx_at: Instant::now(),
            gaps: Vec::new(),
        }
    }

    /// Whether another stream may be opened, with at most `streams` at once.
    pub fn can_open(&self, streams: usize) -> bool {
        !self.goaway && self.slots.len() < streams.min(self.max_streams) && self.next_id < (1 << 31) - 2
    }

    /// Opens a stream: HEADERS (and CONTINUATION past the server's frame
    /// size) with the prepared block, then the body as far as windows allow.
    pub fn open(&mut self, block: &[u8], bodies: &[Vec<u8>], body: usize, mut slot: Slot) {
        let id = self.next_id;
        self.next_id += 2;
        let has_body = !bodies[body].is_empty();
        let mut chunks = block.chunks(self.max_frame).peekable();
        let first = chunks.next().unwrap_or(&[]);
        let end = if has_body { 0 } else { frame::END_STREAM };
        let last = if chunks.peek().is_none() { frame::END_HEADERS } else { 0 };
        frame::head(&mut self.out, first.len(), frame::HEADERS, end | last, id);
        self.out.extend_from_slice(first);
        while let Some(chunk) = chunks.next() {
            let last = if chunks.peek().is_none() { frame::END_HEADERS } else { 0 };
            frame::head(&mut self.out, chunk.len(), frame::CONTINUATION, last, id);
            self.out.extend_from_slice(chunk);
        }
        slot.id = id;
        slot.body = body;
        slot.window = self.initial_window;
        self.slots.push(slot);
        if has_body {
            let i = self.slots.len() - 1;
            self.send_body(i, bodies);
        }
    }

    /// Sends as much of slot `i`'s body as the windows allow.
    fn send_body(&mut self, i: usize, bodies: &[Vec<u8>]) {
        let s = &mut self.slots[i];
        let body = &bodies[s.body];
        while s.body_sent < body.len() {
            let room = s.window.min(self.conn_window).min(self.max_frame as i64);
            if room <= 0 {
                return;
            }
            let n = (body.len() - s.body_sent).min(room as usize);
            let end = if s.body_sent + n == body.len() { frame::END_STREAM } else { 0 };
            frame::head(&mut self.out, n, frame::DATA, end, s.id);
            self.out.extend_from_slice(&body[s.body_sent..s.body_sent + n]);
            s.body_sent += n;
            s.window -= n as i64;
            self.conn_window -= n as i64;
        }
    }

    fn pump_bodies(&mut self, bodies: &[Vec<u8>]) {
        for i in 0..self.slots.len() {
            if self.slots[i].body_sent < bodies[self.slots[i].body].len() {
                self.send_body(i, bodies);
            }
        }
    }

    /// Takes bytes read from the connection; the streams that ended are
    /// pushed onto `ended`.
    pub fn receive(
        &mut self,
        bytes: &[u8],
        bodies: &[Vec<u8>],
        ended: &mut Vec<(Slot, Ended)>,
    ) -> Result<(), ProtocolError> {
        if self.partial.is_empty() {
            let used = self.frames(bytes, bodies, ended)?;
            self.partial.extend_from_slice(&bytes[used..]);
        } else {
            let mut partial = std::mem::take(&mut self.partial);
            partial.extend_from_slice(bytes);
            let used = self.frames(&partial, bodies, ended)?;
            partial.drain(..used);
            self.partial = partial;
        }
        Ok(())
    }

    /// Handles every complete frame in `buf`; returns the bytes used.
    fn frames(
        &mut self,
        buf: &[u8],
        bodies: &[Vec<u8>],
        ended: &mut Vec<(Slot, Ended)>,
    ) -> Result<usize, ProtocolError> {
        let mut used = 0;
        while let Some((f, n)) = frame::parse(&buf[used..])? {
            used += n;
            self.frame(f, bodies, ended)?;
        }
        Ok(used)
    }

    fn frame(
        &mut self,
        f: frame::Frame<'_>,
        bodies: &[Vec<u8>],
        ended: &mut Vec<(Slot, Ended)>,
    ) -> Result<(), ProtocolError> {
        if self.block_stream != 0 && (f.kind != frame::CONTINUATION || f.stream != self.block_stream) {
            return Err(ProtocolError("a header block interrupted before its end"));
        }
        match f.kind {
            frame::DATA => {
                self.unacked += f.wire_len as u32;
                if self.unacked >= TOP_UP {
                    frame::window_update(&mut self.out, 0, std::mem::take(&mut self.unacked));
                }
                if let Some(i) = self.find(f.stream) {
                    let s = &mut self.slots[i];
                    s.unacked += f.wire_len as u32;
                    if self.grpc {
                        s.read_messages(f.payload, self.rx_at, &mut self.gaps);
                    }
                    if f.flags & frame::END_STREAM != 0 {
                        self.finish(i, ended)?;
                    } else if s.unacked >= TOP_UP {
                        frame::window_update(&mut self.out, s.id, std::mem::take(&mut s.unacked));
                    }
                }
            }
            frame::HEADERS | frame::CONTINUATION => {
                if f.kind == frame::HEADERS {
                    self.block_stream = f.stream;
                    self.block_ends = f.flags & frame::END_STREAM != 0;
                    self.block.clear();
                } else if self.block_stream == 0 {
                    return Err(ProtocolError("CONTINUATION without HEADERS"));
                }
                if self.block.len() + f.payload.len() > crate::http1::response::MAX_HEAD_BYTES {
                    return Err(ProtocolError("a header block over 64 KiB (HEADERS and CONTINUATION frames)"));
                }
                if f.flags & frame::END_HEADERS == 0 {
                    self.block.extend_from_slice(f.payload);
                    return Ok(());
                }
                let head = if self.block.is_empty() {
                    self.decode(f.payload)?
                } else {
                    let mut block = std::mem::take(&mut self.block);
                    block.extend_from_slice(f.payload);
                    let head = self.decode(&block);
                    block.clear();
                    self.block = block;
                    head?
                };
                let stream = std::mem::replace(&mut self.block_stream, 0);
                if let Some(i) = self.find(stream) {
                    let s = &mut self.slots[i];
                    // A 1xx head is followed by the real one; trailers keep it.
                    if s.status == 0 && head.status >= 200 {
                        s.status = head.status;
                        s.call.grpc_type = head.grpc_type;
                    }
                    if head.grpc_status.is_some() {
                        s.call.code = head.grpc_status;
                    }
                    if self.block_ends {
                        self.finish(i, ended)?;
                    }
                }
            }
            frame::RST_STREAM => {
                if let Some(i) = self.find(f.stream) {
                    ended.push((self.slots.swap_remove(i), Ended::Reset));
                }
            }
            frame::SETTINGS if f.flags & frame::ACK == 0 => {
                self.settings(f.payload)?;
                frame::settings_ack(&mut self.out);
                self.pump_bodies(bodies);
            }
            frame::PING if f.flags & frame::ACK == 0 => {
                let payload: &[u8; 8] = f.payload.try_into().map_err(|_| ProtocolError("PING not 8 bytes"))?;
                frame::ping(&mut self.out, frame::ACK, payload);
            }
            frame::GOAWAY => {
                let last = frame::u32_at(f.payload, 0, "GOAWAY too short")? & 0x7fff_ffff;
                self.goaway = true;
                let mut i = 0;
                while i < self.slots.len() {
                    if self.slots[i].id > last {
                        ended.push((self.slots.swap_remove(i), Ended::Unprocessed));
                    } else {
                        i += 1;
                    }
                }
            }
            frame::WINDOW_UPDATE => {
                let inc = i64::from(frame::u32_at(f.payload, 0, "WINDOW_UPDATE too short")? & 0x7fff_ffff);
                if f.stream == 0 {
                    self.conn_window += inc;
                } else if let Some(i) = self.find(f.stream) {
                    self.slots[i].window += inc;
                }
                self.pump_bodies(bodies);
            }
            frame::PUSH_PROMISE => return Err(ProtocolError("PUSH_PROMISE after SETTINGS_ENABLE_PUSH=0")),
            _ => {} // PRIORITY, acknowledgements, and unknown types (RFC 9113 §4.1)
        }
        Ok(())
    }

    fn settings(&mut self, payload: &[u8]) -> Result<(), ProtocolError> {
        if !payload.len().is_multiple_of(6) {
            return Err(ProtocolError("SETTINGS not a multiple of 6 bytes"));
        }
        for pair in payload.chunks_exact(6) {
            let value = frame::u32_at(pair, 2, "")?;
            match u16::from_be_bytes([pair[0], pair[1]]) {
                // Zero streams is legal (RFC 9113 §6.5.2) but leaves a load
                // generator nothing to do: said, not waited out in silence.
                frame::SETTINGS_MAX_CONCURRENT_STREAMS if value == 0 => return Err(ProtocolError(NO_STREAMS)),
                frame::SETTINGS_MAX_CONCURRENT_STREAMS => self.max_streams = value as usize,
                frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                    let delta = i64::from(value) - self.initial_window;
                    self.initial_window = i64::from(value);
                    self.slots.iter_mut().for_each(|s| s.window += delta);
                }
                frame::SETTINGS_MAX_FRAME_SIZE => self.max_frame = (value as usize).clamp(16_384, 1 << 24),
                _ => {}
            }
        }
        Ok(())
    }

    /// Decodes a response header block (always: the dynamic table must
    /// follow the server's).
    fn decode(&mut self, block: &[u8]) -> Result<crate::http2::hpack::Head, ProtocolError> {
        self.decoder.head(block).map_err(|_| ProtocolError("a header block HPACK cannot decode"))
    }

    fn finish(&mut self, i: usize, ended: &mut Vec<(Slot, Ended)>) -> Result<(), ProtocolError> {
        if self.slots[i].status == 0 {
            return Err(ProtocolError("a response without :status"));
        }
        let mut slot = self.slots.swap_remove(i);
        slot.call.broken |= self.grpc && slot.messages.is_mid_message();
        let status = slot.status;
        ended.push((slot, Ended::Response(status)));
        Ok(())
    }

    #[inline]
    fn find(&self, id: u32) -> Option<usize> {
        self.slots.iter().position(|s| s.id == id)
    }
}

impl crate::core::schedule::InFlight for Slot {
    fn intended(&self) -> Instant {
        self.intended
    }
    fn start(&self) -> Instant {
        self.start
    }
    fn target(&self) -> Option<usize> {
        self.target
    }
}

impl Slot {
    pub fn new(intended: Instant, start: Instant, target: Option<usize>) -> Slot {
        Slot {
            id: 0,
            intended,
            start,
            ready: start,
            target,
            status: 0,
            body: 0,
            body_sent: 0,
            window: 0,
            unacked: 0,
            call: CallEnd::default(),
            messages: Deframer::new(DEFAULT_MAX_MESSAGE_BYTES, false),
        }
    }

    /// A gRPC call's DATA: its messages counted, the first one's arrival
    /// kept, the gaps since the last one queued in `gaps` (messages that
    /// end in the same read are 0 apart); a message over the size limit or
    /// a bad prefix breaks the call.
    fn read_messages(&mut self, data: &[u8], at: Instant, gaps: &mut Vec<Gaps>) {
        if self.call.broken {
            return;
        }
        match self.messages.feed(data) {
            Ok(0) => {}
            Ok(n) => {
                let at = at.max(self.start);
                let intended = self.intended;
                match self.call.last_message {
                    Some(last) => {
                        let ns = at.saturating_duration_since(last).as_nanos() as u64;
                        gaps.push(Gaps { intended, ns, n: 1 });
                    }
                    None => self.call.first_message = Some(at),
                }
                if n > 1 {
                    gaps.push(Gaps { intended, ns: 0, n: n - 1 });
                }
                self.call.last_message = Some(at);
                self.call.messages = self.call.messages.saturating_add(n);
            }
            Err(_) => self.call.broken = true,
        }
    }
}

#[cfg(test)]
mod tests;
