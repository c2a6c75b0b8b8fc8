//! Maps each request path onto the contract's endpoints and builds the HTTP
//! answer: JSON serialised with serde_json on every request (the sequence
//! endpoints answer plain text, as the original API does), a `Server` header
//! and a `Content-Type` on every response, 400 for a bad path integer and 404
//! for an unknown path. hyper adds `Date` and `Content-Length` itself. The
//! four database endpoints answer 503 when the database cannot be reached.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE, SERVER};
use hyper::{Method, Request, Response, StatusCode};
use serde::Serialize;

use crate::database::{query_count, Database, DbError};
use crate::{fortunes, work};

const SERVER_NAME: HeaderValue = HeaderValue::from_static("hyper");
const TEXT_PLAIN: HeaderValue = HeaderValue::from_static("text/plain");
const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");
const TEXT_HTML: HeaderValue = HeaderValue::from_static("text/html; charset=utf-8");

/// The one process-wide lock `/lock` holds while it computes.
static HOT_LOCK: Mutex<()> = Mutex::new(());

/// The endpoints taking one path integer, by path prefix.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Endpoint {
    Values,
    Count,
    Fib,
    Cpu,
    Lock,
    Alloc,
    Sleep,
}

/// Each endpoint's prefix and the largest integer it accepts (apps/CONTRACT.md).
const ENDPOINTS: [(&str, Endpoint, u64); 7] = [
    ("/values/", Endpoint::Values, 2_147_483_647),
    ("/api/count/", Endpoint::Count, 100_000),
    ("/api/fib/", Endpoint::Fib, 10_000),
    ("/cpu/", Endpoint::Cpu, 10_000_000),
    ("/lock/", Endpoint::Lock, 10_000_000),
    ("/alloc/", Endpoint::Alloc, 65_536),
    ("/sleep/", Endpoint::Sleep, 10_000),
];

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

#[derive(Serialize)]
struct CpuResult {
    result: String,
}

#[derive(Serialize)]
struct Allocated {
    allocated_kib: u64,
}

#[derive(Serialize)]
struct Slept {
    slept_ms: u64,
}

/// hyper's service function: every request gets an answer, never an error.
pub async fn respond(
    db: Arc<Database>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(answer_to(&db, req.method(), req.uri()).await)
}

/// The answer to a request by its method and URI, whatever the protocol
/// it came over (hyper's HTTP/1.1 here, HTTP/3 in `http3`).
pub async fn answer_to(db: &Database, method: &Method, uri: &hyper::Uri) -> Response<Full<Bytes>> {
    if method != Method::GET && method != Method::HEAD {
        let mut resp = text(StatusCode::METHOD_NOT_ALLOWED, "only GET is served\n");
        resp.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return resp;
    }
    route(db, uri.path(), uri.query()).await
}

async fn route(db: &Database, path: &str, query: Option<&str>) -> Response<Full<Bytes>> {
    match path {
        "/db" => return answer(db.random_world().await, |world| json(&world)),
        "/queries" => {
            return answer(db.random_worlds(query_count(query)).await, |worlds| {
                json(&worlds)
            })
        }
        "/updates" => {
            return answer(db.update_worlds(query_count(query)).await, |worlds| {
                json(&worlds)
            })
        }
        "/fortunes" => {
            return answer(db.fortunes().await, |rows| match fortunes::render(rows) {
                Ok(page) => build(StatusCode::OK, TEXT_HTML, page.into()),
                Err(_) => text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "cannot render fortunes\n",
                ),
            })
        }
        "/plaintext" => return text(StatusCode::OK, "Hello, World!"),
        "/json" => {
            return json(&Message {
                message: "Hello, World!",
            })
        }
        _ => {}
    }
    let Some((endpoint, segment, max)) = lookup(path) else {
        return text(StatusCode::NOT_FOUND, "not found\n");
    };
    let Some(n) = work::parse_path_int(segment, max) else {
        return text(
            StatusCode::BAD_REQUEST,
            format!("bad path integer {segment:?}: want decimal digits in 0..={max}\n"),
        );
    };
    match endpoint {
        Endpoint::Values => json(&n),
        Endpoint::Count => text(StatusCode::OK, work::count_text(n)),
        Endpoint::Fib => text(StatusCode::OK, work::fib_text(n)),
        Endpoint::Cpu => json(&CpuResult {
            result: work::xorshift(n).to_string(),
        }),
        Endpoint::Lock => {
            let x = {
                // A panic elsewhere cannot corrupt `()`, so a poisoned lock is still usable.
                let _guard = HOT_LOCK
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                work::xorshift(n)
            };
            json(&CpuResult {
                result: x.to_string(),
            })
        }
        Endpoint::Alloc => {
            work::churn(n);
            json(&Allocated { allocated_kib: n })
        }
        Endpoint::Sleep => {
            tokio::time::sleep(Duration::from_millis(n)).await;
            json(&Slept { slept_ms: n })
        }
    }
}

