//! Durations as the command line and scenario files write them (`500ms`,
//! `2s`, `1m`), and back, so a scenario serialised into results.json reads
//! the way it was written. Every duration is at most 365 days
//! (`stampede_spec::units::MAX_DURATION`), however it is written.

use std::time::Duration;

/// Parses `500ms`, `2s`, `1m`, `1m30s`; a bare number is seconds. The same
/// reader as `stampede load`'s flags, so a duration means one thing everywhere.
pub fn parse(text: &str) -> Result<Duration, String> {
    stampede_spec::units::parse_duration(text)
}

/// Formats a duration the way `parse` reads it (`1s`, `500ms`).
pub use stampede_schema::units::format_duration as format;

/// `#[serde(with = "crate::scenario::duration::serde_text")]` for `Duration` fields.
pub use stampede_schema::units::serde_text;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_bare_seconds() {
        assert_eq!(parse("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse("fast").unwrap_err().contains("e.g. 500ms"));
        assert!(parse("-1").is_err());
    }
}
