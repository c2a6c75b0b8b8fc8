//! The human-readable result, in wrk's layout so its users feel at home, plus
//! what wrk never printed: the generator's own CPU and memory, and, in
//! open-loop mode, whether the generator kept to its schedule.

use crate::result::LoadResult;
use stampede_schema::ErrorCategory;
use std::fmt::Write;

pub fn banner(url: &str, threads: usize, connections: usize, what: &str) -> String {
    format!("Running {what} @ {url}\n  {threads} threads and {connections} connections\n")
}

/// A gRPC load's calls by status, and its messages: a unary call's reply
/// is one (its rate is the calls'); a stream's say how many came, how fast,
/// how long the first took and the gaps between the rest.
fn grpc(o: &mut String, g: &stampede_schema::grpc::GrpcStats, duration_s: f64) {
    let by: Vec<String> = g.calls_by_status.iter().map(|(code, n)| format!("{code} {n}")).collect();
    let by = if by.is_empty() { "none".to_string() } else { by.join(", ") };
    let sends = match g.request_messages.filter(|_| g.client_streaming) {
        Some(n) => format!(" (a client stream of {n} messages a call)"),
        None => String::new(),
    };
    let _ = writeln!(o, "  gRPC {}{sends}: calls by status: {by}", g.call);
    if g.not_grpc > 0 || g.no_status > 0 {
        let _ = writeln!(
            o,
            "  Failed calls without a gRPC status: {} not a gRPC answer (HTTP status or content-type), {} ended without grpc-status",
            g.not_grpc, g.no_status
        );
    }
    let rate = if duration_s > 0.0 { g.messages as f64 / duration_s } else { 0.0 };
    if !g.server_streaming {
        let _ = writeln!(o, "  Messages received: {} ({rate:.2}/s)", g.messages);
        return;
    }
    let _ = write!(o, "  Stream: {} messages, {rate:.2} messages/s", g.messages);
    if let Some(f) = &g.first_message_us {
        let _ =
            write!(o, "; first message p50 {}, p90 {}, p99 {}, max {}", dur(f.p50), dur(f.p90), dur(f.p99), dur(f.max));
    }
    if let Some(f) = &g.message_gap_us {
        let _ = write!(o, "; gap between messages p50 {}, p99 {}, max {}", dur(f.p50), dur(f.p99), dur(f.max));
    }
    o.push('\n');
}

/// The whole result in wrk's layout, block by block.
pub fn render(r: &LoadResult) -> String {
    let mut o = String::new();
    latency(&mut o, r);
    connections(&mut o, r);
    targets(&mut o, r);
    counts(&mut o, r);
    let _ = writeln!(o, "Requests/sec: {:>10.2}", r.rps);
    let _ = writeln!(o, "Transfer/sec: {:>10}", bytes(r.bytes_read as f64 / r.duration_s));
    schedule(&mut o, r);
    stages(&mut o, &r.stages);
    generator(&mut o, r);
    o
}

/// wrk's latency block, and in open loop the service time beside it.
fn latency(o: &mut String, r: &LoadResult) {
    let l = &r.latency_us;
    let _ = writeln!(o, "  Thread Stats   Avg      Stdev     Max");
    let _ = writeln!(o, "    Latency   {:>8} {:>8} {:>8}", dur(l.mean), dur(l.stdev), dur(l.max));
    let _ = writeln!(o, "  Latency Distribution{}", if r.open.is_some() { " (from intended send time)" } else { "" });
    for (label, v) in
        [("50%", l.p50), ("75%", l.p75), ("90%", l.p90), ("99%", l.p99), ("99.9%", l.p999), ("99.99%", l.p9999)]
    {
        let _ = writeln!(o, "   {label:>6}  {:>8}", dur(v));
    }
    if let Some(open) = &r.open {
        let s = &open.service_time_us;
        let _ = writeln!(
            o,
            "  Service time (from actual send): p50 {}, p99 {}, p99.9 {}, max {}",
            dur(s.p50),
            dur(s.p99),
            dur(s.p999),
            dur(s.max)
        );
    }
}

