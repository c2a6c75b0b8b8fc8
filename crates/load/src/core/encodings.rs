//! What the HTTP/1.1 parser learns of compressed bodies (their coding, wire
//! and decoded sizes) and the per-thread tally of it, kept with the other
//! figures a loop records (recorder.rs) and reported as the
//! `content_encodings` of `stampede.load/1` (crates/schema/src/encoding.rs).

use stampede_schema::encoding::EncodingStats;

/// A response's content coding, as far as Stampede tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Coding {
    #[default]
    Identity,
    Gzip,
    Deflate,
    Br,
    /// Any other value (`zstd`, a list of codings, ...): counted, not decoded.
    Other,
}

impl Coding {
    pub const ALL: [Coding; 5] = [Coding::Identity, Coding::Gzip, Coding::Deflate, Coding::Br, Coding::Other];

    /// A `Content-Encoding` header value (RFC 9110 §8.4; case-insensitive).
    pub fn of(value: &[u8]) -> Coding {
        let v = value.trim_ascii();
        let is = |name: &[u8]| v.eq_ignore_ascii_case(name);
        if v.is_empty() || is(b"identity") {
            Coding::Identity
        } else if is(b"gzip") || is(b"x-gzip") {
            Coding::Gzip
        } else if is(b"deflate") {
            Coding::Deflate
        } else if is(b"br") {
            Coding::Br
        } else {
            Coding::Other
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Coding::Identity => "identity",
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Br => "br",
            Coding::Other => "other",
        }
    }
}

/// A response body as it crossed the wire and as it decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Body {
    pub coding: Coding,
    pub wire: u64,
    /// `None`: the body did not decode (corrupt or cut short).
    pub decoded: Option<u64>,
}

/// Responses by coding, for one loop's measured phase.
#[derive(Debug, Clone, Default)]
pub struct Encodings([EncodingStats; 5]);

impl Encodings {
    pub fn count(&mut self, body: Body) {
        let e = &mut self.0[body.coding as usize];
        e.responses += 1;
        e.wire_bytes += body.wire;
        match body.decoded {
            Some(n) if body.coding != Coding::Other => e.decoded_bytes += n,
            Some(_) => {}
            None => e.undecodable += 1,
        }
    }

    pub fn add(&mut self, other: &Encodings) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            a.add(b);
        }
    }

    /// The codings seen, named, in a fixed order (identity first).
    pub fn stats(&self) -> Vec<EncodingStats> {
        Coding::ALL
            .iter()
            .zip(&self.0)
            .filter(|(_, e)| e.responses > 0)
            .map(|(c, e)| EncodingStats { coding: c.name().into(), ..e.clone() })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_tallied_by_coding_and_unknown_codings_decode_to_nothing() {
        let mut a = Encodings::default();
        a.count(Body { coding: Coding::Gzip, wire: 10, decoded: Some(40) });
        a.count(Body { coding: Coding::Gzip, wire: 10, decoded: None });
        a.count(Body { coding: Coding::Other, wire: 7, decoded: Some(7) });
        let mut b = Encodings::default();
        b.count(Body { coding: Coding::Identity, wire: 5, decoded: Some(5) });
        b.add(&a);
        let stats = b.stats();
        let names: Vec<_> = stats.iter().map(|e| e.coding.as_str()).collect();
        assert_eq!(names, ["identity", "gzip", "other"]);
        assert_eq!(
            (stats[1].responses, stats[1].wire_bytes, stats[1].decoded_bytes, stats[1].undecodable),
            (2, 20, 40, 1)
        );
        assert_eq!(stats[2].decoded_bytes, 0);
        assert!(Encodings::default().stats().is_empty());
    }
}
