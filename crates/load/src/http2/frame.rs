//! HTTP/2 framing by hand (RFC 9113 §4, §6): the 9-byte frame header, and
//! the few frames a load client writes and reads.
//!
//! Why by hand rather than through the `h2` crate: a load client sends the
//! same request over and over, and its header block is HPACK-encoded once
//! (`http2::block`, static-table indexes and literals without indexing, so no
//! dynamic-table state), so sending a request is a 9-byte header plus a
//! memcpy, and every request due on a connection goes out in one write (one
//! TLS record when they fit). Reading is a loop over complete frames in the
//! read buffer; only a frame split across reads is copied aside. Response
//! header blocks still go through a real HPACK decoder (`loona-hpack`), so
//! the server's dynamic table stays in sync.

/// The client connection preface (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
pub const HEADER_LEN: usize = 9;

pub const DATA: u8 = 0;
pub const HEADERS: u8 = 1;
pub const RST_STREAM: u8 = 3;
pub const SETTINGS: u8 = 4;
pub const PUSH_PROMISE: u8 = 5;
pub const PING: u8 = 6;
pub const GOAWAY: u8 = 7;
pub const WINDOW_UPDATE: u8 = 8;
pub const CONTINUATION: u8 = 9;

pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY: u8 = 0x20;

pub const SETTINGS_ENABLE_PUSH: u16 = 2;
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 4;
pub const SETTINGS_MAX_FRAME_SIZE: u16 = 5;

/// The largest window HTTP/2 allows (2^31-1).
pub const MAX_WINDOW: u32 = (1 << 31) - 1;
/// The largest frame this client accepts (advertised in SETTINGS).
pub const MAX_FRAME: u32 = 1 << 20;

/// The peer broke the framing rules: the connection cannot go on.
#[derive(Debug, PartialEq, Eq)]
pub struct ProtocolError(pub &'static str);

/// Appends a frame header.
#[inline]
pub fn head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let l = len as u32;
    let s = stream & 0x7fff_ffff;
    out.extend_from_slice(&[
        (l >> 16) as u8,
        (l >> 8) as u8,
        l as u8,
        kind,
        flags,
        (s >> 24) as u8,
        (s >> 16) as u8,
        (s >> 8) as u8,
        s as u8,
    ]);
}

/// Appends a SETTINGS frame with these (identifier, value) pairs.
pub fn settings(out: &mut Vec<u8>, pairs: &[(u16, u32)]) {
    head(out, pairs.len() * 6, SETTINGS, 0, 0);
    for (id, value) in pairs {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

pub fn settings_ack(out: &mut Vec<u8>) {
    head(out, 0, SETTINGS, ACK, 0);
}

pub fn window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    head(out, 4, WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&(increment & 0x7fff_ffff).to_be_bytes());
}

pub fn ping(out: &mut Vec<u8>, flags: u8, payload: &[u8; 8]) {
    head(out, 8, PING, flags, 0);
    out.extend_from_slice(payload);
}

/// What opens every connection: the preface, SETTINGS (the largest windows,
/// no push, large frames) and a connection WINDOW_UPDATE up to 2^31-1, so
/// the server never waits for this side's flow control.
pub fn client_start(out: &mut Vec<u8>) {
    out.extend_from_slice(PREFACE);
    settings(
        out,
        &[(SETTINGS_ENABLE_PUSH, 0), (SETTINGS_INITIAL_WINDOW_SIZE, MAX_WINDOW), (SETTINGS_MAX_FRAME_SIZE, MAX_FRAME)],
    );
    window_update(out, 0, MAX_WINDOW - 65_535);
}

/// One frame read, its payload with padding and priority fields removed.
#[derive(Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: &'a [u8],
    /// The payload's length on the wire (padding included): what DATA
    /// costs in flow control.
    pub wire_len: usize,
}