/// How the connections spoke: TLS handshakes, HTTP/2 streams, pipelining.
fn connections(o: &mut String, r: &LoadResult) {
    if let (Some(h), Some(t)) = (&r.tls_handshake_us, &r.tls) {
        let _ = writeln!(
            o,
            "  TLS handshakes: {} ({} resumed){}; p50 {}, p99 {}, max {}",
            t.handshakes,
            t.resumed,
            t.alpn.as_ref().map_or(String::new(), |a| format!(", ALPN {a}")),
            dur(h.p50),
            dur(h.p99),
            dur(h.max)
        );
    }
    if let Some(h2) = &r.http2 {
        let _ = writeln!(
            o,
            "  HTTP/2: {} streams per connection; GOAWAY received {}, streams reset {}",
            h2.streams, h2.goaway, h2.rst_stream
        );
    }
    if r.pipeline > 1 {
        let _ = writeln!(o, "  HTTP/1.1 pipelining: {} requests per write", r.pipeline);
    }
}

/// A mix's targets, one row each: requests, errors and tail.
fn targets(o: &mut String, r: &LoadResult) {
    let Some(mix) = &r.mix else { return };
    let order = serde_json::to_value(mix.order).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let _ = writeln!(o, "  {} targets, {order} order, --seed {}", r.targets.len(), mix.seed);
    let width = r.targets.iter().map(|t| t.name.chars().count()).max().unwrap_or(0).clamp(6, 48);
    let _ = writeln!(o, "    {:<width$} {:>9} {:>7} {:>9} {:>9}", "target", "requests", "errors", "p50", "p99");
    for t in &r.targets {
        let name: String = t.name.chars().take(width).collect();
        let errors = t.errors.socket() + t.errors.status;
        let l = &t.latency_us;
        let _ = writeln!(o, "    {name:<width$} {:>9} {errors:>7} {:>9} {:>9}", t.requests, dur(l.p50), dur(l.p99));
    }
}

/// What was done and what went wrong: requests and bytes, socket errors,
/// bad responses (or a gRPC load's calls), reconnects, codings, the unheard.
fn counts(o: &mut String, r: &LoadResult) {
    let _ = writeln!(o, "  {} requests in {:.2}s, {} read", r.requests, r.duration_s, bytes(r.bytes_read as f64));
    let e = &r.errors;
    if e.socket() > 0 {
        let _ = writeln!(
            o,
            "  {}: connect {}, read {}, write {}, timeout {}, malformed {}{}",
            ErrorCategory::SocketErrors.title(),
            e.connect,
            e.read,
            e.write,
            e.timeout,
            e.parse,
            if e.tls > 0 { format!(", TLS handshake {}", e.tls) } else { String::new() }
        );
    }
    match &r.grpc {
        Some(g) => grpc(o, g, r.duration_s),
        None if e.bad_responses() > 0 => {
            let _ = writeln!(o, "  {} (outside 2xx/3xx): {}", ErrorCategory::BadResponses.title(), e.bad_responses());
        }
        None => {}
    }
    if r.reconnects > 0 {
        let _ = writeln!(o, "  Reconnects (server closed the connection): {}", r.reconnects);
    }
    encodings(o, &r.content_encodings);
    unheard(o, r);
}

/// Open loop: the rate asked and sent, the schedule's lag, and whether due
/// requests queued for a free connection.
fn schedule(o: &mut String, r: &LoadResult) {
    let Some(open) = &r.open else { return };
    let _ = writeln!(
        o,
        "Rate:         {:.0} req/s asked, {:.0} req/s sent; schedule lag p99 {}, max {} (wake-up granularity {})",
        open.target_rate,
        open.achieved_rate,
        dur(open.schedule_lag_p99_us),
        dur(open.max_schedule_lag_us),
        dur(open.wake_granularity_us)
    );
    if open.all_busy_s > 0.05 * r.duration_s {
        let _ = writeln!(
            o,
            "Queueing:     all connections were busy for {:.1}s of {:.1}s; due requests waited{} (counted in latency from their intended time). More --connections or --max-connections would send on time.",
            open.all_busy_s,
            r.duration_s,
            if r.never_sent > 0 { format!(", {} of them never sent", r.never_sent) } else { String::new() }
        );
    }
}

