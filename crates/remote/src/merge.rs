//! The total of several hosts' `stampede.load/1` results, and one row per
//! host. Counts, bytes, errors and status codes are summed; latency comes
//! from the hosts' HdrHistograms merged count by count, so the total's
//! percentiles are exactly those of one histogram fed every request (never an
//! average of percentiles). Figures that come without a histogram (open-loop
//! service time, TLS handshakes, the per-second p99) take the worst host's.

use crate::error::{failure, HostError, HostFailure};
use hdrhistogram::Histogram;
use stampede_schema::histogram::{decode_histogram, encode_histogram, merge_histograms, spectrum};
use stampede_schema::hosts::{HostRow, MultiHost};
use stampede_schema::load::{LoadResult, Loadgen, OpenLoop, Percentiles, SecondStats, SlowRequest, TlsStats};
use std::collections::BTreeMap;

/// A host's finished result with how its clock compared.
#[derive(Debug, Clone)]
pub struct HostResult {
    pub host: String,
    pub offset_ns: i64,
    pub rtt_ns: u64,
    pub result: LoadResult,
}

impl HostResult {
    fn row(&self) -> HostRow {
        let r = &self.result;
        HostRow {
            host: self.host.clone(),
            clock_offset_ms: self.offset_ns as f64 / 1e6,
            rtt_ms: self.rtt_ns as f64 / 1e6,
            connections: r.connections,
            target_rate: r.open.as_ref().map(|o| o.target_rate),
            requests: r.requests,
            rps: r.rps,
            errors: r.errors.total(),
            p99_us: r.latency_us.p99,
            duration_s: r.duration_s,
            interrupted: r.interrupted,
            loadgen: r.loadgen,
            histogram: r.histogram.clone(),
        }
    }
}

/// Merges the hosts' results (at least one) into the total.
pub fn merge(hosts: &[HostResult], failed: Vec<HostFailure>) -> Result<LoadResult, HostFailure> {
    let first =
        hosts.first().ok_or_else(|| HostFailure { host: "-".into(), reason: "no host returned a result".into() })?;
    let histograms = hosts
        .iter()
        .map(|h| {
            decode_histogram(&h.result.histogram).map_err(|e| failure(&h.host, &HostError::BadResult(e.to_string())))
        })
        .collect::<Result<Vec<Histogram<u64>>, _>>()?;
    let latency =
        merge_histograms(&histograms).map_err(|e| failure(&first.host, &HostError::BadResult(e.to_string())))?;
    let mut total = first.result.clone();
    let results: Vec<&LoadResult> = hosts.iter().map(|h| &h.result).collect();
    let sum_u = |f: fn(&LoadResult) -> u64| results.iter().map(|r| f(r)).sum::<u64>();
    let sum_f = |f: fn(&LoadResult) -> f64| results.iter().map(|r| f(r)).sum::<f64>();
    let max_f = |f: fn(&LoadResult) -> f64| results.iter().map(|r| f(r)).fold(0.0, f64::max);
    total.connections = results.iter().map(|r| r.connections).sum();
    total.threads = results.iter().map(|r| r.threads).sum();
    total.duration_s = max_f(|r| r.duration_s);
    total.interrupted = results.iter().any(|r| r.interrupted);
    total.requests = sum_u(|r| r.requests);
    // The hosts ran at the same time: their rates add up.
    total.rps = sum_f(|r| r.rps);
    total.bytes_read = sum_u(|r| r.bytes_read);
    total.content_encodings = stampede_schema::encoding::merge(results.iter().map(|r| &r.content_encodings[..]));
    total.reconnects = sum_u(|r| r.reconnects);
    total.sent = sum_u(|r| r.sent);
    total.unanswered = sum_u(|r| r.unanswered);
    total.never_sent = sum_u(|r| r.never_sent);
    total.stalled = results.iter().filter_map(|r| r.stalled).max_by(|a, b| a.for_s.total_cmp(&b.for_s));
    total.errors = Default::default();
    let mut status: BTreeMap<String, u64> = BTreeMap::new();
    for r in &results {
        total.errors.add(&r.errors);
        for (code, n) in &r.status_codes {
            *status.entry(code.clone()).or_default() += n;
        }
    }
    total.status_codes = status;
    total.latency_us = Percentiles::of(&latency);
    total.latency_spectrum = spectrum(&latency);
    total.histogram = encode_histogram(&latency);
    total.loadgen = Loadgen {
        cpu_user_s: sum_f(|r| r.loadgen.cpu_user_s),
        cpu_sys_s: sum_f(|r| r.loadgen.cpu_sys_s),
        cpu_cores: sum_f(|r| r.loadgen.cpu_cores),
        max_rss_kib: results.iter().map(|r| r.loadgen.max_rss_kib).max().unwrap_or(0),
    };
    total.timeline = merge_timeline(&results);
    total.slow_requests = merge_slow(
        hosts,
        first.result.slow_requests.len().max(hosts.iter().map(|h| h.result.slow_requests.len()).max().unwrap_or(0)),
    );
    total.tls_handshake_us = worst(results.iter().filter_map(|r| r.tls_handshake_us));
    total.tls = first.result.tls.as_ref().map(|t| TlsStats {
        handshakes: results.iter().filter_map(|r| r.tls.as_ref()).map(|t| t.handshakes).sum(),
        resumed: results.iter().filter_map(|r| r.tls.as_ref()).map(|t| t.resumed).sum(),
        alpn: t.alpn.clone(),
    });
    if let Some(h2) = total.http2.as_mut() {
        h2.goaway = results.iter().filter_map(|r| r.http2.as_ref()).map(|h| h.goaway).sum();
        h2.rst_stream = results.iter().filter_map(|r| r.http2.as_ref()).map(|h| h.rst_stream).sum();
    }
    if let Some(g) = total.grpc.as_mut() {
        let each = || results.iter().filter_map(|r| r.grpc.as_ref());
        let mut sum = stampede_schema::grpc::GrpcStats { call: g.call.clone(), ..Default::default() };
        each().for_each(|h| sum.add(h));
        (sum.server_streaming, sum.client_streaming) = (g.server_streaming, g.client_streaming);
        sum.request_messages = g.request_messages;
        sum.schema = g.schema.clone();
        sum.messages_per_s = each().map(|h| h.messages_per_s).sum();
        sum.first_message_us = worst(each().filter_map(|h| h.first_message_us));
        sum.message_gap_us = worst(each().filter_map(|h| h.message_gap_us));
        *g = sum;
    }
    total.open = merge_open(hosts);
    total.multi_host = Some(MultiHost {
        hosts: hosts.iter().map(HostResult::row).collect(),
        partial: !failed.is_empty(),
        failed_hosts: failed,
    });
    Ok(total)
}

