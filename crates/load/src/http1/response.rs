//! Frames HTTP/1.1 responses on a keep-alive connection: finds where each one
//! ends (Content-Length, chunked transfer encoding, or the server's close) and
//! drains the body without keeping it.
//!
//! The head is parsed with `httparse` straight from the reader's buffer; only a
//! head or chunk-size line split across two reads is copied, into a small
//! per-connection buffer. The chunked framing is written here rather than taken
//! from a client library because those decode the body into memory, and a load
//! generator has no use for the body: skipping it is what keeps the cost per
//! request flat whatever the response size.

use thiserror::Error;

use super::decode::BodyDecoder;
use crate::core::encodings::{Body, Coding};

pub use stampede_spec::limits::MAX_HEAD_BYTES;
const MAX_HEADERS: usize = 64;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ParseError {
    #[error("malformed response head: {0}")]
    Head(String),
    #[error("response head larger than {MAX_HEAD_BYTES} bytes")]
    HeadTooLarge,
    #[error("malformed chunk size line")]
    ChunkSize,
    #[error("invalid Content-Length")]
    ContentLength,
    #[error("Content-Length and Transfer-Encoding together")]
    LengthAndChunked,
    #[error("status code outside 100-599")]
    Status,
    #[error("chunk data not followed by CRLF")]
    ChunkEnd,
}

/// A response that has been read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    pub status: u16,
    /// The server said it will close the connection after this response.
    pub close: bool,
    /// With decoding on ([`ResponseParser::decoding`]): the body's coding and sizes.
    pub body: Option<Body>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Fixed(u64),
    ChunkSize,
    ChunkData(u64),
    /// The line end after a chunk's data: `true` once its CR was seen.
    ChunkEnd(bool),
    /// After the last chunk: trailer lines up to an empty line. The count is
    /// the length of the current line so far (excluding CR).
    Trailer(u32),
    UntilClose,
}

#[derive(Debug)]
pub struct ResponseParser {
    state: State,
    pending: Vec<u8>,
    status: u16,
    close: bool,
    /// The request was HEAD: responses carry no body whatever their headers say.
    head_request: bool,
    /// Bodies are decoded and counted (the run asked for compression).
    decode: bool,
    /// While a body is read with decoding on: its coding, wire bytes, decoder.
    coding: Coding,
    wire: u64,
    decoder: Option<BodyDecoder>,
}

impl ResponseParser {
    pub fn new(head_request: bool) -> Self {
        ResponseParser {
            state: State::Head,
            pending: Vec::new(),
            status: 0,
            close: false,
            head_request,
            decode: false,
            coding: Coding::Identity,
            wire: 0,
            decoder: None,
        }
    }

    /// Decodes every body by its `Content-Encoding` and reports its sizes in
    /// [`Done::body`]; off, bodies are skipped unread (the default).
    pub fn decoding(mut self, on: bool) -> Self {
        self.decode = on;
        self
    }

    /// True when no byte of a response has been seen yet.
    pub fn is_idle(&self) -> bool {
        self.state == State::Head && self.pending.is_empty()
    }

    /// The server closed the connection. A response framed by the close ends
    /// here; any other partial response is lost.
    pub fn eof(&mut self) -> Option<Done> {
        if self.state == State::UntilClose {
            self.close = true;
            Some(self.finish())
        } else {
            None
        }
    }

    pub fn reset(&mut self) {
        self.state = State::Head;
        self.pending.clear();
        self.decoder = None;
    }

    /// Consumes bytes of `buf` up to the end of at most one response. Returns
    /// the bytes consumed and the response if it ended; bytes after it belong
    /// to the next response.
    pub fn feed(&mut self, buf: &[u8]) -> Result<(usize, Option<Done>), ParseError> {
        let mut used = 0;
        while used < buf.len() {
            let rest = &buf[used..];
            match self.state {
                State::Head => {
                    let (n, complete) = self.feed_head(rest)?;
                    used += n;
                    if complete {
                        if let Some(done) = self.finish_if_bodiless() {
                            return Ok((used, Some(done)));
                        }
                    }
                }
                State::Fixed(left) => {
                    let take = left.min(rest.len() as u64);
                    self.body(&rest[..take as usize]);
                    used += take as usize;
                    if take == left {
                        return Ok((used, Some(self.finish())));
                    }
                    self.state = State::Fixed(left - take);
                }
                State::ChunkSize => {
                    let (n, size) = self.feed_chunk_size(rest)?;
                    used += n;
                    match size {
                        Some(0) => self.state = State::Trailer(0),
                        Some(size) => self.state = State::ChunkData(size),
                        None => {}
                    }
                }
                State::ChunkData(left) => {
                    let take = left.min(rest.len() as u64);
                    self.body(&rest[..take as usize]);
                    used += take as usize;
                    self.state = if take == left { State::ChunkEnd(false) } else { State::ChunkData(left - take) };
                }
                State::ChunkEnd(cr) => {
                    // RFC 9112 §7.1: chunk data ends with CRLF (a bare LF is
                    // allowed by §2.2); anything else is a framing error, not
                    // the start of the next chunk.
                    used += 1;
                    self.state = match (cr, rest[0]) {
                        (false, b'\r') => State::ChunkEnd(true),
                        (_, b'\n') => State::ChunkSize,
                        _ => return Err(ParseError::ChunkEnd),
                    };
                }
                State::Trailer(mut line) => {
                    for (i, &b) in rest.iter().enumerate() {
                        match b {
                            b'\n' if line == 0 => {
                                used += i + 1;
                                return Ok((used, Some(self.finish())));
                            }
                            b'\n' => line = 0,
                            b'\r' => {}
                            _ => line += 1,
                        }
                    }
                    used = buf.len();
                    self.state = State::Trailer(line);
                }
                State::UntilClose => {
                    self.body(rest);
                    used = buf.len();
                }
            }
        }
        Ok((used, None))
    }

