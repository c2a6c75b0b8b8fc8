//! Reading a contract file: TOML into the model (model.rs), then what serde
//! cannot check. A file is validated whole when loaded, so a mistake in it is
//! one error naming the file, the field and what to write instead, before any
//! request.

use std::collections::BTreeSet;
use std::path::Path;

use crate::error::ContractError;
use crate::model::{Contract, Protocol, Rule};
use crate::probe::{ProbeCheck, RESPONSE_CHECK_IDS};

impl Contract {
    /// Parses and validates a contract; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Contract, ContractError> {
        Contract::parse_in(text, file, None)
    }

    /// [`Contract::parse`], with `dir` the folder that a rule's relative
    /// `send.file` is read from.
    fn parse_in(text: &str, file: &str, dir: Option<&Path>) -> Result<Contract, ContractError> {
        let deserializer = toml::Deserializer::new(text);
        let mut contract: Contract = serde_path_to_error::deserialize(deserializer).map_err(|e| {
            let line = e.inner().span().map(|span| line_of(text, span.start));
            let mut field = one_based(&e.path().to_string());
            if field == "." || field.is_empty() {
                field = "(top level)".into();
            }
            if let Some(line) = line {
                field = format!("{field} (line {line})");
            }
            ContractError::Invalid { file: file.to_string(), field, reason: one_line(e.inner().message()) }
        })?;
        contract.validate(dir).map_err(|(field, reason)| ContractError::Invalid {
            file: file.to_string(),
            field,
            reason,
        })?;
        Ok(contract)
    }

    /// Reads and validates the contract file at `path`, and its `.proto`.
    pub fn load(path: &Path) -> Result<Contract, ContractError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ContractError::Read { path: file.clone(), reason: e.to_string() })?;
        let mut contract = Contract::parse_in(&text, &file, Some(path.parent().unwrap_or(Path::new("."))))?;
        if let Some(proto) = &contract.proto {
            let proto_path = path.parent().unwrap_or(Path::new(".")).join(proto);
            if let Err(e) = std::fs::metadata(&proto_path) {
                return Err(ContractError::Invalid {
                    file,
                    field: "proto".into(),
                    reason: format!("cannot read {}: {e}", proto_path.display()),
                });
            }
            contract.proto_path = Some(proto_path);
        }
        Ok(contract)
    }

    /// What serde cannot check: `Err((field, reason))` for the first problem.
    fn validate(&mut self, dir: Option<&Path>) -> Result<(), (String, String)> {
        let top = |field: &str, reason: &str| Err((field.to_string(), reason.to_string()));
        if self.name.trim().is_empty() {
            return top("name", "is empty; give the contract a short name such as \"my-api\"");
        }
        if self.version.trim().is_empty() {
            return top("version", "is empty; give a version such as \"1\"");
        }
        if self.protocol == Protocol::Grpc {
            if !self.rules.is_empty() || !self.probes.is_empty() || !self.every_response.is_empty() {
                return top("rule", "a gRPC contract has [[call]]s, not [[rule]]s, [[probe]]s or every_response");
            }
            return crate::grpc::validate(&self.calls);
        }
        if !self.calls.is_empty() || self.proto.is_some() || !self.every_call.is_empty() {
            return top("protocol", "[[call]], proto and every_call need protocol = \"grpc\"");
        }
        if self.rules.is_empty() {
            return top("rule", "no [[rule]]: a contract needs at least one request to send");
        }
        if let Some(ready) = &self.ready {
            check_path(ready).map_err(|r| ("ready".to_string(), r))?;
        }
        let mut ids: BTreeSet<&str> = RESPONSE_CHECK_IDS.iter().copied().collect();
        // The ids of the concurrent probes' counts, made from theirs.
        let mut counted_ids: BTreeSet<String> = BTreeSet::new();
        for (i, probe) in self.probes.iter().enumerate() {
            check_path(&probe.path).map_err(|r| (format!("probe[{}].path", i + 1), r))?;
            if probe.check == ProbeCheck::SleepConcurrent && crate::probe::sleep_of(&probe.path).is_none() {
                return Err((
                    format!("probe[{}].path", i + 1),
                    format!("{:?}: sleep-concurrent needs a path ending in the milliseconds to sleep, such as \"/sleep/200\"", probe.path),
                ));
            }
            crate::probe::validate_concurrent(probe).map_err(|(field, r)| (format!("probe[{}].{field}", i + 1), r))?;
            let counted = matches!(probe.check, ProbeCheck::DbRows | ProbeCheck::DbUpdates)
                || matches!(probe.of, Some(ProbeCheck::DbRows | ProbeCheck::DbUpdates));
            match probe.rows {
                None if counted => {
                    return Err((
                        format!("probe[{}].rows", i + 1),
                        "is missing: say how many rows the answer must hold (1 to 500)".into(),
                    ))
                }
                Some(_) if !counted => {
                    return Err((
                        format!("probe[{}].rows", i + 1),
                        "only db-rows and db-updates (or concurrent of them) take rows".into(),
                    ))
                }
                Some(n) if !(1..=500).contains(&n) => {
                    return Err((
                        format!("probe[{}].rows", i + 1),
                        format!("{n} is outside 1..500, the contract's clamp"),
                    ))
                }
                _ => {}
            }
            let counted_id = probe.counted_id();
            let taken = ids.contains(counted_id.as_str()) || counted_ids.contains(&counted_id);
            if probe.check == ProbeCheck::Concurrent && (taken || !counted_ids.insert(counted_id.clone())) {
                return Err((format!("probe[{}].id", i + 1), format!("{counted_id:?}, its count's id, is taken")));
            }
            if counted_ids.contains(probe.id()) || !ids.insert(probe.id()) {
                return Err((
                    format!("probe[{}].id", i + 1),
                    format!("{:?} is taken; give each probe of the same check its own id", probe.id()),
                ));
            }
        }
        for (i, rule) in self.rules.iter_mut().enumerate() {
            let at = |field: &str| format!("rule[{}].{field} (id {:?})", i + 1, rule.id);
            crate::send::expand(&rule.path, &mut rand::SeedableRng::seed_from_u64(0)).map_err(|r| (at("path"), r))?;
            if let Some(send) = &mut rule.send {
                send.validate(dir).map_err(|(field, r)| (at(&format!("send.{field}")), r))?;
            }
            validate_answer(rule).map_err(|(field, r)| (at(field), r))?;
        }
        for (i, rule) in self.rules.iter().enumerate() {
            let at = |field: &str| format!("rule[{}].{field} (id {:?})", i + 1, rule.id);
            let valid_id = !rule.id.is_empty()
                && rule.id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !valid_id {
                return Err((at("id"), "use lower-case letters, digits and '-', such as \"fib-4000\"".into()));
            }
            if counted_ids.contains(&rule.id) || !ids.insert(rule.id.as_str()) {
                return Err((at("id"), "another rule, probe or named check has this id; ids must be unique".into()));
            }
            check_path(&rule.path).map_err(|r| (at("path"), r))?;
            let bodies = [rule.body.is_some(), rule.json.is_some(), rule.generate.is_some()];
            if bodies.iter().filter(|b| **b).count() > 1 {
                return Err((at("body"), "give at most one of body, json and generate".into()));
            }
            if let Some(json) = &rule.json {
                serde_json::from_str::<serde_json::Value>(json)
                    .map_err(|e| (at("json"), format!("is not valid JSON: {e}")))?;
            }
            if let Some(g) = rule.generate {
                if g.n > g.name.max_n() {
                    return Err((
                        at("generate.n"),
                        format!("{} is above {}, the most generator {:?} accepts", g.n, g.name.max_n(), g.name.name()),
                    ));
                }
            }
            if let Some(media) = &rule.content_type {
                if media.parse::<mime::Mime>().is_err() || media.contains(';') {
                    return Err((
                        at("content_type"),
                        format!("{media:?} is not a media type such as \"text/plain\" (parameters go in `charset`)"),
                    ));
                }
            }
            if rule.charset.is_some() && rule.content_type.is_none() {
                return Err((at("charset"), "needs content_type too".into()));
            }
            if rule.charset_required && rule.charset.is_none() {
                return Err((at("charset_required"), "needs charset: say which charset is required".into()));
            }
            for name in rule.has_headers.iter().chain(rule.headers.keys()) {
                if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
                    return Err((at("headers"), format!("{name:?} is not a header name")));
                }
            }
        }
        Ok(())
    }
}

