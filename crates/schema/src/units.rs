//! Command-line quantities with units, as benchmark users type them:
//! durations (`500ms`, `10s`, `1m`, `1h`, a bare number is seconds) and
//! compound durations (`1m30s`), counts or rates (`20k`, `1.5M`). Shared by every subcommand so `--duration`
//! means the same thing everywhere.
//!
//! Every duration is capped at [`MAX_DURATION`] (365 days): a longer one is no
//! benchmark, and the engine adds durations to the monotonic clock, where an
//! absurd value (`9223372036854775807s`) would overflow instead of failing.

use std::time::Duration;

/// The longest duration any flag or scenario field accepts: 365 days.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// Parses a duration and refuses one longer than [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = simple_duration(s).or_else(|e| humantime::parse_duration(s.trim()).map_err(|_| e))?;
    if d > MAX_DURATION {
        return Err(too_long(s));
    }
    Ok(d)
}

fn too_long(s: &str) -> String {
    format!("{s:?} is longer than the maximum of 365 days (365d)")
}

/// A duration given as a bare number of seconds (a scenario's `duration = 2`),
/// held to the same range as [`parse_duration`].
pub fn duration_from_secs(secs: f64) -> Result<Duration, String> {
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(format!("{secs} is not a duration; use e.g. 500ms, 10s, 1m"));
    }
    match Duration::try_from_secs_f64(secs) {
        Ok(d) if d <= MAX_DURATION => Ok(d),
        _ => Err(too_long(&format!("{secs:e}s"))),
    }
}

/// One number and one unit; compound forms (`1m30s`) go to humantime.
fn simple_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| format!("{s:?} is not a duration; use e.g. 500ms, 10s, 1m"))?;
    let secs = match unit.trim() {
        "" | "s" | "sec" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => return Err(format!("unknown unit {other:?} in {s:?}; use ms, s, m or h")),
    };
    if !secs.is_finite() || secs > MAX_DURATION.as_secs_f64() {
        return Err(too_long(s));
    }
    Ok(Duration::from_secs_f64(secs))
}

pub fn parse_count(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        Some('G') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    };
    let v: f64 = num.parse().map_err(|_| format!("{s:?} is not a number; use e.g. 500, 20k, 1.5M"))?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!("{s:?} must be a non-negative number"));
    }
    Ok(v * mult)
}

/// A whole count with units (`10k` → 10000).
pub fn parse_whole(s: &str) -> Result<u64, String> {
    let v = parse_count(s)?;
    if v.fract() != 0.0 {
        return Err(format!("{s:?} must be a whole number"));
    }
    Ok(v as u64)
}

/// Formats a duration the way [`parse_duration`] reads it (`1s`, `500ms`,
/// `1m30s`), so a document says a duration the way a person writes it.
pub fn format_duration(d: Duration) -> String {
    if d.is_zero() {
        return "0s".into();
    }
    humantime::format_duration(d).to_string().replace(' ', "")
}

/// `#[serde(with = "stampede_schema::units::serde_text")]` for a `Duration`
/// written as text (`"500ms"`) or a bare number of seconds.
pub mod serde_text {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_duration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Text {
            S(String),
            N(f64),
        }
        match Text::deserialize(d).map_err(|_| {
            serde::de::Error::custom("expected a duration such as \"500ms\", \"10s\" or a number of seconds")
        })? {
            Text::S(s) => super::parse_duration(&s).map_err(serde::de::Error::custom),
            Text::N(n) => super::duration_from_secs(n).map_err(serde::de::Error::custom),
        }
    }
}

/// [`serde_text`] for an `Option<Duration>`.
pub mod serde_text_opt {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::serde_text::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        #[derive(Deserialize)]
        struct Text(#[serde(with = "super::serde_text")] Duration);
        Ok(Option::<Text>::deserialize(d)?.map(|t| t.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_counts() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert!(parse_duration("10x").is_err());
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert!(parse_duration("-1s").is_err());
        assert_eq!(parse_count("20k").unwrap(), 20_000.0);
        assert_eq!(parse_whole("1.5M").unwrap(), 1_500_000);
        assert!(parse_whole("1.5").is_err());
        assert!(parse_count("x").is_err());
    }

    #[test]
    fn formatted_durations_read_back() {
        for d in [Duration::from_millis(500), Duration::from_secs(2), Duration::from_secs(90), Duration::ZERO] {
            assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
        }
    }

    #[test]
    fn durations_past_a_year_are_refused_whichever_parser_reads_them() {
        assert_eq!(parse_duration("365d").unwrap(), MAX_DURATION);
        for long in ["9223372036854775807s", "18446744073709551615s", "366d", "8761h"] {
            let err = parse_duration(long).unwrap_err();
            assert!(err.contains("365 days"), "{long}: {err}");
        }
        assert!(duration_from_secs(1e300).unwrap_err().contains("365 days"));
        assert!(duration_from_secs(f64::NAN).is_err());
        assert_eq!(duration_from_secs(1.5).unwrap(), Duration::from_millis(1500));
    }
}
