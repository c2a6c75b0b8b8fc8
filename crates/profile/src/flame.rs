//! Rendering folded stacks as interactive SVG flame graphs with `inferno`:
//! one profile, or the difference between two (red: more samples after, blue:
//! fewer). The SVGs are self-contained (search, zoom and tooltips are inline
//! JavaScript), so they open from a results folder or an HTML report.

use inferno::differential;
use inferno::flamegraph::{self, color::MultiPalette, Options, Palette};

use crate::error::ProfileError;
use crate::fold::Folded;

/// The options every stampede flame graph shares: the Java palette colours
/// by inferno's annotations (kernel `_[k]` orange, JIT `_[j]` green).
fn options(title: &str, subtitle: Option<String>, count_name: &str) -> Options<'static> {
    let mut opt = Options::default();
    opt.title = title.to_string();
    opt.subtitle = subtitle;
    opt.count_name = count_name.to_string();
    opt.colors = Palette::Multi(MultiPalette::Java);
    // Same stacks, same colours: two renders of one profile are identical.
    opt.hash = true;
    opt.deterministic = true;
    opt
}

/// An SVG flame graph of `folded`.
pub fn render(folded: &Folded, title: &str, subtitle: Option<String>) -> Result<Vec<u8>, ProfileError> {
    render_counted(folded, title, subtitle, "samples")
}

/// An SVG flame graph whose counts are `count_name` (`µs` off CPU, say).
pub fn render_counted(
    folded: &Folded,
    title: &str,
    subtitle: Option<String>,
    count_name: &str,
) -> Result<Vec<u8>, ProfileError> {
    let text = folded.to_text();
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut options(title, subtitle, count_name), text.lines(), &mut svg)
        .map_err(ProfileError::Render)?;
    Ok(svg)
}

/// A differential SVG flame graph: the shape of `after`, coloured by the
/// change from `before` (normalised to the same sample count, so a longer or
/// busier run does not turn everything red).
pub fn render_differential(before: &Folded, after: &Folded, title: &str) -> Result<Vec<u8>, ProfileError> {
    let opt = differential::Options { normalize: true, strip_hex: true };
    let mut diff = Vec::new();
    differential::from_readers(opt, before.to_text().as_bytes(), after.to_text().as_bytes(), &mut diff)
        .map_err(ProfileError::Render)?;
    let diff = String::from_utf8_lossy(&diff);
    let subtitle = Some(format!(
        "red: more samples than before, blue: fewer ({} samples before, {} after)",
        before.samples(),
        after.samples()
    ));
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut options(title, subtitle, "samples"), diff.lines(), &mut svg)
        .map_err(ProfileError::Render)?;
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flame_graph_names_its_frames_and_is_deterministic() {
        let folded = Folded::parse("srv;main;xorshift 9\nsrv;main;write_[k] 1\n").unwrap();
        let svg = String::from_utf8(render(&folded, "t", None).unwrap()).unwrap();
        assert!(svg.starts_with("<?xml"), "{}", &svg[..80]);
        assert!(svg.contains("xorshift (9 samples, 90.00%)"), "frame title missing");
        assert_eq!(svg, String::from_utf8(render(&folded, "t", None).unwrap()).unwrap());
    }

    #[test]
    fn a_differential_shows_the_grown_frame() {
        let before = Folded::parse("srv;main;a 8\nsrv;main;b 2\n").unwrap();
        let after = Folded::parse("srv;main;a 2\nsrv;main;b 8\n").unwrap();
        let svg = String::from_utf8(render_differential(&before, &after, "diff").unwrap()).unwrap();
        // b grew from 20% to 80% of samples: +60 points.
        assert!(
            svg.contains("b (8 samples, 80.00%; +60.00%)"),
            "{}",
            svg.lines().filter(|l| l.contains("<title>b")).collect::<String>()
        );
    }
}
