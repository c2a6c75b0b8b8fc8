//! Which colour each configuration gets, decided once for the whole report
//! so that an app keeps its colour in every chart and legend: the eye can
//! follow one runtime down the page. The hue comes from the app (apps in
//! the order they first appear in the results, the summary's order); the
//! knob settings of one app are shades of that hue, lighter for each further
//! setting, so `go threads=1` and `go threads=2` stay recognisably go. The
//! load profile plays no part: go is the same colour in every profile's chart.

use super::svg::PALETTE;
use crate::schema::Results;
use crate::summary::ConfigKey;

/// How much of white each further knob setting of an app is mixed with.
const SHADES: [f64; 4] = [0.0, 0.4, 0.6, 0.25];

/// The report's colour assignment.
#[derive(Debug, Clone, Default)]
pub struct Palette {
    /// Each app with its knob settings, both in order of first appearance.
    apps: Vec<(String, Vec<std::collections::BTreeMap<String, String>>)>,
}

impl Palette {
    pub fn of(results: &Results) -> Palette {
        let mut palette = Palette::default();
        for run in &results.runs {
            let at = match palette.apps.iter().position(|(app, _)| *app == run.app) {
                Some(at) => at,
                None => {
                    palette.apps.push((run.app.clone(), Vec::new()));
                    palette.apps.len() - 1
                }
            };
            let knobs = &mut palette.apps[at].1;
            if !knobs.contains(&run.knobs) {
                knobs.push(run.knobs.clone());
            }
        }
        palette
    }

    /// The colour of a configuration, `#rrggbb`.
    pub fn colour(&self, key: &ConfigKey) -> String {
        let app = self.apps.iter().position(|(app, _)| *app == key.app);
        let shade = app.and_then(|a| self.apps[a].1.iter().position(|k| *k == key.knobs)).unwrap_or(0);
        tint(PALETTE[app.unwrap_or(0) % PALETTE.len()], SHADES[shade % SHADES.len()])
    }
}

/// `hex` mixed with `white` parts of white (0: unchanged).
fn tint(hex: &str, white: f64) -> String {
    let channel = |i: usize| u8::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap_or(0) as f64;
    let mix = |c: f64| (c + (255.0 - c) * white).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(channel(0)), mix(channel(1)), mix(channel(2)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Run;

    fn run(app: &str, threads: &str, profile: &str) -> Run {
        let mut run = Run { app: app.into(), profile: profile.into(), ..Run::default() };
        run.knobs.insert("threads".into(), threads.into());
        run
    }

    #[test]
    fn an_app_keeps_its_hue_across_profiles_and_its_settings_are_shades_of_it() {
        let results = Results {
            runs: vec![run("go", "1", "plaintext"), run("node", "1", "plaintext"), run("go", "2", "json")],
            ..Results::default()
        };
        let palette = Palette::of(&results);
        let key = |r: &Run| ConfigKey::of(r);
        let go = palette.colour(&key(&run("go", "1", "plaintext")));
        assert_eq!(go, PALETTE[0]);
        assert_eq!(palette.colour(&key(&run("go", "1", "json"))), go, "the profile does not change the colour");
        assert_eq!(palette.colour(&key(&run("node", "1", "json"))), PALETTE[1]);
        assert_eq!(palette.colour(&key(&run("go", "2", "json"))), tint(PALETTE[0], 0.4));
        assert_eq!(tint("#000000", 0.5), "#808080");
    }
}
