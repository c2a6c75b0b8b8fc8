#!/usr/bin/env python3
"""Summarises interleaved bench rounds, shared by the bench scripts.

Reads one record per line on stdin, `GROUP TOOL ROUND REQUESTS PROC_CPU_S
CORE_CPU_S SECONDS [MIDPOINT]`, and prints per group a table: each tool's
median requests per second, and its requests per CPU-second under both
measures (median and min-max over the rounds), then the ratio to the
reference tool with its median and range.

PROC_CPU_S is the process's own user+sys (`times` of the child); CORE_CPU_S
is the busy time of the core the tool was pinned to (the clock less the
core's measured idle time: bench/lib.sh's `core_times`). On loopback much
of the TCP work runs in softirq context, charged to whichever task the core
happens to be running, so the two differ; docs/load.md says what each one
misses.

The ratio of a run is taken against the reference as it was at that moment.
A VM's speed moves by a fifth within minutes, and a move between the
reference's run and another tool's, even within one round, would show as
that tool's gain or loss. So when records carry their MIDPOINT (epoch
seconds) and the script ran the reference first in every round and once
more at the end, the reference's figure at a run's midpoint is
interpolated between its runs either side: a steady drift cancels, a step
is halved. Without midpoints the reference of the same round is used. The
last line says how much the reference itself moved between consecutive
runs: the noise the ratios were taken through.

    rounds.py REFERENCE_TOOL
"""
import statistics
import sys
from bisect import bisect_left
from collections import defaultdict


def span(values):
    return f"{statistics.median(values):>9.0f} ({min(values):.0f}-{max(values):.0f})"


def ratio_span(values):
    if not values:
        return "-"
    return f"{statistics.median(values):.2f}x ({min(values):.2f}-{max(values):.2f})"


def read(stream):
    """group -> tool -> round -> (reqs, proc_s, core_s, secs, midpoint or None), and tools in order."""
    rows = defaultdict(lambda: defaultdict(dict))
    order = defaultdict(list)
    for line in stream:
        parts = line.split()
        if len(parts) not in (7, 8) or parts[3] in ("-", "0"):
            continue
        group, tool, rnd = parts[0], parts[1], parts[2]
        try:
            reqs, proc, core, secs = (float(p) for p in parts[3:7])
            mid = float(parts[7]) if len(parts) == 8 else None
        except ValueError:
            continue
        if proc <= 0 or core <= 0:
            continue
        rows[group][tool][rnd] = (reqs, proc, core, secs, mid)
        if tool not in order[group]:
            order[group].append(tool)
    return rows, order


def efficiency(run):
    """(requests per process CPU-s, requests per core CPU-s) of a run."""
    reqs, proc, core, _, _ = run
    return reqs / proc, reqs / core


def timeline(ref):
    """The reference's runs that carry a midpoint, as (midpoint, efficiency)
    in time order."""
    return sorted((r[4], efficiency(r)) for r in ref.values() if r[4] is not None)


def reference_at(ref, timed, rnd, mid):
    """The reference's (process, core) efficiency for a run of round `rnd`
    at time `mid`: interpolated along its `timeline` when runs carry
    midpoints, else its run of the same round (None when it has none)."""
    if mid is None or not timed:
        return efficiency(ref[rnd]) if rnd in ref else None
    times = [t for t, _ in timed]
    k = bisect_left(times, mid)
    if k == 0:
        return timed[0][1]
    if k == len(timed):
        return timed[-1][1]
    (t0, e0), (t1, e1) = timed[k - 1], timed[k]
    w = (mid - t0) / (t1 - t0) if t1 > t0 else 0.0
    return tuple(a + (b - a) * w for a, b in zip(e0, e1))


def drift(timed):
    """How much the reference's core figure moved between consecutive runs
    of its `timeline`: (median, most) of |change| in percent, or None for
    fewer than two runs."""
    moves = [abs(b[1] / a[1] - 1) * 100 for (_, a), (_, b) in zip(timed, timed[1:])]
    return (statistics.median(moves), max(moves)) if moves else None


def main():
    reference = sys.argv[1]
    rows, order = read(sys.stdin)
    header = f"{'group':<10} {'tool':<15} {'req/s':>9} {'req per core CPU-s':>26} {'req per process CPU-s':>26} {'vs ' + reference + ' (core)':>24} {'vs ' + reference + ' (process)':>24}"
    print(header)
    moved = []
    for group, tools in rows.items():
        ref = tools.get(reference, {})
        timed = timeline(ref)
        for tool in order[group]:
            rounds = tools[tool]
            rps = [r[0] / r[3] for r in rounds.values()]
            proc = [efficiency(r)[0] for r in rounds.values()]
            core = [efficiency(r)[1] for r in rounds.values()]
            vs_core, vs_proc = [], []
            if tool != reference:
                for rnd, run in rounds.items():
                    at = reference_at(ref, timed, rnd, run[4])
                    if at is not None:
                        vs_proc.append(efficiency(run)[0] / at[0])
                        vs_core.append(efficiency(run)[1] / at[1])
            print(f"{group:<10} {tool:<15} {statistics.median(rps):>9.0f} {span(core):>26} {span(proc):>26} {ratio_span(vs_core):>24} {ratio_span(vs_proc):>24}")
        d = drift(timed)
        if d is not None:
            moved.append(f"{group} {d[0]:.0f}% (at most {d[1]:.0f}%)")
    print(f"medians over rounds, (min-max); ratios are taken against {reference} as it was at each run")
    if moved:
        print(f"{reference}'s own figure between its consecutive runs moved by: " + ", ".join(moved))


if __name__ == "__main__":
    main()
