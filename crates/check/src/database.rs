//! The database behind the server, read directly (`--database URL`, the
//! `postgres` crate), so the database rules (db_probes.rs) judge an answer
//! by the rows themselves and never by what the server says about them: a
//! `/db` answer must be a row that exists with that number, an `/updates`
//! answer must be what the table holds afterwards, `/fortunes` must list what
//! the `fortune` table holds.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Duration;

use postgres::{Client, NoTls};

use crate::error::CheckError;

pub struct Database {
    pub(crate) client: Client,
    /// When the server was last known to be idle with its statistics
    /// flushed (counting.rs); `None` before the first concurrent phase.
    pub(crate) quiet_since: Option<std::time::Instant>,
}

impl Database {
    pub fn connect(url: &str, timeout: Duration) -> Result<Database, CheckError> {
        let fail = |reason: String| CheckError::Database { url: stampede_schema::redact::url(url), reason };
        let mut config = postgres::Config::from_str(url)
            .map_err(|e| fail(format!("{e} (write postgres://user:password@host:port/database)")))?;
        config.connect_timeout(timeout);
        let client = config.connect(NoTls).map_err(|e| fail(message(&e)))?;
        Ok(Database { client, quiet_since: None })
    }

    /// Every row of `world`: id → randomnumber.
    pub fn world(&mut self) -> Result<BTreeMap<i32, i32>, String> {
        let rows = self
            .client
            .query("SELECT id, randomnumber FROM world", &[])
            .map_err(|e| format!("cannot read the world table: {}", message(&e)))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Every row of `fortune`, by id.
    pub fn fortunes(&mut self) -> Result<Vec<(i32, String)>, String> {
        let rows = self
            .client
            .query("SELECT id, message FROM fortune ORDER BY id", &[])
            .map_err(|e| format!("cannot read the fortune table: {}", message(&e)))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }
}

/// The server's own message when it sent one, else the driver's with its cause.
pub(crate) fn message(err: &postgres::Error) -> String {
    match (err.as_db_error(), std::error::Error::source(err)) {
        (Some(db), _) => db.message().to_string(),
        (None, Some(cause)) => format!("{err}: {cause}"),
        (None, None) => err.to_string(),
    }
}
