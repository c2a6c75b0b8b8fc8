//! Number formatting shared by the exporters and the HTML report, so a value
//! reads the same in every format: a few significant digits, units in the
//! column title, and "–" for a value that was not measured.

/// A value with about three significant digits, or "–" when absent.
pub fn num(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => sig(v),
        _ => "–".to_owned(),
    }
}

/// About three significant digits, without exponent or trailing zeros,
/// thousands kept whole.
pub fn sig(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        return group_thousands(v.round() as i64);
    }
    let text = if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_owned() } else { text };
    if text == "-0" {
        "0".to_owned()
    } else {
        text
    }
}

/// An integer with a comma between thousands: `12,345` (the one format of
/// every table, the terminal's and the report's).
pub fn group_thousands(v: i64) -> String {
    let digits = v.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0 {
        out.insert(0, '-');
    }
    out
}

/// An integer count, or "–".
pub fn count(value: Option<u64>) -> String {
    value.map(|v| group_thousands(v as i64)).unwrap_or_else(|| "–".to_owned())
}

/// A signed percentage with one decimal: `+4.2%`.
pub fn pct(fraction: f64) -> String {
    format!("{:+.1}%", fraction * 100.0)
}

/// A plain number for machine formats (CSV): full precision, empty when absent.
pub fn raw(value: Option<f64>) -> String {
    value.filter(|v| v.is_finite()).map(|v| v.to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits() {
        assert_eq!(sig(123456.7), "123,457");
        assert_eq!(sig(512.3), "512");
        assert_eq!(sig(12.34), "12.3");
        assert_eq!(sig(1.234), "1.23");
        assert_eq!(sig(0.01234), "0.012");
        assert_eq!(sig(0.5), "0.5");
        assert_eq!(sig(10.0), "10");
        assert_eq!(sig(0.0), "0");
        assert_eq!(sig(-0.0001), "0");
        assert_eq!(num(None), "–");
        assert_eq!(group_thousands(-1234), "-1,234");
        assert_eq!(pct(-0.2), "-20.0%");
    }
}
