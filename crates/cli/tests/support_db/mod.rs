//! For the database tests: a private, seeded PostgreSQL cluster (the very
//! one `stampede run` starts, through stampede-run's `Database`), and an
//! in-test server of the four database endpoints that does them right or
//! breaks one rule on purpose, reading and writing that database through
//! the `postgres` crate.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;

use stampede_run::database::{Database, DatabaseSpec};

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
    let url = url.to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let url = url.clone();
            std::thread::spawn(move || connection(stream, &url, fault));
        }
    });
    base
}

fn connection(stream: TcpStream, url: &str, fault: Fault) {
    let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
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
        let (content_type, body) = answer(&target, &mut db, fault);
        let head = format!(
            "HTTP/1.1 200 OK\r\nServer: t\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        if out.write_all(head.as_bytes()).and_then(|()| out.write_all(body.as_bytes())).is_err() {
            return;
        }
    }
}

fn queries(target: &str, fault: Fault) -> i64 {
    let n = target.split_once("queries=").and_then(|(_, n)| n.parse::<i64>().ok());
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

fn answer(target: &str, db: &mut postgres::Client, fault: Fault) -> (&'static str, String) {
    let path = target.split('?').next().unwrap_or("/");
    match path {
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
            for row in &mut rows {
                row.1 = row.1 % 10_000 + 1;
                if fault != Fault::NoPersist {
                    db.execute("UPDATE world SET randomnumber = $2 WHERE id = $1", &[&row.0, &row.1]).unwrap();
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
            ("text/html; charset=utf-8", page)
        }
        _ => ("text/plain", "Hello, World!".into()),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}
