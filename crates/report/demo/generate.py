#!/usr/bin/env python3
"""Writes demo/results.json: a small, synthetic `stampede.run/1` file for
`stampede report --demo`. The numbers are made up (plausible for two small
servers pinned to two cores), not measured; the seed keeps the output stable.

    python3 crates/report/demo/generate.py > crates/report/demo/results.json
"""
import json
import math
import random
from statistics import NormalDist

rng = random.Random(20261121)
Z = NormalDist()

STARTED = 1763769600.0
DURATION_S = 10
WARMUP_S = 2
SAMPLE_S = 0.1
CONNECTIONS = 64
MACHINE_CORES = 4

# app, threads knob -> (rps, server cores, latency sigma, tail factor, rss MiB, threads)
CONFIGS = {
    ("go", "1"): (41200, 0.99, 0.32, 1.0, 14.0, 7),
    ("go", "2"): (68400, 1.86, 0.36, 1.1, 17.5, 9),
    ("node", "1"): (18100, 1.06, 0.40, 2.6, 58.0, 11),
    ("node", "2"): (31500, 2.02, 0.45, 2.4, 104.0, 22),
}
INVALID = ("node", "2", 3)


def r(value, digits=3):
    return round(value, digits)


def spectrum(mean_us, sigma, tail):
    """HdrHistogram-style percentile spectrum: 5 ticks per halving of the remainder."""
    median = mean_us / math.exp(sigma * sigma / 2)
    points = []
    k = 0
    while True:
        p = 100.0 * (1.0 - 0.5 ** (k / 5.0))
        if p > 99.999:
            break
        z = Z.inv_cdf(min(max(p / 100.0, 0.0005), 0.999995))
        us = median * math.exp(sigma * z)
        decades = math.log10(1.0 / (1.0 - p / 100.0))
        us *= tail ** max(0.0, (decades - 1.5) / 3.5)
        points.append({"percentile": r(p, 5), "us": round(us)})
        k += 1
    points.append({"percentile": 100.0, "us": round(points[-1]["us"] * 1.3)})
    return points


def pick(points, p):
    return next(pt["us"] for pt in points if pt["percentile"] >= p)


def load_doc(app, threads, rps, sigma, tail, crash_at=None):
    seconds = DURATION_S if crash_at is None else DURATION_S
    mean_us = CONNECTIONS / rps * 1e6
    spec = spectrum(mean_us, sigma, tail)
    timeline = []
    total = 0
    errors_total = 0
    for t in range(seconds):
        if crash_at is not None and t >= crash_at:
            reqs, errs, p99 = 0, rng.randint(8, 20), None
        else:
            reqs = round(rps * rng.uniform(0.975, 1.025))
            errs = 0
            p99 = round(pick(spec, 99.0) * rng.uniform(0.85, 1.2) * (1.8 if app == "node" and t in (3, 7) else 1.0))
        total += reqs
        errors_total += errs
        timeline.append({"t_s": t, "requests": reqs, "errors": errs, "p99_us": p99})
    actual_rps = total / DURATION_S
    latency = {
        "min": spec[0]["us"], "mean": round(mean_us), "stdev": round(mean_us * sigma),
        "max": spec[-1]["us"], "p50": pick(spec, 50.0), "p75": pick(spec, 75.0),
        "p90": pick(spec, 90.0), "p99": pick(spec, 99.0), "p999": pick(spec, 99.9),
        "p9999": pick(spec, 99.99),
    }
    loadgen_cores = min(1.9, actual_rps / 52000.0 + 0.05)
    return {
        "schema": "stampede.load/1",
        "tool": {"name": "stampede", "version": "0.1.0"},
        "url": f"http://127.0.0.1:18080/json",
        "method": "GET", "mode": "closed", "connections": CONNECTIONS, "threads": 2,
        "duration_s": DURATION_S, "warmup_s": WARMUP_S, "requests": total, "rps": r(actual_rps, 1),
        "bytes_read": total * 163,
        "errors": {"connect": 0, "read": errors_total, "write": 0, "timeout": 0, "status": 0, "parse": 0},
        "reconnects": 0,
        "status_codes": {"200": total},
        "latency_us": latency,
        "latency_spectrum": spec,
        "histogram": "",
        "loadgen": {"cpu_user_s": r(loadgen_cores * DURATION_S * 0.45), "cpu_sys_s": r(loadgen_cores * DURATION_S * 0.55),
                    "cpu_cores": r(loadgen_cores), "max_rss_kib": 9216},
        "timeline": timeline,
    }


