//! A load spec made self-contained: [`inline`] reads the files a spec names
//! (bodies, the targets file, a gRPC request's `@FILE`) into the spec
//! itself and joins path-only URLs to a base URL, so it can be sent to a
//! process that lacks them (`stampede run`'s generator, another host) and
//! still mean the same load.

use crate::limits;
use crate::spec_error::{AboutField, Field, Origin, SpecError};
use crate::targets_file;
use stampede_schema::spec::{Body, LoadSpec, TargetEntry};
use std::io::Read;
use std::path::Path;

/// Largest targets file read.
const MAX_TARGETS_FILE_BYTES: usize = 16 << 20;

/// `spec` with every file it reads (body files, the targets file, relative
/// to `dir`) read into it, and every path-only URL (`/json`) joined to
/// `base_url`. The result names no file to read but `ca` (made relative to
/// where this process runs) and `hdr_log` (written, relative to the working
/// directory).
pub fn inline(spec: &LoadSpec, dir: &Path, base_url: Option<&str>) -> Result<LoadSpec, SpecError> {
    inline_with_origins(spec, dir, base_url).map(|(spec, _)| spec)
}

/// [`inline`], with where each target of the result came from (for errors:
/// `URL argument 2`, `mix.txt:7`).
pub(crate) fn inline_with_origins(
    spec: &LoadSpec,
    dir: &Path,
    base_url: Option<&str>,
) -> Result<(LoadSpec, Vec<Origin>), SpecError> {
    let mut out = spec.clone();
    out.urls = spec.urls.iter().map(|u| join(u, base_url, "urls").about(Field::Urls)).collect::<Result<_, _>>()?;
    out.body = spec.body.as_ref().map(|b| read_body(b, dir, "body").about(Field::Body)).transpose()?;
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
    let origin = |field: Field, at: String| Origin { field, at };
    let mut origins: Vec<Origin> =
        (1..=out.urls.len()).map(|n| origin(Field::Urls, format!("URL argument {n}"))).collect();
    for (i, entry) in out.mix.iter_mut().enumerate() {
        let at = format!("mix[{i}]");
        entry.url = join(&entry.url, base_url, &at).about(Field::Mix)?;
        let body = entry.body.as_ref().map(|b| read_body(b, dir, &format!("{at}.body")));
        entry.body = body.transpose().about(Field::Mix)?;
        origins.push(origin(Field::Mix, at));
    }
    if let Some(path) = out.targets.take() {
        let (text, origin, file_dir) = read_targets(&path, dir).about(Field::Targets)?;
        for parsed in targets_file::parse(&text, &origin, &file_dir).about(Field::Targets)? {
            let t = parsed.spec;
            out.mix.push(TargetEntry {
                method: t.method,
                url: join(&t.url, base_url, &format!("{origin}:{}", parsed.line)).about(Field::Targets)?,
                headers: t.headers.iter().map(|(n, v)| format!("{n}: {v}")).collect(),
                body: (!t.body.is_empty()).then_some(Body::Bytes(t.body)),
                weight: t.weight,
            });
            origins.push(Origin { field: Field::Targets, at: format!("{origin}:{}", parsed.line) });
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
        assert_eq!(err.field, Field::Urls);
        assert!(err.to_string().starts_with("urls: \"/a\" is a path"), "{err}");
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
        let err = inline(&missing, &dir, None).unwrap_err();
        assert_eq!(err.field, Field::GrpcData);
        assert!(err.to_string().starts_with("--data @nope.json: cannot read it"), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
