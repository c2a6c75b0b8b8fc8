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
}
