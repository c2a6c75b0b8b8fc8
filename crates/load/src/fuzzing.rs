//! Entry points for the fuzz targets in `fuzz/` at the root of the
//! repository, compiled only with the cargo feature `fuzzing`. The HTTP/1.1
//! target needs nothing here (`response::ResponseParser` is public); the
//! HTTP/2 one needs a connection's protocol state (`http2::session`, with the
//! settings and the prepared request the runs use) fed the server's bytes
//! the way the HTTP/2 loop feeds them: read by read, frames split anywhere;
//! the HTTP/3 one a request stream's response reader (`h3_frame`) fed the
//! same way.

use crate::http2::session::{Ended, Session, Slot};
use std::time::Instant;

/// How one fuzzed exchange ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exchange {
    /// A response with this status, read to its end.
    Response { status: u16 },
    /// The server reset the stream, or sent GOAWAY before processing it.
    Refused,
    /// The server broke HTTP/2 (the connection would be closed).
    Failed,
    /// The bytes ran out before the response ended.
    Unfinished,
}

/// Opens a connection's session, sends one GET on it, and feeds it
/// `server_bytes` (after a valid server preface) in reads of `read_len`
/// bytes (at least 1). Never blocks: the bytes are all the server says.
pub fn h2_exchange(server_bytes: &[u8], read_len: usize) -> Exchange {
    // Carrying gRPC: the session also reads grpc-status and counts
    // length-prefixed messages, which changes no outcome, so the fuzzer
    // drives that reading too.
    let mut session = Session::carrying(true);
    let mut block = Vec::new();
    crate::http2::block::encode(&mut block, "GET", false, "fuzz.invalid", "/", &[]);
    let bodies = vec![Vec::new()];
    let now = Instant::now();
    session.open(&block, &bodies, 0, Slot::new(now, now, None));
    let mut ended = Vec::new();
    // SETTINGS, no parameters, stream 0: the server's connection preface.
    let mut input = vec![0, 0, 0, 4, 0, 0, 0, 0, 0];
    input.extend_from_slice(server_bytes);
    for read in input.chunks(read_len.max(1)) {
        if session.receive(read, &bodies, &mut ended).is_err() {
            return Exchange::Failed;
        }
        if let Some((_, how)) = ended.pop() {
            return match how {
                Ended::Response(status) => Exchange::Response { status },
                Ended::Reset | Ended::Unprocessed => Exchange::Refused,
            };
        }
    }
    Exchange::Unfinished
}

/// Feeds `stream_bytes` to one HTTP/3 request stream's response reader in
/// reads of `read_len` bytes (at least 1), then ends the stream.
pub fn h3_exchange(stream_bytes: &[u8], read_len: usize) -> Exchange {
    let mut response = crate::http3::frame::Response::default();
    let mut huffman = loona_hpack::huffman::HuffmanDecoder::new();
    for read in stream_bytes.chunks(read_len.max(1)) {
        if response.feed(read, &mut huffman).is_err() {
            return Exchange::Failed;
        }
    }
    match response.finish() {
        Ok(status) => Exchange::Response { status },
        Err(_) => Exchange::Unfinished,
    }
}