    fn finish(&mut self) -> Done {
        self.state = State::Head;
        let body = self.decoder.take().map(|d| Body { coding: self.coding, wire: self.wire, decoded: d.finish() });
        Done { status: self.status, close: self.close, body }
    }

    /// A slice of the body, framing removed: decoded when decoding is on.
    fn body(&mut self, bytes: &[u8]) {
        if let Some(decoder) = &mut self.decoder {
            self.wire += bytes.len() as u64;
            decoder.feed(bytes);
        }
    }

    fn finish_if_bodiless(&mut self) -> Option<Done> {
        match self.state {
            State::Fixed(0) => Some(self.finish()),
            _ => None,
        }
    }

    /// Parses the head from `buf` (or from the carried-over part plus `buf`).
    /// Returns the bytes of `buf` consumed and whether the head is complete.
    fn feed_head(&mut self, buf: &[u8]) -> Result<(usize, bool), ParseError> {
        let carried = self.pending.len();
        if carried == 0 {
            match self.parse_head(buf)? {
                Some(len) => Ok((len, true)),
                None => {
                    self.carry(buf)?;
                    Ok((buf.len(), false))
                }
            }
        } else {
            // Only what can still belong to the head is joined: the rest of a
            // large read is body (or the next response), not head.
            let take = self.carry_upto(buf);
            let joined = std::mem::take(&mut self.pending);
            let parsed = self.parse_head(&joined);
            self.pending = joined;
            match parsed? {
                Some(len) => {
                    self.pending.clear();
                    Ok((len - carried, true))
                }
                None if self.pending.len() >= MAX_HEAD_BYTES => Err(ParseError::HeadTooLarge),
                None => Ok((take, false)),
            }
        }
    }

    /// Starts carrying a partial head or chunk-size line over to the next read.
    fn carry(&mut self, bytes: &[u8]) -> Result<(), ParseError> {
        if self.carry_upto(bytes) < bytes.len() {
            return Err(ParseError::HeadTooLarge);
        }
        Ok(())
    }

    /// Appends as much of `bytes` as the head limit leaves room for; returns
    /// how much.
    fn carry_upto(&mut self, bytes: &[u8]) -> usize {
        let take = bytes.len().min(MAX_HEAD_BYTES - self.pending.len().min(MAX_HEAD_BYTES));
        self.pending.extend_from_slice(&bytes[..take]);
        take
    }

    /// Reads a chunk-size line, which may be split across reads. Returns the
    /// bytes of `buf` consumed and the size once the line is complete.
    fn feed_chunk_size(&mut self, buf: &[u8]) -> Result<(usize, Option<u64>), ParseError> {
        let carried = self.pending.len();
        // As for a head: join only what can still be part of the line.
        let take = if carried > 0 { self.carry_upto(buf) } else { buf.len() };
        let line: &[u8] = if carried > 0 { &self.pending } else { buf };
        match httparse::parse_chunk_size(line) {
            Ok(httparse::Status::Complete((end, size))) => {
                self.pending.clear();
                Ok((end - carried, Some(size)))
            }
            Ok(httparse::Status::Partial) if carried == 0 => {
                self.carry(buf)?;
                Ok((buf.len(), None))
            }
            Ok(httparse::Status::Partial) if self.pending.len() >= MAX_HEAD_BYTES => Err(ParseError::HeadTooLarge),
            Ok(httparse::Status::Partial) => Ok((take, None)),
            Err(_) => Err(ParseError::ChunkSize),
        }
    }

