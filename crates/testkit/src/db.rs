//! For the database tests: a private, seeded PostgreSQL cluster (the very
//! one `stampede run` starts, through stampede-run's `Database`), and an
//! in-test server of the four database endpoints that does them right or
//! breaks one rule on purpose, reading and writing that database through
//! the `postgres` crate and a small pool of connections, as real servers do
//! (the `db` contract's concurrent phase opens 512 connections at once).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use stampede_run::database::Database;
use stampede_run::scenario::database::DatabaseSpec;

/// A seeded private cluster, stopped and removed on drop.
pub fn cluster(test: &str) -> (Database, PathBuf) {
    let logs = std::env::temp_dir().join(format!("stampede-db-test-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&logs).unwrap();
    let db = Database::open(&DatabaseSpec::default(), &logs, &|| false).unwrap_or_else(|e| panic!("{e}"));
    (db, logs)
}

/// What the test server does wrong.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    None,
    /// /fortunes writes messages as they are.
    NoEscape,
    /// /fortunes in id order.
    Unsorted,
    /// /updates answers new numbers without writing them.
    NoPersist,
    /// /queries and /updates give N rows for any N (no clamp: 0 → 0, 501 → 501).
    NoClamp,
    /// /db answers a number the row does not hold.
    WrongNumber,
    /// Every row's key is `randomnumber`, as Go fasthttp's TechEmpower
    /// implementation writes it.
    LowerCaseKeys,
    /// /db reads the whole table once and answers from memory after.
    CachedRows,
    /// /queries reads its N rows with one `WHERE id = ANY($1)`.
    OneStatement,
    /// /updates writes only its first row and answers the others' numbers
    /// unchanged (so every answer is true of the database).
    OneRowUpdated,
    /// /fortunes is only the table, as `text/html` with no charset.
    BarePage,
    /// /updates writes each row's id into the row its new number names
    /// (`SET randomnumber = id WHERE id = number`), as TechEmpower's Python
    /// uvicorn implementation does.
    SwappedUpdate,
    /// Serves /db, /queries and /updates only at TechEmpower-style URLs of
    /// its own, `/dbs`, `/queries?q=N` and `/update?q=N`; the contract's
    /// paths answer text (and `queries=` counts for nothing).
    OwnUrls,
    /// Answers 503 while more than [`OVERLOAD_IN_FLIGHT`] requests are in
    /// flight: right one at a time, wrong under concurrency.
    Overload,
}

/// Requests in flight beyond which [`Fault::Overload`] answers 503.
pub const OVERLOAD_IN_FLIGHT: usize = 4;

/// Connections to the database the server shares among its requests.
const POOL_SIZE: usize = 8;

/// A fixed set of connections handed out one request at a time.
struct Pool {
    idle: Mutex<Vec<postgres::Client>>,
    freed: Condvar,
}

impl Pool {
    fn new(url: &str) -> Pool {
        let idle = (0..POOL_SIZE).map(|_| postgres::Client::connect(url, postgres::NoTls).unwrap()).collect();
        Pool { idle: Mutex::new(idle), freed: Condvar::new() }
    }

    fn with<T>(&self, work: impl FnOnce(&mut postgres::Client) -> T) -> T {
        let mut idle = self.idle.lock().unwrap();
        let mut client = loop {
            match idle.pop() {
                Some(client) => break client,
                None => idle = self.freed.wait(idle).unwrap(),
            }
        };
        drop(idle);
        let out = work(&mut client);
        self.idle.lock().unwrap().push(client);
        self.freed.notify_one();
        out
    }
}

/// What every connection of one server shares.
struct Shared {
    pool: Pool,
    fault: Fault,
    in_flight: AtomicUsize,
    cache: OnceLock<HashMap<i32, i32>>,
}

/// The row key the server writes.
fn number_key(fault: Fault) -> &'static str {
    if fault == Fault::LowerCaseKeys {
        "randomnumber"
    } else {
        "randomNumber"
    }
}

/// Serves on a free loopback port until the test process ends.
pub fn serve(url: &str, fault: Fault) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let shared =
        Arc::new(Shared { pool: Pool::new(url), fault, in_flight: AtomicUsize::new(0), cache: OnceLock::new() });
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || connection(stream, &shared));
        }
    });
    base
}

fn connection(stream: TcpStream, shared: &Shared) {
    let fault = shared.fault;
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let target = line.split_whitespace().nth(1).unwrap_or("/").to_string();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                break;
            }
        }
        let in_flight = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        let (status, content_type, body) = if fault == Fault::Overload && in_flight > OVERLOAD_IN_FLIGHT {
            ("503 Service Unavailable", "text/plain", "too many requests at once".to_string())
        } else {
            let (content_type, body) = shared.pool.with(|db| answer(&target, db, shared));
            ("200 OK", content_type, body)
        };
        shared.in_flight.fetch_sub(1, Ordering::SeqCst);
        let head = format!(
            "HTTP/1.1 {status}\r\nServer: t\r\nDate: {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            httpdate::fmt_http_date(std::time::SystemTime::now()),
            body.len()
        );
        if out.write_all(head.as_bytes()).and_then(|()| out.write_all(body.as_bytes())).is_err() {
            return;
        }
    }
}

