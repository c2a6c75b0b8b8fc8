//! HTTP/3 framing (RFC 9114 §7) as the load engine needs it: a request's
//! HEADERS (and DATA) frames prepared once, the client's control stream,
//! and a response parser that reads a request stream's frames as they
//! arrive, keeping only the `:status` and counting nothing else.
//!
//! Written here rather than taken from the `h3` crate for the same reason as
//! the HTTP/2 engine's framing: `h3` is built on async streams and owns the
//! connection's tasks, which would put a runtime between the thread's event
//! loop and its sockets; the frames a load generator sends and reads are
//! few and fixed.

use crate::http3::qpack::{self as h3_qpack, BadBlock};
use loona_hpack::huffman::HuffmanDecoder;

/// Frame types (RFC 9114 §7.2).
const DATA: u64 = 0x00;
const HEADERS: u64 = 0x01;
const SETTINGS: u64 = 0x04;
const GOAWAY: u64 = 0x07;
/// Frames a request stream may not carry: CANCEL_PUSH, SETTINGS,
/// PUSH_PROMISE (no push was allowed), GOAWAY, MAX_PUSH_ID.
const NOT_ON_A_REQUEST: [u64; 5] = [0x03, SETTINGS, 0x05, GOAWAY, 0x0d];
/// The stream type of a control stream (RFC 9114 §6.2.1).
const CONTROL: u64 = 0x00;
/// The most bytes an item read across reads can span: a frame header (two
/// varints) or a GOAWAY's payload (one).
const MAX_ITEM: usize = 16;
/// The largest response header block read (a status line needs a few bytes).
const MAX_BLOCK: u64 = crate::http1::response::MAX_HEAD_BYTES as u64;
/// H3_REQUEST_REJECTED: the server did not process the request (RFC 9114 §8.1).
pub const REQUEST_REJECTED: u64 = 0x10b;
/// H3_REQUEST_CANCELLED: this side gives up on a request (a timeout).
pub const REQUEST_CANCELLED: u64 = 0x10c;

/// A QUIC variable-length integer (RFC 9000 §16).
pub fn varint(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=63 => out.push(v as u8),
        64..=16_383 => out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
        16_384..=1_073_741_823 => out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes()),
        _ => out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

/// Reads a variable-length integer at the start of `b`: the value and its
/// length, or `None` if `b` is too short.
fn read_varint(b: &[u8]) -> Option<(u64, usize)> {
    let len = 1usize << (b.first()? >> 6);
    let bytes = b.get(..len)?;
    let v = bytes[1..].iter().fold(u64::from(bytes[0] & 0x3f), |v, &x| (v << 8) | u64::from(x));
    Some((v, len))
}

/// A request's frames: HEADERS with `block`, then DATA with `body` if any.
pub fn request(out: &mut Vec<u8>, block: &[u8], body: &[u8]) {
    out.clear();
    varint(out, HEADERS);
    varint(out, block.len() as u64);
    out.extend_from_slice(block);
    if !body.is_empty() {
        varint(out, DATA);
        varint(out, body.len() as u64);
        out.extend_from_slice(body);
    }
}

/// The client's control stream: its type, then SETTINGS with none set, so
/// the defaults hold: no dynamic QPACK table, no blocked streams.
pub const CONTROL_STREAM: [u8; 3] = [0x00, SETTINGS as u8, 0];

/// Why a response could not be read: a protocol error of the server.
#[derive(Debug, PartialEq, Eq)]
pub enum BadResponse {
    Block(BadBlock),
    /// A frame a request stream may not carry, or one too large.
    Frame(u64),
    /// The stream ended before a final status.
    NoStatus,
}

/// Reads one response's frames as they arrive on its request stream.
#[derive(Default)]
pub struct Response {
    /// The final status, once its HEADERS frame is read.
    status: Option<u16>,
    /// The start of a frame header split across reads.
    head: Vec<u8>,
    /// Payload bytes of the current frame still to come.
    left: u64,
    /// The current frame is HEADERS (kept in `block`), else skipped.
    in_headers: bool,
    block: Vec<u8>,
}

impl Response {
    /// Takes the next bytes of the stream.
    pub fn feed(&mut self, mut data: &[u8], huffman: &mut HuffmanDecoder) -> Result<(), BadResponse> {
        while !data.is_empty() {
            if self.left > 0 {
                let n = (self.left.min(data.len() as u64)) as usize;
                if self.in_headers {
                    self.block.extend_from_slice(&data[..n]);
                }
                self.left -= n as u64;
                data = &data[n..];
                if self.left == 0 && self.in_headers {
                    self.headers_done(huffman)?;
                }
                continue;
            }
            // A frame header: type and length, each a varint (at most 16 bytes).
            let (kind, len, used) = match self.head.is_empty() {
                true => match frame_header(data) {
                    Some(h) => h,
                    None => {
                        self.head.extend_from_slice(data);
                        return Ok(());
                    }
                },
                false => {
                    let had = self.head.len();
                    let take = data.len().min(16 - had.min(16));
                    self.head.extend_from_slice(&data[..take]);
                    match frame_header(&self.head) {
                        Some((kind, len, used)) => (kind, len, used - had),
                        None if take == data.len() => return Ok(()),
                        None => return Err(BadResponse::Frame(u64::MAX)),
                    }
                }
            };
            self.head.clear();
            data = &data[used..];
            self.start_frame(kind, len, huffman)?;
        }
        Ok(())
    }

