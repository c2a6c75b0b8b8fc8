//! Decoding compressed response bodies as they stream past, for the runs
//! that ask for compression (`Accept-Encoding`): the parser hands each body
//! slice to a [`BodyDecoder`], which counts the bytes it decodes to and drops
//! them, so the body is never held in memory. Plain runs never build one
//! and pay nothing. `flate2` (gzip, deflate) and `brotli-decompressor` (br)
//! do the decoding; only the counting sink is ours.

use std::io::Write;

pub use crate::core::encodings::Coding;

/// Counts what is written to it and keeps nothing.
#[derive(Debug, Default)]
pub struct Count(pub u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One body being decoded.
pub enum BodyDecoder {
    Gzip(flate2::write::GzDecoder<Count>),
    /// HTTP's `deflate` is the zlib format (RFC 9110 §8.4.1.2).
    Deflate(flate2::write::ZlibDecoder<Count>),
    Br(Box<brotli_decompressor::DecompressorWriter<Count>>),
    /// Identity or a coding not decoded: the body is its own size.
    Passthrough(Count),
    /// The stream broke: the rest of the body is skipped.
    Failed,
}

impl std::fmt::Debug for BodyDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BodyDecoder::Gzip(_) => "BodyDecoder::Gzip",
            BodyDecoder::Deflate(_) => "BodyDecoder::Deflate",
            BodyDecoder::Br(_) => "BodyDecoder::Br",
            BodyDecoder::Passthrough(_) => "BodyDecoder::Passthrough",
            BodyDecoder::Failed => "BodyDecoder::Failed",
        })
    }
}

impl BodyDecoder {
    pub fn new(coding: Coding) -> BodyDecoder {
        match coding {
            Coding::Gzip => BodyDecoder::Gzip(flate2::write::GzDecoder::new(Count(0))),
            Coding::Deflate => BodyDecoder::Deflate(flate2::write::ZlibDecoder::new(Count(0))),
            Coding::Br => BodyDecoder::Br(Box::new(brotli_decompressor::DecompressorWriter::new(Count(0), 4096))),
            Coding::Identity | Coding::Other => BodyDecoder::Passthrough(Count(0)),
        }
    }

    /// Feeds one slice of the body (framing already removed).
    pub fn feed(&mut self, bytes: &[u8]) {
        let ok = match self {
            BodyDecoder::Gzip(d) => d.write_all(bytes).is_ok(),
            BodyDecoder::Deflate(d) => d.write_all(bytes).is_ok(),
            BodyDecoder::Br(d) => d.write_all(bytes).is_ok(),
            BodyDecoder::Passthrough(c) => c.write_all(bytes).is_ok(),
            BodyDecoder::Failed => true,
        };
        if !ok {
            *self = BodyDecoder::Failed;
        }
    }