/// `answer` and `content_encoding` against the rest of the rule:
/// `Err((field, reason))`.
fn validate_answer(rule: &Rule) -> Result<(), (&'static str, String)> {
    if rule.answer.is_some() && (rule.body.is_some() || rule.json.is_some() || rule.generate.is_some()) {
        return Err(("answer", "give at most one of body, json, generate and answer".into()));
    }
    let Some(coding) = rule.content_encoding.as_deref() else { return Ok(()) };
    if !["identity", "gzip", "deflate"].contains(&coding) {
        return Err(("content_encoding", format!("{coding:?}: give \"identity\" (none), \"gzip\" or \"deflate\"")));
    }
    let asked = rule.send.as_ref().and_then(|s| s.header("accept-encoding")).unwrap_or_default();
    if coding != "identity" && !asked.split(',').any(|c| c.split(';').next().unwrap_or("").trim() == coding) {
        return Err((
            "content_encoding",
            format!(
                "{coding:?} needs the request to ask for it: send.headers = {{ \"Accept-Encoding\" = \"{coding}\" }}"
            ),
        ));
    }
    if coding == "identity" && !asked.is_empty() {
        return Err(("content_encoding", "\"identity\" judges a request that sends no Accept-Encoding".into()));
    }
    Ok(())
}

