//! A [`LoadSpec`] made into the engine's [`LoadConfig`], in one place for
//! `stampede load`'s flags, `--spec` documents, scenario profiles and load
//! hosts. [`inline`] reads the files a spec names (bodies, the targets
//! file) into the spec itself, so it can be sent to a process that lacks
//! them (another host) and still mean the same load; [`config`] builds the
//! request or the mix and checks every value against [`crate::config::limits`].

use crate::config::{check_header, check_method, limits, LoadConfig, Stop};
use crate::credentials;
use crate::mix::{self, TargetSpec};
use crate::protocol::Protocol;
use crate::stages::{Ramp, Stages};
use crate::target::Target;
use crate::targets_file;
use stampede_schema::spec::{Body, LoadSpec, TargetEntry};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Largest targets file read.
const MAX_TARGETS_FILE_BYTES: usize = 16 << 20;

/// `spec` with every file it reads (body files, the targets file, relative
/// to `dir`) read into it, and every path-only URL (`/json`) joined to
/// `base_url`. The result names no file to read but `ca` (made relative to
/// where this process runs) and `hdr_log` (written, relative to the working
/// directory).
pub fn inline(spec: &LoadSpec, dir: &Path, base_url: Option<&str>) -> Result<LoadSpec, String> {
    inline_with_origins(spec, dir, base_url).map(|(spec, _)| spec)
}

/// [`inline`], with where each target of the result came from (for errors:
/// `URL argument 2`, `mix.txt:7`).
fn inline_with_origins(spec: &LoadSpec, dir: &Path, base_url: Option<&str>) -> Result<(LoadSpec, Vec<String>), String> {
    let mut out = spec.clone();
    out.urls = spec.urls.iter().map(|u| join(u, base_url, "urls")).collect::<Result<_, _>>()?;
    out.body = spec.body.as_ref().map(|b| read_body(b, dir, "body")).transpose()?;
    out.ca = spec.ca.as_ref().map(|ca| dir.join(ca));
    if let Some(g) = out.grpc.as_mut() {
        g.data = g.data.take().map(|d| crate::grpc::read_data(&d, dir)).transpose()?;
        // The schema is compiled where the load runs (`stampede run`'s
        // generator, in another working directory): its files by absolute
        // path, which a later join to any folder leaves as they are.
        let absolute = |p: &std::path::PathBuf| std::path::absolute(dir.join(p)).unwrap_or_else(|_| dir.join(p));
        g.proto = g.proto.iter().map(absolute).collect();
        g.import_paths = g.import_paths.iter().map(absolute).collect();
        g.protoset = g.protoset.as_ref().map(absolute);
    }
    let mut origins: Vec<String> = (1..=out.urls.len()).map(|n| format!("URL argument {n}")).collect();
    for (i, entry) in out.mix.iter_mut().enumerate() {
        let at = format!("mix[{i}]");
        entry.url = join(&entry.url, base_url, &at)?;
        entry.body = entry.body.as_ref().map(|b| read_body(b, dir, &format!("{at}.body"))).transpose()?;
        origins.push(at);
    }
    if let Some(path) = out.targets.take() {
        let (text, origin, file_dir) = read_targets(&path, dir)?;
        for parsed in targets_file::parse(&text, &origin, &file_dir)? {
            let t = parsed.spec;
            out.mix.push(TargetEntry {
                method: t.method,
                url: join(&t.url, base_url, &format!("{origin}:{}", parsed.line))?,
                headers: t.headers.iter().map(|(n, v)| format!("{n}: {v}")).collect(),
                body: (!t.body.is_empty()).then_some(Body::Bytes(t.body)),
                weight: t.weight,
            });
            origins.push(format!("{origin}:{}", parsed.line));
        }
    }
    Ok((out, origins))
}

/// A path-only URL joined to the base URL `stampede run` gives.
fn join(url: &str, base_url: Option<&str>, what: &str) -> Result<String, String> {
    match (url.starts_with('/'), base_url) {
        (false, _) => Ok(url.to_string()),
        (true, Some(base)) => Ok(format!("{}{url}", base.trim_end_matches('/'))),
        (true, None) => Err(format!("{what}: {url:?} is a path; give a full URL such as http://127.0.0.1:8080{url}")),
    }
}

fn read_body(body: &Body, dir: &Path, what: &str) -> Result<Body, String> {
    match body {
        Body::Bytes(b) => Ok(Body::Bytes(b.clone())),
        Body::File(path) => limits::read_capped(&dir.join(path), limits::MAX_BODY_BYTES)
            .map(Body::Bytes)
            .map_err(|e| format!("{what} @{}: {e}", path.display())),
    }
}

/// The targets file's text, its name for messages and the directory its
/// body files are relative to.
fn read_targets(path: &Path, dir: &Path) -> Result<(String, String, std::path::PathBuf), String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map_err(|e| format!("--targets -: cannot read stdin: {e}"))?;
        return Ok((text, "--targets -".into(), dir.to_path_buf()));
    }
    let full = dir.join(path);
    let shown = full.display().to_string();
    let text = limits::read_capped(&full, MAX_TARGETS_FILE_BYTES)
        .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_string()))
        .map_err(|e| format!("--targets {shown}: {e}"))?;
    let file_dir = full.parent().map(|p| p.to_path_buf()).unwrap_or_default();
    Ok((text, shown, file_dir))
}

