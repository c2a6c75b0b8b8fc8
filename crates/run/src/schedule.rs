//! The runs of a scenario as one flat list, in the order they run: each app
//! is prepared (built) once, then every knob combination × iteration ×
//! profile of it runs. The runner walks this list instead of nesting four
//! loops, so what to do next and what happened are two separate things
//! (runner.rs walks, observer.rs reports).

/// One thing the runner does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Build app number `app` (skipping its runs when that fails).
    Prepare { app: usize },
    /// One run: indices into the apps, the app's combinations and the
    /// scenario's profiles; iterations count from 1.
    Run { app: usize, combo: usize, iteration: u32, profile: usize },
}

/// The steps for apps with `combos[app]` knob combinations each, `iterations`
/// iterations and `profiles` profiles: a prepare, then the app's runs with
/// the profiles innermost, so each server start of a combination meets
/// every profile before the next iteration.
pub fn steps(combos: &[usize], iterations: u32, profiles: usize) -> Vec<Step> {
    let mut steps = Vec::new();
    for (app, &n) in combos.iter().enumerate() {
        steps.push(Step::Prepare { app });
        for combo in 0..n {
            for iteration in 1..=iterations {
                steps.extend((0..profiles).map(|profile| Step::Run { app, combo, iteration, profile }));
            }
        }
    }
    steps
}

/// How many runs `steps` holds.
pub fn runs(steps: &[Step]) -> u64 {
    steps.iter().filter(|s| matches!(s, Step::Run { .. })).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_app_is_prepared_before_its_runs_with_profiles_innermost() {
        let steps = steps(&[2, 0], 2, 2);
        let run = |combo, iteration, profile| Step::Run { app: 0, combo, iteration, profile };
        assert_eq!(steps[0], Step::Prepare { app: 0 });
        assert_eq!(&steps[1..4], &[run(0, 1, 0), run(0, 1, 1), run(0, 2, 0)]);
        assert_eq!(steps[8], run(1, 2, 1));
        assert_eq!(steps[9], Step::Prepare { app: 1 }, "an app without combinations is still prepared");
        assert_eq!((steps.len(), runs(&steps)), (10, 8));
    }
}