fn check_path(path: &str) -> Result<(), String> {
    if !path.starts_with('/') || path.bytes().any(|b| !b.is_ascii_graphic()) {
        return Err(format!("{path:?} must start with '/' and hold no spaces or control characters"));
    }
    Ok(())
}

/// 1-based line number of byte `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|b| *b == b'\n').count() + 1
}

/// `rule[0].status` → `rule[1].status`: people count rules from 1.
fn one_based(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let close = rest.find(']').unwrap_or(rest.len());
        match rest[..close].parse::<usize>() {
            Ok(i) => out.push_str(&(i + 1).to_string()),
            Err(_) => out.push_str(&rest[..close]),
        }
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lenience::Leniency;
    use crate::model::Status;

    const MINIMAL: &str = "name = \"x\"\nversion = \"1\"\n[[rule]]\nid = \"root\"\npath = \"/\"\n";

    fn error(text: &str) -> String {
        Contract::parse(text, "my.toml").unwrap_err().to_string()
    }

    #[test]
    fn a_minimal_contract_parses_with_defaults() {
        let c = Contract::parse(MINIMAL, "my.toml").unwrap();
        assert_eq!(c.rules[0].status, Status::Exact(200));
        assert_eq!(c.rules[0].describe(), "GET / answers 200");
        assert!(c.every_response.is_empty() && c.probes.is_empty());
    }

    #[test]
    fn status_is_a_code_or_a_class() {
        let with = |status: &str| format!("{MINIMAL}status = {status}\n");
        let c = Contract::parse(&with("\"4xx\""), "f").unwrap();
        assert!(c.rules[0].status.matches(404) && c.rules[0].status.matches(400));
        assert!(!c.rules[0].status.matches(500));
        let e = error(&with("42"));
        assert!(e.starts_with("my.toml: rule[1].status (line 6): "), "{e}");
        assert!(e.contains("a status code from 100 to 599"), "{e}");
        assert!(error(&with("\"4zz\"")).contains("rule[1].status"));
    }

    #[test]
    fn errors_name_the_file_the_field_and_are_one_line() {
        let e = error(&format!("{MINIMAL}generate = {{ name = \"fibonacci\", n = 3 }}\n"));
        assert!(e.starts_with("my.toml: rule[1].generate.name (line 6): unknown variant `fibonacci`"), "{e}");
        let e = error(&format!("{MINIMAL}stauts = 200\n"));
        assert!(e.starts_with("my.toml: rule[1]"), "{e}");
        assert!(e.contains("stauts"), "{e}");
        let e = error("version = \"1\"\n[[rule]]\nid = \"a\"\npath = \"/\"\n");
        assert!(e.contains("missing field `name`"), "{e}");
        let e = error(&format!("{MINIMAL}[[rule]]\nid = \"root\"\npath = \"/x\"\n"));
        assert_eq!(e, "my.toml: rule[2].id (id \"root\"): another rule, probe or named check has this id; ids must be unique (see docs/contracts.md)");
        let e = error(&format!("{MINIMAL}body = \"a\"\njson = \"1\"\n"));
        assert!(e.contains("rule[1].body"), "{e}");
        let e = error(&format!("{MINIMAL}json = \"{{nope\"\n"));
        assert!(e.contains("rule[1].json") && e.contains("not valid JSON"), "{e}");
        let e = error(&format!("{MINIMAL}generate = {{ name = \"fib\", n = 1000000 }}\n"));
        assert!(e.contains("rule[1].generate.n"), "{e}");
        let e = error("name = \"x\"\nversion = \"1\"\n");
        assert_eq!(
            e,
            "my.toml: rule: no [[rule]]: a contract needs at least one request to send (see docs/contracts.md)"
        );
        let e = error("name = \"x\"\nversion = \n");
        assert!(e.starts_with("my.toml: ") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn paths_and_content_types_are_checked() {
        assert!(error(&MINIMAL.replace("path = \"/\"", "path = \"api\"")).contains("rule[1].path"));
        let e = error(&format!("{MINIMAL}content_type = \"text/plain; charset=utf-8\"\n"));
        assert!(e.contains("rule[1].content_type"), "{e}");
        assert!(error(&format!("{MINIMAL}charset = \"utf-8\"\n")).contains("rule[1].charset"));
    }

    #[test]
    fn sleep_concurrent_needs_a_sleep_path() {
        let probe = |path: &str| format!("{MINIMAL}[[probe]]\ncheck = \"sleep-concurrent\"\npath = \"{path}\"\n");
        let c = Contract::parse(&probe("/sleep/200"), "f").unwrap();
        assert_eq!(c.probes[0].id(), "sleep-concurrent");
        assert_eq!(crate::probe::sleep_of("/sleep/200"), Some(std::time::Duration::from_millis(200)));
        let e = error(&probe("/sleep"));
        assert!(e.starts_with("my.toml: probe[1].path: \"/sleep\": sleep-concurrent needs"), "{e}");
    }

    #[test]
    fn warn_lists_named_departures_and_refuses_others() {
        assert!(Contract::parse(MINIMAL, "f").unwrap().warn.is_empty());
        let c = Contract::parse(&format!("warn = [\"close-delimited-error\", \"http-1.0-error\"]\n{MINIMAL}"), "f")
            .unwrap();
        assert!(c.warns(Leniency::CloseDelimitedError) && c.warns(Leniency::Http10Error));
        let e = error(&format!("warn = [\"framing\"]\n{MINIMAL}"));
        assert!(e.starts_with("my.toml: warn[1] (line 1): unknown variant `framing`"), "{e}");
    }

    #[test]
    fn send_answer_and_content_encoding_errors_name_the_file_and_field() {
        let post = format!("{MINIMAL}send = {{ method = \"POST\", body = \"{{rand:1..9}}\", chunked = true }}\n");
        let c = Contract::parse(&format!("{post}answer = \"sum\"\n"), "f").unwrap();
        assert_eq!(c.rules[0].describe(), "POST / answers 200, the sum of the integers in its query and body");
        let e = error(&format!("{post}answer = \"sum\"\nbody = \"1\"\n"));
        assert_eq!(e, "my.toml: rule[1].answer (id \"root\"): give at most one of body, json, generate and answer (see docs/contracts.md)");
        let e = error(&format!("{MINIMAL}send = {{ split = [\"middle\"] }}\n"));
        assert!(e.starts_with("my.toml: rule[1].send.split[1] (line 6): unknown variant `middle`"), "{e}");
        let e = error(&format!("{MINIMAL}send = {{ body = \"{{rand:1}}\" }}\n"));
        assert!(e.starts_with("my.toml: rule[1].send.body (id \"root\"): "), "{e}");
        let e = error(&format!("{MINIMAL}send = {{ file = \"missing.bin\" }}\n"));
        assert!(e.starts_with("my.toml: rule[1].send.file (id \"root\"): missing.bin: "), "{e}");
        let e = error(&format!("{MINIMAL}content_encoding = \"gzip\"\n"));
        assert!(e.contains("rule[1].content_encoding") && e.contains("Accept-Encoding"), "{e}");
        let asked = "send = { headers = { \"Accept-Encoding\" = \"gzip, br\" } }\n";
        assert!(Contract::parse(&format!("{MINIMAL}{asked}content_encoding = \"gzip\"\n"), "f").is_ok());
        assert!(error(&format!("{MINIMAL}{asked}content_encoding = \"identity\"\n")).contains("no Accept-Encoding"));
        assert!(error(&format!("{MINIMAL}content_encoding = \"br\"\n")).contains("rule[1].content_encoding"));
        let e = error(&MINIMAL.replace("path = \"/\"", "path = \"/user/{rand:x}\""));
        assert!(e.starts_with("my.toml: rule[1].path (id \"root\"): /user/{rand:x}: "), "{e}");
    }

    #[test]
    fn ready_is_an_optional_path() {
        assert_eq!(Contract::parse(MINIMAL, "f").unwrap().ready, None);
        let c = Contract::parse(&format!("ready = \"/health\"\n{MINIMAL}"), "f").unwrap();
        assert_eq!(c.ready.as_deref(), Some("/health"));
        let e = error(&format!("ready = \"health\"\n{MINIMAL}"));
        assert!(e.starts_with("my.toml: ready: \"health\" must start with '/'"), "{e}");
    }
}