/// Second by second: counts summed, p99 the worst host's (the per-second
/// histograms stay on the hosts).
fn merge_timeline(results: &[&LoadResult]) -> Vec<SecondStats> {
    let mut by_second: BTreeMap<u64, SecondStats> = BTreeMap::new();
    for s in results.iter().flat_map(|r| &r.timeline) {
        let e = by_second.entry(s.t_s).or_insert(SecondStats { t_s: s.t_s, requests: 0, errors: 0, p99_us: 0.0 });
        e.requests += s.requests;
        e.errors += s.errors;
        e.p99_us = e.p99_us.max(s.p99_us);
    }
    by_second.into_values().collect()
}

/// The slowest requests of all hosts, with wall-clock stamps moved onto the
/// controller's clock (monotonic stamps stay each host's own).
fn merge_slow(hosts: &[HostResult], keep: usize) -> Vec<SlowRequest> {
    let mut all: Vec<_> = hosts
        .iter()
        .flat_map(|h| {
            let shift = |t: u64| (t as i128 - h.offset_ns as i128).max(0) as u64;
            h.result.slow_requests.iter().map(move |s| {
                let mut s = *s;
                s.intended_unix_ns = shift(s.intended_unix_ns);
                s.start_unix_ns = shift(s.start_unix_ns);
                s.end_unix_ns = shift(s.end_unix_ns);
                s
            })
        })
        .collect();
    all.sort_by(|a, b| b.latency_us.total_cmp(&a.latency_us));
    all.truncate(keep);
    all
}

/// Each figure the worst (highest) over the hosts: an upper bound, used only
/// where no histogram travels with the result.
fn worst(ps: impl Iterator<Item = Percentiles>) -> Option<Percentiles> {
    ps.reduce(|a, b| Percentiles {
        min: a.min.min(b.min),
        mean: a.mean.max(b.mean),
        stdev: a.stdev.max(b.stdev),
        max: a.max.max(b.max),
        p50: a.p50.max(b.p50),
        p75: a.p75.max(b.p75),
        p90: a.p90.max(b.p90),
        p99: a.p99.max(b.p99),
        p999: a.p999.max(b.p999),
        p9999: a.p9999.max(b.p9999),
    })
}

