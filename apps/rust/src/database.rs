//! The database side of `/db`, `/queries`, `/fortunes` and `/updates`
//! (apps/CONTRACT.md): a deadpool pool of tokio-postgres connections to
//! `DATABASE_URL`, sized by `DATABASE_POOL_SIZE` (the manifest's `db_pool`
//! knob). The pool connects lazily, on the first request that needs it, so the
//! server starts and serves every other endpoint without a database; the
//! database endpoints then answer 503 (`DbError`).

use std::collections::BTreeMap;
use std::fmt;
use std::num::IntErrorKind;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod};
use futures_util::future::try_join_all;
use serde::Serialize;
use tokio_postgres::NoTls;

use crate::fortunes::Fortune;

/// Pool size when `DATABASE_POOL_SIZE` is unset (apps/CONTRACT.md).
const DEFAULT_POOL_SIZE: usize = 8;
/// How long a new connection may take before the request gets its 503.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// TechEmpower's `world` table holds ids 1..=10000.
const WORLD_ROWS: i32 = 10_000;
/// The most rows `/queries` and `/updates` touch per request.
pub const MAX_QUERIES: usize = 500;

const SELECT_WORLD: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
const SELECT_FORTUNES: &str = "SELECT id, message FROM fortune";
/// One statement for the whole batch, whatever its size: the ids and numbers
/// travel as two arrays.
const UPDATE_WORLDS: &str = "UPDATE world SET randomnumber = new.randomnumber \
     FROM UNNEST($1::int[], $2::int[]) AS new(id, randomnumber) WHERE world.id = new.id";

/// One row of the `world` table, as the endpoints answer it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct World {
    pub id: i32,
    #[serde(rename = "randomNumber")]
    pub random_number: i32,
}

/// Why a database endpoint could not answer; every kind becomes a 503.
#[derive(Debug)]
pub enum DbError {
    /// `DATABASE_URL` is unset: this run started no database.
    Unconfigured,
    /// No connection could be had (the database is down or refused us).
    Pool(PoolError),
    /// A statement failed.
    Query(tokio_postgres::Error),
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbError::Unconfigured => write!(f, "no database: DATABASE_URL is unset"),
            DbError::Pool(e) => write!(f, "no database connection: {e}"),
            DbError::Query(e) => write!(f, "database query failed: {e}"),
        }
    }
}

impl From<PoolError> for DbError {
    fn from(e: PoolError) -> Self {
        DbError::Pool(e)
    }
}

impl From<tokio_postgres::Error> for DbError {
    fn from(e: tokio_postgres::Error) -> Self {
        DbError::Query(e)
    }
}

/// The connection pool, or nothing when no database was configured.
pub struct Database {
    pool: Option<Pool>,
}

impl Database {
    /// A database that answers every call with `DbError::Unconfigured`.
    pub fn none() -> Self {
        Database { pool: None }
    }

    /// Builds the pool from `DATABASE_URL` and `DATABASE_POOL_SIZE` without
    /// connecting; an unset URL gives `Database::none()`.
    pub fn from_env(url: Option<&str>, pool_size: Option<&str>) -> Result<Self, String> {
        let size = match pool_size.unwrap_or("") {
            "" => DEFAULT_POOL_SIZE,
            s => match s.parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(format!(
                        "DATABASE_POOL_SIZE={s:?} is not a positive integer (unset it for 8)"
                    ))
                }
            },
        };
        let url = match url {
            None | Some("") => return Ok(Database::none()),
            Some(url) => url,
        };
        let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
            format!("DATABASE_URL is not a PostgreSQL URL (postgres://user:pass@host:port/db): {e}")
        })?;
        config.connect_timeout(CONNECT_TIMEOUT);
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(size)
            .build()
            .map_err(|e| format!("cannot build the database pool: {e}"))?;
        Ok(Database { pool: Some(pool) })
    }

    async fn client(&self) -> Result<deadpool_postgres::Client, DbError> {
        let pool = self.pool.as_ref().ok_or(DbError::Unconfigured)?;
        Ok(pool.get().await?)
    }

    /// `/db`: one row by random id.
    pub async fn random_world(&self) -> Result<World, DbError> {
        Ok(self.random_worlds(1).await?[0])
    }

    /// `/queries`: `count` rows, each its own query by random id. The queries
    /// are sent together on one connection (tokio-postgres pipelines them).
    pub async fn random_worlds(&self, count: usize) -> Result<Vec<World>, DbError> {
        let client = self.client().await?;
        read_worlds(&client, count).await
    }

    /// `/fortunes`: every row of the `fortune` table.
    pub async fn fortunes(&self) -> Result<Vec<Fortune>, DbError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(SELECT_FORTUNES).await?;
        let rows = client.query(&statement, &[]).await?;
        Ok(rows
            .iter()
            .map(|row| Fortune {
                id: row.get(0),
                message: row.get(1),
            })
            .collect())
    }

    /// `/updates`: `count` rows read by random id, each given a new random
    /// number, all written back in one statement; answers the rows as stored.
    pub async fn update_worlds(&self, count: usize) -> Result<Vec<World>, DbError> {
        let client = self.client().await?;
        let mut worlds = read_worlds(&client, count).await?;
        let numbers: Vec<i32> = worlds.iter().map(|_| random_id()).collect();
        let (ids, numbers) = plan_updates(&mut worlds, &numbers);
        let statement = client.prepare_cached(UPDATE_WORLDS).await?;
        client.execute(&statement, &[&ids, &numbers]).await?;
        Ok(worlds)
    }
}

