//! What a load is, declared once, below the engines that run it: the rules
//! a load spec is held to and the checked load they give ([`check`]), the
//! limits, stages, targets files, URL templates and header rules, and the
//! TLS trust every client shares. `stampede run` checks a scenario, remote
//! hosts inline a spec and `stampede check` builds its TLS clients and
//! random requests from here without linking the load engine
//! (`stampede-load`), which builds its config from a [`check::Checked`]
//! load.

pub mod check;
pub mod clock;
pub mod credentials;
pub mod error;
pub mod grpc;
pub mod headers;
pub mod inline;
pub mod limits;
pub mod load;
pub mod protocol;
pub mod request;
pub mod rules;
pub mod spec_error;
pub mod stages;
pub mod target;
pub mod targets_file;
pub mod template;
pub mod tls;
pub use stampede_schema::units;

pub use check::{check, Checked};
pub use error::LoadError;
pub use load::Load;
pub use protocol::{Carry, IoBackend, Protocol};
pub use rules::Stop;
pub use spec_error::{Field, SpecError};
pub use target::Target;
pub use tls::TlsOptions;

#[cfg(test)]
mod tests {
    /// The point of this crate: what a load is lives here, so only the
    /// binary (and its tests) link the load engine. A crate that depends
    /// on `stampede-load` again fails here, naming itself.
    #[test]
    fn only_the_binary_links_the_load_engine() {
        let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut linking = Vec::new();
        for entry in std::fs::read_dir(&crates).unwrap() {
            let dir = entry.unwrap().path();
            let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
            let normal = manifest.split("\n[").find(|s| s.starts_with("dependencies]")).unwrap_or("");
            if normal.lines().any(|l| l.trim_start().starts_with("stampede-load")) {
                linking.push(dir.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
        linking.sort();
        assert_eq!(linking, ["cli"], "crates whose [dependencies] name stampede-load");
    }
}
