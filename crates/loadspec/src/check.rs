//! A [`LoadSpec`] checked against every rule a load is held to, in one
//! place for `stampede load`'s flags, `--spec` documents, scenario profiles
//! and load hosts, without building the engine: [`check`] reads the files
//! the spec names ([`crate::inline`]), parses its request or its mix, turns
//! its flags into a protocol, a stop and stages, and judges the result by
//! [`crate::rules`]. The [`Checked`] load it returns is what the engine's
//! `spec::config` builds its `LoadConfig` from, so a spec that passes here
//! is a load the engine can run, and one that fails says why in the same
//! words wherever it was written.

use crate::credentials;
use crate::headers::{check_header, check_method};
use crate::inline::inline_with_origins;
use crate::limits::fits;
use crate::load::Load;
use crate::protocol::Protocol;
use crate::rules::Stop;
use crate::spec_error::{Field, Origin, SpecError};
use crate::stages::{Ramp, Stages};
use crate::target::Target;
use crate::template;
use crate::tls::TlsOptions;
use stampede_schema::grpc::GrpcSpec;
use stampede_schema::mix::{Order, TargetSpec};
use stampede_schema::spec::{Body, LoadSpec};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A load that passed every rule: the settings and the mix's plan.
#[derive(Debug, Clone)]
pub struct Checked {
    pub load: Load,
    /// Several targets or URL templates, for the engine to prepare.
    pub mix: Option<MixPlan>,
}

/// The targets of a mix, checked, for the engine to prepare.
#[derive(Debug, Clone)]
pub struct MixPlan {
    pub targets: Vec<TargetSpec>,
    /// Each target's path (and query) template.
    pub paths: Vec<String>,
    pub order: Order,
    pub seed: u64,
    /// Where each target came from (`URL argument 2`, `mix.txt:7`), for errors.
    pub origins: Vec<Origin>,
}

/// `"Name: value"` checked as `--header` is.
fn header(h: &str) -> Result<(String, String), SpecError> {
    let (name, value) = h
        .split_once(':')
        .filter(|(n, _)| !n.trim().is_empty() && !n.contains(char::is_whitespace))
        .ok_or_else(|| SpecError::new(Field::Headers, format!("--header {h:?} must look like \"Name: value\"")))?;
    let (name, value) = (name.trim(), value.trim());
    check_header(name, value)?;
    Ok((name.to_string(), value.to_string()))
}

fn bytes(body: &Option<Body>) -> Vec<u8> {
    match body {
        Some(Body::Bytes(b)) => b.clone(),
        // `inline` has read every file.
        Some(Body::File(_)) | None => Vec::new(),
    }
}

/// The request `s` sends: its target, method, headers and the mix, if it
/// has several targets or URL templates.
type Request = (Target, String, Vec<(String, String)>, Option<MixPlan>);

fn request(s: &LoadSpec, origins: Vec<Origin>) -> Result<Request, SpecError> {
    check_method(&s.method)?;
    let method = s.method.to_ascii_uppercase();
    let headers = s.headers.iter().map(|h| header(h)).collect::<Result<Vec<_>, _>>()?;
    let body = bytes(&s.body);
    let templated = s.urls.iter().any(|u| u.contains('{'));
    // A URL's userinfo is sent as the Authorization header it means, and
    // shown with its password masked (credentials.rs).
    if s.mix.is_empty() && s.urls.len() == 1 && !templated {
        let url = credentials::split(&s.urls[0]);
        let mut target = Target::parse(&url.url).map_err(|e| SpecError::new(Field::Urls, e.to_string()))?;
        target.url = url.shown;
        return Ok((target, method, credentials::with_header(headers, &url.header), None));
    }
    if s.urls.is_empty() && s.mix.is_empty() {
        return Err(SpecError::new(Field::Urls, "no target: give a URL, --targets FILE or a mix"));
    }
    let mut specs: Vec<TargetSpec> = s
        .urls
        .iter()
        .map(|url| {
            let url = credentials::split(url);
            TargetSpec {
                method: method.clone(),
                url: url.url,
                headers: credentials::with_header(headers.clone(), &url.header),
                body: body.clone(),
                weight: 1,
            }
        })
        .collect();
    for (entry, origin) in s.mix.iter().zip(&origins[s.urls.len()..]) {
        let own = entry.headers.iter().map(|h| header(h)).collect::<Result<Vec<_>, _>>();
        let mut entry_headers = own.map_err(|e| origin.error(e))?;
        entry_headers.extend(headers.iter().cloned());
        let url = credentials::split(&entry.url);
        specs.push(TargetSpec {
            method: entry.method.to_ascii_uppercase(),
            url: url.url,
            headers: credentials::with_header(entry_headers, &url.header),
            body: bytes(&entry.body),
            weight: entry.weight,
        });
    }
    let seed = s.seed.unwrap_or_else(clock_seed);
    let (mut target, paths) = template::targets(&specs).map_err(|(i, why)| origins[i].error(why))?;
    let first = s.urls.first().or(s.mix.first().map(|t| &t.url));
    target.url = first.map_or(target.url, |u| credentials::split(u).shown);
    let method = match specs.iter().all(|t| t.method == "HEAD") {
        true => "HEAD".into(),
        false => method,
    };
    let plan = MixPlan { targets: specs, paths, order: s.order, seed, origins };
    Ok((target, method, headers, Some(plan)))
}