    /// Returns the head's length when complete, and sets up body framing.
    fn parse_head(&mut self, bytes: &[u8]) -> Result<Option<usize>, ParseError> {
        // Left uninitialised: zeroing 64 headers (2 KiB) for every response
        // was a fifth of the parser's time; httparse fills what it uses.
        let mut headers = [const { std::mem::MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut []);
        let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
            &mut resp,
            bytes,
            &mut headers,
        ) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(e) => return Err(ParseError::Head(e.to_string())),
        };
        let status = resp.code.unwrap_or(0);
        if !(100..=599).contains(&status) {
            return Err(ParseError::Status);
        }
        let mut close = resp.version == Some(0);
        let mut length: Option<u64> = None;
        // The last Transfer-Encoding header's final coding decides (RFC 9112 §6.3).
        let mut encoding: Option<bool> = None;
        let mut coding = Coding::Identity;
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                let n = content_length(h.value)?;
                if length.is_some_and(|l| l != n) {
                    return Err(ParseError::ContentLength);
                }
                length = Some(n);
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                encoding = Some(ends_with_chunked(h.value));
            } else if self.decode && h.name.eq_ignore_ascii_case("content-encoding") {
                coding = Coding::of(h.value);
            } else if h.name.eq_ignore_ascii_case("connection") {
                if contains_token(h.value, b"close") {
                    close = true;
                } else if contains_token(h.value, b"keep-alive") {
                    close = false;
                }
            }
        }
        let bodiless = self.head_request || status == 204 || status == 304 || (100..200).contains(&status);
        if encoding.is_some() && length.is_some() && !bodiless {
            // RFC 9112 §6.3: "ought to be handled as an error" (smuggling).
            return Err(ParseError::LengthAndChunked);
        }
        self.status = status;
        self.close = close;
        self.state = if (100..200).contains(&status) {
            // An interim response: the real one follows on the same request.
            State::Head
        } else if bodiless {
            State::Fixed(0)
        } else if encoding == Some(true) {
            State::ChunkSize
        } else if encoding == Some(false) {
            // A final coding other than chunked: the body ends at the close.
            self.close = true;
            State::UntilClose
        } else if let Some(n) = length {
            State::Fixed(n)
        } else {
            self.close = true;
            State::UntilClose
        };
        if self.decode && !matches!(self.state, State::Head | State::Fixed(0)) {
            (self.coding, self.wire, self.decoder) = (coding, 0, Some(BodyDecoder::new(coding)));
        }
        Ok(Some(len))
    }
}

/// A Content-Length value: digits only (RFC 9112 §6.3; no sign, no
/// spaces inside), or a list of one repeated value.
fn content_length(value: &[u8]) -> Result<u64, ParseError> {
    let mut n = None;
    for part in value.split(|&b| b == b',') {
        let part = part.trim_ascii();
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) || part.len() > 19 {
            return Err(ParseError::ContentLength);
        }
        let v: u64 = std::str::from_utf8(part).ok().and_then(|p| p.parse().ok()).ok_or(ParseError::ContentLength)?;
        if n.is_some_and(|n| n != v) {
            return Err(ParseError::ContentLength);
        }
        n = Some(v);
    }
    n.ok_or(ParseError::ContentLength)
}

fn ends_with_chunked(value: &[u8]) -> bool {
    let last = value.rsplit(|&b| b == b',').next().unwrap_or(value);
    last.trim_ascii().eq_ignore_ascii_case(b"chunked")
}