/// `"Name: value"` checked as `--header` is.
fn header(h: &str) -> Result<(String, String), String> {
    let (name, value) = h
        .split_once(':')
        .filter(|(n, _)| !n.trim().is_empty() && !n.contains(char::is_whitespace))
        .ok_or_else(|| format!("--header {h:?} must look like \"Name: value\""))?;
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

/// The run `spec` describes, its files read relative to `dir`. A spec
/// without `seed` gets one from the clock (the result prints it).
pub fn config(spec: &LoadSpec, dir: &Path) -> Result<LoadConfig, String> {
    let (mut s, origins) = inline_with_origins(spec, dir, None)?;
    if s.grpc.is_some() {
        crate::grpc::check_spec(&s)?;
        s.urls[0] = crate::grpc::url(&s.urls[0]);
    }
    check_method(&s.method)?;
    let method = s.method.to_ascii_uppercase();
    let headers = s.headers.iter().map(|h| header(h)).collect::<Result<Vec<_>, _>>()?;
    let body = bytes(&s.body);
    let templated = s.urls.iter().any(|u| u.contains('{'));
    // A URL's userinfo is sent as the Authorization header it means, and
    // shown with its password masked (credentials.rs).
    let mut cfg = if s.mix.is_empty() && s.urls.len() == 1 && !templated {
        let url = credentials::split(&s.urls[0]);
        let mut target = Target::parse(&url.url).map_err(|e| e.to_string())?;
        target.url = url.shown;
        let mut cfg = LoadConfig::new(target);
        cfg.method = method;
        cfg.headers = credentials::with_header(headers.clone(), &url.header);
        cfg
    } else {
        if s.urls.is_empty() && s.mix.is_empty() {
            return Err("no target: give a URL, --targets FILE or a mix".into());
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
            let mut own = entry.headers.iter().map(|h| header(h)).collect::<Result<Vec<_>, _>>();
            own = own.map_err(|e| format!("{origin}: {e}"));
            let mut entry_headers = own?;
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
        let (mut target, mix) =
            mix::build(specs, s.order, seed).map_err(|(i, why)| format!("{}: {why}", origins[i]))?;
        let first = s.urls.first().or(s.mix.first().map(|t| &t.url));
        target.url = first.map_or(target.url, |u| credentials::split(u).shown);
        let mut cfg = LoadConfig::new(target);
        cfg.method = match mix.templates.iter().all(|t| t.spec.method == "HEAD") {
            true => "HEAD".into(),
            false => method,
        };
        cfg.mix = Some(Arc::new(mix));
        cfg
    };
    if cfg.mix.is_some() {
        cfg.headers = headers;
    }
    cfg.body = body;
    cfg.hdr_log = s.hdr_log.clone();
    let size = |flag: &str, n: u64| usize::try_from(n).map_err(|_| format!("{flag} {n} is too large"));
    cfg.connections = size("--connections", s.connections)?;
    cfg.threads = size("--threads", s.threads)?;
    cfg.max_connections = size("--max-connections", s.max_connections.unwrap_or(s.connections))?.max(cfg.connections);
    cfg.stop = match (s.requests, s.duration) {
        (Some(n), _) => Stop::Requests(n),
        (None, Some(d)) => Stop::Duration(d),
        (None, None) => Stop::Duration(Duration::from_secs(10)),
    };
    cfg.timeout = s.timeout;
    cfg.warmup = s.warmup;
    cfg.rate = s.rate;
    cfg.arrival = s.arrival;
    cfg.max_lag = s.max_lag;
    cfg.slow_log = size("--slow-log", s.slow_log)?;
    cfg.protocol = Protocol::of_spec(&s)?;
    cfg.requests_per_connection = match s.requests_per_connection {
        Some(n) => Some(u32::try_from(n).map_err(|_| format!("--requests-per-connection {n} is too large"))?),
        None => None,
    };
    cfg.tls.insecure = s.insecure;
    cfg.tls.ca = s.ca.clone();
    cfg.tls.alpn = s.alpn.iter().map(|p| p.trim().to_string()).collect();
    stages(&s, &mut cfg)?;
    if let Some(g) = &s.grpc {
        crate::grpc::apply(g, dir, &mut cfg)?;
    }
    cfg.validate()?;
    Ok(cfg)
}

/// `stages`: the run lasts as long as they do, at their mean rate (open
/// loop) or with their peak of connections open (closed loop).
fn stages(s: &LoadSpec, cfg: &mut LoadConfig) -> Result<(), String> {
    let Some(text) = &s.stages else { return Ok(()) };
    if s.duration.is_some() || s.requests.is_some() || s.rate.is_some() || !s.warmup.is_zero() {
        return Err("--stages sets the run's length and load: drop --duration, --requests, --rate and --warmup".into());
    }
    let stages = Stages::parse(text, s.ramp)?;
    cfg.stop = Stop::Duration(stages.total());
    match s.ramp {
        Ramp::Rate => cfg.rate = Some(stages.mean()),
        Ramp::Connections => {
            cfg.connections = stages.peak() as usize;
            cfg.max_connections = cfg.connections;
        }
    }
    cfg.stages = Some(stages);
    Ok(())
}

/// A seed for a run that was given none.
pub fn clock_seed() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("stampede-spec-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_grpc_schema_is_named_by_absolute_path_for_a_generator_elsewhere() {
        let grpc = stampede_schema::grpc::GrpcSpec {
            proto: vec!["../contracts/a.proto".into()],
            import_paths: vec!["inc".into()],
            call: "p.S/M".into(),
            ..Default::default()
        };
        let spec = LoadSpec { urls: vec!["http://h:1/".into()], grpc: Some(grpc), ..LoadSpec::default() };
        let out = inline(&spec, Path::new("scenarios"), None).unwrap().grpc.unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(out.proto, [cwd.join("scenarios/../contracts/a.proto")]);
        assert_eq!(out.import_paths, [cwd.join("scenarios/inc")]);
        // Inlined again (run validates the spec it will send), nothing moves.
        let again = inline(&LoadSpec { grpc: Some(out.clone()), ..spec }, Path::new("scenarios"), None).unwrap();
        assert_eq!(again.grpc.unwrap().proto, out.proto);
    }

    #[test]
    fn inlining_reads_every_file_and_joins_paths_to_the_base() {
        let dir = scratch("inline");
        std::fs::write(dir.join("body.bin"), [0u8, 1, 2]).unwrap();
        std::fs::write(dir.join("mix.txt"), "POST /items weight=2\nX-K: v\nbody @body.bin\n").unwrap();
        let spec = LoadSpec {
            urls: vec!["/a".into()],
            body: Some(Body::File("body.bin".into())),
            targets: Some("mix.txt".into()),
            mix: vec![TargetEntry {
                method: "PUT".into(),
                url: "/b".into(),
                headers: vec![],
                body: Some(Body::File("body.bin".into())),
                weight: 1,
            }],
            ..LoadSpec::default()
        };
        let got = inline(&spec, &dir, Some("http://127.0.0.1:9/")).unwrap();
        assert_eq!(got.urls, ["http://127.0.0.1:9/a"]);
        assert_eq!(got.body, Some(Body::Bytes(vec![0, 1, 2])));
        assert_eq!(got.targets, None);
        assert_eq!(got.mix[0].body, Some(Body::Bytes(vec![0, 1, 2])));
        assert_eq!(
            got.mix[1],
            TargetEntry {
                method: "POST".into(),
                url: "http://127.0.0.1:9/items".into(),
                headers: vec!["X-K: v".into()],
                body: Some(Body::Bytes(vec![0, 1, 2])),
                weight: 2,
            }
        );
        let err = inline(&spec, &dir, None).unwrap_err();
        assert!(err.starts_with("urls: \"/a\" is a path"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn inlining_a_grpc_spec_reads_its_data_file_so_a_load_host_gets_the_request() {
        let dir = scratch("grpc-data");
        std::fs::write(dir.join("req.json"), r#"{"a": 1}"#).unwrap();
        let grpc = stampede_schema::grpc::GrpcSpec { data: Some("@req.json".into()), ..Default::default() };
        let spec = LoadSpec { urls: vec!["127.0.0.1:1".into()], grpc: Some(grpc), ..LoadSpec::default() };
        let got = inline(&spec, &dir, None).unwrap();
        assert_eq!(got.grpc.unwrap().data.as_deref(), Some(r#"{"a": 1}"#));
        let missing = LoadSpec {
            grpc: Some(stampede_schema::grpc::GrpcSpec { data: Some("@nope.json".into()), ..Default::default() }),
            ..spec
        };
        assert!(inline(&missing, &dir, None).unwrap_err().starts_with("--data @nope.json: cannot read it"));
        let _ = std::fs::remove_dir_all(dir);
    }

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
        let cfg = config(&spec, Path::new("")).unwrap();
        assert_eq!((cfg.method.as_str(), cfg.body.as_slice()), ("POST", &b"hi"[..]));
        assert_eq!(cfg.headers, [("X-A".to_string(), "1".to_string())]);
        assert_eq!((cfg.connections, cfg.threads, cfg.max_connections), (4, 2, 8));
        assert_eq!((cfg.stop, cfg.rate), (Stop::Requests(10), Some(100.0)));
        assert!(cfg.mix.is_none());
        let mixed = LoadSpec { urls: vec!["http://127.0.0.1:9/f/{1..3}".into()], seed: Some(3), ..LoadSpec::default() };
        assert!(config(&mixed, Path::new("")).unwrap().mix.is_some());
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
        let err = config(&spec, Path::new("")).unwrap_err();
        assert!(err.starts_with("mix[0]: "), "{err}");
        let none = config(&LoadSpec::default(), Path::new("")).unwrap_err();
        assert!(none.starts_with("no target"), "{none}");
    }
}