    fn start_frame(&mut self, kind: u64, len: u64, huffman: &mut HuffmanDecoder) -> Result<(), BadResponse> {
        if NOT_ON_A_REQUEST.contains(&kind) {
            return Err(BadResponse::Frame(kind));
        }
        self.left = len;
        self.in_headers = kind == HEADERS;
        if self.in_headers {
            // Trailers follow the final status: skipped like any other frame.
            if self.status.is_some() || len > MAX_BLOCK {
                self.in_headers = false;
                return if len > MAX_BLOCK { Err(BadResponse::Frame(kind)) } else { Ok(()) };
            }
            self.block.clear();
            if len == 0 {
                return self.headers_done(huffman);
            }
        }
        Ok(())
    }

    fn headers_done(&mut self, huffman: &mut HuffmanDecoder) -> Result<(), BadResponse> {
        self.in_headers = false;
        let status = h3_qpack::status(&self.block, huffman).map_err(BadResponse::Block)?;
        // An interim (1xx) response is followed by the final one.
        if status >= 200 {
            self.status = Some(status);
        }
        Ok(())
    }

    /// The stream has ended: the final status, if the response was whole.
    pub fn finish(&self) -> Result<u16, BadResponse> {
        match (self.status, self.left, self.head.is_empty()) {
            (Some(status), 0, true) => Ok(status),
            _ => Err(BadResponse::NoStatus),
        }
    }
}

/// Reads one of the server's unidirectional streams for the GOAWAY its
/// control stream may carry (RFC 9114 §5.2): the stream's type, then the
/// control stream's frames, each skipped but GOAWAY. The other streams
/// (QPACK's, and types this side does not know) are dropped unread. At most
/// [`MAX_ITEM`] bytes are kept whatever the server sends, so a control
/// stream without end costs no memory.
#[derive(Default)]
pub struct ServerStream {
    /// The start of an item split across reads.
    kept: Vec<u8>,
    /// The stream's type, once read.
    kind: Option<u64>,
    /// Payload bytes of the current frame still to skip.
    skip: u64,
    /// The current frame is a GOAWAY whose payload is this long.
    goaway: Option<usize>,
}

impl ServerStream {
    /// A reader that drops whatever comes (a stream already found malformed).
    pub fn ignoring() -> ServerStream {
        ServerStream { kind: Some(u64::MAX), ..ServerStream::default() }
    }

    /// Takes the next bytes of the stream: the stream id of the last GOAWAY
    /// read in them, if any (a server may send several, each lower). A
    /// malformed control stream is an error; the caller drops the rest.
    pub fn feed(&mut self, mut data: &[u8]) -> Result<Option<u64>, BadResponse> {
        let mut last = None;
        while !data.is_empty() {
            match self.kind {
                None => {
                    let Some((kind, used)) = split_item(&mut self.kept, data, read_varint) else { break };
                    self.kind = Some(kind);
                    data = &data[used..];
                }
                Some(CONTROL) if self.skip > 0 => {
                    let n = self.skip.min(data.len() as u64) as usize;
                    self.skip -= n as u64;
                    data = &data[n..];
                }
                Some(CONTROL) => match self.goaway {
                    Some(len) => {
                        let payload = |b: &[u8]| (b.len() >= len).then(|| (read_varint(&b[..len]), len));
                        let Some((id, used)) = split_item(&mut self.kept, data, payload) else { break };
                        match id {
                            Some((id, n)) if n == len => last = Some(id),
                            _ => return Err(BadResponse::Frame(GOAWAY)),
                        }
                        self.goaway = None;
                        data = &data[used..];
                    }
                    None => {
                        let Some(((kind, len), used)) =
                            split_item(&mut self.kept, data, |b| frame_header(b).map(|(k, l, n)| ((k, l), n)))
                        else {
                            break;
                        };
                        data = &data[used..];
                        match kind {
                            GOAWAY if (1..=8).contains(&len) => self.goaway = Some(len as usize),
                            GOAWAY => return Err(BadResponse::Frame(GOAWAY)),
                            _ => self.skip = len,
                        }
                    }
                },
                Some(_) => break,
            }
        }
        Ok(last)
    }
}

