//! A TechEmpower Framework Benchmarks implementation's `benchmark_config.json`,
//! read for what Stampede needs to check or load it: each test entry's name,
//! port and URLs (`json_url`, `plaintext_url`, `db_url`, `query_url`,
//! `update_url`, `fortune_url`, `cached_query_url`). The URLs become a
//! [`UrlMap`]: `query_url` ends with the prefix TechEmpower's toolset appends
//! the count to (`/queries?q=`, `/queries/`), which is what the map does too.
//! Every other field of the file (approach, orm, display name, …) is
//! TechEmpower's business and is ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::model::Contract;
use crate::urls::UrlMap;

/// One test entry of the file: `tests[].{name}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TfbTest {
    /// Its key in the file (`default`, `pg`, …).
    pub name: String,
    /// The port it listens on (`port`; TechEmpower's default 8080 when absent).
    pub port: u16,
    /// Its URLs, by the contract endpoint each one serves.
    pub urls: UrlMap,
}

/// Why a config cannot be used; each names the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum TfbConfigError {
    #[error("{path}: cannot read: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("{path}: not a TechEmpower benchmark_config.json: {reason}")]
    Format { path: PathBuf, reason: String },
    #[error("{path}: no test named {name:?}; it declares {known}")]
    UnknownTest { path: PathBuf, name: String, known: String },
}

#[derive(Deserialize)]
struct File {
    tests: Vec<BTreeMap<String, Entry>>,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    port: Option<u16>,
    #[serde(default)]
    json_url: Option<String>,
    #[serde(default)]
    plaintext_url: Option<String>,
    #[serde(default)]
    db_url: Option<String>,
    #[serde(default)]
    query_url: Option<String>,
    #[serde(default)]
    update_url: Option<String>,
    #[serde(default)]
    fortune_url: Option<String>,
    #[serde(default)]
    cached_query_url: Option<String>,
}

impl TfbTest {
    /// The contracts its URLs are checked with, each kept to the endpoints
    /// the test declares: `tfb` for `plaintext_url` and `json_url`, `db` for
    /// `db_url`, `query_url`, `update_url` and `fortune_url`.
    pub fn contracts(&self) -> Vec<Contract> {
        ["tfb", "db"]
            .into_iter()
            .filter_map(crate::builtin::builtin)
            .map(|contract| self.urls.restrict(&contract))
            .filter(|contract| !contract.rules.is_empty() || !contract.probes.is_empty())
            .collect()
    }

    /// The server's base URL: `given` as it is, else loopback at its port.
    pub fn base_url(&self, given: Option<&str>) -> String {
        given.map_or_else(|| format!("http://127.0.0.1:{}", self.port), str::to_string)
    }
}

/// TechEmpower's port when a test entry gives none.
const DEFAULT_PORT: u16 = 8080;

impl Entry {
    /// Its URLs keyed by the endpoint names the contracts use.
    fn urls(self) -> BTreeMap<String, String> {
        let named = [
            ("json", self.json_url),
            ("plaintext", self.plaintext_url),
            ("db", self.db_url),
            ("queries", self.query_url),
            ("updates", self.update_url),
            ("fortunes", self.fortune_url),
            ("cached-queries", self.cached_query_url),
        ];
        named.into_iter().filter_map(|(name, url)| Some((name.to_string(), url?))).collect()
    }
}

/// Reads the test entries of `path` (by name within each object of `tests`);
/// `only` keeps the one of that name (an error listing the names when there
/// is none).
pub fn read(path: &Path, only: Option<&str>) -> Result<Vec<TfbTest>, TfbConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| TfbConfigError::Read { path: path.to_path_buf(), reason: e.to_string() })?;
    let format = |reason: String| TfbConfigError::Format { path: path.to_path_buf(), reason };
    let file: File = serde_json::from_str(&text).map_err(|e| format(e.to_string()))?;
    let mut tests = Vec::new();
    for (name, entry) in file.tests.into_iter().flatten() {
        let port = entry.port.unwrap_or(DEFAULT_PORT);
        let urls = UrlMap::new(entry.urls()).map_err(|e| format(format!("test {name:?}: {e}")))?;
        tests.push(TfbTest { name, port, urls });
    }
    if tests.is_empty() {
        return Err(format("its \"tests\" list is empty".into()));
    }
    if let Some(wanted) = only {
        let known = tests.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ");
        tests.retain(|t| t.name == wanted);
        if tests.is_empty() {
            return Err(TfbConfigError::UnknownTest { path: path.to_path_buf(), name: wanted.into(), known });
        }
    }
    Ok(tests)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("stampede-tfb-{}-{name}.json", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn every_test_entry_with_its_port_and_urls() {
        let path = write(
            "gin",
            r#"{"framework": "gin", "tests": [{
                "default": {"json_url": "/json", "plaintext_url": "/plaintext", "port": 8080, "orm": "Raw"},
                "pg": {"db_url": "/db", "query_url": "/dbs?queries=", "update_url": "/update?queries=",
                       "fortune_url": "/fortunes", "port": 3000}}]}"#,
        );
        let tests = read(&path, None).unwrap();
        assert_eq!(
            tests.iter().map(|t| (t.name.as_str(), t.port)).collect::<Vec<_>>(),
            [("default", 8080), ("pg", 3000)]
        );
        assert_eq!(tests[1].urls.rewrite("/queries?queries=20"), "/dbs?queries=20");
        assert_eq!(tests[1].urls.rewrite("/updates?queries=20"), "/update?queries=20");
        let names = |t: &TfbTest| t.contracts().into_iter().map(|c| c.name).collect::<Vec<_>>();
        assert_eq!(names(&tests[0]), ["tfb"]);
        assert_eq!(names(&tests[1]), ["db"]);
        assert_eq!(tests[1].base_url(None), "http://127.0.0.1:3000");
        assert_eq!(read(&path, Some("pg")).unwrap().len(), 1);
        let e = read(&path, Some("mysql")).unwrap_err().to_string();
        assert!(e.contains("no test named \"mysql\"") && e.contains("default, pg"), "{e}");
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_missing_or_malformed_file_names_it() {
        let e = read(Path::new("/nonexistent/benchmark_config.json"), None).unwrap_err().to_string();
        assert!(e.starts_with("/nonexistent/benchmark_config.json: cannot read"), "{e}");
        let path = write("bad", r#"{"tests": {"default": {}}}"#);
        let e = read(&path, None).unwrap_err().to_string();
        assert!(e.contains(&path.display().to_string()) && e.contains("not a TechEmpower"), "{e}");
        std::fs::write(&path, r#"{"tests": [{"default": {"query_url": "queries?q="}}]}"#).unwrap();
        let e = read(&path, None).unwrap_err().to_string();
        assert!(e.contains("test \"default\"") && e.contains("starting with /"), "{e}");
        std::fs::remove_file(path).unwrap();
    }
}
