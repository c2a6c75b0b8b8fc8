//! A scenario's `[database]` section: the user's own PostgreSQL (`url`) or
//! a private cluster, and whether to seed it; database/ opens it.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The scenario's `[database]` section.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSpec {
    /// The user's own server (`postgres://user:password@host:port/db`);
    /// absent: a private cluster started by `stampede run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// With `url`: (re)create and fill TechEmpower's `world` and `fortune`
    /// tables there before the apps start. The private cluster is always seeded.
    #[serde(default)]
    pub seed: bool,
}

impl DatabaseSpec {
    /// What `stampede run` says it is doing as it opens this database: a
    /// user's server without `seed` is only connected to.
    pub fn opening(&self) -> &'static str {
        match (&self.url, self.seed) {
            (None, _) => "starting and seeding a private database",
            (Some(_), true) => "seeding the database",
            (Some(_), false) => "connecting to the database",
        }
    }

    /// Checks the URL can be parsed, naming the field when it cannot.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(url) = &self.url {
            postgres::Config::from_str(url).map_err(|e| {
                let url = stampede_schema::redact::url(url);
                format!("{url:?} is not a PostgreSQL URL ({e}): write postgres://user:password@host:port/database")
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_url_is_named_and_passwords_are_hidden() {
        let spec = DatabaseSpec { url: Some("mysql:/nope".into()), seed: false };
        assert!(spec.validate().unwrap_err().contains("mysql:/nope"));
        let spec = DatabaseSpec { url: Some("postgres://u:s3cret@h:99999/d".into()), seed: false };
        let err = spec.validate().unwrap_err();
        assert!(err.contains("postgres://u:***@h:99999/d") && !err.contains("s3cret"), "{err}");
    }
}