fn queries(target: &str, fault: Fault) -> i64 {
    let parameter = if fault == Fault::OwnUrls { "?q=" } else { "queries=" };
    let n = target.split_once(parameter).and_then(|(_, n)| n.parse::<i64>().ok());
    match (fault, n) {
        (Fault::NoClamp, Some(n)) => n,
        (_, Some(n)) => n.clamp(1, 500),
        _ => 1,
    }
}

fn random_id() -> i32 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    (nanos % 10_000) as i32 + 1
}

fn read_row(db: &mut postgres::Client, id: i32) -> (i32, i32) {
    let row = db.query_one("SELECT id, randomnumber FROM world WHERE id = $1", &[&id]).unwrap();
    (row.get(0), row.get(1))
}

fn json_rows(rows: &[(i32, i32)], fault: Fault) -> String {
    let key = number_key(fault);
    let items: Vec<String> = rows.iter().map(|(id, n)| format!("{{\"id\":{id},\"{key}\":{n}}}")).collect();
    format!("[{}]", items.join(","))
}

fn answer(target: &str, db: &mut postgres::Client, shared: &Shared) -> (&'static str, String) {
    let fault = shared.fault;
    let path = match (fault, target.split('?').next().unwrap_or("/")) {
        (Fault::OwnUrls, "/dbs") => "/db",
        (Fault::OwnUrls, "/update") => "/updates",
        (Fault::OwnUrls, "/db" | "/updates") => "/",
        (_, path) => path,
    };
    match path {
        "/db" if fault == Fault::CachedRows => {
            let cache = shared.cache.get_or_init(|| {
                let rows = db.query("SELECT id, randomnumber FROM world", &[]).unwrap();
                rows.iter().map(|r| (r.get(0), r.get(1))).collect()
            });
            let id = random_id();
            ("application/json", format!("{{\"id\":{id},\"randomNumber\":{}}}", cache[&id]))
        }
        "/queries" if fault == Fault::OneStatement => {
            let ids: Vec<i32> = (0..queries(target, fault)).map(|_| random_id()).collect();
            let found: HashMap<i32, i32> = db
                .query("SELECT id, randomnumber FROM world WHERE id = ANY($1)", &[&ids])
                .unwrap()
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            let rows: Vec<_> = ids.iter().map(|id| (*id, found[id])).collect();
            ("application/json", json_rows(&rows, fault))
        }
        "/db" => {
            let (id, n) = read_row(db, random_id());
            let n = if fault == Fault::WrongNumber { n % 10_000 + 1 } else { n };
            ("application/json", format!("{{\"id\":{id},\"{}\":{n}}}", number_key(fault)))
        }
        "/queries" => {
            let rows: Vec<_> = (0..queries(target, fault)).map(|_| read_row(db, random_id())).collect();
            ("application/json", json_rows(&rows, fault))
        }
        "/updates" => {
            let mut rows: Vec<_> = (0..queries(target, fault)).map(|_| read_row(db, random_id())).collect();
            let written = if fault == Fault::OneRowUpdated { 1 } else { rows.len() };
            for row in rows.iter_mut().take(written) {
                row.1 = row.1 % 10_000 + 1;
                let (id, number) = if fault == Fault::SwappedUpdate { (row.1, row.0) } else { *row };
                if fault != Fault::NoPersist {
                    db.execute("UPDATE world SET randomnumber = $2 WHERE id = $1", &[&id, &number]).unwrap();
                }
            }
            ("application/json", json_rows(&rows, fault))
        }
        "/fortunes" => {
            let mut rows: Vec<(i32, String)> = db
                .query("SELECT id, message FROM fortune", &[])
                .unwrap()
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            rows.push((0, "Additional fortune added at request time.".into()));
            if fault == Fault::Unsorted {
                rows.sort();
            } else {
                rows.sort_by(|a, b| a.1.cmp(&b.1));
            }
            let mut page = String::from("<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>");
            for (id, message) in rows {
                let message = if fault == Fault::NoEscape { message } else { escape(&message) };
                page.push_str(&format!("<tr><td>{id}</td><td>{message}</td></tr>"));
            }
            page.push_str("</table></body></html>");
            if fault == Fault::BarePage {
                let table = page.find("<table>").unwrap();
                return ("text/html", page[table..page.len() - "</body></html>".len()].to_string());
            }
            ("text/html; charset=utf-8", page)
        }
        _ => ("text/plain", "Hello, World!".into()),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}