/// The load `spec` describes, its files read relative to `dir`, or the
/// first rule it breaks. A spec without `seed` gets one from the clock
/// (the result prints it).
pub fn check(spec: &LoadSpec, dir: &Path) -> Result<Checked, SpecError> {
    check_with(spec, dir, false)
}

/// [`check`], except that a gRPC call whose schema is the server's (no
/// `.proto`, no protoset: asked by reflection when the load starts) is
/// checked as far as it can be without it: a scenario checked before any
/// server runs. Its `Checked` sends nothing gRPC: run it through [`check`]
/// once the schema is had.
pub fn check_before_reflection(spec: &LoadSpec, dir: &Path) -> Result<Checked, SpecError> {
    check_with(spec, dir, true)
}

fn check_with(spec: &LoadSpec, dir: &Path, reflection_later: bool) -> Result<Checked, SpecError> {
    let (mut s, origins) = inline_with_origins(spec, dir, None)?;
    if s.grpc.is_some() {
        crate::grpc::check_spec(&s)?;
        s.urls[0] = crate::grpc::url(&s.urls[0]);
    }
    let (target, method, headers, mix) = request(&s, origins)?;
    let connections = fits(Field::Connections, s.connections)?;
    let mut c = Load {
        target,
        method,
        headers,
        body: bytes(&s.body),
        connections,
        threads: fits(Field::Threads, s.threads)?,
        max_connections: fits(Field::MaxConnections, s.max_connections.unwrap_or(s.connections))?.max(connections),
        stop: match (s.requests, s.duration) {
            (Some(n), _) => Stop::Requests(n),
            (None, Some(d)) => Stop::Duration(d),
            (None, None) => Stop::Duration(Duration::from_secs(10)),
        },
        timeout: s.timeout,
        warmup: s.warmup,
        rate: s.rate,
        arrival: s.arrival,
        max_lag: s.max_lag,
        max_granularity: s.max_granularity,
        slow_log: fits(Field::SlowLog, s.slow_log)?,
        protocol: Protocol::of_spec(&s)?,
        requests_per_connection: match s.requests_per_connection {
            Some(n) => Some(u32::try_from(n).map_err(|_| {
                SpecError::new(Field::RequestsPerConnection, format!("--requests-per-connection {n} is too large"))
            })?),
            None => None,
        },
        tls: TlsOptions {
            insecure: s.insecure,
            ca: s.ca.clone(),
            alpn: s.alpn.iter().map(|p| p.trim().to_string()).collect(),
        },
        stages: None,
        hdr_log: s.hdr_log.clone(),
        grpc: None,
    };
    stages(&s, &mut c)?;
    match &s.grpc {
        Some(g) if reflection_later && crate::grpc::awaits_reflection(g) => {
            crate::grpc::check_before_reflection(g, dir)?
        }
        Some(g) => grpc_call(g, dir, &mut c)?,
        None => {}
    }
    c.check()?;
    Ok(Checked { load: c, mix })
}

/// The gRPC call `g` made the load's one request: its path, header fields
/// (gRPC's, then the load's own) and messages, always a POST.
fn grpc_call(g: &GrpcSpec, dir: &Path, c: &mut Load) -> Result<(), SpecError> {
    let call = crate::grpc::request(g, dir)?;
    c.body = call.body;
    c.headers = call.headers.into_iter().chain(std::mem::take(&mut c.headers)).collect();
    c.method = "POST".into();
    c.target.path = call.path;
    c.grpc = Some(call.call);
    Ok(())
}

/// `stages`: the run lasts as long as they do, at their mean rate (open
/// loop) or with their peak of connections open (closed loop).
fn stages(s: &LoadSpec, c: &mut Load) -> Result<(), SpecError> {
    let Some(text) = &s.stages else { return Ok(()) };
    if s.duration.is_some() || s.requests.is_some() || s.rate.is_some() || !s.warmup.is_zero() {
        return Err(SpecError::new(
            Field::Stages,
            "--stages sets the run's length and load: drop --duration, --requests, --rate and --warmup",
        ));
    }
    let stages = Stages::parse(text, s.ramp)?;
    c.stop = Stop::Duration(stages.total());
    match s.ramp {
        Ramp::Rate => c.rate = Some(stages.mean()),
        Ramp::Connections => {
            c.connections = stages.peak() as usize;
            c.max_connections = c.connections;
        }
    }
    c.stages = Some(stages);
    Ok(())
}

