//! `--copy-binary`: hosts that lack this version of `stampede` get the local
//! binary, streamed over the same ssh connection into
//! `~/.cache/stampede/stampede-<version>`, written to a temporary name and
//! renamed, so a half-copied file is never run. Nothing is copied when the
//! host already runs the same version.

use crate::error::HostError;
use crate::ssh::{last_line, Ssh};
use std::path::Path;

/// What `stampede --version` prints for this build.
pub fn local_version() -> String {
    format!("stampede {}", env!("CARGO_PKG_VERSION"))
}

/// Where a copied binary lives on the host (expanded by the remote shell).
pub fn cache_path() -> String {
    format!("~/.cache/stampede/stampede-{}", env!("CARGO_PKG_VERSION"))
}

/// The version `path --version` prints on `host`, or `None` if it did not run.
pub fn remote_version(ssh: &Ssh, host: &str, path: &str) -> Result<Option<String>, HostError> {
    let out = ssh.output(ssh.command(host, &[path.to_string(), "--version".into()]), None)?;
    if let Some(e) = out.connect_error() {
        return Err(e);
    }
    Ok((out.code == Some(0)).then(|| out.stdout.trim().to_string()))
}

/// Makes sure `host` can run this version of stampede and returns the path
/// to run there: `ssh.remote_path` when it is this version already, else the
/// cached copy (sent now unless an earlier run left it there).
pub fn ensure(ssh: &Ssh, host: &str, local_binary: &Path) -> Result<String, HostError> {
    let wanted = local_version();
    if remote_version(ssh, host, &ssh.remote_path)?.as_deref() == Some(wanted.as_str()) {
        return Ok(ssh.remote_path.clone());
    }
    let cached = cache_path();
    if remote_version(ssh, host, &cached)?.as_deref() == Some(wanted.as_str()) {
        return Ok(cached);
    }
    let binary = std::fs::read(local_binary)
        .map_err(|e| HostError::Copy(format!("cannot read {}: {e}", local_binary.display())))?;
    let tmp = format!("{cached}.tmp");
    let script = format!(
        "mkdir -p ~/.cache/stampede && cat > {t} && chmod +x {t} && mv {t} {c}",
        t = crate::ssh::quote(&tmp),
        c = crate::ssh::quote(&cached)
    );
    // `sh -c SCRIPT` arrives quoted; the remote shell unquotes it once and sh runs it.
    let out = ssh.output(ssh.command(host, &["sh".into(), "-c".into(), script]), Some(&binary))?;
    if let Some(e) = out.connect_error() {
        return Err(e);
    }
    if out.code != Some(0) {
        return Err(HostError::Copy(last_line(&out.stderr)));
    }
    match remote_version(ssh, host, &cached)? {
        Some(v) if v == wanted => Ok(cached),
        other => Err(HostError::Copy(format!(
            "the copy at {cached} answers {:?} to --version; is the host another OS or CPU architecture?",
            other.unwrap_or_else(|| "nothing".into())
        ))),
    }
}
