//! `grpc-timeout`, the deadline a client sends with a call: at most eight
//! digits and a unit letter (H, M, S, m, u, n). `--deadline 200ms` must go
//! out as `200m`, the way a person and grpc-go would write it, so the
//! coarsest unit that holds the duration exactly wins; a duration no unit
//! holds exactly in eight digits is rounded up to the finest one that fits,
//! because a deadline sent shorter than asked would fail calls the user
//! allowed.

use std::time::Duration;

const MAX_VALUE: u128 = 99_999_999;
/// Units from coarsest to finest, in nanoseconds.
const UNITS: [(char, u128); 6] =
    [('H', 3_600_000_000_000), ('M', 60_000_000_000), ('S', 1_000_000_000), ('m', 1_000_000), ('u', 1_000), ('n', 1)];

/// The `grpc-timeout` value for `deadline`.
pub fn encode_timeout(deadline: Duration) -> String {
    let ns = deadline.as_nanos();
    if let Some((unit, size)) = UNITS.iter().find(|(_, size)| ns.is_multiple_of(*size) && ns / size <= MAX_VALUE) {
        return format!("{}{unit}", ns / size);
    }
    for (unit, size) in UNITS.iter().rev() {
        let value = ns.div_ceil(*size);
        if value <= MAX_VALUE {
            return format!("{value}{unit}");
        }
    }
    format!("{MAX_VALUE}H")
}

/// How a `grpc-timeout` value reads (`1n`, `300m`, `2S`): 1 to 8 digits and
/// a unit; `None` when it is not one. A contract sends the value as written,
/// malformed deadlines included, and judges the call against what it means.
pub fn decode_timeout(value: &str) -> Option<Duration> {
    let (at, unit) = value.char_indices().last()?;
    let digits = &value[..at];
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u128 = digits.parse().ok()?;
    let (_, size) = UNITS.iter().find(|(u, _)| *u == unit)?;
    Some(Duration::from_nanos((n * size) as u64))
}

/// `5s`, `1.5s` or `250ms`: a duration said short, in messages (a call's
/// wait, a check's timeout).
pub fn short_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_goes_out_in_the_coarsest_exact_unit() {
        assert_eq!(encode_timeout(Duration::from_millis(200)), "200m");
        assert_eq!(encode_timeout(Duration::from_millis(1500)), "1500m");
        assert_eq!(encode_timeout(Duration::from_secs(2)), "2S");
        assert_eq!(encode_timeout(Duration::from_secs(120)), "2M");
        assert_eq!(encode_timeout(Duration::from_secs(7200)), "2H");
        assert_eq!(encode_timeout(Duration::from_micros(250)), "250u");
        assert_eq!(encode_timeout(Duration::from_nanos(5)), "5n");
        assert_eq!(encode_timeout(Duration::ZERO), "0H");
    }

    #[test]
    fn a_deadline_no_unit_holds_exactly_is_rounded_up_never_down() {
        // 10 s + 1 ns: nanoseconds need 11 digits; microseconds round up.
        let d = Duration::new(10, 1);
        assert_eq!(encode_timeout(d), "10000001u");
        let value: u64 = encode_timeout(d).trim_end_matches('u').parse().unwrap();
        assert!(Duration::from_micros(value) >= d);
        assert_eq!(encode_timeout(Duration::new(100, 1)), "100001m", "eight digits at most");
        assert_eq!(encode_timeout(Duration::from_secs(u64::MAX)), "99999999H");
    }

    #[test]
    fn a_grpc_timeout_is_digits_and_a_unit() {
        assert_eq!(decode_timeout("1n"), Some(Duration::from_nanos(1)));
        assert_eq!(decode_timeout("300m"), Some(Duration::from_millis(300)));
        assert_eq!(decode_timeout("2S"), Some(Duration::from_secs(2)));
        assert_eq!(decode_timeout("1H"), Some(Duration::from_secs(3600)));
        for bad in ["", "m", "300", "300ms", "123456789m", "-1m", "1x"] {
            assert_eq!(decode_timeout(bad), None, "{bad}");
        }
        assert_eq!(decode_timeout(&encode_timeout(Duration::from_millis(200))), Some(Duration::from_millis(200)));
    }

    #[test]
    fn a_grpc_timeout_ending_in_a_multibyte_character_is_refused_not_a_panic() {
        assert_eq!(decode_timeout("1é"), None);
        assert_eq!(decode_timeout("é"), None);
    }
}
