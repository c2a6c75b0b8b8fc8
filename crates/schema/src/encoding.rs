//! Compressed responses, counted: which `Content-Encoding` the server
//! answered with, how many body bytes crossed the wire and how many they
//! decoded to. HttpArena's `json-comp` and `static` profiles judge a
//! framework by its compressed answers, and a load generator that only
//! counts wire bytes cannot tell a server that compresses from one that
//! sends the same bytes uncompressed. `stampede load` fills this when a
//! request asks for compression (`Accept-Encoding`); docs/load.md
//! ("Compressed responses") says what is decoded.

use serde::{Deserialize, Serialize};

/// The responses of one content coding (`identity` for none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EncodingStats {
    /// As the server wrote it, lower-cased: `gzip`, `deflate`, `br`,
    /// `identity`, or the unknown value itself.
    pub coding: String,
    pub responses: u64,
    /// Body bytes as they crossed the wire (after de-chunking).
    pub wire_bytes: u64,
    /// What those bodies decoded to; equal to `wire_bytes` for `identity`,
    /// 0 for a coding Stampede does not decode.
    pub decoded_bytes: u64,
    /// Bodies that did not decode (a truncated or corrupt stream). They
    /// still count as responses by their status: the summary warns.
    pub undecodable: u64,
}

impl EncodingStats {
    /// Adds another tally's counts (the coding is kept).
    pub fn add(&mut self, other: &EncodingStats) {
        self.responses += other.responses;
        self.wire_bytes += other.wire_bytes;
        self.decoded_bytes += other.decoded_bytes;
        self.undecodable += other.undecodable;
    }

    /// Decoded bytes per wire byte (2.0 = the coding halved the body).
    pub fn ratio(&self) -> Option<f64> {
        (self.wire_bytes > 0 && self.decoded_bytes > 0).then(|| self.decoded_bytes as f64 / self.wire_bytes as f64)
    }
}

/// Several results' codings as one list (load hosts, threads): summed by
/// coding, in the order each coding first appears.
pub fn merge<'a>(lists: impl IntoIterator<Item = &'a [EncodingStats]>) -> Vec<EncodingStats> {
    let mut out: Vec<EncodingStats> = Vec::new();
    for e in lists.into_iter().flatten() {
        match out.iter_mut().find(|o| o.coding == e.coding) {
            Some(o) => o.add(e),
            None => out.push(e.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_is_decoded_over_wire_and_absent_without_either() {
        let gz =
            EncodingStats { coding: "gzip".into(), responses: 2, wire_bytes: 100, decoded_bytes: 400, undecodable: 0 };
        assert_eq!(gz.ratio(), Some(4.0));
        assert_eq!(EncodingStats { decoded_bytes: 0, ..gz.clone() }.ratio(), None);
        assert_eq!(EncodingStats { wire_bytes: 0, ..gz }.ratio(), None);
    }

    #[test]
    fn lists_merge_by_coding() {
        let e = |coding: &str, n| EncodingStats {
            coding: coding.into(),
            responses: n,
            wire_bytes: n,
            ..Default::default()
        };
        let merged = merge([&[e("gzip", 2), e("identity", 1)][..], &[e("identity", 3)][..], &[][..]]);
        assert_eq!(merged, [e("gzip", 2), e("identity", 4)]);
    }
}
