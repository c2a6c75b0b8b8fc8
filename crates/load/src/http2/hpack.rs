//! Response header blocks for the HPACK decoder, with their Huffman strings
//! already decoded.
//!
//! `loona-hpack` keeps the dynamic table (so this side stays in sync with the
//! server), but builds a Huffman decoding table for every Huffman-coded
//! string it meets: most of the generator's CPU on nginx's answers, whose
//! `server`, `date` and `content-type` values are Huffman literals added to
//! the table on every response. So each block is first rewritten with those
//! strings as raw literals, decoded by one Huffman decoder kept per
//! connection and remembered (a server repeats the same few strings), and
//! the rewritten block, same representations and same table effects, goes
//! to the crate's decoder.

use loona_hpack::huffman::HuffmanDecoder;

pub struct Decoder {
    inner: loona_hpack::Decoder<'static>,
    huffman: HuffmanDecoder,
    /// Huffman strings seen lately, encoded and decoded.
    seen: Vec<(Vec<u8>, Vec<u8>)>,
    raw: Vec<u8>,
}

const SEEN: usize = 32;

impl Decoder {
    pub fn new() -> Decoder {
        Decoder {
            inner: loona_hpack::Decoder::new(),
            huffman: HuffmanDecoder::new(),
            seen: Vec::new(),
            raw: Vec::new(),
        }
    }

    /// Decodes a block; its `:status`, or 0 without one.
    #[cfg(test)]
    pub fn status(&mut self, block: &[u8]) -> Result<u16, ()> {
        self.head(block).map(|h| h.status)
    }

    /// Decodes a block: what it says of the answer.
    pub fn head(&mut self, block: &[u8]) -> Result<Head, ()> {
        let mut raw = std::mem::take(&mut self.raw);
        raw.clear();
        let rewritten = self.rewrite(block, &mut raw);
        let mut head = Head::default();
        let decoded = match rewritten {
            Some(()) => self.inner.decode_with_cb(&raw, |n, v| check(&n, &v, &mut head)),
            // Malformed: the crate's decoder says how, on the original.
            None => self.inner.decode_with_cb(block, |n, v| check(&n, &v, &mut head)),
        };
        self.raw = raw;
        decoded.map(|_| head).map_err(|_| ())
    }

    fn rewrite(&mut self, block: &[u8], out: &mut Vec<u8>) -> Option<()> {
        let mut at = 0;
        while at < block.len() {
            let start = at;
            let b = block[at];
            let strings = if b & 0x80 != 0 {
                integer(block, &mut at, 7)?;
                0
            } else if b & 0xc0 == 0x40 {
                usize::from(integer(block, &mut at, 6)? == 0) + 1
            } else if b & 0xe0 == 0x20 {
                integer(block, &mut at, 5)?;
                0
            } else {
                usize::from(integer(block, &mut at, 4)? == 0) + 1
            };
            out.extend_from_slice(&block[start..at]);
            for _ in 0..strings {
                let huffman = *block.get(at)? & 0x80 != 0;
                let len = integer(block, &mut at, 7)?;
                let bytes = block.get(at..at.checked_add(len)?)?;
                at += len;
                if !huffman {
                    crate::http2::block::integer(out, len, 7, 0);
                    out.extend_from_slice(bytes);
                    continue;
                }
                let known = self.seen.iter().position(|(e, _)| e == bytes);
                let i = match known {
                    Some(i) => i,
                    None => {
                        let decoded = self.huffman.decode(bytes).ok()?;
                        if self.seen.len() == SEEN {
                            self.seen.remove(0);
                        }
                        self.seen.push((bytes.to_vec(), decoded));
                        self.seen.len() - 1
                    }
                };
                let decoded = &self.seen[i].1;
                crate::http2::block::integer(out, decoded.len(), 7, 0);
                out.extend_from_slice(decoded);
            }
        }
        Some(())
    }
}

/// What a response header block says: its `:status` (0 without one, as in
/// trailers), and for gRPC its `grpc-status` and whether its content-type
/// is gRPC's.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Head {
    pub status: u16,
    pub grpc_status: Option<stampede_grpc::Code>,
    pub grpc_type: bool,
}

fn check(name: &[u8], value: &[u8], head: &mut Head) {
    match name {
        b":status" => head.status = std::str::from_utf8(value).ok().and_then(|s| s.parse().ok()).unwrap_or(0),
        b"grpc-status" => head.grpc_status = stampede_grpc::parse_status(value),
        b"content-type" => head.grpc_type = stampede_grpc::is_grpc_content_type(value),
        _ => {}
    }
}

/// An HPACK integer with an `n`-bit prefix at `at` (RFC 7541 §5.1).
pub(crate) fn integer(block: &[u8], at: &mut usize, n: u8) -> Option<usize> {
    let max = (1usize << n) - 1;
    let mut value = usize::from(*block.get(*at)?) & max;
    *at += 1;
    if value < max {
        return Some(value);
    }
    let mut shift = 0u32;
    loop {
        let b = *block.get(*at)?;
        *at += 1;
        value = value.checked_add(usize::from(b & 0x7f).checked_shl(shift)?)?;
        if b & 0x80 == 0 {
            return Some(value);
        }
        shift += 7;
        if shift > 28 {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huffman_strings_and_the_dynamic_table_decode_as_the_crate_does() {
        // :status 200; server: nginx Huffman-coded with incremental indexing
        // (as nginx sends it); then a block that refers to that entry (62)
        // and a literal 404 status, twice so the remembered string is used.
        let first = b"\x88\x76\x84\xaa\x63\x55\xe7";
        let second = b"\xbe\x08\x03404";
        let mut ours = Decoder::new();
        let mut theirs = loona_hpack::Decoder::new();
        for block in [&first[..], &second[..], &first[..], &second[..]] {
            let mut head = Head::default();
            theirs.decode_with_cb(block, |n, v| check(&n, &v, &mut head)).unwrap();
            assert_eq!(ours.status(block), Ok(head.status));
        }
        assert_eq!(theirs.decode(b"\xbe").unwrap()[0], (b"server".to_vec(), b"nginx".to_vec()));
        assert_eq!(ours.inner.decode(b"\xbe").unwrap()[0], (b"server".to_vec(), b"nginx".to_vec()));
        assert!(ours.status(b"\x88\x76\x8f\xff").is_err(), "a bad Huffman string is an error");
    }
}
