//! Reading numbers leniently. serde_json writes a non-finite `f64` as
//! `null`, and older or hand-written results files use `null` for "not
//! measured"; a reader takes either as the field's default (0) instead of
//! refusing the whole file.

use serde::{Deserialize, Deserializer};

/// `null` or a number; `null` reads as the default.
pub fn or_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use crate::load::{Percentiles, SecondStats};

    #[test]
    fn null_numbers_read_as_zero() {
        let s: SecondStats = serde_json::from_str(r#"{"t_s":6,"requests":0,"errors":3,"p99_us":null}"#).unwrap();
        assert_eq!((s.t_s, s.errors, s.p99_us), (6, 3, 0.0));
        let p: Percentiles = serde_json::from_str(r#"{"p50":null,"p99":12.5}"#).unwrap();
        assert_eq!((p.p50, p.p99), (0.0, 12.5));
    }
}
