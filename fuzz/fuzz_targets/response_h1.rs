//! The HTTP/1.1 response framer (`stampede_load::response::ResponseParser`)
//! on arbitrary bytes, fed whole and split at points derived from the input.
//! Invariants: it never panics; it never claims more bytes than it was given;
//! it makes progress (consumes a byte, ends a response or errs) whenever it
//! is given any; and how the bytes are split across reads changes nothing:
//! the same statuses, `close` flags and error, in the same order.
//!
//! Input layout: byte 0 bit 0 = the request was HEAD; byte 1 seeds the split
//! points; the rest is what the server sent.

#![no_main]

use libfuzzer_sys::fuzz_target;
use stampede_load::response::{Done, ParseError, ResponseParser};

#[derive(Debug, PartialEq, Eq)]
enum Event {
    Response(Done),
    Error(ParseError),
    /// The connection closed and that ended a close-delimited response.
    Eof(Done),
}

/// Feeds `pieces` in order, as successive reads, then the server's close.
fn events(head: bool, pieces: &[&[u8]]) -> Vec<Event> {
    let mut parser = ResponseParser::new(head);
    let mut out = Vec::new();
    for piece in pieces {
        let mut buf = *piece;
        while !buf.is_empty() {
            match parser.feed(buf) {
                Ok((used, done)) => {
                    assert!(used <= buf.len(), "used {used} of {} bytes", buf.len());
                    assert!(used > 0 || done.is_some(), "no progress on {} bytes", buf.len());
                    if let Some(done) = done {
                        out.push(Event::Response(done));
                    }
                    buf = &buf[used..];
                }
                Err(err) => {
                    // A connection is dropped at its first parse error.
                    out.push(Event::Error(err));
                    return out;
                }
            }
        }
    }
    if let Some(done) = parser.eof() {
        out.push(Event::Eof(done));
    }
    out
}

/// Cuts `bytes` into pieces of 1 to 16 bytes (and a long one now and then)
/// chosen by a small generator seeded from the input.
fn split(bytes: &[u8], seed: u8) -> Vec<&[u8]> {
    let mut state = u32::from(seed) | 1;
    let mut pieces = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let len = if state % 8 == 0 { 64 + (state >> 8) as usize % 512 } else { 1 + (state >> 8) as usize % 16 };
        let (piece, tail) = rest.split_at(len.min(rest.len()));
        pieces.push(piece);
        rest = tail;
    }
    pieces
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let head = data[0] & 1 == 1;
    let bytes = &data[2..];
    let whole = events(head, &[bytes]);
    let split = events(head, &split(bytes, data[1]));
    assert_eq!(whole, split, "the same bytes split differently parse differently");
});