fn contains_token(value: &[u8], token: &[u8]) -> bool {
    value.split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `wire` in pieces of `step` bytes and returns every response seen.
    fn feed_all(wire: &[u8], step: usize) -> Vec<Done> {
        let mut p = ResponseParser::new(false);
        let mut out = Vec::new();
        for piece in wire.chunks(step) {
            let mut off = 0;
            while off < piece.len() {
                let (n, done) = p.feed(&piece[off..]).unwrap();
                off += n;
                out.extend(done);
            }
        }
        out
    }

    const FIXED: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!";
    const CHUNKED: &[u8] =
        b"HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n8;ext=1\r\n, World!\r\n0\r\nX-T: 1\r\n\r\n";

    #[test]
    fn frames_back_to_back_responses_whatever_the_read_sizes() {
        let mut wire = Vec::new();
        for _ in 0..3 {
            wire.extend_from_slice(FIXED);
            wire.extend_from_slice(CHUNKED);
        }
        for step in [1, 2, 3, 7, 16, 64, wire.len()] {
            let got = feed_all(&wire, step);
            let statuses: Vec<u16> = got.iter().map(|d| d.status).collect();
            assert_eq!(statuses, [200, 500, 200, 500, 200, 500], "step {step}");
        }
    }

    #[test]
    fn connection_close_and_http10_are_reported() {
        let got = feed_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", 5);
        assert_eq!(got, [Done { status: 200, close: true, body: None }]);
        let got = feed_all(b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 100);
        assert!(got[0].close);
    }

    #[test]
    fn body_until_close_ends_at_eof() {
        let mut p = ResponseParser::new(false);
        let (_, done) = p.feed(b"HTTP/1.1 200 OK\r\n\r\nsome body").unwrap();
        assert_eq!(done, None);
        assert_eq!(p.eof(), Some(Done { status: 200, close: true, body: None }));
    }

    #[test]
    fn interim_and_bodiless_responses() {
        let got = feed_all(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n", 4);
        assert_eq!(got.iter().map(|d| d.status).collect::<Vec<_>>(), [204]);
        let mut p = ResponseParser::new(true);
        let (n, done) = p.feed(FIXED).unwrap();
        assert_eq!(done.unwrap().status, 200);
        assert_eq!(n, FIXED.len() - 13, "a HEAD response has no body");
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        let mut p = ResponseParser::new(false);
        assert!(p.feed(b"NOT HTTP AT ALL\r\n\r\n").is_err());
        let mut p = ResponseParser::new(false);
        assert_eq!(p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"), Err(ParseError::ContentLength));
        let mut p = ResponseParser::new(false);
        assert_eq!(p.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), Err(ParseError::ChunkSize));
        let mut p = ResponseParser::new(false);
        let huge = vec![b'a'; MAX_HEAD_BYTES + 1];
        assert!(p.feed(b"HTTP/1.1 200 OK\r\nX: ").is_ok());
        assert_eq!(p.feed(&huge), Err(ParseError::HeadTooLarge));
    }

    /// Regression: a head split across two reads, the second of which also
    /// fills a 64 KiB buffer with body, was called too large (issue 20 #2).
    #[test]
    fn a_split_head_followed_by_a_full_buffer_of_body_is_one_response() {
        let body = vec![b'x'; 200_000];
        let mut wire = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
        wire.extend_from_slice(&body);
        let mut p = ResponseParser::new(false);
        let (first, rest) = wire.split_at(10);
        assert_eq!(p.feed(first).unwrap(), (10, None));
        let mut done = None;
        for piece in rest.chunks(64 * 1024) {
            let mut off = 0;
            while off < piece.len() {
                let (n, d) = p.feed(&piece[off..]).unwrap();
                off += n;
                done = done.or(d);
            }
        }
        assert_eq!(done, Some(Done { status: 200, close: false, body: None }));
        // The same for a chunk-size line split across reads.
        let mut wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3".to_vec();
        let cut = wire.len();
        wire.extend_from_slice(b"0d40\r\n");
        wire.extend_from_slice(&vec![b'y'; 0x30d40]);
        wire.extend_from_slice(b"\r\n0\r\n\r\n");
        let mut p = ResponseParser::new(false);
        let (n, _) = p.feed(&wire[..cut]).unwrap();
        assert_eq!(n, cut);
        let mut off = cut;
        let mut done = None;
        while off < wire.len() {
            let end = (off + 64 * 1024).min(wire.len());
            let (n, d) = p.feed(&wire[off..end]).unwrap();
            off += n;
            done = done.or(d);
        }
        assert_eq!(done.map(|d| d.status), Some(200));
    }

    /// RFC 9112: what makes a message invalid is a parse error, never a response.
    #[test]
    fn invalid_framing_is_refused() {
        let cases: [(&[u8], ParseError); 7] = [
            (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc", ParseError::ContentLength),
            (b"HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nabc", ParseError::ContentLength),
            (b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nab", ParseError::ContentLength),
            (b"HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\nab", ParseError::ContentLength),
            (b"HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n", ParseError::Status),
            (b"HTTP/1.1 999 Nine\r\nContent-Length: 0\r\n\r\n", ParseError::Status),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
                ParseError::LengthAndChunked,
            ),
        ];
        for (wire, want) in cases {
            let mut p = ResponseParser::new(false);
            assert_eq!(p.feed(wire).map(|(_, d)| d), Err(want), "{}", String::from_utf8_lossy(wire));
        }
        let mut p = ResponseParser::new(false);
        let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n";
        assert_eq!(p.feed(wire), Err(ParseError::ChunkEnd));
        // Repeated identical lengths are one length; a bare LF after chunk data is allowed.
        let got = feed_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab", 3);
        assert_eq!(got.len(), 1);
        let got = feed_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\n0\r\n\r\n", 1);
        assert_eq!(got.len(), 1);
        // A final coding other than chunked: the body runs to the close.
        let mut p = ResponseParser::new(false);
        assert_eq!(p.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzzz").unwrap().1, None);
        assert_eq!(p.eof(), Some(Done { status: 200, close: true, body: None }));
    }
}
