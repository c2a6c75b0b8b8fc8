"""Tests of bench/verdicts.py: a cause counts as named only where explain
names it, and only valid runs count among the valid.

    python3 -m unittest discover -s bench -p 'test_*.py'
"""
import unittest

from verdicts import tally


def run(share, above=(), dominant=(), invalid=False):
    base = {"lock": 0.0, "send_delay": 0.0, "runqueue": 0.0, "unexplained": 0.0}
    base.update(share)
    return {
        "share": base,
        "above_chance": list(above),
        "dominant": [{"cause": c} for c in dominant],
        "notes": ["stampede run marked this run invalid: x"] if invalid else ["a note"],
    }


class Tally(unittest.TestCase):
    def test_named_listed_and_largest_are_counted_apart(self):
        doc = {
            "runs": [
                run({"send_delay": 0.6, "runqueue": 0.4}, above=["send_delay"]),
                run({"send_delay": 0.1, "runqueue": 0.9}, above=["runqueue"]),
                run({"send_delay": 0.9}, above=["send_delay"], invalid=True),
                run({"runqueue": 0.5, "unexplained": 0.5}, dominant=["lock"]),
            ]
        }
        t = tally(doc)
        self.assertEqual((t["runs"], t["valid"]), (4, 3))
        self.assertEqual(t["send_delay"], {"named": 2, "named_valid": 1, "listed_valid": 2, "largest_valid": 1})
        self.assertEqual(t["lock"], {"named": 1, "named_valid": 1, "listed_valid": 0, "largest_valid": 0})

    def test_a_quiet_run_names_nothing(self):
        t = tally({"runs": [run({"unexplained": 1.0})]})
        self.assertEqual(t["lock"]["named"] + t["send_delay"]["named"], 0)
        self.assertEqual(t["send_delay"]["largest_valid"], 0)


if __name__ == "__main__":
    unittest.main()