fn merge_open(hosts: &[HostResult]) -> Option<OpenLoop> {
    let opens: Vec<(&str, &OpenLoop)> =
        hosts.iter().filter_map(|h| h.result.open.as_ref().map(|o| (h.host.as_str(), o))).collect();
    let (_, first) = opens.first()?;
    let reason = opens.iter().find_map(|(host, o)| o.saturation_reason.as_ref().map(|r| format!("host {host}: {r}")));
    Some(OpenLoop {
        target_rate: opens.iter().map(|(_, o)| o.target_rate).sum(),
        achieved_rate: opens.iter().map(|(_, o)| o.achieved_rate).sum(),
        service_time_us: worst(opens.iter().map(|(_, o)| o.service_time_us)).unwrap_or(first.service_time_us),
        saturated: reason.is_some(),
        saturation_reason: reason,
        max_schedule_lag_us: opens.iter().map(|(_, o)| o.max_schedule_lag_us).fold(0.0, f64::max),
        schedule_lag_p99_us: opens.iter().map(|(_, o)| o.schedule_lag_p99_us).fold(0.0, f64::max),
        wake_granularity_us: opens.iter().map(|(_, o)| o.wake_granularity_us).fold(0.0, f64::max),
        all_busy_s: opens.iter().map(|(_, o)| o.all_busy_s).fold(0.0, f64::max),
        generator_busy: opens.iter().map(|(_, o)| o.generator_busy).fold(0.0, f64::max),
        generator_cpu_wait: opens.iter().map(|(_, o)| o.generator_cpu_wait).fold(0.0, f64::max),
        schedule_start_ms: opens.iter().map(|(_, o)| o.schedule_start_ms).fold(0.0, f64::max),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(values: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        values.iter().for_each(|&v| h.record(v).unwrap());
        h
    }

    /// A host's result as `stampede load --json` prints it, for `values` (ns).
    fn host(name: &str, values: &[u64], connect_errors: u64, offset_ns: i64) -> HostResult {
        let h = record(values);
        let json = serde_json::json!({
            "schema": "stampede.load/1", "tool": {"name": "stampede", "version": "0"},
            "url": "http://s/", "method": "GET", "mode": "closed", "connections": 2, "threads": 1,
            "duration_s": 2.0, "warmup_s": 0.0, "interrupted": false,
            "requests": values.len(), "rps": values.len() as f64 / 2.0, "bytes_read": 10 * values.len(),
            "errors": {"connect": connect_errors, "read": 0, "write": 0, "timeout": 0, "status": 1, "parse": 0},
            "reconnects": 0, "status_codes": {"200": values.len(), "500": 1},
            "latency_us": Percentiles::of(&h), "latency_spectrum": [], "histogram": encode_histogram(&h),
            "loadgen": {"cpu_user_s": 0.5, "cpu_sys_s": 0.25, "cpu_cores": 0.375, "max_rss_kib": 4000},
            "timeline": [{"t_s": 0, "requests": 3, "errors": 0, "p99_us": 10.0}, {"t_s": 1, "requests": 4, "errors": 1, "p99_us": 30.0}],
        });
        HostResult { host: name.into(), offset_ns, rtt_ns: 200_000, result: serde_json::from_value(json).unwrap() }
    }

    #[test]
    fn totals_are_sums_and_percentiles_come_from_the_merged_histogram() {
        let a: Vec<u64> = (1..=900).map(|i| 50_000 + i * 37).collect();
        let b: Vec<u64> = (1..=100).map(|i| 2_000_000 + i * 91_000).collect();
        let m = merge(&[host("a", &a, 2, 1_500_000), host("b", &b, 0, -300_000)], Vec::new()).unwrap();
        assert_eq!(m.requests, 1000);
        assert_eq!(m.bytes_read, 10_000);
        assert_eq!(m.errors.connect, 2);
        assert_eq!(m.errors.status, 2);
        assert_eq!(m.status_codes["200"], 1000);
        assert_eq!(m.status_codes["500"], 2);
        assert_eq!(m.connections, 4);
        assert!((m.rps - 500.0).abs() < 1e-9);
        assert!((m.loadgen.cpu_cores - 0.75).abs() < 1e-9);
        let all: Vec<u64> = a.iter().chain(&b).copied().collect();
        let direct = Percentiles::of(&record(&all));
        assert_eq!(m.latency_us, direct);
        // Averaging the hosts' p99s would say ~1.1 ms; the true p99 is in b's range.
        assert!(m.latency_us.p99 > 2000.0);
        assert_eq!(decode_histogram(&m.histogram).unwrap().len(), 1000);
        assert_eq!(m.timeline.iter().map(|s| s.requests).collect::<Vec<_>>(), [6, 8]);
        assert_eq!(m.timeline[1].p99_us, 30.0);
        assert_eq!(m.hosts().len(), 2);
        assert_eq!((m.hosts()[0].requests, m.hosts()[0].errors), (900, 3));
        assert_eq!(m.hosts()[0].clock_offset_ms, 1.5);
        assert_eq!(m.hosts()[1].clock_offset_ms, -0.3);
        assert!(!m.partial());
    }

    #[test]
    fn a_failed_host_marks_the_result_partial_and_serialises_flat() {
        let failed = vec![HostFailure { host: "b".into(), reason: "died mid-run after 1.0 s".into() }];
        let m = merge(&[host("a", &[1000, 2000], 0, 0)], failed).unwrap();
        assert!(m.partial());
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["schema"], "stampede.load/1");
        assert_eq!(v["requests"], 2);
        assert_eq!(v["partial"], true);
        assert_eq!(v["failed_hosts"][0]["host"], "b");
        assert_eq!(v["hosts"][0]["host"], "a");
    }

    #[test]
    fn a_bad_histogram_names_the_host() {
        let mut h = host("bob@h2", &[1000], 0, 0);
        h.result.histogram = "garbage".into();
        let err = merge(&[host("a", &[1000], 0, 0), h], Vec::new()).unwrap_err();
        assert_eq!(err.host, "bob@h2");
    }

    #[test]
    fn a_grpc_streams_figures_add_up_across_hosts_and_its_times_are_the_worst_hosts() {
        use stampede_schema::grpc::GrpcStats;
        let grpc = |messages: u64, first_p99: f64, gap_max: f64| {
            let p = |p99: f64, max: f64| Percentiles { p99, max, ..Default::default() };
            let mut g = GrpcStats {
                call: "p.S/Echo".into(),
                server_streaming: true,
                client_streaming: true,
                request_messages: Some(4),
                messages,
                messages_per_s: messages as f64 / 2.0,
                first_message_us: Some(p(first_p99, first_p99)),
                message_gap_us: Some(p(gap_max / 2.0, gap_max)),
                ..Default::default()
            };
            g.calls_by_status.insert("OK".into(), messages / 4);
            Some(g)
        };
        let (mut a, mut b) = (host("a", &[1000], 0, 0), host("b", &[1000], 0, 0));
        (a.result.grpc, b.result.grpc) = (grpc(400, 900.0, 50.0), grpc(800, 300.0, 7000.0));
        let g = merge(&[a, b], Vec::new()).unwrap().grpc.unwrap();
        assert_eq!((g.messages, g.messages_per_s, g.ok()), (1200, 600.0, 300));
        assert_eq!((g.server_streaming, g.client_streaming, g.request_messages), (true, true, Some(4)));
        assert_eq!((g.first_message_us.unwrap().p99, g.message_gap_us.unwrap().max), (900.0, 7000.0));
    }

    /// Every field a multi-host result adds is documented in docs/results.md.
    #[test]
    fn added_fields_are_documented() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/results.md")).unwrap();
        let section = doc.split("## `stampede.run/1`").next().unwrap();
        let v = serde_json::to_value(merge(&[host("a", &[1000, 2000], 0, 0)], Vec::new()).unwrap()).unwrap();
        for key in ["hosts", "partial", "failed_hosts"] {
            assert!(v.get(key).is_some(), "{key} missing from the output");
            assert!(section.contains(&format!("| `{key}` |")), "{key} is not documented in docs/results.md");
        }
        for key in v["hosts"][0].as_object().unwrap().keys() {
            assert!(section.contains(&format!("| `{key}` |")), "hosts[].{key} is not documented in docs/results.md");
        }
    }
}
