//! The arenas' endpoints for the contract test server (contract.rs): HttpArena's
//! HTTP/1.1 profiles (`/baseline11`, `/pipeline`, `/json/{count}?m=`,
//! `/upload`) and the-benchmarker's three routes, with request bodies read by
//! Content-Length or chunked encoding, and gzip when asked. Each arena fault
//! (a cached answer, a chunked body ignored, a body read in one `read`,
//! compression nobody asked for, …) is one branch here, so a faulty server
//! differs from the correct one exactly where its name says.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;

use crate::contract::Fault;

/// One answer: status, media type, body, extra header lines, and whether the
/// connection closes after it.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub headers: Vec<String>,
    pub close: bool,
}

impl Reply {
    fn ok(content_type: &'static str, body: impl Into<Vec<u8>>) -> Reply {
        Reply { status: 200, content_type, body: body.into(), headers: Vec::new(), close: false }
    }

    fn not_found() -> Reply {
        Reply { status: 404, ..Reply::ok("text/plain", "not found") }
    }
}

/// A request's body as the server read it.
pub struct Body {
    pub bytes: Vec<u8>,
    pub chunked: bool,
    /// Fewer bytes than the framing said (read once, [`Fault::ReadsBodyOnce`]).
    pub short: bool,
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Reads the body `head` announces from `buf` and then `stream`; `None` when
/// the client went away.
pub fn read_body(head: &str, buf: &mut Vec<u8>, stream: &mut TcpStream, fault: Fault) -> Option<Body> {
    let mut more = |buf: &mut Vec<u8>| -> Option<()> {
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => None,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                Some(())
            }
        }
    };
    if header(head, "transfer-encoding").is_some_and(|te| te.eq_ignore_ascii_case("chunked")) {
        let mut bytes = Vec::new();
        loop {
            let line_end = loop {
                match buf.windows(2).position(|w| w == b"\r\n") {
                    Some(end) => break end,
                    None => more(buf)?,
                }
            };
            let size = usize::from_str_radix(std::str::from_utf8(&buf[..line_end]).ok()?.trim(), 16).ok()?;
            buf.drain(..line_end + 2);
            while buf.len() < size + 2 {
                more(buf)?;
            }
            bytes.extend_from_slice(&buf[..size]);
            buf.drain(..size + 2);
            if size == 0 {
                return Some(Body { bytes, chunked: true, short: false });
            }
        }
    }
    let length: usize = header(head, "content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
    if fault == Fault::ReadsBodyOnce && buf.len() < length {
        more(buf)?;
        let got = buf.len().min(length);
        return Some(Body { bytes: buf.drain(..got).collect(), chunked: false, short: got < length });
    }
    while buf.len() < length {
        more(buf)?;
    }
    Some(Body { bytes: buf.drain(..length).collect(), chunked: false, short: false })
}

/// A dataset item the way HttpArena's `/data/dataset.json` has them.
fn item(i: u64) -> (u64, u64) {
    (10 + (i * 37) % 490, 1 + (i * 13) % 99)
}

/// HttpArena's HTTP/1.1 endpoints.
pub fn route_httparena(head: &str, body: &Body, fault: Fault, cache: &Mutex<HashMap<String, Vec<u8>>>) -> Reply {
    let mut words = head.split(' ');
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or("/"));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let param = |name: &str| {
        query.split('&').filter_map(|p| p.split_once('=')).find(|(k, _)| *k == name).and_then(|(_, v)| v.parse().ok())
    };
    let mut reply = match (method, path) {
        (_, "/baseline11") => {
            let mut sum: i64 = param("a").unwrap_or(0) + param("b").unwrap_or(0);
            let ignored = fault == Fault::ChunkedBodyIgnored && body.chunked;
            if !ignored {
                sum += String::from_utf8_lossy(&body.bytes).trim().parse::<i64>().unwrap_or(0);
            }
            let mut text = sum.to_string().into_bytes();
            if fault == Fault::CachedAnswer && method == "POST" {
                let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
                text = cache.entry(target.to_string()).or_insert(text).clone();
            }
            Reply::ok("text/plain", text)
        }
        ("GET", "/pipeline") => Reply::ok("text/plain", "ok"),
        ("GET", p) if p.starts_with("/json/") => {
            let Some(count) = p["/json/".len()..].parse::<u64>().ok().filter(|c| (1..=50).contains(c)) else {
                return Reply::not_found();
            };
            let m: u64 = param("m").map_or(1, |m: i64| m as u64);
            let items: Vec<String> = (1..=count)
                .map(|i| {
                    let (price, quantity) = item(i);
                    format!(r#"{{"id":{i},"price":{price},"quantity":{quantity},"total":{}}}"#, price * quantity * m)
                })
                .collect();
            let json = format!(r#"{{"items":[{}],"count":{count}}}"#, items.join(","));
            let asked = header(head, "accept-encoding").is_some_and(|a| a.contains("gzip"));
            if asked || fault == Fault::CompressesUnasked {
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                gz.write_all(json.as_bytes()).expect("gzip into memory");
                Reply {
                    headers: vec!["Content-Encoding: gzip".into()],
                    ..Reply::ok("application/json", gz.finish().expect("gzip into memory"))
                }
            } else {
                Reply::ok("application/json", json)
            }
        }
        ("POST", "/upload") => Reply::ok("text/plain", body.bytes.len().to_string()),
        _ => Reply::not_found(),
    };
    if fault == Fault::TrailingNewline && reply.status == 200 && path == "/baseline11" {
        reply.body.push(b'\n');
    }
    // A server that read a short body cannot find the next request.
    reply.close = body.short;
    reply
}

/// the-benchmarker's routes: `GET /`, `GET /user/:id`, `POST /user`.
pub fn route_web_frameworks(head: &str, fault: Fault) -> Reply {
    let mut words = head.split(' ');
    match (words.next().unwrap_or(""), words.next().unwrap_or("/")) {
        ("GET", "/") => Reply::ok("text/plain", ""),
        ("GET", p) if p.starts_with("/user/") && fault == Fault::FixedUserId => Reply::ok("text/plain", "0"),
        ("GET", p) if p.starts_with("/user/") => Reply::ok("text/plain", &p["/user/".len()..]),
        ("POST", "/user") if fault == Fault::Created201 => Reply { status: 201, ..Reply::ok("text/plain", "") },
        ("POST", "/user") => Reply::ok("text/plain", ""),
        _ => Reply::not_found(),
    }
}
