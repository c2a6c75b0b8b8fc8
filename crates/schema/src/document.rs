//! Reading a results file Stampede wrote: a `stampede.run/1` results.json or
//! a single `stampede.load/1` document. One reader, used by `report`,
//! `compare` and `explain`, so they accept the same files and name the same
//! field when one is wrong.

use std::path::Path;

use crate::load::{self, LoadResult};
use crate::run::{self, ResultsDoc};

/// The largest results file read: far above any real scenario's (a few
/// MiB), far below what would exhaust memory.
pub const MAX_DOCUMENT_BYTES: u64 = 512 * 1024 * 1024;

/// Either document a results file may hold.
#[derive(Debug, Clone)]
pub enum Document {
    Run(Box<ResultsDoc>),
    Load(Box<LoadResult>),
}

impl Document {
    /// The document as results, its secrets masked (crate::redact: a file
    /// written before they were masked shows none either): a load document
    /// becomes one run.
    pub fn into_results(self) -> ResultsDoc {
        let mut doc = match self {
            Document::Run(doc) => *doc,
            Document::Load(load) => ResultsDoc::from_load(*load),
        };
        doc.redact();
        doc
    }
}

/// Why a document could not be read; the caller adds the file name.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("cannot read it: {0}")]
    Read(std::io::Error),
    #[error("it is larger than {} MiB, the most a results file may be", MAX_DOCUMENT_BYTES >> 20)]
    TooLarge,
    #[error("not JSON ({0})")]
    NotJson(serde_json::Error),
    #[error("{}{message}", in_field(field))]
    Json { field: String, message: String },
    #[error("{}: {error} ({field} names it); keep the *.slow.gz files beside results.json, as `stampede run` wrote them (docs/results.md, \"Slow-request files\")", path.display())]
    SlowLog { field: String, path: std::path::PathBuf, error: crate::slow_log::SlowLogError },
    #[error("schema is {found:?}, expected \"stampede.run/1\" (a results.json from `stampede run`) or \"stampede.load/1\" (from `stampede load --json`)")]
    Schema { found: String },
}

fn in_field(field: &str) -> String {
    if field.is_empty() || field == "." {
        String::new()
    } else {
        format!("field {field}: ")
    }
}

/// Parses a document held in memory; errors name the field at fault.
pub fn parse(text: &str) -> Result<Document, DocumentError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(DocumentError::NotJson)?;
    let found = match value.get("schema") {
        Some(serde_json::Value::String(schema)) => schema.clone(),
        Some(other) => other.to_string(),
        None => "(no schema field)".to_owned(),
    };
    match found.as_str() {
        run::SCHEMA => Ok(Document::Run(Box::new(typed(value)?))),
        load::SCHEMA => Ok(Document::Load(Box::new(typed(value)?))),
        _ => Err(DocumentError::Schema { found }),
    }
}

fn typed<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, DocumentError> {
    serde_path_to_error::deserialize(value)
        .map_err(|e| DocumentError::Json { field: e.path().to_string(), message: e.inner().to_string() })
}

/// Reads a file, refusing one above [`MAX_DOCUMENT_BYTES`] (`/dev/zero`, a
/// disk image) instead of growing without bound.
pub fn read_text(path: &Path) -> Result<String, DocumentError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).map_err(DocumentError::Read)?;
    file.take(MAX_DOCUMENT_BYTES + 1).read_to_end(&mut bytes).map_err(DocumentError::Read)?;
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(DocumentError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|e| DocumentError::Read(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

/// Reads and parses a file, leaving out the slow requests results.json
/// keeps in files beside it (their phases' `slow_requests` stay empty): for
/// views that do not use them (`compare`), so a results.json copied
/// without its `*.slow.gz` files still compares.
pub fn read_figures(path: &Path) -> Result<Document, DocumentError> {
    parse(&read_text(path)?)
}

/// Reads and parses a file, with the slow requests results.json keeps in
/// files beside it read back into their phases.
pub fn read(path: &Path) -> Result<Document, DocumentError> {
    let mut document = read_figures(path)?;
    if let Document::Run(doc) = &mut document {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        crate::slow_log::load(doc, dir).map_err(|m| DocumentError::SlowLog {
            field: m.field,
            path: m.path,
            error: m.error,
        })?;
    }
    Ok(document)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_type_names_the_field() {
        let text = r#"{"schema":"stampede.run/1","runs":[{"app":"go","load":{"rps":"fast"}}]}"#;
        let err = parse(text).unwrap_err().to_string();
        assert!(err.contains("runs[0].load.rps"), "{err}");
    }

    #[test]
    fn an_unknown_schema_is_refused_by_name() {
        let err = parse(r#"{"schema":"other/9"}"#).unwrap_err().to_string();
        assert!(err.contains("other/9"), "{err}");
        let err = parse(r#"{"runs":[]}"#).unwrap_err().to_string();
        assert!(err.contains("no schema field"), "{err}");
    }

    #[test]
    fn a_load_document_becomes_one_run() {
        let doc = parse(r#"{"schema":"stampede.load/1","url":"http://x/","rps":10.0,"mode":"closed"}"#).unwrap();
        let results = doc.into_results();
        assert_eq!(results.runs.len(), 1);
        assert_eq!((results.runs[0].app.as_str(), results.runs[0].profile.as_str()), ("http://x/", "closed"));
        assert!(results.runs[0].is_valid());
    }

    #[test]
    fn secrets_in_an_older_file_are_masked_when_it_is_read() {
        let text = r#"{"schema":"stampede.run/1","environment":{"command_line":"stampede run --set database.url=postgres://u:pw1@h/d"},
            "scenario":{"redact_headers":["X-Key"],"profiles":[{"headers":["Authorization: Bearer tok2","X-Key: k3"]}]},
            "runs":[{"app":"go","invalid_reason":"cannot reach postgres://u:pw4@h/d","load":{"url":"http://u:pw5@h/"}}]}"#;
        let shown = serde_json::to_string(&parse(text).unwrap().into_results()).unwrap();
        for secret in ["pw1", "tok2", "k3", "pw4", "pw5"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains("postgres://u:***@h/d") && shown.contains("X-Key: ***"), "{shown}");
        let load = parse(r#"{"schema":"stampede.load/1","url":"http://me:pw6@x/"}"#).unwrap().into_results();
        assert_eq!(load.runs[0].app, "http://me:***@x/");
    }
}
