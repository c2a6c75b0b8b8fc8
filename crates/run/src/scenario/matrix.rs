//! The knob matrix: the cartesian product of a scenario's `threads`, manifest
//! knobs and raw `env` lists, resolved for one app. A knob the app lacks runs
//! at the app's default (and the run records no value for it); combinations
//! that resolve to the same settings are run once.

use std::collections::BTreeMap;

use crate::scenario::manifest::{Knob, Manifest};
use crate::scenario::text::Text;
use crate::scenario::Matrix;

/// One app's settings for a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Combination {
    /// knob name → value name as applied (including `threads` when set).
    pub knobs: BTreeMap<String, String>,
    /// Variables added to the server's environment.
    pub env: BTreeMap<String, String>,
    /// Appended to the manifest's `run`.
    pub args: String,
}

impl Combination {
    /// This combination under profiling: the `[profile]` environment (a knob
    /// setting the same variable keeps its value) and arguments added.
    pub fn profiled(&self, settings: &crate::scenario::manifest::ProfileSettings) -> Combination {
        let mut c = self.clone();
        for (k, v) in &settings.env {
            c.env.entry(k.clone()).or_insert_with(|| v.clone());
        }
        if let Some(args) = settings.args.as_deref().filter(|a| !a.trim().is_empty()) {
            c.args = if c.args.is_empty() { args.to_string() } else { format!("{} {args}", c.args) };
        }
        c
    }

    /// `gc=off threads=2`, or `defaults`.
    pub fn label(&self) -> String {
        if self.knobs.is_empty() {
            return "defaults".into();
        }
        self.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    }
}

/// One value on one axis of the matrix.
struct Setting {
    /// (knob name, value name) as the run records it.
    knob: (String, String),
    env: BTreeMap<String, String>,
    args: String,
}

/// Expands `matrix` for `app`; the notes say which requested values the app
/// does not have (those combinations are skipped).
pub fn expand(app: &Manifest, matrix: &Matrix) -> (Vec<Combination>, Vec<String>) {
    let mut notes = Vec::new();
    let mut axes: Vec<Vec<Setting>> = Vec::new();
    if !matrix.threads.is_empty() {
        axes.push(matrix.threads.iter().map(threads_setting).collect());
    }
    for (name, wanted) in &matrix.knobs {
        match app.knobs.get(name) {
            Some(knob) => axes.extend(knob_axis(app, name, knob, wanted, &mut notes)),
            None => notes.push(format!("{} has no knob {name:?}: it runs at its default", app.name)),
        }
    }
    for (var, values) in &matrix.env {
        axes.push(
            values
                .iter()
                .map(|v| Setting {
                    knob: (format!("env.{var}"), v.0.clone()),
                    env: BTreeMap::from([(var.clone(), v.0.clone())]),
                    args: String::new(),
                })
                .collect(),
        );
    }
    let mut combos = product(axes);
    // Knobs the scenario did not vary run at the manifest's default values.
    for combo in &mut combos {
        at_defaults(app, combo);
    }
    let mut unique: Vec<Combination> = Vec::new();
    for combo in combos {
        if !unique.contains(&combo) {
            unique.push(combo);
        }
    }
    (unique, notes)
}

/// `threads = [...]`: the value in `THREADS` (none for the empty one).
fn threads_setting(t: &Text) -> Setting {
    let env =
        if t.as_str().is_empty() { BTreeMap::new() } else { BTreeMap::from([("THREADS".to_string(), t.0.clone())]) };
    Setting { knob: ("threads".to_string(), t.0.clone()), env, args: String::new() }
}

/// The settings of knob `name` that `wanted` names (`*` for all, `default`
/// for the manifest's default), each once; `None` when none exists.
fn knob_axis(
    app: &Manifest,
    name: &str,
    knob: &Knob,
    wanted: &[Text],
    notes: &mut Vec<String>,
) -> Option<Vec<Setting>> {
    let mut axis: Vec<Setting> = Vec::new();
    for value in wanted {
        let names: Vec<String> = match value.as_str() {
            "*" => knob.values.keys().cloned().collect(),
            "default" if !knob.values.contains_key("default") => vec![knob.default.clone()],
            other => vec![other.to_string()],
        };
        for value_name in names {
            match knob.values.get(&value_name) {
                Some(v) if !axis.iter().any(|s| s.knob.1 == value_name) => axis.push(Setting {
                    knob: (name.to_string(), value_name.clone()),
                    env: v.env.clone(),
                    args: v.args.clone().unwrap_or_default(),
                }),
                Some(_) => {}
                None => notes.push(format!(
                    "{} has no value {value_name:?} for knob {name:?} (it has {}): skipped",
                    app.name,
                    knob.values.keys().cloned().collect::<Vec<_>>().join(", ")
                )),
            }
        }
    }
    (!axis.is_empty()).then_some(axis)
}

