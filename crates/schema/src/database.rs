//! What a run records about the database under the server (a scenario's
//! `[database]`, docs/database.md): which database it was, what its process
//! tree cost during the measured phase, and requests per core counting the
//! server's and the database's cores together, since an API that answers
//! from a database spends both. Attached to the run record as `database`,
//! absent for runs without one.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DatabaseUsage {
    /// Which database: "private PostgreSQL 15.8 cluster at postgres://benchmarkdbuser:***@127.0.0.1:41234/hello_world",
    /// or the scenario's own server (password hidden).
    pub database: String,
    /// Cores the database's process tree used on average over the measured
    /// phase; absent when it runs where the probe cannot see it (a `url`).
    pub cpu_cores_avg: Option<f64>,
    /// Its highest sample, in percent of the machine's cores.
    pub cpu_pct_max: Option<f64>,
    /// Its largest resident memory over the run, MiB (summed over its processes).
    pub rss_max_mib: Option<f64>,
    /// Requests per second per core of server and database together:
    /// `rps / (server cores + database cores)`; 0 when neither used measurable CPU.
    pub rps_per_core: f64,
}

impl DatabaseUsage {
    /// `rps / (server + database cores)`, 0 when they used no measurable CPU.
    pub fn rps_per_core(rps: f64, server_cores: f64, database_cores: Option<f64>) -> f64 {
        let cores = server_cores + database_cores.unwrap_or(0.0);
        if cores > 1e-6 {
            rps / cores
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_per_core_count_the_database_too() {
        assert_eq!(DatabaseUsage::rps_per_core(3000.0, 1.0, Some(0.5)), 2000.0);
        assert_eq!(DatabaseUsage::rps_per_core(3000.0, 1.0, None), 3000.0);
        assert_eq!(DatabaseUsage::rps_per_core(3000.0, 0.0, Some(0.0)), 0.0);
    }

    #[test]
    fn an_older_record_reads_with_defaults() {
        let usage: DatabaseUsage = serde_json::from_str("{\"database\":\"x\"}").unwrap();
        assert_eq!(usage.cpu_cores_avg, None);
        assert_eq!(usage.rps_per_core, 0.0);
    }
}
