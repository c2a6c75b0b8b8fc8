//! The request's HPACK header block, encoded once and sent as is.
//!
//! HPACK lets an encoder keep a dynamic table, which makes every block depend
//! on the ones before it. This encoder never uses it: pseudo-headers are
//! static-table indexes (or literals with an indexed name), every other
//! header a literal *without indexing*, and nothing is Huffman-coded. A block
//! is then the same bytes on every connection and every stream, so a
//! request is encoded once per distinct request (with a mix, once per
//! request sent, still without state) and sending it is a copy.

/// A request ready to send: its header block and its body.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub block: Vec<u8>,
    pub body: Vec<u8>,
}

/// Headers HTTP/2 forbids (RFC 9113 §8.2.2) or carries as a pseudo-header.
pub(crate) fn dropped(name: &str) -> bool {
    ["host", "connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
}

/// Encodes a request's header block into `out` (cleared first).
pub fn encode(out: &mut Vec<u8>, method: &str, https: bool, authority: &str, path: &str, headers: &[(String, String)]) {
    out.clear();
    match method {
        "GET" => out.push(0x80 | 2),
        "POST" => out.push(0x80 | 3),
        _ => literal_indexed_name(out, 2, method.as_bytes()),
    }
    out.push(0x80 | if https { 7 } else { 6 });
    match path {
        "/" => out.push(0x80 | 4),
        _ => literal_indexed_name(out, 4, path.as_bytes()),
    }
    literal_indexed_name(out, 1, authority.as_bytes());
    for (name, value) in headers.iter().filter(|(n, _)| !dropped(n)) {
        out.push(0);
        string(out, name.to_ascii_lowercase().as_bytes());
        string(out, value.as_bytes());
    }
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("user-agent")) {
        literal_indexed_name(out, 58, concat!("stampede/", env!("CARGO_PKG_VERSION")).as_bytes());
    }
}

/// A literal without indexing whose name is static-table entry `index`.
fn literal_indexed_name(out: &mut Vec<u8>, index: usize, value: &[u8]) {
    integer(out, index, 4, 0);
    string(out, value);
}

/// A string literal, not Huffman-coded.
fn string(out: &mut Vec<u8>, s: &[u8]) {
    integer(out, s.len(), 7, 0);
    out.extend_from_slice(s);
}

/// An HPACK integer with an `n`-bit prefix (RFC 7541 §5.1).
pub fn integer(out: &mut Vec<u8>, mut value: usize, n: u8, first: u8) {
    let max = (1usize << n) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    value -= max;
    while value >= 128 {
        out.push((value % 128 + 128) as u8);
        value /= 128;
    }
    out.push(value as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(block: &[u8]) -> Vec<(String, String)> {
        let mut decoder = loona_hpack::Decoder::new();
        let mut found = Vec::new();
        decoder
            .decode_with_cb(block, |n, v| {
                found.push((String::from_utf8_lossy(&n).into_owned(), String::from_utf8_lossy(&v).into_owned()))
            })
            .unwrap();
        found
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_prepared_block_decodes_to_the_request() {
        let mut out = Vec::new();
        let long = "x".repeat(300);
        let headers = pairs(&[("Host", "ignored"), ("X-Long", &long), ("Accept", "*/*"), ("Connection", "close")]);
        encode(&mut out, "PATCH", true, "example.test:8443", "/a/b?c=d", &headers);
        let ua = concat!("stampede/", env!("CARGO_PKG_VERSION"));
        let want = pairs(&[
            (":method", "PATCH"),
            (":scheme", "https"),
            (":path", "/a/b?c=d"),
            (":authority", "example.test:8443"),
            ("x-long", &long),
            ("accept", "*/*"),
            ("user-agent", ua),
        ]);
        assert_eq!(decoded(&out), want);
        encode(&mut out, "GET", false, "h", "/", &pairs(&[("User-Agent", "me")]));
        assert_eq!(
            decoded(&out),
            pairs(&[
                (":method", "GET"),
                (":scheme", "http"),
                (":path", "/"),
                (":authority", "h"),
                ("user-agent", "me")
            ])
        );
    }

    #[test]
    fn the_block_leaves_the_decoder_table_empty_so_it_can_be_repeated() {
        let mut out = Vec::new();
        encode(&mut out, "POST", false, "h", "/p", &pairs(&[("a", "b")]));
        let mut decoder = loona_hpack::Decoder::new();
        for _ in 0..3 {
            let mut n = 0;
            decoder.decode_with_cb(&out, |_, _| n += 1).unwrap();
            assert_eq!(n, 6);
        }
        // Without indexing: decoding it again gives the same, and nothing
        // was added for index 62 (the first dynamic entry) to name.
        assert!(decoder.decode(&[0x80 | 62]).is_err());
    }
}
