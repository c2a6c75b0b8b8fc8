#!/usr/bin/env python3
"""Summarises interleaved bench rounds, shared by the bench scripts.

Reads one record per line on stdin, `GROUP TOOL ROUND REQUESTS PROC_CPU_S
CORE_CPU_S SECONDS`, and prints per group a table: each tool's median
requests per second, and its requests per CPU-second under both measures
(median and min-max over the rounds), then the ratio to the reference tool
computed round by round (so a noisy round moves both tools of that round
alike) with its median and range.

PROC_CPU_S is the process's own user+sys (`times` of the child); CORE_CPU_S
is the busy time of the core the tool was pinned to, from /proc/stat (user,
nice, system, irq, softirq). On loopback much of the TCP work runs in
softirq context, charged to whichever task the core happens to be running,
so the two differ; docs/load.md says what each one misses.

    rounds.py REFERENCE_TOOL [SUBJECT_TOOL]
"""
import statistics
import sys
from collections import defaultdict


def span(values):
    return f"{statistics.median(values):>9.0f} ({min(values):.0f}-{max(values):.0f})"


def ratio_span(values):
    if not values:
        return "-"
    return f"{statistics.median(values):.2f}x ({min(values):.2f}-{max(values):.2f})"


def main():
    reference = sys.argv[1]
    rows = defaultdict(lambda: defaultdict(dict))  # group -> tool -> round -> (reqs, proc, core, secs)
    order = defaultdict(list)
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 7 or parts[3] in ("-", "0"):
            continue
        group, tool, rnd = parts[0], parts[1], parts[2]
        reqs, proc, core, secs = (float(p) for p in parts[3:])
        if proc <= 0 or core <= 0:
            continue
        rows[group][tool][rnd] = (reqs, proc, core, secs)
        if tool not in order[group]:
            order[group].append(tool)
    header = f"{'group':<10} {'tool':<15} {'req/s':>9} {'req per core CPU-s':>26} {'req per process CPU-s':>26} {'vs ' + reference + ' (core)':>24} {'vs ' + reference + ' (process)':>24}"
    print(header)
    for group, tools in rows.items():
        ref = tools.get(reference, {})
        for tool in order[group]:
            rounds = tools[tool]
            rps = [r / s for r, _, _, s in rounds.values()]
            core = [r / c for r, _, c, _ in rounds.values()]
            proc = [r / p for r, p, _, _ in rounds.values()]
            vs_core, vs_proc = [], []
            if tool != reference:
                for rnd, (r, p, c, _) in rounds.items():
                    if rnd in ref:
                        rr, rp, rc, _ = ref[rnd]
                        vs_core.append((r / c) / (rr / rc))
                        vs_proc.append((r / p) / (rr / rp))
            print(f"{group:<10} {tool:<15} {statistics.median(rps):>9.0f} {span(core):>26} {span(proc):>26} {ratio_span(vs_core):>24} {ratio_span(vs_proc):>24}")
    print(f"medians over rounds, (min-max); ratios are taken round by round against {reference}")


if __name__ == "__main__":
    main()