def samples(cores, rss, threads, crash_at=None, jitter=0.04):
    out = []
    n = int((WARMUP_S + DURATION_S) / SAMPLE_S)
    rss_now = rss * 0.7
    for i in range(1, n + 1):
        t = r(-WARMUP_S + i * SAMPLE_S, 1)
        if crash_at is not None and t > crash_at:
            break
        c = cores * rng.uniform(1 - jitter, 1 + jitter) * (0.8 if t < 0 else 1.0)
        rss_now = min(rss, rss_now + rss * 0.02) if t < 1 else rss * rng.uniform(0.985, 1.0)
        if crash_at is not None and t > crash_at - 2:
            rss_now *= 1.0 + (t - (crash_at - 2)) * 0.6
        out.append({
            "t_s": t, "cpu_cores": r(c), "cpu_user_cores": r(c * 0.62), "cpu_sys_cores": r(c * 0.38),
            "rss_mib": r(rss_now, 1), "threads": threads, "ctx_voluntary": rng.randint(900, 1400),
            "ctx_involuntary": rng.randint(5, 60), "runqueue_wait_ms": r(rng.uniform(0.5, 4.0), 2),
        })
    return out


def threads_table(app, threads_knob, cores):
    busy = cores * DURATION_S
    if app == "go":
        names = ["go-server"] * (int(threads_knob) + 5)
        weights = [1.0] * int(threads_knob) + [0.08, 0.05, 0.02, 0.01, 0.0]
    else:
        workers = int(threads_knob)
        names = ["node"] * workers + ["V8Worker"] * 4 + ["libuv-worker"] * 4 + ["node"]
        weights = [1.0] * workers + [0.04, 0.03, 0.02, 0.01] + [0.0] * 4 + [0.0]
    total = sum(weights)
    rows = []
    for i, (name, w) in enumerate(zip(names, weights)):
        cpu = busy * w / total
        rows.append({"tid": 4100 + i, "name": name, "user_s": r(cpu * 0.62), "sys_s": r(cpu * 0.38),
                     "runqueue_wait_ms": r(rng.uniform(1, 40) * (w + 0.02), 1),
                     "ctx_voluntary": int(rng.uniform(100, 12000) * (w + 0.01)),
                     "ctx_involuntary": int(rng.uniform(10, 900) * (w + 0.01))})
    return rows


def events(app):
    out = []
    t = rng.uniform(0.2, 0.8)
    while t < DURATION_S:
        if app == "node":
            big = rng.random() < 0.15
            out.append({"t_s": r(t), "kind": "gc", "label": "Mark-Compact" if big else "Scavenge",
                        "duration_ms": r(rng.uniform(6, 14) if big else rng.uniform(0.4, 1.6), 2)})
            t += rng.uniform(0.6, 1.4)
        else:
            out.append({"t_s": r(t), "kind": "gc", "label": "GC cycle", "duration_ms": r(rng.uniform(0.1, 0.4), 2)})
            t += rng.uniform(1.5, 3.0)
    return out


