//! The database a scenario's apps talk to (issue 18, apps/CONTRACT.md's
//! database endpoints). A scenario with a `[database]` section gets one for
//! the whole of `stampede run`: by default a private PostgreSQL cluster that
//! Stampede creates, seeds and stops itself (cluster.rs,
//! seed.rs); with `url = "postgres://…"` the user's own server,
//! used as it is (seeded only with `seed = true`). Either way every app is
//! started with the same connection settings in its environment
//! (`DATABASE_URL` and the libpq `PG*` variables), `stampede check` is given
//! the URL so its database rules can read the rows back, and the probe
//! samples a local cluster's process tree beside the server's.

pub(crate) mod cluster;
pub(crate) mod seed;

use std::path::Path;
use std::str::FromStr;

use crate::database::cluster::{Cluster, ClusterError};
use crate::scenario::database::DatabaseSpec;
use seed::SeedError;

#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    Seed(#[from] SeedError),
    #[error("database.url: {0}")]
    Url(String),
}

/// The database of a running scenario. A private cluster is stopped (and its
/// files removed) when this is dropped, so every way out of `stampede run`
/// (the end, an error, Ctrl-C) takes it down.
pub struct Database {
    url: String,
    cluster: Option<Cluster>,
}

impl Database {
    /// Starts (or reaches) and seeds the database `spec` describes. The
    /// cluster's log goes to `logs/database.log`.
    pub fn open(spec: &DatabaseSpec, logs: &Path, interrupted: &dyn Fn() -> bool) -> Result<Database, DatabaseError> {
        match &spec.url {
            Some(url) => {
                if spec.seed {
                    seed::seed(url)?;
                } else {
                    seed::reachable(url)?;
                }
                Ok(Database { url: url.clone(), cluster: None })
            }
            None => {
                let cluster = Cluster::start(&logs.join("database.log"), interrupted)?;
                let admin = cluster.url("postgres");
                seed::create_database(&admin, seed::DATABASE)?;
                let url = cluster.url(seed::DATABASE);
                seed::seed(&url)?;
                seed::count_statements(&url)?;
                Ok(Database { url, cluster: Some(cluster) })
            }
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The private cluster's postmaster, for the probe (none for a user's server).
    pub fn local_pid(&self) -> Option<i32> {
        self.cluster.as_ref().map(Cluster::pid)
    }

    /// What results.json says about the database (no password).
    pub fn describe(&self) -> String {
        let hidden = stampede_schema::redact::url(&self.url);
        match &self.cluster {
            Some(c) => format!("private PostgreSQL {} cluster at {hidden}", c.version()),
            None => format!("the scenario's server at {hidden}"),
        }
    }

    /// The environment every app gets: `DATABASE_URL` and libpq's variables.
    pub fn env(&self) -> Result<Vec<(String, String)>, DatabaseError> {
        env_for(&self.url)
    }
}

/// `DATABASE_URL` and `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`,
/// `PGDATABASE` for `url` (apps/CONTRACT.md, "Database").
pub fn env_for(url: &str) -> Result<Vec<(String, String)>, DatabaseError> {
    let config = postgres::Config::from_str(url)
        .map_err(|e| DatabaseError::Url(format!("{:?}: {e}", stampede_schema::redact::url(url))))?;
    let mut env = vec![("DATABASE_URL".to_string(), url.to_string())];
    if let Some(postgres::config::Host::Tcp(host)) = config.get_hosts().first() {
        env.push(("PGHOST".into(), host.clone()));
    }
    if let Some(port) = config.get_ports().first() {
        env.push(("PGPORT".into(), port.to_string()));
    }
    if let Some(user) = config.get_user() {
        env.push(("PGUSER".into(), user.to_string()));
    }
    if let Some(password) = config.get_password() {
        env.push(("PGPASSWORD".into(), String::from_utf8_lossy(password).into_owned()));
    }
    if let Some(db) = config.get_dbname() {
        env.push(("PGDATABASE".into(), db.to_string()));
    }
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_seeding_is_announced_when_nothing_is_seeded() {
        let spec = |url: Option<&str>, seed| DatabaseSpec { url: url.map(String::from), seed };
        assert_eq!(spec(Some("postgres://u@h/d"), false).opening(), "connecting to the database");
        assert_eq!(spec(Some("postgres://u@h/d"), true).opening(), "seeding the database");
        assert!(spec(None, false).opening().contains("seeding"));
    }

    #[test]
    fn the_environment_follows_the_url() {
        let env = env_for("postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:5499/hello_world").unwrap();
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("PGHOST"), Some("127.0.0.1"));
        assert_eq!(get("PGPORT"), Some("5499"));
        assert_eq!(get("PGUSER"), Some("benchmarkdbuser"));
        assert_eq!(get("PGPASSWORD"), Some("benchmarkdbpass"));
        assert_eq!(get("PGDATABASE"), Some("hello_world"));
        assert_eq!(get("DATABASE_URL"), Some("postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:5499/hello_world"));
    }

    #[test]
    fn a_scenario_names_its_bad_database_url_and_takes_an_empty_section() {
        let text = "apps = [\"go\"]\n[[profiles]]\npath = \"/db\"\n[database]\n";
        let path = Path::new("db.toml");
        let scenario = crate::Scenario::parse(text, path, &[]).unwrap();
        assert_eq!(scenario.database, Some(DatabaseSpec::default()));
        let err = crate::Scenario::parse(text, path, &["database.url=\"http://x\"".into()]).unwrap_err().to_string();
        assert!(err.contains("db.toml") && err.contains("database.url") && err.contains("postgres://"), "{err}");
        let err = crate::Scenario::parse(text, path, &["database.seeds=true".into()]).unwrap_err().to_string();
        assert!(err.contains("seeds"), "{err}");
    }
}
