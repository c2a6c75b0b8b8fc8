//! How an HTTP/1.1 request is put on the wire, once for every caller: the
//! single request of a plain run and every expansion of a request mix are
//! encoded here, so the two can never differ in a header.

/// The request's bytes: request line, `Host` and `User-Agent` unless given,
/// the headers, `Content-Length` for a body, then the body.
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
    if !body.is_empty() && !has("content-length") {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    let mut bytes = req.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}
