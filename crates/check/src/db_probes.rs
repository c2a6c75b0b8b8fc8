//! The database endpoints' rules (apps/CONTRACT.md, "Database"; contracts/db.toml),
//! judged against the rows themselves: every `{"id","randomNumber"}` object
//! must be a row of `world` holding that number, N must be clamped to
//! 1..500, `/updates` must leave in `world` the numbers it answered (and
//! change some), and `/fortunes` must list every `fortune` row plus the one
//! added at request time, sorted by message and escaped, UTF-8 intact.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::client::{Client, Exchange};
use crate::contract::{Probe, ProbeCheck};
use crate::database::Database;
use crate::fortunes::{self, RawRow};
use crate::report::{RuleResult, RuleVerdict};

/// Below this many rows, an update that changed nothing may be chance
/// (1 in 10,000 per row); from it on, it is a server that wrote nothing new.
const ROWS_THAT_MUST_CHANGE: usize = 5;

/// Judges `probe` (a database check) with one request through `client`.
pub fn judge(probe: &Probe, client: &mut Client, db: &mut Database, log: &mut Vec<Exchange>) -> RuleResult {
    let path = probe.path.as_str();
    let rows = probe.rows.unwrap_or(1) as usize;
    let description = match probe.check {
        ProbeCheck::DbRow => format!("GET {path} answers one row of world, as it is in the database"),
        ProbeCheck::DbRows => format!("GET {path} answers {rows} row(s) of world, each as it is in the database"),
        ProbeCheck::DbUpdates => format!("GET {path} answers {rows} updated row(s), and world holds them afterwards"),
        ProbeCheck::FortunesComplete => {
            format!("GET {path} lists every fortune row and the one added at request time, UTF-8 intact")
        }
        ProbeCheck::FortunesSorted => format!("GET {path} lists the fortunes sorted by message"),
        ProbeCheck::FortunesEscaped => format!("GET {path} escapes every message (no markup from the <script> row)"),
        _ => unreachable!("only database checks come here"),
    };
    // `/updates` is judged against the table as it was just before.
    let before = match probe.check {
        ProbeCheck::DbUpdates => match db.world() {
            Ok(world) => Some(world),
            Err(reason) => return RuleResult::fail(probe.id(), &description, reason, None),
        },
        _ => None,
    };
    let exchange = client.get(path);
    let verdict = match exchange.response() {
        None => Err("the request got no response".to_string()),
        Some(r) if r.status != 200 => Err(format!("answered {}, not 200", r.status_line())),
        Some(r) => match probe.check {
            ProbeCheck::DbRow => json(&r.body).and_then(|v| one_row(&v)).and_then(|row| rows_exist(&[row], db)),
            ProbeCheck::DbRows => json(&r.body).and_then(|v| row_list(&v, rows)).and_then(|list| rows_exist(&list, db)),
            ProbeCheck::DbUpdates => json(&r.body)
                .and_then(|v| row_list(&v, rows))
                .and_then(|list| persisted(&list, before.as_ref().expect("read above"), db)),
            check => page(&r.body).and_then(|raw| fortunes_rule(check, &raw, db)),
        },
    };
    let result = RuleResult::judged(probe.id(), &description, verdict, &exchange);
    log.push(exchange);
    result
}

fn json(body: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))
}

/// `{"id": 1..10000, "randomNumber": n}`, exactly those keys.
fn one_row(value: &Value) -> Result<(i32, i32), String> {
    let object = value.as_object().ok_or_else(|| format!("expected a JSON object, got {value}"))?;
    let int =
        |key: &str| {
            object.get(key).and_then(Value::as_i64).and_then(|n| i32::try_from(n).ok()).ok_or_else(|| {
                format!("{value}: needs an integer {key:?} (keys are exactly \"id\" and \"randomNumber\")")
            })
        };
    let row = (int("id")?, int("randomNumber")?);
    if object.len() != 2 {
        return Err(format!("{value}: keys must be exactly \"id\" and \"randomNumber\""));
    }
    Ok(row)
}

