"""Tests of bench/rounds.py: that a ratio is taken against the reference as
it was when the other tool ran, so a machine drifting mid-bench does not
show up as one tool's gain or loss.

    python3 -m unittest discover -s bench -p 'test_*.py'
"""
import io
import sys
import unittest
from contextlib import redirect_stdout

import rounds


def table(records, reference="wrk"):
    """rounds.py's output for `records`, one per line."""
    out = io.StringIO()
    with redirect_stdout(out):
        argv, stdin = sys.argv, sys.stdin
        sys.argv, sys.stdin = ["rounds.py", reference], io.StringIO(records)
        try:
            rounds.main()
        finally:
            sys.argv, sys.stdin = argv, stdin
    return out.getvalue()


def row(text, group, tool):
    return next(line for line in text.splitlines() if line.split()[:2] == [group, tool])


class Ratios(unittest.TestCase):
    def test_a_tool_as_fast_as_a_drifting_reference_is_level_with_it(self):
        # The machine speeds up steadily; stampede runs between wrk's runs
        # and does what wrk did at that moment.
        records = "".join(
            f"c=32 wrk {r} {100 * (1 + r)} 1 1 1 {10 * r}\n"
            f"c=32 stampede {r} {100 * (1.5 + r)} 1 1 1 {10 * r + 5}\n"
            for r in (1, 2, 3)
        ) + "c=32 wrk end 500 1 1 1 40\n"
        self.assertIn("1.00x (1.00-1.00)", row(table(records), "c=32", "stampede"))

    def test_the_same_round_is_the_reference_when_records_have_no_time(self):
        records = "c=32 wrk 1 100 1 1 1\nc=32 st 1 150 1 2 1\nc=32 wrk 2 200 1 1 1\nc=32 st 2 200 1 2 1\n"
        line = row(table(records), "c=32", "st")
        # Process measure: 150/100 and 200/200; core: 75/100 and 100/200.
        self.assertIn("1.25x (1.00-1.50)", line)
        self.assertIn("0.62x (0.50-0.75)", line)

    def test_the_reference_own_movement_is_reported(self):
        records = "c=32 wrk 1 100 1 1 1 0\nc=32 wrk 2 120 1 1 1 10\nc=32 wrk end 90 1 1 1 20\n"
        self.assertIn("c=32 22% (at most 25%)", table(records))

    def test_a_failed_run_is_left_out(self):
        records = "c=32 wrk 1 100 1 1 1 0\nc=32 st 1 0 1 1 1 5\nc=32 st 2 100 1 1 1 15\nc=32 wrk end 100 1 1 1 20\n"
        self.assertIn("1.00x (1.00-1.00)", row(table(records), "c=32", "st"))


if __name__ == "__main__":
    unittest.main()
