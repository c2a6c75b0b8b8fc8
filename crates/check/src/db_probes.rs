//! The database endpoints' rules (apps/CONTRACT.md, "Database"; contracts/db.toml),
//! judged against the rows themselves: every `{"id","randomNumber"}` object
//! must be a row of `world` holding that number, N must be clamped to
//! 1..500, `/updates` must leave in `world` the numbers it answered (and
//! change some), and `/fortunes` must list every `fortune` row plus the one
//! added at request time, sorted by message and escaped, UTF-8 intact.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::client::{Client, Exchange};
use crate::database::Database;
use crate::fortunes::{self, RawRow};
use crate::lenience::Lenience;
use crate::report::{RuleResult, RuleVerdict};
use stampede_contract::{Leniency, Probe, ProbeCheck};

/// Below this many rows, an update that changed nothing may be chance
/// (1 in 10,000 per row); from it on, it is a server that wrote nothing new.
const ROWS_THAT_MUST_CHANGE: usize = 5;

/// Judges `probe` (a database check) with one request through `client`,
/// departures in `warn` (the contract's list) being warnings.
pub fn judge(
    probe: &Probe,
    warn: &[Leniency],
    client: &mut Client,
    db: &mut Database,
    log: &mut Vec<Exchange>,
) -> RuleResult {
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
        ProbeCheck::FortunesPage => {
            format!(
                "GET {path} is TechEmpower's page: doctype, title Fortunes, a header row, then the rows in one table"
            )
        }
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
    let mut lenience = Lenience::new(warn);
    let lenience = &mut lenience;
    let verdict = match exchange.response() {
        None => Err("the request got no response".to_string()),
        Some(r) if r.status != 200 => Err(format!("answered {}, not 200", r.status_line())),
        Some(r) => match probe.check {
            ProbeCheck::DbRow => {
                json(&r.body).and_then(|v| lone_row(&v, lenience)).and_then(|row| rows_exist(&[row], db))
            }
            ProbeCheck::DbRows => {
                json(&r.body).and_then(|v| row_list(&v, rows, lenience)).and_then(|list| rows_exist(&list, db))
            }
            ProbeCheck::DbUpdates => json(&r.body)
                .and_then(|v| row_list(&v, rows, lenience))
                .and_then(|list| persisted(&list, before.as_ref().expect("read above"), db)),
            ProbeCheck::FortunesPage => std::str::from_utf8(&r.body)
                .map_err(|_| "the page is not UTF-8".to_string())
                .and_then(fortunes::structure),
            check => page(&r.body).and_then(|raw| fortunes_rule(check, &raw, db, lenience)),
        },
    };
    let result = crate::report::judged(probe.id(), &description, verdict, lenience, &exchange);
    log.push(exchange);
    result
}

pub(crate) fn json(body: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))
}

/// `/db`'s answer: one row object, or (a departure TechEmpower's verifier
/// warns about) a one-element array holding it.
pub(crate) fn lone_row(value: &Value, lenience: &mut Lenience) -> Result<(i32, i32), String> {
    match value.as_array().map(Vec::as_slice) {
        Some([row]) if lenience.allow(Leniency::RowInArray, || "the row inside a one-element array".into()) => {
            one_row(row, lenience)
        }
        _ => one_row(value, lenience),
    }
}

/// `{"id": 1..10000, "randomNumber": n}`, exactly those keys (another case
/// or more keys only where the contract allows them).
fn one_row(value: &Value, lenience: &mut Lenience) -> Result<(i32, i32), String> {
    let object = value.as_object().ok_or_else(|| format!("expected a JSON object, got {value}"))?;
    let mut int = |key: &str| {
        let exact = object.get_key_value(key);
        let found = exact.or_else(|| {
            object
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .filter(|(k, _)| lenience.allow(Leniency::KeyCase, || format!("key {k:?} for {key:?}")))
        });
        found
            .and_then(|(_, v)| v.as_i64())
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| format!("{value}: needs an integer {key:?} (keys are exactly \"id\" and \"randomNumber\")"))
    };
    let row = (int("id")?, int("randomNumber")?);
    if object.len() != 2 {
        let extra = object.keys().filter(|k| !["id", "randomnumber"].contains(&k.to_ascii_lowercase().as_str()));
        let extra: Vec<&String> = extra.collect();
        if !lenience.allow(Leniency::ExtraKeys, || format!("unexpected keys {extra:?}")) {
            return Err(format!("{value}: keys must be exactly \"id\" and \"randomNumber\""));
        }
    }
    Ok(row)
}