/// A seed for a run that was given none.
pub fn clock_seed() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
}
#[cfg(test)]
mod tests {
    use super::*;
    use stampede_schema::spec::TargetEntry;

    #[test]
    fn a_spec_becomes_the_config_its_fields_say() {
        let spec = LoadSpec {
            urls: vec!["http://127.0.0.1:9/x".into()],
            method: "post".into(),
            headers: vec!["X-A: 1".into()],
            body: Some(Body::Bytes(b"hi".to_vec())),
            connections: 4,
            threads: 2,
            requests: Some(10),
            rate: Some(100.0),
            max_connections: Some(8),
            ..LoadSpec::default()
        };
        let cfg = check(&spec, Path::new("")).unwrap().load;
        assert_eq!((cfg.method.as_str(), cfg.body.as_slice()), ("POST", &b"hi"[..]));
        assert_eq!(cfg.headers, [("X-A".to_string(), "1".to_string())]);
        assert_eq!((cfg.connections, cfg.threads, cfg.max_connections), (4, 2, 8));
        assert_eq!((cfg.stop, cfg.rate), (Stop::Requests(10), Some(100.0)));
        assert!(check(&spec, Path::new("")).unwrap().mix.is_none());
        let mixed = LoadSpec { urls: vec!["http://127.0.0.1:9/f/{1..3}".into()], seed: Some(3), ..LoadSpec::default() };
        assert!(check(&mixed, Path::new("")).unwrap().mix.is_some());
    }

    #[test]
    fn a_broken_rule_names_its_field_as_a_flag_and_as_a_document_key() {
        let spec =
            LoadSpec { urls: vec!["http://127.0.0.1:9/x".into()], threads: 4, connections: 2, ..LoadSpec::default() };
        let err = check(&spec, Path::new("")).unwrap_err();
        assert_eq!((err.field, err.field.flag(), err.field.key()), (Field::Threads, "--threads", "threads"));
        assert!(err.to_string().starts_with("--threads (4) must not exceed --connections (2)"), "{err}");
        assert!(err.in_document().starts_with("threads (4) must not exceed connections (2)"), "{err}");
        let fine = LoadSpec { threads: 2, ..spec };
        assert!(check(&fine, Path::new("")).is_ok());
    }

    #[test]
    fn bad_targets_name_where_they_came_from() {
        let spec = LoadSpec {
            urls: vec!["http://127.0.0.1:9/x".into()],
            mix: vec![TargetEntry {
                method: "GET".into(),
                url: "http://127.0.0.2:9/y".into(),
                headers: vec![],
                body: None,
                weight: 1,
            }],
            ..LoadSpec::default()
        };
        let err = check(&spec, Path::new("")).unwrap_err();
        assert_eq!(err.field, Field::Mix);
        assert!(err.to_string().starts_with("mix[0]: "), "{err}");
        let none = check(&LoadSpec::default(), Path::new("")).unwrap_err();
        assert_eq!(none.field, Field::Urls);
        assert!(none.to_string().starts_with("no target"), "{none}");
    }

    #[test]
    fn a_load_sends_the_header_and_shows_no_password_for_one_url_and_a_mix() {
        use stampede_schema::LoadSpec;
        let spec =
            |urls: &[&str]| LoadSpec { urls: urls.iter().map(|u| u.to_string()).collect(), ..LoadSpec::default() };
        let one = check(&spec(&["http://u:s3cret@127.0.0.1:9/a"]), std::path::Path::new("")).unwrap().load;
        assert_eq!(one.target.url, "http://u:***@127.0.0.1:9/a");
        assert_eq!(one.target.path, "/a");
        assert!(
            one.headers.iter().any(|(n, v)| n == "Authorization" && v == "Basic dTpzM2NyZXQ="),
            "{:?}",
            one.headers
        );
        let urls = ["http://u:s3cret@127.0.0.1:9/a", "http://127.0.0.1:9/b"];
        let mix = check(&spec(&urls), std::path::Path::new("")).unwrap();
        assert_eq!(mix.load.target.url, "http://u:***@127.0.0.1:9/a");
        let targets = &mix.mix.as_ref().unwrap().targets;
        let has_auth = |i: usize| targets[i].headers.iter().any(|(n, _)| n == "Authorization");
        assert!(has_auth(0) && !has_auth(1), "each URL's own userinfo, for its own requests");
    }
}
