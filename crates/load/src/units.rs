//! Command-line quantities with units, as benchmark users type them:
//! durations (`500ms`, `10s`, `1m`, `1h`, a bare number is seconds) and
//! compound durations (`1m30s`), counts or rates (`20k`, `1.5M`). Shared by every subcommand so `--duration`
//! means the same thing everywhere.

use std::time::Duration;

pub fn parse_duration(s: &str) -> Result<Duration, String> {
    simple_duration(s).or_else(|e| humantime::parse_duration(s.trim()).map_err(|_| e))
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
    if !secs.is_finite() || secs > 1e9 {
        return Err(format!("{s:?} is too long"));
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
}
