//! The entry point of the `chunked_check` fuzz target in `fuzz/`, compiled
//! only with the cargo feature `fuzzing`: the checker's chunked-body decoder
//! (`wire::decode_chunked`) fed a server's bytes read by read, as a socket
//! would deliver them, with no socket.

/// Decodes `wire` as a chunked body read in pieces of `read_len` bytes (at
/// least 1): the body's length, or why it was refused.
pub fn chunked_body(wire: &[u8], read_len: usize) -> Result<usize, String> {
    let mut pieces = wire.chunks(read_len.max(1));
    let mut buf = Vec::new();
    let body = crate::wire::decode_chunked(&mut buf, &mut |buf| {
        Ok(pieces.next().map_or(0, |p| {
            buf.extend_from_slice(p);
            p.len()
        }))
    });
    body.map(|b| b.len()).map_err(|e| e.to_string())
}
