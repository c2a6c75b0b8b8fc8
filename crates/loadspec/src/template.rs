//! URL and body templates, the syntax a request mix and `stampede check`'s
//! anti-caching rules share: `{1..100}` counts 1 to 100 and starts again;
//! `{rand:1..10000}` is a uniform random integer; `{a|b|c}` is a uniform
//! random pick from the list. Parsed here once, with errors that quote the
//! template; the load engine's mix (`stampede_load::mix`) prepares and
//! sends the expansions, `stampede check` draws one at random.

use crate::target::Target;
use rand::Rng;
use stampede_schema::mix::TargetSpec;

#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Lit(String),
    Seq { lo: u64, hi: u64 },
    Rand { lo: u64, hi: u64 },
    Pick(Vec<String>),
}

impl Part {
    pub fn count(&self) -> u64 {
        match self {
            Part::Lit(_) => 1,
            Part::Seq { lo, hi } | Part::Rand { lo, hi } => hi - lo + 1,
            Part::Pick(list) => list.len() as u64,
        }
    }
}

/// `scheme://authority` and the path (with query) of a URL template; the
/// templates may only be in the path and query.
fn split_url(url: &str) -> Result<(String, String), String> {
    let scheme_end = url.find("://").ok_or_else(|| format!("{url}: not a URL (http://host:port/path)"))? + 3;
    let rest = &url[scheme_end..];
    let cut = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(cut);
    if authority.contains(['{', '}']) || authority.is_empty() {
        return Err(format!("{url}: templates may only be in the path or query, not the host"));
    }
    let path = match path {
        "" => "/".to_string(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_string(),
    };
    Ok((format!("{}{authority}", &url[..scheme_end]), path))
}

pub fn write_part(out: &mut Vec<u8>, part: &Part, digit: u64) {
    match part {
        Part::Lit(s) => out.extend_from_slice(s.as_bytes()),
        Part::Seq { lo, .. } | Part::Rand { lo, .. } => {
            let mut buf = itoa::Buffer::new();
            out.extend_from_slice(buf.format(lo + digit).as_bytes());
        }
        Part::Pick(list) => out.extend_from_slice(list[digit as usize].as_bytes()),
    }
}

/// One expansion of `template` (a path or a request body), every
/// placeholder chosen at random from `rng`: how `stampede check` makes a
/// request a cached answer cannot serve. The syntax is the mix's own; a body
/// may hold spaces, a path may not (the caller checks that).
pub fn expand_random(template: &str, rng: &mut impl Rng) -> Result<String, String> {
    let mut out = Vec::new();
    for part in split_template(template)? {
        let digit = rng.gen_range(0..part.count());
        write_part(&mut out, &part, digit);
    }
    Ok(String::from_utf8(out).expect("templates are UTF-8"))
}

/// Splits a path template into literals and placeholders.
pub fn parse_template(path: &str) -> Result<Vec<Part>, String> {
    let parts = split_template(path)?;
    for part in &parts {
        let bad = |s: &str| s.bytes().any(|b| b <= b' ' || b == 0x7f);
        let ok = match part {
            Part::Lit(s) => !bad(s),
            Part::Pick(list) => list.iter().all(|s| !bad(s)),
            _ => true,
        };
        if !ok {
            return Err(format!("{path}: a path must not contain spaces or control characters"));
        }
    }
    Ok(parts)
}

/// Splits any template into literals and placeholders.
fn split_template(path: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Part::Lit(rest[..open].to_string()));
        }
        let close = rest[open..].find('}').ok_or_else(|| format!("{path}: '{{' without '}}'"))? + open;
        parts.push(
            placeholder(&rest[open + 1..close]).map_err(|e| format!("{path}: {{{}}}: {e}", &rest[open + 1..close]))?,
        );
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return Err(format!("{path}: '}}' without '{{'"));
    }
    if !rest.is_empty() {
        parts.push(Part::Lit(rest.to_string()));
    }
    Ok(parts)
}

fn placeholder(inner: &str) -> Result<Part, String> {
    let range = |s: &str| -> Result<(u64, u64), String> {
        let (lo, hi) = s.split_once("..").ok_or("expected LOW..HIGH")?;
        let lo: u64 = lo.trim().parse().map_err(|_| format!("{lo:?} is not a whole number"))?;
        let hi: u64 = hi.trim().parse().map_err(|_| format!("{hi:?} is not a whole number"))?;
        if hi < lo || hi == u64::MAX {
            return Err("HIGH must be at least LOW".into());
        }
        Ok((lo, hi))
    };
    if let Some(r) = inner.strip_prefix("rand:") {
        let (lo, hi) = range(r)?;
        Ok(Part::Rand { lo, hi })
    } else if inner.contains("..") {
        let (lo, hi) = range(inner)?;
        Ok(Part::Seq { lo, hi })
    } else if inner.contains('|') {
        let list: Vec<String> = inner.split('|').map(str::to_string).collect();
        if list.iter().any(String::is_empty) {
            return Err("an empty choice".into());
        }
        Ok(Part::Pick(list))
    } else {
        Err("expected {LOW..HIGH}, {rand:LOW..HIGH} or {a|b|c}".into())
    }
}

/// The targets of a mix checked: they share scheme, host and port (one
/// connection pool), HEAD is not mixed with other methods, every path
/// template parses. Returns the target to connect to (the first one's
/// origin, with its URL and path template) and each target's path
/// template. `Err((i, why))` names the target at fault.
pub fn targets(specs: &[TargetSpec]) -> Result<(Target, Vec<String>), (usize, String)> {
    let mut base: Option<(String, Target)> = None;
    let mut paths = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let (origin, path) = split_url(&spec.url).map_err(|e| (i, e))?;
        match &base {
            Some((first, _)) if !first.eq_ignore_ascii_case(&origin) => {
                return Err((
                    i,
                    format!(
                        "{} is not on {first}: every target shares one connection pool (same scheme, host and port)",
                        spec.url
                    ),
                ));
            }
            Some(_) => {}
            None => {
                let mut target = Target::parse(&format!("{origin}/")).map_err(|e| (i, e.to_string()))?;
                target.url = spec.url.clone();
                target.path = path.clone();
                base = Some((origin, target));
            }
        }
        paths.push(path);
    }
    let (_, target) = base.ok_or((0, "no targets".to_string()))?;
    let heads = specs.iter().filter(|s| s.method == "HEAD").count();
    if heads > 0 && heads < specs.len() {
        let i = specs.iter().position(|s| s.method == "HEAD").unwrap_or(0);
        return Err((i, "HEAD cannot be mixed with other methods (its responses are framed differently)".into()));
    }
    for (i, path) in paths.iter().enumerate() {
        parse_template(path).map_err(|e| (i, e))?;
    }
    Ok((target, paths))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn expand_random_fills_every_placeholder_and_keeps_spaces_in_bodies() {
        let mut rng = SmallRng::seed_from_u64(3);
        let body = expand_random("a {rand:100..999} {x|y} {1..1}", &mut rng).unwrap();
        let words: Vec<&str> = body.split(' ').collect();
        assert_eq!((words[0], words.len(), words[3]), ("a", 4, "1"), "{body}");
        assert!((100..=999).contains(&words[1].parse::<u32>().unwrap()), "{body}");
        assert!(["x", "y"].contains(&words[2]), "{body}");
        assert!(expand_random("{rand:9..1}", &mut rng).unwrap_err().contains("HIGH must be at least LOW"));
        assert!(parse_template("/a b").is_err() && expand_random("a b", &mut rng).is_ok());
    }
}