/// Splits the first complete frame off `buf`: the frame and the bytes it
/// took, or `None` when `buf` holds only part of one.
pub fn parse(buf: &[u8]) -> Result<Option<(Frame<'_>, usize)>, ProtocolError> {
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let len = (usize::from(buf[0]) << 16) | (usize::from(buf[1]) << 8) | usize::from(buf[2]);
    if len > MAX_FRAME as usize {
        return Err(ProtocolError("frame larger than SETTINGS_MAX_FRAME_SIZE"));
    }
    if buf.len() < HEADER_LEN + len {
        return Ok(None);
    }
    let kind = buf[3];
    let flags = buf[4];
    let stream = u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]) & 0x7fff_ffff;
    let mut payload = &buf[HEADER_LEN..HEADER_LEN + len];
    if matches!(kind, DATA | HEADERS | PUSH_PROMISE) && flags & PADDED != 0 {
        let pad = usize::from(*payload.first().ok_or(ProtocolError("padded frame without its pad length"))?);
        if pad >= payload.len() {
            return Err(ProtocolError("padding longer than the frame"));
        }
        payload = &payload[1..payload.len() - pad];
    }
    if kind == HEADERS && flags & PRIORITY != 0 {
        payload = payload.get(5..).ok_or(ProtocolError("HEADERS too short for its priority"))?;
    }
    Ok(Some((Frame { kind, flags, stream, payload, wire_len: len }, HEADER_LEN + len)))
}

/// A 32-bit big-endian field at `at`, or a protocol error naming the frame.
pub fn u32_at(payload: &[u8], at: usize, what: &'static str) -> Result<u32, ProtocolError> {
    payload.get(at..at + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]])).ok_or(ProtocolError(what))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        head(&mut out, payload.len(), kind, flags, stream);
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn encode_decode_round_trip() {
        let mut out = Vec::new();
        window_update(&mut out, 7, 1000);
        ping(&mut out, ACK, b"12345678");
        let (f, used) = parse(&out).unwrap().unwrap();
        assert_eq!((f.kind, f.stream, used), (WINDOW_UPDATE, 7, 13));
        assert_eq!(u32_at(f.payload, 0, "").unwrap(), 1000);
        let (f, used) = parse(&out[13..]).unwrap().unwrap();
        assert_eq!((f.kind, f.flags, f.payload, used), (PING, ACK, &b"12345678"[..], 17));
        let mut start = Vec::new();
        client_start(&mut start);
        let (f, _) = parse(&start[PREFACE.len()..]).unwrap().unwrap();
        assert_eq!((f.kind, f.payload.len()), (SETTINGS, 18));
    }

    #[test]
    fn a_frame_split_across_reads_waits_for_its_end() {
        let bytes = frame(DATA, END_STREAM, 1, b"hello world");
        for cut in 0..bytes.len() {
            assert_eq!(parse(&bytes[..cut]).unwrap(), None, "cut at {cut}");
        }
        let (f, used) = parse(&bytes).unwrap().unwrap();
        assert_eq!((f.payload, used), (&b"hello world"[..], bytes.len()));
    }

    #[test]
    fn padding_and_priority_are_removed_but_flow_control_counts_them() {
        let mut payload = vec![3u8];
        payload.extend_from_slice(b"body");
        payload.extend_from_slice(&[0, 0, 0]);
        let bytes = frame(DATA, PADDED, 1, &payload);
        let (f, _) = parse(&bytes).unwrap().unwrap();
        assert_eq!((f.payload, f.wire_len), (&b"body"[..], 8));
        let mut payload = vec![1u8, 0, 0, 0, 0, 16];
        payload.extend_from_slice(b"\x88");
        payload.push(0);
        let bytes = frame(HEADERS, PADDED | PRIORITY | END_HEADERS, 1, &payload);
        let (f, _) = parse(&bytes).unwrap().unwrap();
        assert_eq!(f.payload, b"\x88");
        assert!(parse(&frame(DATA, PADDED, 1, &[9, 1, 2])).is_err(), "padding past the end");
    }

    #[test]
    fn continuation_and_unknown_frames_parse_as_frames() {
        let mut bytes = frame(HEADERS, 0, 3, b"\x88");
        bytes.extend(frame(0xfa, 0, 0, b"whatever"));
        bytes.extend(frame(CONTINUATION, END_HEADERS, 3, b"\x5c\x01\x30"));
        let (a, n) = parse(&bytes).unwrap().unwrap();
        let (b, m) = parse(&bytes[n..]).unwrap().unwrap();
        let (c, _) = parse(&bytes[n + m..]).unwrap().unwrap();
        assert_eq!((a.kind, a.flags & END_HEADERS), (HEADERS, 0));
        assert_eq!((b.kind, b.payload), (0xfa, &b"whatever"[..]));
        assert_eq!((c.kind, c.flags, c.stream), (CONTINUATION, END_HEADERS, 3));
    }
}
