//! The request's QPACK header block (RFC 9204), encoded once, and the one
//! field the load engine reads back from a response's block: `:status`.
//!
//! QPACK, like HPACK, lets an encoder keep a dynamic table, fed through
//! encoder and decoder streams, which makes a block depend on what the peer
//! has acknowledged. This side uses none of it, as the HTTP/2 engine's
//! `http2::block` does: pseudo-headers are static-table entries (or literals with
//! a static name), every other header a literal, nothing Huffman-coded, and
//! the prefix says "no dynamic table". A block is then the same bytes on
//! every connection and stream, and sending a request is a copy. The client
//! advertises a dynamic table of zero bytes (the SETTINGS default), so a
//! server may not refer to one in its answers either: decoding `:status`
//! needs no state, no encoder or decoder stream, and a block that refers to
//! a dynamic table is the server's protocol error.

use crate::http2::block::{dropped, integer};
use crate::http2::hpack::integer as read_integer;
use loona_hpack::huffman::HuffmanDecoder;

/// Static-table indexes (RFC 9204 Appendix A).
const AUTHORITY: usize = 0;
const PATH_ROOT: usize = 1;
const PATH: usize = 1;
const METHOD_GET: usize = 17;
const METHOD_POST: usize = 20;
const METHOD_CONNECT: usize = 15;
const SCHEME_HTTP: usize = 22;
const USER_AGENT: usize = 95;

/// The `:status` entries of the static table and their codes.
const STATUS: [(usize, u16); 14] = [
    (24, 103),
    (25, 200),
    (26, 304),
    (27, 404),
    (28, 503),
    (63, 100),
    (64, 204),
    (65, 206),
    (66, 302),
    (67, 400),
    (68, 403),
    (69, 421),
    (70, 425),
    (71, 500),
];

/// Encodes a request's header block into `out` (cleared first).
pub fn encode(out: &mut Vec<u8>, method: &str, https: bool, authority: &str, path: &str, headers: &[(String, String)]) {
    out.clear();
    // Required Insert Count 0, Delta Base 0: no dynamic table.
    out.extend_from_slice(&[0, 0]);
    match method {
        "GET" => indexed(out, METHOD_GET),
        "POST" => indexed(out, METHOD_POST),
        _ => literal_static_name(out, METHOD_CONNECT, method.as_bytes()),
    }
    indexed(out, SCHEME_HTTP + usize::from(https));
    match path {
        "/" => indexed(out, PATH_ROOT),
        _ => literal_static_name(out, PATH, path.as_bytes()),
    }
    literal_static_name(out, AUTHORITY, authority.as_bytes());
    for (name, value) in headers.iter().filter(|(n, _)| !dropped(n)) {
        // Literal field line with a literal name, never indexed, no Huffman.
        integer(out, name.len(), 3, 0x20);
        out.extend(name.bytes().map(|b| b.to_ascii_lowercase()));
        integer(out, value.len(), 7, 0);
        out.extend_from_slice(value.as_bytes());
    }
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("user-agent")) {
        literal_static_name(out, USER_AGENT, concat!("stampede/", env!("CARGO_PKG_VERSION")).as_bytes());
    }
}

/// An indexed field line of the static table.
fn indexed(out: &mut Vec<u8>, index: usize) {
    integer(out, index, 6, 0xc0);
}

/// A literal field line whose name is static-table entry `index` (the
/// method entry of any method: only its name is used), value not Huffman-coded.
fn literal_static_name(out: &mut Vec<u8>, index: usize, value: &[u8]) {
    integer(out, index, 4, 0x50);
    integer(out, value.len(), 7, 0);
    out.extend_from_slice(value);
}

/// Why a response's header block could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum BadBlock {
    /// It refers to a dynamic table this side said it does not have.
    DynamicTable,
    /// Cut short, malformed, or without a `:status` first.
    Malformed,
}