/// Finds the endpoint whose prefix `path` starts with, followed by exactly one
/// non-empty segment (`/values/` and `/values/5/6` are unknown paths).
fn lookup(path: &str) -> Option<(Endpoint, &str, u64)> {
    ENDPOINTS.iter().find_map(|&(prefix, endpoint, max)| {
        let segment = path.strip_prefix(prefix)?;
        (!segment.is_empty() && !segment.contains('/')).then_some((endpoint, segment, max))
    })
}

/// A database result's response, or 503 naming why the database failed.
fn answer<T>(
    result: Result<T, DbError>,
    ok: impl FnOnce(T) -> Response<Full<Bytes>>,
) -> Response<Full<Bytes>> {
    match result {
        Ok(value) => ok(value),
        Err(e) => text(StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")),
    }
}

fn text(status: StatusCode, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    build(status, TEXT_PLAIN, body.into())
}

fn json<T: Serialize + ?Sized>(value: &T) -> Response<Full<Bytes>> {
    match serde_json::to_vec(value) {
        Ok(body) => build(StatusCode::OK, APPLICATION_JSON, body.into()),
        Err(_) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "cannot encode response\n",
        ),
    }
}

fn build(status: StatusCode, content_type: HeaderValue, body: Bytes) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(body));
    *resp.status_mut() = status;
    let headers = resp.headers_mut();
    headers.insert(SERVER, SERVER_NAME);
    headers.insert(CONTENT_TYPE, content_type);
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    async fn get(path: &str) -> (StatusCode, String, String) {
        let resp = route(
            &Database::none(),
            path.split('?').next().unwrap(),
            path.split_once('?').map(|(_, q)| q),
        )
        .await;
        let status = resp.status();
        let ct = resp.headers()[CONTENT_TYPE].to_str().unwrap().to_owned();
        assert_eq!(resp.headers()[SERVER], "hyper", "{path}");
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (status, ct, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn endpoints_answer_per_contract() {
        let ok = [
            ("/plaintext", "Hello, World!"),
            ("/json", r#"{"message":"Hello, World!"}"#),
            ("/values/5", "5"),
            ("/values/007", "7"),
            ("/values/2147483647", "2147483647"),
            ("/api/count/0", ""),
            ("/api/count/3", "1 2 3"),
            ("/api/fib/5", "0 1 1 2 3 5"),
            ("/cpu/1000", r#"{"result":"6248290529083013365"}"#),
            ("/lock/10", r#"{"result":"10344392119048899982"}"#),
            ("/alloc/64", r#"{"allocated_kib":64}"#),
            ("/sleep/0", r#"{"slept_ms":0}"#),
        ];
        for (path, body) in ok {
            let (status, ct, got) = get(path).await;
            assert_eq!((status, got.as_str()), (StatusCode::OK, body), "{path}");
            let want_ct = if path == "/plaintext" || path.starts_with("/api/") {
                "text/plain"
            } else {
                "application/json"
            };
            assert_eq!(ct, want_ct, "{path}");
        }
    }

    #[tokio::test]
    async fn bad_integers_are_400_and_bad_paths_404() {
        for path in [
            "/values/-1",
            "/values/+1",
            "/values/1a",
            "/values/2147483648",
            "/values/99999999999999999999999",
            "/api/fib/10001",
            "/api/count/100001",
            "/api/fib/abc",
            "/sleep/10001",
        ] {
            assert_eq!(get(path).await.0, StatusCode::BAD_REQUEST, "{path}");
        }
        for path in [
            "/values/",
            "/values/5/6",
            "/values",
            "/nope",
            "/",
            "/plaintext/",
        ] {
            assert_eq!(get(path).await.0, StatusCode::NOT_FOUND, "{path}");
        }
    }

    #[tokio::test]
    async fn database_endpoints_answer_503_without_a_database() {
        for path in [
            "/db",
            "/queries?queries=3",
            "/fortunes",
            "/updates?queries=5",
        ] {
            assert_eq!(get(path).await.0, StatusCode::SERVICE_UNAVAILABLE, "{path}");
        }
    }
}