/// A JSON array of exactly `n` rows.
fn row_list(value: &Value, n: usize) -> Result<Vec<(i32, i32)>, String> {
    let list = value.as_array().ok_or_else(|| format!("expected a JSON array, got {}", short(value)))?;
    if list.len() != n {
        return Err(format!(
            "{} row(s), expected {n} (N is clamped to 1..500; missing or not a number means 1)",
            list.len()
        ));
    }
    list.iter().map(one_row).collect()
}

/// Each row is in `world` with that number.
fn rows_exist(rows: &[(i32, i32)], db: &mut Database) -> Result<(), String> {
    let world = db.world()?;
    for &(id, number) in rows {
        match world.get(&id) {
            None => return Err(format!("id {id} is not a row of world (ids are 1..10000)")),
            Some(&held) if held != number => {
                return Err(format!("row {id} has randomNumber {held} in the database, the answer says {number}"))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The answered numbers are what `world` holds now (the last answer for an
/// id asked twice wins), each in 1..10000, and enough rows changed.
fn persisted(rows: &[(i32, i32)], before: &BTreeMap<i32, i32>, db: &mut Database) -> Result<(), String> {
    let after = db.world()?;
    let last: BTreeMap<i32, i32> = rows.iter().copied().collect();
    for (&id, &number) in &last {
        if !(1..=10_000).contains(&number) {
            return Err(format!("row {id}: the new randomNumber {number} is outside 1..10000"));
        }
        match after.get(&id) {
            None => return Err(format!("id {id} is not a row of world (ids are 1..10000)")),
            Some(&held) if held != number => {
                return Err(format!(
                    "row {id}: the answer says randomNumber {number}, the database holds {held} afterwards: the update was not written"
                ))
            }
            _ => {}
        }
    }
    let changed = last.iter().filter(|(id, number)| before.get(id) != Some(number)).count();
    if changed == 0 && last.len() >= ROWS_THAT_MUST_CHANGE {
        return Err(format!("none of the {} rows got a new randomNumber: nothing was updated", last.len()));
    }
    Ok(())
}

/// The page as UTF-8 and its table rows.
fn page(body: &[u8]) -> Result<Vec<RawRow>, String> {
    let text = std::str::from_utf8(body).map_err(|e| {
        format!("the page is not UTF-8 (byte {} is not): the non-ASCII fortune was mangled", e.valid_up_to())
    })?;
    let rows = fortunes::rows(text);
    if rows.is_empty() {
        return Err("no <tr><td>id</td><td>message</td></tr> rows in the page".into());
    }
    Ok(rows)
}

fn fortunes_rule(check: ProbeCheck, raw: &[RawRow], db: &mut Database) -> Result<(), String> {
    if check == ProbeCheck::FortunesEscaped {
        return match raw.iter().find_map(|row| fortunes::unescaped(&row.message).map(|c| (row, c))) {
            Some((row, c)) => Err(format!("row {}: {c:?} is not escaped in {:?}", row.id.trim(), row.message)),
            None => Ok(()),
        };
    }
    let got: Vec<(i32, String)> = raw.iter().map(RawRow::decoded).collect::<Result<_, _>>()?;
    if check == ProbeCheck::FortunesSorted {
        return match got.windows(2).find(|w| w[0].1 > w[1].1) {
            Some(w) => Err(format!("{:?} (id {}) comes before {:?} (id {})", w[0].1, w[0].0, w[1].1, w[1].0)),
            None => Ok(()),
        };
    }
    let mut expected = db.fortunes()?;
    expected.push((0, fortunes::ADDED.to_string()));
    let mut got_sorted = got.clone();
    got_sorted.sort();
    expected.sort();
    if let Some(missing) = expected.iter().find(|e| !got_sorted.contains(e)) {
        return Err(format!("row {} {:?} of the database is missing or altered", missing.0, missing.1));
    }
    if let Some(extra) = got_sorted.iter().find(|g| !expected.contains(g)) {
        return Err(format!("row {} {:?} is not in the database", extra.0, extra.1));
    }
    if got_sorted.len() != expected.len() {
        return Err(format!("{} rows, the database has {} (with the added one)", got.len(), expected.len()));
    }
    Ok(())
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}
