//! The summary of a results file: runs grouped by configuration (app, knobs,
//! load profile) with the median of each headline metric over the valid
//! iterations. The Markdown, CSV and JSON exporters print it, the HTML report
//! charts it, and `compare` pairs configurations by the same key.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::schema::{Results, Run};
use crate::stats::median;

/// What makes two runs iterations of the same thing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ConfigKey {
    pub app: String,
    pub knobs: BTreeMap<String, String>,
    pub profile: String,
}

impl ConfigKey {
    pub fn of(run: &Run) -> ConfigKey {
        ConfigKey { app: run.app.clone(), knobs: run.knobs.clone(), profile: run.profile.clone().unwrap_or_default() }
    }

    /// `threads=2 gc=server`, or `-` when there are no knobs (as in the terminal).
    pub fn knobs_label(&self) -> String {
        if self.knobs.is_empty() {
            return "-".to_owned();
        }
        self.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    }

    /// `go threads=2`, or `go` without knobs.
    pub fn app_knobs(&self) -> String {
        if self.knobs.is_empty() {
            self.app.clone()
        } else {
            format!("{} {}", self.app, self.knobs_label())
        }
    }

    /// `go threads=2 (steady)`; knobs and profile are left out when empty.
    pub fn label(&self) -> String {
        let mut label = self.app_knobs();
        if !self.profile.is_empty() {
            label.push_str(&format!(" ({})", self.profile));
        }
        label
    }
}

/// The runs of one configuration, in file order.
#[derive(Debug, Clone)]
pub struct ConfigRuns<'a> {
    pub key: ConfigKey,
    pub runs: Vec<&'a Run>,
}

impl<'a> ConfigRuns<'a> {
    pub fn valid(&self) -> impl Iterator<Item = &'a Run> + '_ {
        self.runs.iter().copied().filter(|r| r.is_valid())
    }

    /// The values of one metric over the valid iterations.
    pub fn values(&self, metric: Metric) -> Vec<f64> {
        self.valid().filter_map(|run| metric.of(run)).collect()
    }
}

/// Groups runs by configuration, in the order configurations first appear.
pub fn group(results: &Results) -> Vec<ConfigRuns<'_>> {
    let mut groups: Vec<ConfigRuns<'_>> = Vec::new();
    for run in &results.runs {
        let key = ConfigKey::of(run);
        match groups.iter_mut().find(|g| g.key == key) {
            Some(group) => group.runs.push(run),
            None => groups.push(ConfigRuns { key, runs: vec![run] }),
        }
    }
    groups
}

/// The metrics summarised and compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Rps,
    RpsPerCore,
    P50,
    P99,
    Cpu,
    Rss,
    LoadgenCpu,
}

impl Metric {
    /// The metrics `compare` looks at, in table order.
    pub const COMPARED: [Metric; 6] =
        [Metric::Rps, Metric::RpsPerCore, Metric::P50, Metric::P99, Metric::Cpu, Metric::Rss];

    /// The short name used by `--fail-if` and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Rps => "rps",
            Metric::RpsPerCore => "rps_per_core",
            Metric::P50 => "p50",
            Metric::P99 => "p99",
            Metric::Cpu => "cpu",
            Metric::Rss => "rss",
            Metric::LoadgenCpu => "loadgen_cpu",
        }
    }

    pub fn from_name(name: &str) -> Option<Metric> {
        [Metric::LoadgenCpu].into_iter().chain(Metric::COMPARED).find(|m| m.name() == name)
    }

    /// Human title with unit.
    pub fn title(self) -> &'static str {
        match self {
            Metric::Rps => "requests/s",
            Metric::RpsPerCore => "requests/s per server core",
            Metric::P50 => "p50 latency (ms)",
            Metric::P99 => "p99 latency (ms)",
            Metric::Cpu => "server CPU (cores)",
            Metric::Rss => "server RSS max (MiB)",
            Metric::LoadgenCpu => "load generator CPU (cores)",
        }
    }

    /// Whether a larger value is an improvement.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Rps | Metric::RpsPerCore)
    }

    /// Words for an improvement and a regression.
    pub fn verdict_words(self) -> (&'static str, &'static str) {
        match self {
            Metric::Rps | Metric::RpsPerCore | Metric::P50 | Metric::P99 => ("faster", "slower"),
            Metric::Cpu | Metric::Rss | Metric::LoadgenCpu => ("less", "more"),
        }
    }

    /// The value of this metric for one run, in the unit of `title`.
    pub fn of(self, run: &Run) -> Option<f64> {
        let load = run.load.as_ref();
        let value = match self {
            Metric::Rps => Some(load?.rps),
            Metric::RpsPerCore => run.rps_per_core(),
            Metric::P50 => Some(load?.latency_us.p50 / 1000.0),
            Metric::P99 => Some(load?.latency_us.p99 / 1000.0),
            Metric::Cpu => run.server.as_ref()?.cpu_cores_avg,
            Metric::Rss => run.server.as_ref()?.rss_max_mib,
            Metric::LoadgenCpu => {
                load.map(|l| l.loadgen.cpu_cores).filter(|c| *c > 0.0).or_else(|| run.loadgen.as_ref()?.cpu_cores_avg)
            }
        };
        value.filter(|v| v.is_finite())
    }
}

