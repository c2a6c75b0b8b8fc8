//! Answers computed from the request that was sent, for rules whose request
//! changes per check (random numbers, random bytes): the sum of the integers
//! in the query and body (HttpArena's `/baseline11`), the body's length
//! (`/upload`), the body echoed, the path's last segment (the-benchmarker's
//! `/user/:id`), or a JSON list of items whose totals follow from the query
//! (HttpArena's `/json/{count}?m=`). Also the response's `Content-Encoding`:
//! a compressed answer is decoded before it is judged, and a rule may demand
//! a coding (asked for with `Accept-Encoding`) or none at all.

use std::io::Read;

use serde_json::Value;

use stampede_contract::{Answer, Leniency};

use crate::client::Response;
use crate::lenience::Lenience;
use crate::request::Prepared;

/// What an [`Answer`] expects of one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    Exact(Vec<u8>),
    Items { count: u64, m: f64 },
}

/// The answer `request` calls for; `Err` when the request does not hold
/// what this answer reads (a contract mistake, shown as the rule's failure).
pub fn expected(answer: Answer, request: &Prepared) -> Result<Expected, String> {
    let (path, query) = request.path.split_once('?').unwrap_or((&request.path, ""));
    let last = path.rsplit('/').next().unwrap_or_default();
    Ok(match answer {
        Answer::Sum => {
            let mut sum: i128 = query_values(query).filter_map(|(_, v)| v.parse::<i64>().ok()).map(i128::from).sum();
            if !request.body.is_empty() {
                let text = String::from_utf8_lossy(&request.body);
                let n: i64 =
                    text.trim().parse().map_err(|_| format!("the request body {text:?} is not an integer to sum"))?;
                sum += i128::from(n);
            }
            Expected::Exact(sum.to_string().into_bytes())
        }
        Answer::Length => Expected::Exact(request.body.len().to_string().into_bytes()),
        Answer::Echo => Expected::Exact(request.body.clone()),
        Answer::LastSegment => Expected::Exact(last.as_bytes().to_vec()),
        Answer::ItemTotals => {
            let count = last.parse().map_err(|_| format!("the path {path:?} does not end in a count"))?;
            let m = match query_values(query).find(|(k, _)| *k == "m") {
                Some((_, v)) => v.parse().map_err(|_| format!("m={v:?} is not a number"))?,
                None => 1.0,
            };
            Expected::Items { count, m }
        }
    })
}

fn query_values(query: &str) -> impl Iterator<Item = (&str, &str)> {
    query.split('&').filter_map(|pair| pair.split_once('='))
}

/// HttpArena's json check: `count` is the count asked, every item has a
/// `total` equal to `price * quantity * m` (compared exactly, as its Python
/// does). Items beyond or short of `count` are a departure it does not
/// check (`item-count`).
pub fn item_totals(body: &[u8], count: u64, m: f64, lenience: &mut Lenience) -> Result<(), String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("body is not JSON: {e}"))?;
    let got = value.get("count").ok_or("no \"count\" key")?;
    if got.as_u64() != Some(count) {
        return Err(format!("\"count\" is {got}, expected {count}"));
    }
    let items = value.get("items").and_then(Value::as_array).ok_or("no \"items\" array")?;
    if items.is_empty() {
        return Err("\"items\" is empty".into());
    }
    for (i, item) in items.iter().enumerate() {
        let number =
            |key: &str| item.get(key).and_then(Value::as_f64).ok_or(format!("items[{i}] has no number {key:?}"));
        let want = number("price")? * number("quantity")? * m;
        let total = number("total")?;
        if total != want {
            return Err(format!("items[{i}].total is {total}, expected price × quantity × {m} = {want}"));
        }
    }
    if items.len() as u64 != count
        && !lenience.allow(Leniency::ItemCount, || format!("{} items for count {count}", items.len()))
    {
        return Err(format!("{} items, expected {count}", items.len()));
    }
    Ok(())
}

/// Largest decoded body, as for a plain one.
const MAX_DECODED_BYTES: u64 = crate::wire::MAX_BODY_BYTES as u64;

