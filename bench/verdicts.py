"""Tallies the verdicts `stampede explain` gives on one results.json: how
many runs name a lock, how many blame the load generator, against how many
runs `stampede run` judged valid. A verdict is named when explain prints it
as a cause above chance or as the dominant cause of every request; "listed"
counts any share of the slow requests at all; "largest" the runs where it is
the biggest share.

    stampede explain --json RESULTS | python3 bench/verdicts.py
"""
import json
import sys

INVALID = "stampede run marked this run invalid"
CAUSES = {"lock": "lock", "send_delay": "load generator late"}


def tally(doc):
    """Counts per cause over the runs of an explain document."""
    runs = doc["runs"]
    valid = [r for r in runs if not any(n.startswith(INVALID) for n in r.get("notes", []))]
    out = {"runs": len(runs), "valid": len(valid)}
    for cause in CAUSES:
        def named(r):
            dominant = [d["cause"] for d in r.get("dominant", [])]
            return cause in r.get("above_chance", []) or cause in dominant

        def largest(r):
            share = {k: v for k, v in r["share"].items() if k != "unexplained"}
            return share.get(cause, 0) > 0 and max(share, key=share.get) == cause

        out[cause] = {
            "named": sum(map(named, runs)),
            "named_valid": sum(map(named, valid)),
            "listed_valid": sum(1 for r in valid if r["share"].get(cause, 0) > 0),
            "largest_valid": sum(map(largest, valid)),
        }
    return out


def main():
    t = tally(json.load(sys.stdin))
    print(f"runs {t['runs']}, valid {t['valid']}")
    for cause, words in CAUSES.items():
        c = t[cause]
        print(
            f"{words}: named in {c['named']} runs ({c['named_valid']} valid); "
            f"among the valid, listed in {c['listed_valid']}, largest in {c['largest_valid']}"
        )


if __name__ == "__main__":
    main()