/// One configuration's line in the summary.
#[derive(Debug, Clone, Serialize)]
pub struct SummaryRow {
    pub app: String,
    pub knobs: BTreeMap<String, String>,
    pub profile: String,
    pub runs: usize,
    pub valid_runs: usize,
    pub rps: Option<f64>,
    pub rps_per_core: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub server_cpu_cores: Option<f64>,
    pub server_rss_max_mib: Option<f64>,
    pub loadgen_cpu_cores: Option<f64>,
    /// Socket errors summed over every run of the configuration ([`stampede_schema::Errors::socket`]).
    pub socket_errors: u64,
    /// Bad responses summed over every run of the configuration ([`stampede_schema::Errors::bad_responses`]).
    pub bad_responses: u64,
    pub invalid_reasons: Vec<String>,
}

impl SummaryRow {
    pub fn key(&self) -> ConfigKey {
        ConfigKey { app: self.app.clone(), knobs: self.knobs.clone(), profile: self.profile.clone() }
    }
}

/// The summary: one row per configuration, medians over valid iterations.
pub fn summarize(results: &Results) -> Vec<SummaryRow> {
    group(results)
        .iter()
        .map(|group| {
            let med = |metric| median(&group.values(metric));
            SummaryRow {
                app: group.key.app.clone(),
                knobs: group.key.knobs.clone(),
                profile: group.key.profile.clone(),
                runs: group.runs.len(),
                valid_runs: group.valid().count(),
                rps: med(Metric::Rps),
                rps_per_core: med(Metric::RpsPerCore),
                p50_ms: med(Metric::P50),
                p99_ms: med(Metric::P99),
                server_cpu_cores: med(Metric::Cpu),
                server_rss_max_mib: med(Metric::Rss),
                loadgen_cpu_cores: med(Metric::LoadgenCpu),
                socket_errors: group.runs.iter().filter_map(|r| r.load.as_ref()).map(|l| l.socket_errors()).sum(),
                bad_responses: group.runs.iter().filter_map(|r| r.load.as_ref()).map(|l| l.bad_responses()).sum(),
                invalid_reasons: group
                    .runs
                    .iter()
                    .filter(|r| !r.is_valid())
                    .map(|r| {
                        let reason = r.invalid_reason.clone().unwrap_or_else(|| "no reason given".to_owned());
                        format!("iteration {}: {reason}", r.iteration.unwrap_or(0))
                    })
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_skip_invalid_iterations() {
        let text = r#"{"schema":"stampede.run/1","runs":[
          {"app":"go","knobs":{"t":"1"},"profile":"p","iteration":1,"valid":true,"load":{"rps":100.0},"server":{"cpu_cores_avg":1.0}},
          {"app":"go","knobs":{"t":"1"},"profile":"p","iteration":2,"valid":true,"load":{"rps":300.0},"server":{"cpu_cores_avg":1.0}},
          {"app":"go","knobs":{"t":"1"},"profile":"p","iteration":3,"valid":false,"invalid_reason":"boom","load":{"rps":9999.0}},
          {"app":"node","knobs":{},"profile":"p","iteration":1,"load":{"rps":50.0}}]}"#;
        let results = Results::from_json(text).unwrap();
        let rows = summarize(&results);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].rps, Some(200.0));
        assert_eq!(rows[0].rps_per_core, Some(200.0));
        assert_eq!((rows[0].runs, rows[0].valid_runs), (3, 2));
        assert_eq!(rows[0].invalid_reasons, vec!["iteration 3: boom".to_owned()]);
        assert_eq!(rows[1].key().knobs_label(), "-");
    }
}
