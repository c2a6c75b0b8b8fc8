//! `--set key=value`: crank's `--variable` habit. The key is a dotted path
//! into the scenario (`iterations`, `pinning.server`, `profiles.0.duration`,
//! `profiles.*.duration` for every profile); the value is read as TOML when it
//! parses (`4`, `[1, 2]`, `true`) and as a string otherwise (`2s`, `go`). A
//! comma list given where the file has an array becomes that array
//! (`apps=go,rust`).

use crate::scenario::error::ScenarioError;

pub fn apply(root: &mut toml::Value, arg: &str) -> Result<(), ScenarioError> {
    // The message quotes the argument: a secret in it is masked.
    let shown = stampede_schema::redact::Redaction::default().text(arg);
    let bad = |reason: String| ScenarioError::Override { arg: shown.clone(), reason };
    let Some((key, raw)) = arg.split_once('=') else {
        return Err(bad("expected key=value, e.g. --set iterations=1".into()));
    };
    let key = key.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(bad(format!("{key:?} is not a field path; write e.g. profiles.0.duration")));
    }
    let value = parse_value(raw.trim());
    let path: Vec<&str> = key.split('.').collect();
    set_at(root, &path, &value).map_err(bad)
}

fn parse_value(raw: &str) -> toml::Value {
    match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        Ok(mut table) => table.remove("v").unwrap_or_else(|| toml::Value::String(raw.into())),
        Err(_) => toml::Value::String(raw.into()),
    }
}

fn set_at(node: &mut toml::Value, path: &[&str], value: &toml::Value) -> Result<(), String> {
    let (head, rest) = (path[0], &path[1..]);
    match node {
        toml::Value::Array(items) => {
            let indices: Vec<usize> = if head == "*" {
                (0..items.len()).collect()
            } else {
                let i: usize =
                    head.parse().map_err(|_| format!("{head:?} is not an index into a list (use 0, 1, … or *)"))?;
                if i >= items.len() {
                    return Err(format!("index {i} is past the end of a list of {}", items.len()));
                }
                vec![i]
            };
            for i in indices {
                if rest.is_empty() {
                    items[i] = value.clone();
                } else {
                    set_at(&mut items[i], rest, value)?;
                }
            }
            Ok(())
        }
        toml::Value::Table(table) => {
            if rest.is_empty() {
                let fitted = match (table.get(head), value) {
                    (Some(toml::Value::Array(_)), toml::Value::String(s)) => toml::Value::Array(
                        s.split(',').filter(|p| !p.trim().is_empty()).map(|p| parse_value(p.trim())).collect(),
                    ),
                    _ => value.clone(),
                };
                table.insert(head.to_string(), fitted);
                return Ok(());
            }
            let child = table.entry(head.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
            set_at(child, rest, value)
        }
        _ => Err(format!("cannot go into {head:?}: the field before it is a single value")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> toml::Value {
        toml::from_str("apps = [\"go\"]\n[[profiles]]\npath = \"/a\"\n[[profiles]]\npath = \"/b\"\n").unwrap()
    }

    #[test]
    fn types_follow_toml() {
        let mut v = doc();
        apply(&mut v, "iterations=3").unwrap();
        apply(&mut v, "profiles.1.connections=8").unwrap();
        apply(&mut v, "profiles.*.duration=2s").unwrap();
        apply(&mut v, "apps=go, rust").unwrap();
        apply(&mut v, "matrix.threads=[1, 2]").unwrap();
        assert_eq!(v["iterations"].as_integer(), Some(3));
        assert_eq!(v["profiles"][1]["connections"].as_integer(), Some(8));
        assert_eq!(v["profiles"][0]["duration"].as_str(), Some("2s"));
        assert_eq!(v["apps"].as_array().unwrap().len(), 2);
        assert_eq!(v["matrix"]["threads"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn malformed_overrides_say_how_to_write_them() {
        let mut v = doc();
        assert!(apply(&mut v, "iterations").unwrap_err().to_string().contains("key=value"));
        assert!(apply(&mut v, "profiles.9.path=/x").unwrap_err().to_string().contains("past the end"));
        assert!(apply(&mut v, "profiles.first.path=/x").unwrap_err().to_string().contains("not an index"));
        assert!(apply(&mut v, "apps..x=1").unwrap_err().to_string().contains("field path"));
    }
}