/// A JSON array of exactly `n` rows (for the 501 case, another count is a
/// departure the contract may allow, as TechEmpower's verifier does).
pub(crate) fn row_list(value: &Value, n: usize, lenience: &mut Lenience) -> Result<Vec<(i32, i32)>, String> {
    let list = value.as_array().ok_or_else(|| format!("expected a JSON array, got {}", short(value)))?;
    let unclamped = n == 500
        && list.len() != n
        && !list.is_empty()
        && lenience.allow(Leniency::UpperClamp, || format!("{} rows for N = 501, expected 500", list.len()));
    if list.len() != n && !unclamped {
        return Err(format!(
            "{} row(s), expected {n} (N is clamped to 1..500; missing or not a number means 1)",
            list.len()
        ));
    }
    list.iter().map(|row| one_row(row, lenience)).collect()
}

/// Each row is in `world` with that number.
fn rows_exist(rows: &[(i32, i32)], db: &mut Database) -> Result<(), String> {
    rows_held(rows, &db.world()?)
}

/// Each row is one of `world`'s with that number.
fn rows_held(rows: &[(i32, i32)], world: &BTreeMap<i32, i32>) -> Result<(), String> {
    for &(id, number) in rows {
        match world.get(&id) {
            None => return Err(format!("id {id} is not a row of world (ids are 1..10000)")),
            Some(&held) if held != number => {
                // TechEmpower's Python quart reads the number with asyncpg's
                // fetchval, which returns the first column: the id.
                let why = if number == id { ", its own id: the number was read from the id column" } else { "" };
                return Err(format!("row {id} has randomNumber {held} in the database, the answer says {number}{why}"));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The answered numbers are what `world` holds now, each in 1..10000, and
/// enough rows changed. An id asked twice may hold any of the numbers
/// answered for it: a bulk `UPDATE … CASE` keeps the first, `FROM (VALUES …)`
/// an arbitrary one.
fn persisted(rows: &[(i32, i32)], before: &BTreeMap<i32, i32>, db: &mut Database) -> Result<(), String> {
    let after = db.world()?;
    let mut answered: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for &(id, number) in rows {
        answered.entry(id).or_default().push(number);
    }
    for (&id, numbers) in &answered {
        if let Some(number) = numbers.iter().find(|n| !(1..=10_000).contains(*n)) {
            return Err(format!("row {id}: the new randomNumber {number} is outside 1..10000"));
        }
        let Some(&held) = after.get(&id) else {
            return Err(format!("id {id} is not a row of world (ids are 1..10000)"));
        };
        if numbers.contains(&held) {
            continue;
        }
        let said = match numbers.as_slice() {
            [one] => format!("the answer says randomNumber {one}"),
            many => format!("the answer says randomNumber {many:?} (the id was asked {} times)", many.len()),
        };
        let was = before.get(&id).copied();
        return Err(if was == Some(held) {
            match swapped(id, numbers, before, &after) {
                Some(swapped) => format!("row {id}: {said}, the database still holds {held} afterwards; {swapped}"),
                None => {
                    format!("row {id}: {said}, the database still holds {held} afterwards: the update was not written")
                }
            }
        } else {
            let was = was.map_or_else(|| "nothing".to_string(), |w| w.to_string());
            format!(
                "row {id}: {said}, but the database changed from {was} to {held}: the number written is not the one answered"
            )
        });
    }
    let changed = answered.iter().filter(|(id, numbers)| !numbers.iter().all(|n| before.get(id) == Some(n))).count();
    if changed == 0 && answered.len() >= ROWS_THAT_MUST_CHANGE {
        return Err(format!("none of the {} rows got a new randomNumber: nothing was updated", answered.len()));
    }
    Ok(())
}

/// When row `number` now holds `id` instead, the likely cause, said: an
/// `UPDATE world SET randomNumber = $1 WHERE id = $2` given (id, number)
/// writes each id into the row the number names (TechEmpower's Python
/// uvicorn implementation, 57d92fb, does this on every request).
fn swapped(id: i32, numbers: &[i32], before: &BTreeMap<i32, i32>, after: &BTreeMap<i32, i32>) -> Option<String> {
    let &[number] = numbers else { return None };
    (number != id && after.get(&number) == Some(&id) && before.get(&number) != Some(&id)).then(|| {
        format!("row {number} was set to {id} instead: the UPDATE's id and randomNumber parameters are swapped")
    })
}

/// The page as UTF-8 and its table rows.
pub(crate) fn page(body: &[u8]) -> Result<Vec<RawRow>, String> {
    let text = std::str::from_utf8(body).map_err(|e| {
        format!("the page is not UTF-8 (byte {} is not): the non-ASCII fortune was mangled", e.valid_up_to())
    })?;
    let rows = fortunes::rows(text);
    if rows.is_empty() {
        return Err("no <tr><td>id</td><td>message</td></tr> rows in the page".into());
    }
    Ok(rows)
}

fn fortunes_rule(check: ProbeCheck, raw: &[RawRow], db: &mut Database, lenience: &mut Lenience) -> Result<(), String> {
    if check == ProbeCheck::FortunesEscaped {
        for row in raw {
            for c in fortunes::unescaped(&row.message) {
                let quote = matches!(c, '\'' | '"' | '>');
                let what = || format!("row {}: a raw {c:?} in {:?}", row.id.trim(), row.message);
                if !(quote && lenience.allow(Leniency::UnescapedQuotes, what)) {
                    return Err(format!("row {}: {c:?} is not escaped in {:?}", row.id.trim(), row.message));
                }
            }
        }
        return Ok(());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize) -> Value {
        Value::Array((1..=n).map(|id| serde_json::json!({"id": id, "randomNumber": 7})).collect())
    }

    #[test]
    fn a_clamped_501_case_is_no_upper_clamp_warning() {
        let mut lenient = Lenience::new(&[Leniency::UpperClamp]);
        assert_eq!(row_list(&rows(500), 500, &mut lenient).map(|r| r.len()), Ok(500));
        assert_eq!(lenient.warning(), None, "500 rows for N = 501 was warned as unclamped");
        assert_eq!(row_list(&rows(501), 500, &mut lenient).map(|r| r.len()), Ok(501));
        assert_eq!(lenient.warning().as_deref(), Some("501 rows for N = 501, expected 500 (upper-clamp)"));
        assert!(row_list(&rows(501), 500, &mut Lenience::new(&[])).is_err());
    }

    #[test]
    fn a_number_read_from_the_id_column_is_named() {
        let world = BTreeMap::from([(7526, 6851), (3, 9)]);
        let said = rows_held(&[(3, 9), (7526, 7526)], &world).unwrap_err();
        assert_eq!(
            said,
            "row 7526 has randomNumber 6851 in the database, the answer says 7526, its own id: the number was read from the id column"
        );
        let said = rows_held(&[(7526, 12)], &world).unwrap_err();
        assert_eq!(said, "row 7526 has randomNumber 6851 in the database, the answer says 12");
        assert_eq!(rows_held(&[(3, 9)], &world), Ok(()));
    }

    #[test]
    fn swapped_update_parameters_are_named() {
        let before = BTreeMap::from([(477, 1975), (1497, 12)]);
        let after = BTreeMap::from([(477, 1975), (1497, 477)]);
        let said = swapped(477, &[1497], &before, &after).unwrap();
        assert_eq!(said, "row 1497 was set to 477 instead: the UPDATE's id and randomNumber parameters are swapped");
        assert_eq!(swapped(477, &[1497], &before, &before), None, "nothing written is not a swap");
        assert_eq!(swapped(477, &[1497, 3], &before, &after), None);
    }
}
