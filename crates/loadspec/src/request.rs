//! How an HTTP/1.1 request is put on the wire, once for every caller: the
//! single request of a plain run and every expansion of a request mix are
//! encoded here, so the two can never differ in a header.

/// The request's bytes: request line, `Host` and `User-Agent` unless given,
/// the headers, then the body: framed as one chunk when the headers say
/// `Transfer-Encoding: chunked` (RFC 9112 §7.1; HttpArena's chunked POSTs),
/// else with a `Content-Length` unless one is given.
pub fn encode(method: &str, path: &str, host_header: &str, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut req = format!("{method} {path} HTTP/1.1\r\n");
    let has = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    if !has("host") {
        req.push_str(&format!("Host: {host_header}\r\n"));
    }
    if !has("user-agent") {
        req.push_str(concat!("User-Agent: stampede/", env!("CARGO_PKG_VERSION"), "\r\n"));
    }
    for (name, value) in headers {
        req.push_str(&format!("{name}: {value}\r\n"));
    }
    let chunked = headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && is_chunked(v));
    if !body.is_empty() && !chunked && !has("content-length") {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    let mut bytes = req.into_bytes();
    if chunked {
        if !body.is_empty() {
            bytes.extend_from_slice(format!("{:x}\r\n", body.len()).as_bytes());
            bytes.extend_from_slice(body);
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(b"0\r\n\r\n");
    } else {
        bytes.extend_from_slice(body);
    }
    bytes
}

/// A `Transfer-Encoding` value whose final coding is chunked.
fn is_chunked(value: &str) -> bool {
    value.rsplit(',').next().is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_body_gets_a_content_length_by_default() {
        let req = encode("POST", "/sum", "h", &[], b"20");
        assert!(req.ends_with(b"Content-Length: 2\r\n\r\n20"), "{}", String::from_utf8_lossy(&req));
    }

    #[test]
    fn transfer_encoding_chunked_frames_the_body_as_one_chunk_and_the_last_chunk() {
        let req = encode("POST", "/sum", "h", &headers(&[("Transfer-Encoding", "chunked")]), b"hello, world!!!!!");
        let text = String::from_utf8(req).unwrap();
        assert!(!text.to_ascii_lowercase().contains("content-length"), "{text}");
        assert!(text.ends_with("Transfer-Encoding: chunked\r\n\r\n11\r\nhello, world!!!!!\r\n0\r\n\r\n"), "{text}");
    }

    #[test]
    fn an_empty_chunked_body_is_the_last_chunk_alone_and_other_codings_are_not_chunked() {
        let empty = encode("POST", "/", "h", &headers(&[("transfer-encoding", "gzip, Chunked")]), b"");
        assert!(empty.ends_with(b"\r\n\r\n0\r\n\r\n"));
        let gzip_only = encode("POST", "/", "h", &headers(&[("Transfer-Encoding", "gzip")]), b"ab");
        assert!(gzip_only.ends_with(b"Content-Length: 2\r\n\r\nab"));
    }
}
