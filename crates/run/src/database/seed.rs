//! TechEmpower's schema and rows, written through a real PostgreSQL client
//! (the `postgres` crate) before any app starts: `world` (10,000 rows, id
//! 1..10000, randomnumber uniform in 1..10000) and `fortune` (TechEmpower's
//! 12 rows, from their toolset/databases/postgres/create-postgres.sql,
//! including the `<script>` one that must come back escaped and the Japanese
//! one that must come back intact). apps/CONTRACT.md states the same schema.
//! TechEmpower's database also holds the quoted `"World"` and `"Fortune"`
//! (same columns, `"World"` with its own random numbers), which gorm-based
//! and other implementations query; they are seeded too, so such a server
//! runs unchanged.

use std::str::FromStr;
use std::time::Duration;

use postgres::{Client, NoTls};

/// The database the apps use.
pub const DATABASE: &str = "hello_world";
/// The role the apps connect as, and its password (TechEmpower's).
pub const USER: &str = "benchmarkdbuser";
pub const PASSWORD: &str = "benchmarkdbpass";

/// TechEmpower's fortunes, ids 1..12.
pub const FORTUNES: [&str; 12] = [
    "fortune: No such file or directory",
    "A computer scientist is someone who fixes things that aren't broken.",
    "After enough decimal places, nobody gives a damn.",
    "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
    "A computer program does what you tell it to do, not what you want it to do.",
    "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen",
    "Any program that runs right is obsolete.",
    "A list is only as strong as its weakest link. — Donald Knuth",
    "Feature: A bug with seniority.",
    "Computers make very fast, very accurate mistakes.",
    "<script>alert(\"This should not be displayed in a browser alert box.\");</script>",
    "フレームワークのベンチマーク",
];

/// The `world` table's size.
pub const WORLD_ROWS: i32 = 10_000;

const SCHEMA: &str = r#"
DROP TABLE IF EXISTS world;
DROP TABLE IF EXISTS fortune;
DROP TABLE IF EXISTS "World";
DROP TABLE IF EXISTS "Fortune";
CREATE TABLE world (id integer NOT NULL PRIMARY KEY, randomnumber integer NOT NULL DEFAULT 0);
CREATE TABLE fortune (id integer NOT NULL PRIMARY KEY, message varchar(2048) NOT NULL);
CREATE TABLE "World" (id integer NOT NULL PRIMARY KEY, randomnumber integer NOT NULL DEFAULT 0);
CREATE TABLE "Fortune" (id integer NOT NULL PRIMARY KEY, message varchar(2048) NOT NULL);
"#;

/// The tables of TechEmpower's schema: the unquoted pair, then the quoted.
const TABLES: [(&str, &str); 2] = [("world", "fortune"), ("\"World\"", "\"Fortune\"")];

#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error("cannot connect to the database at {url}: {reason} (is the server up, and the URL's user, password and database right?)")]
    Connect { url: String, reason: String },
    #[error("cannot {what} in the database at {url}: {reason}")]
    Statement { url: String, what: &'static str, reason: String },
}

fn connect(url: &str) -> Result<Client, SeedError> {
    let fail = |reason: String| SeedError::Connect { url: stampede_schema::redact::url(url), reason };
    let mut config = postgres::Config::from_str(url).map_err(|e| fail(e.to_string()))?;
    config.connect_timeout(Duration::from_secs(10));
    config.connect(NoTls).map_err(|e| fail(one_line(&e)))
}

/// The message of a driver error: the server's when it sent one, else the
/// driver's with its cause ("error connecting to server: Connection refused").
fn one_line(err: &postgres::Error) -> String {
    match (err.as_db_error(), std::error::Error::source(err)) {
        (Some(db), _) => db.message().to_string(),
        (None, Some(cause)) => format!("{err}: {cause}"),
        (None, None) => err.to_string(),
    }
}

/// Connects once, to say early that a user's server cannot be reached.
pub fn reachable(url: &str) -> Result<(), SeedError> {
    connect(url).map(drop)
}

/// `CREATE DATABASE name` through the cluster's maintenance database.
pub fn create_database(admin_url: &str, name: &str) -> Result<(), SeedError> {
    let mut client = connect(admin_url)?;
    client.batch_execute(&format!("CREATE DATABASE {name} ENCODING 'UTF8'")).map_err(|e| SeedError::Statement {
        url: stampede_schema::redact::url(admin_url),
        what: "create the database",
        reason: one_line(&e),
    })
}

/// (Re)creates `world` and `fortune` and fills them, in one transaction.
pub fn seed(url: &str) -> Result<(), SeedError> {
    let mut client = connect(url)?;
    let fail = |what| {
        move |e: postgres::Error| SeedError::Statement {
            url: stampede_schema::redact::url(url),
            what,
            reason: one_line(&e),
        }
    };
    let mut tx = client.transaction().map_err(fail("begin a transaction"))?;
    tx.batch_execute(SCHEMA).map_err(fail("create the tables"))?;
    // The server draws the random numbers: least() keeps random()'s rare
    // 1.0 - ε from rounding up to 10001.
    for (world, fortune) in TABLES {
        tx.execute(
            &format!("INSERT INTO {world} (id, randomnumber) SELECT x, least(10000, 1 + floor(random() * 10000))::integer FROM generate_series(1, $1::integer) AS x"),
            &[&WORLD_ROWS],
        )
        .map_err(fail("fill world"))?;
        let insert = tx
            .prepare(&format!("INSERT INTO {fortune} (id, message) VALUES ($1, $2)"))
            .map_err(fail("fill fortune"))?;
        for (i, message) in FORTUNES.iter().enumerate() {
            tx.execute(&insert, &[&(i as i32 + 1), message]).map_err(fail("fill fortune"))?;
        }
    }
    tx.commit().map_err(fail("commit the rows"))?;
    client
        .batch_execute(r#"ANALYZE world; ANALYZE fortune; ANALYZE "World"; ANALYZE "Fortune""#)
        .map_err(fail("analyze the tables"))
}

/// `CREATE EXTENSION pg_stat_statements` in the private cluster's database,
/// which preloads the module when it is installed (cluster.rs), so
/// `stampede check` can count each endpoint's statements and rows. Where the
/// module is not loaded this does nothing: the check then says it could not
/// count.
pub fn count_statements(url: &str) -> Result<(), SeedError> {
    let mut client = connect(url)?;
    let loaded: bool = client
        .query_one("SELECT count(*) > 0 FROM pg_available_extensions WHERE name = 'pg_stat_statements'", &[])
        .and_then(|row| row.try_get(0))
        .unwrap_or(false);
    let preloaded = client.query_one("SHOW shared_preload_libraries", &[]).map(|row| row.get::<_, String>(0));
    if !loaded || !preloaded.is_ok_and(|libs| libs.contains("pg_stat_statements")) {
        return Ok(());
    }
    client.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").map_err(|e| SeedError::Statement {
        url: stampede_schema::redact::url(url),
        what: "create the pg_stat_statements extension",
        reason: one_line(&e),
    })
}