async fn read_worlds(
    client: &deadpool_postgres::Client,
    count: usize,
) -> Result<Vec<World>, DbError> {
    let statement = &client.prepare_cached(SELECT_WORLD).await?;
    let ids: Vec<i32> = (0..count).map(|_| random_id()).collect();
    let rows = try_join_all(
        ids.iter()
            .map(|id| async move { client.query_one(statement, &[id]).await }),
    )
    .await?;
    Ok(rows
        .iter()
        .map(|row| World {
            id: row.get(0),
            random_number: row.get(1),
        })
        .collect())
}

fn random_id() -> i32 {
    rand::random_range(1..=WORLD_ROWS)
}

/// Gives `worlds[i]` the number `numbers[i]` and returns the batch to write:
/// each id once, in ascending order (concurrent batches then lock rows in the
/// same order and cannot deadlock). An id drawn twice keeps its last number,
/// in the database and in every answered copy of the row, so the answer is
/// what a read-back finds.
pub fn plan_updates(worlds: &mut [World], numbers: &[i32]) -> (Vec<i32>, Vec<i32>) {
    let last: BTreeMap<i32, i32> = worlds
        .iter()
        .zip(numbers)
        .map(|(w, &n)| (w.id, n))
        .collect();
    for world in worlds.iter_mut() {
        world.random_number = last[&world.id];
    }
    last.into_iter().unzip()
}

/// `/queries` and `/updates`' row count from the query string: the first
/// `queries` parameter read as a decimal integer clamped to 1..=500; missing,
/// empty or not a number means 1, and a number too big for 64 bits means 500.
pub fn query_count(query: Option<&str>) -> usize {
    let value = query
        .unwrap_or("")
        .split('&')
        .find_map(|pair| pair.strip_prefix("queries="))
        .unwrap_or("");
    match value.parse::<i64>() {
        Ok(n) => n.clamp(1, MAX_QUERIES as i64) as usize,
        Err(e) if *e.kind() == IntErrorKind::PosOverflow => MAX_QUERIES,
        Err(_) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_count_is_clamped_to_1_through_500() {
        for (query, want) in [
            (None, 1),
            (Some(""), 1),
            (Some("queries="), 1),
            (Some("queries=foo"), 1),
            (Some("queries=3x"), 1),
            (Some("queries=-4"), 1),
            (Some("queries=0"), 1),
            (Some("queries=3"), 3),
            (Some("queries=007"), 7),
            (Some("queries=500"), 500),
            (Some("queries=501"), 500),
            (Some("queries=99999999999999999999999"), 500),
            (Some("other=9&queries=20"), 20),
            (Some("myqueries=20"), 1),
        ] {
            assert_eq!(query_count(query), want, "{query:?}");
        }
    }

    #[test]
    fn an_id_drawn_twice_is_written_once_with_its_last_number() {
        let world = |id| World {
            id,
            random_number: 1,
        };
        let mut worlds = [world(9), world(2), world(9)];
        let (ids, numbers) = plan_updates(&mut worlds, &[10, 20, 30]);
        assert_eq!((ids, numbers), (vec![2, 9], vec![20, 30]));
        let answered: Vec<(i32, i32)> = worlds.iter().map(|w| (w.id, w.random_number)).collect();
        assert_eq!(answered, [(9, 30), (2, 20), (9, 30)]);
    }

    #[test]
    fn pool_size_and_url_come_from_the_environment() {
        assert!(Database::from_env(None, None).unwrap().pool.is_none());
        let url = Some("postgres://u:p@127.0.0.1:1/db");
        let db = Database::from_env(url, Some("3")).unwrap();
        assert_eq!(db.pool.unwrap().status().max_size, 3);
        assert_eq!(
            Database::from_env(url, None)
                .unwrap()
                .pool
                .unwrap()
                .status()
                .max_size,
            8
        );
        assert!(Database::from_env(url, Some("0")).is_err());
        assert!(Database::from_env(Some("not a url"), None).is_err());
    }
}