    /// The body ended: the decoded size, or `None` when it did not decode
    /// (corrupt, or cut short before the coding's own end).
    pub fn finish(self) -> Option<u64> {
        match self {
            BodyDecoder::Gzip(d) => d.finish().ok().map(|c| c.0),
            BodyDecoder::Deflate(d) => d.finish().ok().map(|c| c.0),
            BodyDecoder::Br(d) => d.into_inner().ok().map(|c| c.0),
            BodyDecoder::Passthrough(c) => Some(c.0),
            BodyDecoder::Failed => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    pub(crate) fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    fn decoded(coding: Coding, body: &[u8], step: usize) -> Option<u64> {
        let mut d = BodyDecoder::new(coding);
        body.chunks(step.max(1)).for_each(|c| d.feed(c));
        d.finish()
    }

    #[test]
    fn codings_are_read_case_insensitively_and_unknown_ones_are_other() {
        assert_eq!(Coding::of(b" GZip "), Coding::Gzip);
        assert_eq!(Coding::of(b"x-gzip"), Coding::Gzip);
        assert_eq!(Coding::of(b"br"), Coding::Br);
        assert_eq!(Coding::of(b""), Coding::Identity);
        assert_eq!(Coding::of(b"zstd"), Coding::Other);
        assert_eq!(Coding::of(b"gzip, br"), Coding::Other);
    }

    #[test]
    fn a_gzip_body_fed_in_any_slices_decodes_to_its_size() {
        let text = "hello, world ".repeat(500);
        let body = gzip(text.as_bytes());
        for step in [1, 7, 100, body.len()] {
            assert_eq!(decoded(Coding::Gzip, &body, step), Some(text.len() as u64), "step {step}");
        }
    }

    #[test]
    fn deflate_and_br_decode_too() {
        let text = b"{\"items\":[1,2,3,4,5,6,7,8,9]}".repeat(50);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&text).unwrap();
        assert_eq!(decoded(Coding::Deflate, &z.finish().unwrap(), 13), Some(text.len() as u64));
        // "hello" as one uncompressed brotli meta-block (RFC 7932), made by
        // the reference encoder (Python's `brotli.compress(b"hello")`).
        let br = [0x0b, 0x02, 0x80, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x03];
        assert_eq!(decoded(Coding::Br, &br, 2), Some(5));
    }

    #[test]
    fn a_truncated_or_corrupt_body_does_not_decode() {
        let body = gzip(&b"x".repeat(10_000));
        assert_eq!(decoded(Coding::Gzip, &body[..body.len() - 4], 64), None, "cut short");
        assert_eq!(decoded(Coding::Gzip, b"not gzip at all", 4), None, "not gzip");
    }

    #[test]
    fn identity_and_unknown_codings_count_the_body_as_it_is() {
        assert_eq!(decoded(Coding::Identity, b"plain", 2), Some(5));
        assert_eq!(decoded(Coding::Other, b"zstd?", 5), Some(5));
    }

    /// The parser with decoding on, fed `wire` in slices of `step`: the
    /// body each response reported.
    fn parsed(wire: &[u8], step: usize, decode: bool) -> Vec<Option<crate::core::encodings::Body>> {
        let mut p = crate::http1::response::ResponseParser::new(false).decoding(decode);
        let mut out = Vec::new();
        for piece in wire.chunks(step) {
            let mut off = 0;
            while off < piece.len() {
                let (used, done) = p.feed(&piece[off..]).unwrap();
                off += used;
                out.extend(done.map(|d| d.body));
            }
        }
        out.extend(p.eof().map(|d| d.body));
        out
    }

    fn body(coding: Coding, wire: u64, decoded: Option<u64>) -> Option<crate::core::encodings::Body> {
        Some(crate::core::encodings::Body { coding, wire, decoded })
    }

    #[test]
    fn the_parser_decodes_gzip_framed_by_length_by_chunks_or_by_the_close() {
        let text = "{\"n\":1}".repeat(300);
        let gz = gzip(text.as_bytes());
        let n = text.len() as u64;
        let (half, wire) = (gz.len() / 2, gz.len() as u64);
        let mut chunked = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for part in [&gz[..half], &gz[half..]] {
            chunked.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
            chunked.extend_from_slice(part);
            chunked.extend_from_slice(b"\r\n");
        }
        chunked.extend_from_slice(b"0\r\n\r\n");
        let mut length =
            format!("HTTP/1.1 200 OK\r\nContent-Encoding: GZIP\r\nContent-Length: {}\r\n\r\n", gz.len()).into_bytes();
        length.extend_from_slice(&gz);
        let mut close = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n".to_vec();
        close.extend_from_slice(&gz);
        for step in [1, 9, 4096] {
            assert_eq!(parsed(&chunked, step, true), [body(Coding::Gzip, wire, Some(n))], "chunked, step {step}");
            assert_eq!(parsed(&length, step, true), [body(Coding::Gzip, wire, Some(n))], "length, step {step}");
            assert_eq!(parsed(&close, step, true), [body(Coding::Gzip, wire, Some(n))], "close, step {step}");
        }
    }

    #[test]
    fn a_plain_answer_counts_as_identity_and_a_corrupt_one_as_undecodable() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nnope";
        assert_eq!(parsed(wire, 5, true), [body(Coding::Identity, 3, Some(3)), body(Coding::Gzip, 4, None)]);
    }

    #[test]
    fn without_decoding_no_body_is_reported_and_bodiless_answers_never_are() {
        let mut wire = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nnope".to_vec();
        assert_eq!(parsed(&wire, 3, false), [None]);
        wire = b"HTTP/1.1 204 No Content\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        assert_eq!(parsed(&wire, 3, true), [None]);
    }
}
