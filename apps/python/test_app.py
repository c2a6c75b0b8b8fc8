"""Unit tests for the Python server's work and routing against the vectors
and rules in apps/CONTRACT.md, runnable without uvicorn or a server:

    cd apps/python && python3 -m unittest
"""

import asyncio
import os
import unittest
from unittest import mock

import app
import database
import work

VECTORS = {
    0: "11400714819323198485",
    1: "15860402102123842989",
    2: "7273575876580499574",
    10: "10344392119048899982",
    1000: "6248290529083013365",
    100000: "16046154385989997852",
}


def answer(path: str) -> tuple[int, bytes, bytes]:
    return asyncio.run(app.route(path))


class WorkTest(unittest.TestCase):
    def test_xorshift_matches_the_contract_vectors(self):
        for iters, expected in VECTORS.items():
            self.assertEqual(work.xorshift(iters), expected)
            self.assertEqual(work.locked_xorshift(iters), expected)

    def test_fib_lists_f0_to_fn_exactly(self):
        self.assertEqual(work.fib_text(0), "0")
        self.assertEqual(work.fib_text(10), "0 1 1 2 3 5 8 13 21 34 55")
        numbers = work.fib_text(4000).split(" ")
        self.assertEqual(len(numbers), 4001)
        self.assertEqual(len(numbers[-1]), 836)
        self.assertTrue(numbers[-1].endswith("3025993715274875"))

    def test_count_has_single_spaces_and_no_trailing_space(self):
        self.assertEqual(work.count_text(0), "")
        self.assertEqual(work.count_text(5), "1 2 3 4 5")

    def test_allocate_makes_kib_of_256_byte_chunks(self):
        self.assertEqual(work.allocate(0), 0)
        self.assertEqual(work.allocate(64), 256)


class RouteTest(unittest.TestCase):
    def test_path_integers_are_ascii_digits_within_range(self):
        self.assertEqual(app.path_integer("007", 10), 7)
        self.assertEqual(app.path_integer("2147483647", 2_147_483_647), 2_147_483_647)
        for bad in ["-1", "+1", "1a", " 1", "1_0", "1.0", "0x1", "\u0661", "2147483648", "9" * 5000]:
            self.assertIsNone(app.path_integer(bad, 2_147_483_647), bad)

    def test_routes_answer_400_and_404_per_the_contract(self):
        self.assertEqual(answer("/values/5")[2], b"5")
        self.assertEqual(answer("/values/-1")[0], 400)
        self.assertEqual(answer("/values/")[0], 404)
        self.assertEqual(answer("/values/5/6")[0], 404)
        self.assertEqual(answer("/api/count/0")[2], b"")
        self.assertEqual(answer("/api/count/3")[1:], (app.TEXT, b"1 2 3"))
        self.assertEqual(answer("/api/fib/10001")[0], 400)
        self.assertEqual(answer("/api/count/100001")[0], 400)
        self.assertEqual(answer("/api/fib/abc")[0], 400)
        self.assertEqual(answer("/sleep/0")[2], b'{"slept_ms":0}')


class DatabaseTest(unittest.TestCase):
    def test_query_count_is_clamped_to_1_through_500(self):
        cases = {
            b"": 1, b"queries=": 1, b"queries=foo": 1, b"queries=3x": 1, b"queries=1_0": 1,
            b"queries=-4": 1, b"queries=0": 1, b"queries=3": 3, b"queries=007": 7,
            b"queries=500": 500, b"queries=501": 500, b"queries=" + b"9" * 30: 500,
            b"other=9&queries=20": 20, b"myqueries=20": 1,
        }
        for query, expected in cases.items():
            self.assertEqual(database.query_count(query), expected, query)

    def test_fortunes_are_escaped_sorted_and_joined_by_the_added_one(self):
        page = database.render_fortunes([
            (12, "フレームワークのベンチマーク"),
            (1, "fortune: No such file or directory"),
            (11, "<script>alert(\"x & 'y'\");</script>"),
            (4, "A bad random number generator"),
            (13, "\U0001F600 (U+1F600, a surrogate pair in UTF-16)"),
            (14, "\uFF01 (U+FF01, above every surrogate)"),
        ])
        self.assertTrue(page.startswith(
            "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"
            "<tr><th>id</th><th>message</th></tr>"))
        self.assertTrue(page.endswith("</table></body></html>"))
        self.assertNotIn("<script>", page)
        self.assertIn("&lt;script&gt;alert(&#34;x &amp; &#39;y&#39;&#34;);&lt;/script&gt;", page)
        ids = [row.split("<")[0] for row in page.split("<tr><td>")[1:]]
        # '<' sorts before capitals, capitals before lower case, ASCII before
        # kana, U+FF01 before U+1F600 (code-point order, not UTF-16's).
        self.assertEqual(ids, ["11", "4", "0", "1", "12", "14", "13"])
        self.assertIn("<td>フレームワークのベンチマーク</td>", page)

    def test_an_id_drawn_twice_is_written_once_with_its_last_number(self):
        worlds = [{"id": 9, "randomNumber": 1}, {"id": 2, "randomNumber": 1}, {"id": 9, "randomNumber": 1}]
        self.assertEqual(database.plan_updates(worlds, [10, 20, 30]), ([2, 9], [20, 30]))
        self.assertEqual([w["randomNumber"] for w in worlds], [30, 20, 30])

    def test_database_endpoints_answer_503_without_a_database(self):
        with mock.patch.dict(os.environ, {"DATABASE_URL": ""}):
            for path in ["/db", "/queries", "/fortunes", "/updates"]:
                self.assertEqual(answer(path)[0], 503, path)


if __name__ == "__main__":
    unittest.main()
