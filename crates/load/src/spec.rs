//! A [`LoadSpec`] made into the engine's [`LoadConfig`], in one place for
//! `stampede load`'s flags, `--spec` documents and load hosts. What a spec
//! may say is the spec crate's (`stampede_spec::check`, which `stampede
//! run` also uses to check a scenario without this engine); here the
//! checked load becomes the engine's config, its mix prepared.

use crate::config::LoadConfig;
use crate::mix::Mix;
use stampede_schema::spec::LoadSpec;
pub use stampede_spec::SpecError;
use std::path::Path;
use std::sync::Arc;

pub use stampede_spec::check::clock_seed;
pub use stampede_spec::inline::inline;

/// The run `spec` describes, its files read relative to `dir`. A spec
/// without `seed` gets one from the clock (the result prints it).
pub fn config(spec: &LoadSpec, dir: &Path) -> Result<LoadConfig, SpecError> {
    let checked = stampede_spec::check::check(spec, dir)?;
    let mut cfg = LoadConfig::new(checked.load);
    if let Some(plan) = checked.mix {
        let mix = Mix::new(plan.targets, plan.order, plan.seed, &cfg.target.host_header, plan.paths)
            .map_err(|(i, why)| plan.origins[i].error(why))?;
        cfg.mix = Some(Arc::new(mix));
    }
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_is_the_checked_load_with_its_mix_prepared() {
        let spec = LoadSpec {
            urls: vec!["http://127.0.0.1:9/f/{1..3}".into(), "http://127.0.0.1:9/g".into()],
            method: "post".into(),
            connections: 4,
            threads: 2,
            requests: Some(10),
            seed: Some(3),
            ..LoadSpec::default()
        };
        let checked = stampede_spec::check(&spec, Path::new("")).unwrap();
        let cfg = config(&spec, Path::new("")).unwrap();
        assert_eq!(
            (&cfg.method, cfg.connections, cfg.threads, cfg.stop),
            (&checked.load.method, 4, 2, checked.load.stop)
        );
        assert!(cfg.validate().is_ok(), "a checked spec passes the engine's validation");
        let mix = cfg.mix.unwrap();
        assert_eq!((mix.len(), mix.seed, mix.templates[0].label.as_str()), (2, 3, "POST /f/{1..3}"));
    }
}
