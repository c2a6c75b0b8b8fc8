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

/// Largest head or chunk-size line accepted before the response is called malformed.
const MAX_HEAD_BYTES: usize = 64 * 1024;
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
}

/// A response that has been read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    pub status: u16,
    /// The server said it will close the connection after this response.
    pub close: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Fixed(u64),
    ChunkSize,
    ChunkData(u64),
    /// Bytes of the CRLF that ends a chunk's data still to skip.
    ChunkEnd(u8),
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
}

impl ResponseParser {
    pub fn new(head_request: bool) -> Self {
        ResponseParser { state: State::Head, pending: Vec::new(), status: 0, close: false, head_request }
    }

    /// True when no byte of a response has been seen yet.
    pub fn is_idle(&self) -> bool {
        self.state == State::Head && self.pending.is_empty()
    }

    /// The server closed the connection. A response framed by the close ends
    /// here; any other partial response is lost.
    pub fn eof(&mut self) -> Option<Done> {
        if self.state == State::UntilClose {
            self.state = State::Head;
            Some(Done { status: self.status, close: true })
        } else {
            None
        }
    }

    pub fn reset(&mut self) {
        self.state = State::Head;
        self.pending.clear();
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
                    used += take as usize;
                    self.state = if take == left { State::ChunkEnd(2) } else { State::ChunkData(left - take) };
                }
                State::ChunkEnd(left) => {
                    let take = (left as usize).min(rest.len());
                    used += take;
                    self.state = if take == left as usize { State::ChunkSize } else { State::ChunkEnd(left - take as u8) };
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
                State::UntilClose => used = buf.len(),
            }
        }
        Ok((used, None))
    }

    fn finish(&mut self) -> Done {
        self.state = State::Head;
        Done { status: self.status, close: self.close }
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
            self.carry(buf)?;
            let joined = std::mem::take(&mut self.pending);
            let parsed = self.parse_head(&joined);
            self.pending = joined;
            match parsed? {
                Some(len) => {
                    self.pending.clear();
                    Ok((len - carried, true))
                }
                None => Ok((buf.len(), false)),
            }
        }
    }

    fn carry(&mut self, bytes: &[u8]) -> Result<(), ParseError> {
        if self.pending.len() + bytes.len() > MAX_HEAD_BYTES {
            return Err(ParseError::HeadTooLarge);
        }
        self.pending.extend_from_slice(bytes);
        Ok(())
    }

    /// Reads a chunk-size line, which may be split across reads. Returns the
    /// bytes of `buf` consumed and the size once the line is complete.
    fn feed_chunk_size(&mut self, buf: &[u8]) -> Result<(usize, Option<u64>), ParseError> {
        let carried = self.pending.len();
        if carried > 0 {
            self.carry(buf)?;
        }
        let line: &[u8] = if carried > 0 { &self.pending } else { buf };
        match httparse::parse_chunk_size(line) {
            Ok(httparse::Status::Complete((end, size))) => {
                self.pending.clear();
                Ok((end - carried, Some(size)))
            }
            Ok(httparse::Status::Partial) => {
                if carried == 0 {
                    self.carry(buf)?;
                }
                Ok((buf.len(), None))
            }
            Err(_) => Err(ParseError::ChunkSize),
        }
    }

    /// Returns the head's length when complete, and sets up body framing.
    fn parse_head(&mut self, bytes: &[u8]) -> Result<Option<usize>, ParseError> {
        // Left uninitialised: zeroing 64 headers (2 KiB) for every response
        // was a fifth of the parser's time; httparse fills what it uses.
        let mut headers = [const { std::mem::MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut []);
        let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut resp, bytes, &mut headers) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(e) => return Err(ParseError::Head(e.to_string())),
        };
        let status = resp.code.unwrap_or(0);
        let mut close = resp.version == Some(0);
        let mut length: Option<u64> = None;
        let mut chunked = false;
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                let v = std::str::from_utf8(h.value).map_err(|_| ParseError::ContentLength)?;
                length = Some(v.trim().parse().map_err(|_| ParseError::ContentLength)?);
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = ends_with_chunked(h.value);
            } else if h.name.eq_ignore_ascii_case("connection") {
                if contains_token(h.value, b"close") {
                    close = true;
                } else if contains_token(h.value, b"keep-alive") {
                    close = false;
                }
            }
        }
        self.status = status;
        self.close = close;
        self.state = if (100..200).contains(&status) {
            // An interim response: the real one follows on the same request.
            State::Head
        } else if self.head_request || status == 204 || status == 304 {
            State::Fixed(0)
        } else if chunked {
            State::ChunkSize
        } else if let Some(n) = length {
            State::Fixed(n)
        } else {
            self.close = true;
            State::UntilClose
        };
        Ok(Some(len))
    }
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
        assert_eq!(got, [Done { status: 200, close: true }]);
        let got = feed_all(b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 100);
        assert!(got[0].close);
    }

    #[test]
    fn body_until_close_ends_at_eof() {
        let mut p = ResponseParser::new(false);
        let (_, done) = p.feed(b"HTTP/1.1 200 OK\r\n\r\nsome body").unwrap();
        assert_eq!(done, None);
        assert_eq!(p.eof(), Some(Done { status: 200, close: true }));
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
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            Err(ParseError::ChunkSize)
        );
        let mut p = ResponseParser::new(false);
        let huge = vec![b'a'; MAX_HEAD_BYTES + 1];
        assert!(p.feed(b"HTTP/1.1 200 OK\r\nX: ").is_ok());
        assert_eq!(p.feed(&huge), Err(ParseError::HeadTooLarge));
    }
}