def run(app, threads, iteration):
    rps, cores, sigma, tail, rss, nthreads = CONFIGS[(app, threads)]
    rps *= rng.uniform(0.97, 1.03)
    cores *= rng.uniform(0.98, 1.02)
    invalid = (app, threads, iteration) == INVALID
    crash_at = 6 if invalid else None
    load = load_doc(app, threads, rps, sigma, tail, crash_at)
    server_samples = samples(cores, rss, nthreads, crash_at + 0.3 if invalid else None)
    loadgen_cores = load["loadgen"]["cpu_cores"]
    cpu_avg = sum(s["cpu_cores"] for s in server_samples if s["t_s"] > 0) / max(1, sum(1 for s in server_samples if s["t_s"] > 0))
    rss_max = max(s["rss_mib"] for s in server_samples)
    warmup = {"schema": "stampede.load/1", "mode": "closed", "connections": CONNECTIONS,
              "duration_s": WARMUP_S, "requests": round(rps * 0.8 * WARMUP_S), "rps": r(rps * 0.8, 1)}
    return {
        "app": app, "knobs": {"threads": threads}, "profile": "steady", "path": "/json",
        "iteration": iteration, "valid": not invalid,
        "invalid_reason": f"server crashed: exited on SIGKILL at 6.3 s (out of memory?); {load['errors']['read']} read errors after that" if invalid else None,
        "build_time_ms": r(rng.uniform(900, 1400) if app == "go" else rng.uniform(40, 90), 1),
        "start_time_ms": r(rng.uniform(4, 9) if app == "go" else rng.uniform(38, 60), 1),
        "first_request_ms": r(rng.uniform(0.3, 0.9) if app == "go" else rng.uniform(2.0, 5.0), 2),
        "warmup": warmup,
        "load": load,
        "server": {
            "cpu_cores_avg": r(cpu_avg), "cpu_pct_max": r(max(s["cpu_cores"] for s in server_samples) / MACHINE_CORES * 100, 1),
            "rss_max_mib": rss_max, "threads_max": nthreads,
            "ctx_voluntary": sum(s["ctx_voluntary"] for s in server_samples),
            "ctx_involuntary": sum(s["ctx_involuntary"] for s in server_samples),
            "runqueue_wait_ms": r(sum(s["runqueue_wait_ms"] for s in server_samples), 1),
            "samples": server_samples,
            "threads_table": threads_table(app, threads, cpu_avg),
        },
        "loadgen": {
            "cpu_cores_avg": loadgen_cores, "cpu_pct_max": r(loadgen_cores * 1.1 / MACHINE_CORES * 100, 1), "rss_max_mib": 9.0,
            "threads_max": 3, "ctx_voluntary": 0, "ctx_involuntary": 0, "runqueue_wait_ms": 0.0,
            "samples": [{"t_s": s["t_s"], "cpu_cores": r(loadgen_cores * rng.uniform(0.95, 1.05)), "rss_mib": 9.0}
                        for s in server_samples],
            "threads_table": [],
        },
        "machine": {"cpu_cores_avg": r(cpu_avg + loadgen_cores + 0.05), "samples": []},
        "rps_per_server_core": r(load["rps"] / cpu_avg, 1),
        "events": events(app),
    }


def main():
    runs = [run(app, threads, it) for (app, threads) in CONFIGS for it in (1, 2, 3)]
    doc = {
        "schema": "stampede.run/1",
        "environment": {
            "tool_version": "0.1.0", "git_commit": "3f9c2ab0d1e4",
            "command_line": "stampede run scenarios/hello.toml --iterations 3",
            "cpu_model": "Demo CPU @ 3.0GHz (synthetic data)", "kernel": "6.1.0-27-amd64", "cores": MACHINE_CORES,
            "pinning": {"server": "2-3", "loadgen": "0-1"},
            "runtimes": {"go": "go1.23.4", "node": "v22.11.0"},
            "started_unix_s": STARTED,
        },
        "scenario": {
            "name": "demo (synthetic data)",
            "note": "made by crates/report/demo/generate.py, not measured",
            "apps": ["go", "node"], "knobs": {"threads": ["1", "2"]}, "iterations": 3,
            "profiles": [{"name": "steady", "connections": CONNECTIONS, "duration": "10s", "warmup": "2s", "path": "/json"}],
        },
        "runs": runs,
        "skipped": [{"app": "python", "reason": "build failed: python3.13 not found (demo entry)"}],
    }
    print(json.dumps(doc, separators=(",", ":")).replace('{"app"', '\n{"app"'))


main()