/// Every combination of one setting per axis, in the axes' order.
fn product(axes: Vec<Vec<Setting>>) -> Vec<Combination> {
    let mut combos = vec![Combination::default()];
    for axis in axes {
        let mut next = Vec::new();
        for combo in &combos {
            for setting in &axis {
                let mut c = combo.clone();
                c.knobs.insert(setting.knob.0.clone(), setting.knob.1.clone());
                c.env.extend(setting.env.iter().map(|(k, v)| (k.clone(), v.clone())));
                let args = &setting.args;
                if !args.is_empty() {
                    c.args = if c.args.is_empty() { args.clone() } else { format!("{} {args}", c.args) };
                }
                next.push(c);
            }
        }
        combos = next;
    }
    combos
}

/// Gives `combo` the manifest's default value of every knob it does not set.
fn at_defaults(app: &Manifest, combo: &mut Combination) {
    for (name, knob) in &app.knobs {
        if combo.knobs.contains_key(name) {
            continue;
        }
        if let Some(v) = knob.values.get(&knob.default) {
            for (k, val) in &v.env {
                combo.env.entry(k.clone()).or_insert_with(|| val.clone());
            }
            if let Some(args) = &v.args {
                combo.args = if combo.args.is_empty() { args.clone() } else { format!("{} {args}", combo.args) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::manifest::KnobValue;

    fn app() -> Manifest {
        let mut values = BTreeMap::new();
        values
            .insert("100".to_string(), KnobValue { env: BTreeMap::from([("GOGC".into(), "100".into())]), args: None });
        values.insert(
            "off".to_string(),
            KnobValue { env: BTreeMap::from([("GOGC".into(), "off".into())]), args: Some("--nogc".into()) },
        );
        Manifest {
            name: "go".into(),
            description: String::new(),
            requires: vec![],
            build: None,
            run: "exec ./server".into(),
            version: None,
            contract: None,
            ready: None,
            knobs: BTreeMap::from([(
                "gc".to_string(),
                Knob { description: String::new(), default: "100".into(), values },
            )]),
            profile: Default::default(),
            events: None,
            working_dir: None,
            urls: Default::default(),
            tfb_config: None,
            tfb_test: None,
            port: None,
            fixed_port: None,
            arena: None,
            dir: ".".into(),
        }
    }

    fn texts(v: &[&str]) -> Vec<Text> {
        v.iter().map(|s| Text(s.to_string())).collect()
    }

    #[test]
    fn threads_times_knob_values() {
        let matrix = Matrix {
            threads: texts(&["1", "2"]),
            env: BTreeMap::new(),
            knobs: BTreeMap::from([("gc".to_string(), texts(&["default", "off"]))]),
        };
        let (combos, notes) = expand(&app(), &matrix);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(combos.len(), 4);
        assert_eq!(combos[0].label(), "gc=100 threads=1");
        assert_eq!(combos[3].env["GOGC"], "off");
        assert_eq!(combos[3].env["THREADS"], "2");
        assert_eq!(combos[3].args, "--nogc");
    }

    #[test]
    fn a_missing_knob_runs_at_default_once() {
        let matrix = Matrix {
            threads: vec![],
            env: BTreeMap::new(),
            knobs: BTreeMap::from([("jit".to_string(), texts(&["on", "off"]))]),
        };
        let (combos, notes) = expand(&app(), &matrix);
        assert_eq!(combos.len(), 1);
        assert!(combos[0].knobs.is_empty());
        assert_eq!(combos[0].env["GOGC"], "100", "the default value of an unvaried knob applies");
        assert!(notes[0].contains("no knob \"jit\""), "{notes:?}");
    }

    #[test]
    fn star_means_every_value_and_unknown_values_are_skipped() {
        let matrix = Matrix {
            threads: vec![],
            env: BTreeMap::from([("X".to_string(), texts(&["a"]))]),
            knobs: BTreeMap::from([("gc".to_string(), texts(&["*", "zgc"]))]),
        };
        let (combos, notes) = expand(&app(), &matrix);
        assert_eq!(combos.len(), 2);
        assert_eq!(combos[1].knobs["env.X"], "a");
        assert!(notes[0].contains("\"zgc\""), "{notes:?}");
    }
}