/// The generator's own cost, then the verdicts on the run: saturated,
/// interrupted.
fn generator(o: &mut String, r: &LoadResult) {
    let g = &r.loadgen;
    let _ = writeln!(
        o,
        "Load generator CPU: {:.2}s user + {:.2}s sys = {:.2} cores{}",
        g.cpu_user_s,
        g.cpu_sys_s,
        g.cpu_cores,
        if r.engine.is_empty() { String::new() } else { format!(" ({})", r.engine) }
    );
    let _ = writeln!(o, "Load generator peak RSS: {}", bytes(g.max_rss_kib as f64 * 1024.0));
    if let Some(reason) = r.open.as_ref().and_then(|o| o.saturation_reason.as_ref()) {
        let _ = writeln!(o, "SATURATED: {reason}. These latencies are not the server's alone.");
    }
    if r.interrupted {
        let _ = writeln!(o, "Interrupted: results cover the {:.2}s before Ctrl-C.", r.duration_s);
    }
}

/// The requests with no answer: owed at the end, never sent, and the time
/// the server stopped answering, each said only when there was one.
fn unheard(o: &mut String, r: &LoadResult) {
    if r.unanswered > 0 {
        let _ = writeln!(o, "  Unanswered when the run ended: {} (their age so far is in the latency)", r.unanswered);
    }
    if r.never_sent > 0 {
        let due = r.sent + r.never_sent;
        let _ = writeln!(
            o,
            "  Never sent: {} of {due} due (every connection stayed busy; in the latency from their intended time)",
            r.never_sent
        );
    }
    if let Some(stall) = r.stalled {
        let _ = writeln!(o, "STALLED: {}.", stall.said());
    }
}

/// `--stages`: one line per stage, its target, what it got and its tail.
fn stages(o: &mut String, stages: &[stampede_schema::stages::StageResult]) {
    use stampede_schema::stages::Ramp;
    if stages.is_empty() {
        return;
    }
    let _ = writeln!(o, "Stages:");
    for (i, s) in stages.iter().enumerate() {
        let unit = match s.ramp {
            Ramp::Rate => "req/s",
            Ramp::Connections => "connections",
        };
        let _ = writeln!(
            o,
            "  {:>2}. {:>6.1}s {:>8.0} -> {:<8.0} {unit:<11} {:>9} requests {:>10.1} req/s  {:>5} errors  p50 {:>9}  p99 {:>9}  max {:>9}",
            i + 1,
            s.duration_s,
            s.from,
            s.to,
            s.requests,
            s.achieved_rate,
            s.errors.total(),
            dur(s.latency_us.p50),
            dur(s.latency_us.p99),
            dur(s.latency_us.max)
        );
    }
}

/// A duration given in microseconds, in wrk's style (`812.00us`, `1.25ms`, `2.00s`).
pub fn dur(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.2}us")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1000.0)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.2}{}", UNITS[u])
}

/// One line per content coding when compression was asked: the body bytes
/// on the wire, what they decoded to, and any that did not decode.
fn encodings(o: &mut String, list: &[stampede_schema::encoding::EncodingStats]) {
    for e in list {
        let decoded = match e.ratio() {
            Some(x) if e.coding != "identity" => format!(" -> {} decoded ({x:.1}x)", bytes(e.decoded_bytes as f64)),
            _ if !matches!(e.coding.as_str(), "identity" | "gzip" | "deflate" | "br") => " (not decoded)".into(),
            _ => String::new(),
        };
        let _ = writeln!(
            o,
            "  Content-Encoding {}: {} responses, {} body on the wire{decoded}",
            e.coding,
            e.responses,
            bytes(e.wire_bytes as f64)
        );
        if e.undecodable > 0 {
            let _ =
                writeln!(o, "  WARNING: {} {} bodies did not decode (corrupt or cut short)", e.undecodable, e.coding);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_like_wrk() {
        assert_eq!(dur(812.0), "812.00us");
        assert_eq!(dur(1250.0), "1.25ms");
        assert_eq!(dur(2_000_000.0), "2.00s");
        assert_eq!(bytes(1536.0), "1.50KB");
    }
}
