//! Names that end up inside file names: an app's `name`, a profile's `name`
//! and a knob combination's label all become parts of log, flame-graph and
//! folded-stack file names under `--out`. One sanitiser makes any of them a
//! single harmless path component (no `/`, so no `..` traversal and no
//! missing folder), and one check refuses, when a manifest is read, an app
//! name that could only be a mistake or an attack (`../../tmp/x`, a NUL).
//!
//! Profile names are labels people choose (`api/v1`), so they are sanitised
//! in file names rather than refused; two that sanitise alike are refused as
//! a duplicate by the scenario check.

/// `label` as one file-name component: ASCII letters, digits, `.`, `-` and
/// `_` are kept, anything else (`/`, spaces, `=`, NUL, non-ASCII) becomes `_`.
pub fn file_part(label: &str) -> String {
    label.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' }).collect()
}

/// The stem of every file one run writes beside results.json (its server
/// log, interval log, profile, slow-request files):
/// `<app>-<knobs>-<profile>-<iteration>`.
pub fn run_stem(app: &str, knobs_label: &str, profile: &str, iteration: u32) -> String {
    format!("{}-{}-{}-{iteration}", file_part(app), file_part(knobs_label), file_part(profile))
}

/// Why `name` cannot name an app (it must be usable as a folder name in
/// `apps/` and as a file name under `--out`), if it cannot.
pub fn app_name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some("`name` is empty".into());
    }
    if name.contains(['/', '\\']) || name == "." || name.contains("..") {
        return Some(format!("`name` {name:?} must not contain `/`, `\\` or `..`: it becomes a file name under --out; use e.g. \"go-std\""));
    }
    if name.chars().any(char::is_control) {
        return Some(format!("`name` {name:?} must not contain NUL or other control characters"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_parts_have_no_separator_and_keep_what_reads_well() {
        assert_eq!(file_part("threads=2 gc=off"), "threads_2_gc_off");
        assert_eq!(file_part("api/v1"), "api_v1");
        assert_eq!(file_part("../../../../tmp/x/APP"), ".._.._.._.._tmp_x_APP");
        assert_eq!(file_part("go-std_1.2"), "go-std_1.2");
        assert_eq!(file_part("a\0b"), "a_b");
    }

    #[test]
    fn app_names_that_are_paths_are_refused() {
        for bad in ["../../../../tmp/x/APP", "a/b", "..", "a\\b", "a\0b", " "] {
            assert!(app_name_problem(bad).is_some(), "{bad:?}");
        }
        for good in ["go", "go-std", "python_fast", "node.js"] {
            assert_eq!(app_name_problem(good), None, "{good:?}");
        }
    }
}