/// The body with its `Content-Encoding` undone, after checking the coding
/// against `want` (`identity`: none; `gzip`, `deflate`: that one). Without
/// `want`, a coding the checker cannot decode leaves the body as sent.
pub fn decoded(response: &Response, want: Option<&str>) -> Result<Vec<u8>, String> {
    let coding = response.header("content-encoding").map(|c| c.trim().to_ascii_lowercase());
    let coding = coding.filter(|c| !c.is_empty() && c != "identity");
    match (want, coding.as_deref()) {
        (Some("identity"), Some(c)) => {
            return Err(format!(
                "Content-Encoding: {c}, expected none: the request did not ask for it (no Accept-Encoding)"
            ))
        }
        (Some(w), None) if w != "identity" => return Err(format!("no Content-Encoding, expected {w}")),
        (Some(w), Some(c)) if w != c && w != "identity" => return Err(format!("Content-Encoding: {c}, expected {w}")),
        _ => {}
    }
    let mut out = Vec::new();
    let read = match coding.as_deref() {
        None => return Ok(response.body.clone()),
        Some("gzip" | "x-gzip") => flate2::read::MultiGzDecoder::new(response.body.as_slice())
            .take(MAX_DECODED_BYTES + 1)
            .read_to_end(&mut out),
        Some("deflate") => {
            flate2::read::ZlibDecoder::new(response.body.as_slice()).take(MAX_DECODED_BYTES + 1).read_to_end(&mut out)
        }
        Some(_) if want.is_none() => return Ok(response.body.clone()),
        Some(c) => return Err(format!("Content-Encoding: {c} cannot be decoded here")),
    };
    match read {
        Ok(n) if n as u64 > MAX_DECODED_BYTES => Err(format!("decoded body larger than {MAX_DECODED_BYTES} bytes")),
        Ok(_) => Ok(out),
        Err(e) => Err(format!("the {} body does not decode: {e}", coding.unwrap_or_default())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(path: &str, body: &[u8]) -> Prepared {
        let mut prepared = crate::request::prepare(path, None, &mut rand::SeedableRng::seed_from_u64(0)).unwrap();
        prepared.body = body.to_vec();
        prepared
    }

    #[test]
    fn answers_follow_the_request_sent() {
        let exact = |answer: Answer, path: &str, body: &[u8]| match expected(answer, &request(path, body)) {
            Ok(Expected::Exact(bytes)) => String::from_utf8(bytes).unwrap(),
            other => panic!("{other:?}"),
        };
        assert_eq!(exact(Answer::Sum, "/baseline11?a=13&b=42", b"20"), "75");
        assert_eq!(exact(Answer::Sum, "/baseline11?a=13&b=42", b""), "55");
        assert_eq!(exact(Answer::Length, "/upload", &[0; 48]), "48");
        assert_eq!(exact(Answer::LastSegment, "/user/42", b""), "42");
        assert_eq!(exact(Answer::Echo, "/echo", b"hi"), "hi");
        assert!(expected(Answer::Sum, &request("/b?a=1", b"x")).unwrap_err().contains("not an integer"));
        assert_eq!(
            expected(Answer::ItemTotals, &request("/json/12?m=3", b"")),
            Ok(Expected::Items { count: 12, m: 3.0 })
        );
    }

    #[test]
    fn item_totals_check_count_and_every_total_and_warn_on_the_item_count() {
        let body = |count: u32, total: u32| {
            format!(r#"{{"count":{count},"items":[{{"price":2,"quantity":5,"total":{total}}}]}}"#).into_bytes()
        };
        let strict = &mut Lenience::new(&[]);
        assert_eq!(item_totals(&body(1, 30), 1, 3.0, strict), Ok(()));
        assert_eq!(
            item_totals(&body(1, 10), 1, 3.0, strict).unwrap_err(),
            "items[0].total is 10, expected price × quantity × 3 = 30"
        );
        assert_eq!(item_totals(&body(2, 30), 1, 3.0, strict).unwrap_err(), "\"count\" is 2, expected 1");
        assert_eq!(item_totals(&body(2, 30), 2, 3.0, strict).unwrap_err(), "1 items, expected 2");
        let lenient = &mut Lenience::new(&[Leniency::ItemCount]);
        assert_eq!(item_totals(&body(2, 30), 2, 3.0, lenient), Ok(()));
        assert_eq!(lenient.warning().as_deref(), Some("1 items for count 2 (item-count)"));
    }

    fn response(coding: Option<&str>, body: Vec<u8>) -> Response {
        let now = std::time::SystemTime::now();
        Response {
            version_minor: 1,
            status: 200,
            reason: String::new(),
            headers: coding.map(|c| ("Content-Encoding".to_string(), c.as_bytes().to_vec())).into_iter().collect(),
            body,
            framing: crate::wire::Framing::Chunked,
            sent_at: now,
            received_at: now,
            elapsed: std::time::Duration::ZERO,
            reused_connection: false,
        }
    }

    #[test]
    fn bodies_are_decoded_and_the_coding_checked_both_ways() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"{\"count\":1}").unwrap();
        let zipped = response(Some("gzip"), gz.finish().unwrap());
        assert_eq!(decoded(&zipped, Some("gzip")).unwrap(), b"{\"count\":1}");
        assert_eq!(decoded(&zipped, None).unwrap(), b"{\"count\":1}");
        assert!(decoded(&zipped, Some("identity")).unwrap_err().starts_with("Content-Encoding: gzip, expected none"));
        let plain = response(None, b"ok".to_vec());
        assert_eq!(decoded(&plain, Some("identity")).unwrap(), b"ok");
        assert_eq!(decoded(&plain, Some("gzip")).unwrap_err(), "no Content-Encoding, expected gzip");
        assert!(decoded(&response(Some("gzip"), b"nope".to_vec()), None).unwrap_err().contains("does not decode"));
        assert_eq!(decoded(&response(Some("br"), b"x".to_vec()), None).unwrap(), b"x");
    }
}
