//! Reading numbers leniently. serde_json writes a non-finite `f64` as
//! `null`, and older or hand-written results files use `null` for "not
//! measured" and sometimes write a count as `3.0`; a reader takes `null` as
//! the field's default (0, empty) and a whole float as a count instead of
//! refusing the whole file.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};

/// `null` or a value; `null` reads as the default.
pub fn or_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A count: `null` (0), a whole number, or a float with no fraction (`3.0`).
pub fn count<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<u64> + Default,
{
    use serde::de::Error;
    let number = match Option::<serde_json::Number>::deserialize(deserializer)? {
        None => return Ok(T::default()),
        Some(number) => number,
    };
    let whole = match (number.as_u64(), number.as_f64()) {
        (Some(n), _) => n,
        (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64 => f as u64,
        _ => return Err(D::Error::custom(format!("expected a whole number of at least 0, found {number}"))),
    };
    T::try_from(whole).map_err(|_| D::Error::custom(format!("{whole} is too large")))
}

/// A map of text values (knob values, runtime versions): strings as they
/// are, numbers and booleans as written, `null` as empty text.
pub fn text_map<'de, D>(deserializer: D) -> Result<BTreeMap<String, String>, D::Error>
where
    D: Deserializer<'de>,
{
    let raw: Option<BTreeMap<String, serde_json::Value>> = Option::deserialize(deserializer)?;
    Ok(raw.unwrap_or_default().into_iter().map(|(key, value)| (key, text(value))).collect())
}

/// Text written as a string or as a list of words (a command line), or `null`.
pub fn text_or_words<'de, D>(deserializer: D) -> Result<String, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(match Option::<serde_json::Value>::deserialize(deserializer)? {
        Some(serde_json::Value::Array(words)) => words.into_iter().map(text).collect::<Vec<_>>().join(" "),
        Some(value) => text(value),
        None => String::new(),
    })
}

fn text(value: serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text,
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
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

    #[test]
    fn counts_accept_whole_floats_and_refuse_fractions() {
        #[derive(serde::Deserialize)]
        struct C {
            #[serde(deserialize_with = "super::count")]
            n: u32,
        }
        assert_eq!(serde_json::from_str::<C>(r#"{"n":3.0}"#).unwrap().n, 3);
        assert_eq!(serde_json::from_str::<C>(r#"{"n":null}"#).unwrap().n, 0);
        assert!(serde_json::from_str::<C>(r#"{"n":2.5}"#).is_err());
        assert!(serde_json::from_str::<C>(r#"{"n":-1}"#).is_err());
    }
}