/// An item (`parse` gives it and the bytes it spans) that may start in
/// bytes kept from earlier reads: the item and how many bytes of `data` it
/// used, or `None` when `data` ends first (its start is kept then). Never
/// keeps more than [`MAX_ITEM`] bytes.
fn split_item<T>(kept: &mut Vec<u8>, data: &[u8], parse: impl Fn(&[u8]) -> Option<(T, usize)>) -> Option<(T, usize)> {
    let had = kept.len();
    let take = data.len().min(MAX_ITEM.saturating_sub(had));
    kept.extend_from_slice(&data[..take]);
    let (item, used) = parse(kept)?;
    kept.clear();
    Some((item, used - had))
}

/// A frame header at the start of `b`: type, payload length, bytes used.
fn frame_header(b: &[u8]) -> Option<(u64, u64, usize)> {
    let (kind, a) = read_varint(b)?;
    let (len, c) = read_varint(&b[a..])?;
    Some((kind, len, a + c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(frames: &[u8], split: usize) -> Result<u16, BadResponse> {
        let mut r = Response::default();
        let mut h = HuffmanDecoder::new();
        for chunk in frames.chunks(split) {
            r.feed(chunk, &mut h)?;
        }
        r.finish()
    }

    #[test]
    fn varints_round_trip_at_every_length() {
        for v in [0, 63, 64, 16_383, 16_384, 1_073_741_823, 1_073_741_824, (1 << 62) - 1] {
            let mut out = Vec::new();
            varint(&mut out, v);
            assert_eq!(read_varint(&out), Some((v, out.len())));
        }
    }

    #[test]
    fn a_response_split_anywhere_gives_its_status() {
        let mut frames = Vec::new();
        request(&mut frames, &[0, 0, 0xc0 | 25], &[7u8; 300]);
        // An interim response first, then trailers after the body.
        let mut all = vec![0x01, 4, 0, 0, 0xff, 0x00]; // :status 100 (static index 63)
        all.extend_from_slice(&frames);
        all.extend_from_slice(&[0x21, 2, 9, 9, 0x01, 2, 0, 0]);
        for split in [1, 2, 3, 5, 64, 1000] {
            assert_eq!(whole(&all, split), Ok(200), "split {split}");
        }
    }

    /// A control stream: its type, SETTINGS, an unknown frame, then GOAWAY
    /// (stream 8, a two-byte varint), and a second GOAWAY (stream 4).
    fn control_stream() -> Vec<u8> {
        let mut c = vec![0x00, 0x04, 2, 0x01, 0x40];
        c.extend_from_slice(&[0x21, 3, 1, 2, 3]);
        c.extend_from_slice(&[0x07, 2, 0x40, 8, 0x07, 1, 4]);
        c
    }

    #[test]
    fn a_goaway_on_the_control_stream_is_read_however_the_stream_is_split() {
        let all = control_stream();
        for split in 1..all.len() {
            let mut s = ServerStream::default();
            let mut ids = Vec::new();
            for chunk in all.chunks(split) {
                ids.extend(s.feed(chunk).unwrap());
            }
            // The GOAWAYs end at bytes 13 and 16: a read holding both
            // ends says the last, the lower.
            let both_in_one = 13 / split == 16 / split;
            assert_eq!(ids, if both_in_one { vec![4] } else { vec![8, 4] }, "split {split}");
        }
    }

    #[test]
    fn other_streams_and_endless_frames_keep_nothing() {
        // A QPACK encoder stream (type 2) carrying what looks like a GOAWAY.
        let mut s = ServerStream::default();
        assert_eq!(s.feed(&[0x02, 0x07, 1, 4]), Ok(None));
        // A control stream whose frame claims 1 GB, fed 1 MB: skipped.
        let mut s = ServerStream::default();
        assert_eq!(s.feed(&[0x00, 0x21, 0xbf, 0xff, 0xff, 0xff]), Ok(None));
        for _ in 0..16 {
            assert_eq!(s.feed(&[0u8; 64 * 1024]), Ok(None));
        }
        assert!(s.kept.len() <= MAX_ITEM);
        // A GOAWAY whose payload is not one varint.
        assert_eq!(ServerStream::default().feed(&[0x00, 0x07, 9]), Err(BadResponse::Frame(GOAWAY)));
        assert_eq!(ServerStream::default().feed(&[0x00, 0x07, 2, 4, 0]), Err(BadResponse::Frame(GOAWAY)));
    }

    #[test]
    fn a_stream_cut_short_or_carrying_a_forbidden_frame_is_an_error() {
        let mut frames = Vec::new();
        request(&mut frames, &[0, 0, 0xc0 | 25], &[7u8; 30]);
        assert_eq!(whole(&frames[..frames.len() - 1], 4), Err(BadResponse::NoStatus));
        assert_eq!(whole(&[0x00, 1, 0], 4), Err(BadResponse::NoStatus));
        assert_eq!(whole(&[0x04, 0], 4), Err(BadResponse::Frame(0x04)));
        assert_eq!(whole(&[0x01, 3, 0, 0, 0x80], 4), Err(BadResponse::Block(BadBlock::DynamicTable)));
    }
}