/// The `:status` of a response header block. Pseudo-headers come first
/// (RFC 9114 §4.3), so only the first field line is read.
pub fn status(block: &[u8], huffman: &mut HuffmanDecoder) -> Result<u16, BadBlock> {
    let mut at = 0;
    let required_insert_count = read_integer(block, &mut at, 8).ok_or(BadBlock::Malformed)?;
    if required_insert_count != 0 {
        return Err(BadBlock::DynamicTable);
    }
    read_integer(block, &mut at, 7).ok_or(BadBlock::Malformed)?; // Delta Base
    let first = *block.get(at).ok_or(BadBlock::Malformed)?;
    let value = if first & 0x80 != 0 {
        // Indexed field line.
        if first & 0x40 == 0 {
            return Err(BadBlock::DynamicTable);
        }
        let index = read_integer(block, &mut at, 6).ok_or(BadBlock::Malformed)?;
        return STATUS.iter().find(|(i, _)| *i == index).map(|(_, s)| *s).ok_or(BadBlock::Malformed);
    } else if first & 0x40 != 0 {
        // Literal field line with a name reference.
        if first & 0x10 == 0 {
            return Err(BadBlock::DynamicTable);
        }
        let index = read_integer(block, &mut at, 4).ok_or(BadBlock::Malformed)?;
        if !STATUS.iter().any(|(i, _)| *i == index) {
            return Err(BadBlock::Malformed);
        }
        string(block, &mut at, 7, huffman)?
    } else if first & 0x20 != 0 {
        // Literal field line with a literal name.
        let name = string(block, &mut at, 3, huffman)?;
        if name != b":status" {
            return Err(BadBlock::Malformed);
        }
        string(block, &mut at, 7, huffman)?
    } else {
        // Post-base forms: dynamic table only.
        return Err(BadBlock::DynamicTable);
    };
    let code = std::str::from_utf8(&value).ok().and_then(|s| s.parse::<u16>().ok());
    code.filter(|c| (100..1000).contains(c)).ok_or(BadBlock::Malformed)
}

/// A string literal whose length has an `n`-bit prefix, the Huffman flag
/// the bit above it.
fn string(block: &[u8], at: &mut usize, n: u8, huffman: &mut HuffmanDecoder) -> Result<Vec<u8>, BadBlock> {
    let coded = block.get(*at).ok_or(BadBlock::Malformed)? & (1 << n) != 0;
    let len = read_integer(block, at, n).ok_or(BadBlock::Malformed)?;
    let raw = block.get(*at..at.checked_add(len).ok_or(BadBlock::Malformed)?).ok_or(BadBlock::Malformed)?;
    *at += len;
    match coded {
        true => huffman.decode(raw).map_err(|_| BadBlock::Malformed),
        false => Ok(raw.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_get_of_the_root_is_static_indexes_and_the_authority() {
        let mut out = Vec::new();
        encode(&mut out, "GET", true, "a:1", "/", &[("user-agent".into(), "x".into())]);
        assert_eq!(
            out,
            [
                0,
                0,
                0xc0 | 17,
                0xc0 | 23,
                0xc0 | 1,
                0x50,
                3,
                b'a',
                b':',
                b'1',
                0x27,
                3,
                b'u',
                b's',
                b'e',
                b'r',
                b'-',
                b'a',
                b'g',
                b'e',
                b'n',
                b't',
                1,
                b'x'
            ]
        );
    }

    #[test]
    fn other_methods_and_paths_are_literals_with_a_static_name() {
        let mut out = Vec::new();
        encode(&mut out, "PATCH", false, "h", "/p", &[("Host".into(), "dropped".into())]);
        assert_eq!(&out[..11], [0, 0, 0x5f, 0, 5, b'P', b'A', b'T', b'C', b'H', 0xc0 | 22]);
        assert_eq!(&out[11..15], [0x51, 2, b'/', b'p']);
        assert!(!out.windows(7).any(|w| w == b"dropped"));
    }

    #[test]
    fn status_is_read_from_every_stateless_representation() {
        let mut h = HuffmanDecoder::new();
        assert_eq!(status(&[0, 0, 0xc0 | 25], &mut h), Ok(200));
        // Index 63 fills the 6-bit prefix: a continuation byte follows.
        assert_eq!(status(&[0, 0, 0xff, 0x00, 0xc0 | 1], &mut h), Ok(100));
        // Literal with the static name of :status 200, value "418".
        assert_eq!(status(&[0, 0, 0x5f, 25 - 15, 3, b'4', b'1', b'8'], &mut h), Ok(418));
        // Huffman-coded "502" (RFC 7541 Appendix B: '5' 011011, '0' 00000, '2' 00010, no padding).
        assert_eq!(status(&[0, 0, 0x5f, 25 - 15, 0x82, 0x6c, 0x02], &mut h), Ok(502));
        // A 7-byte name fills the 3-bit prefix: a continuation byte follows.
        let mut literal = vec![0, 0, 0x27, 0x00];
        literal.extend_from_slice(b":status");
        literal.extend_from_slice(&[3, b'2', b'0', b'1']);
        assert_eq!(status(&literal, &mut h), Ok(201));
    }

    #[test]
    fn a_block_using_a_dynamic_table_is_refused() {
        let mut h = HuffmanDecoder::new();
        assert_eq!(status(&[1, 0, 0x80], &mut h), Err(BadBlock::DynamicTable));
        assert_eq!(status(&[0, 0, 0x80], &mut h), Err(BadBlock::DynamicTable));
        assert_eq!(status(&[0, 0, 0x10], &mut h), Err(BadBlock::DynamicTable));
        assert_eq!(status(&[0, 0], &mut h), Err(BadBlock::Malformed));
    }
}
