"""The database side of /db, /queries, /fortunes and /updates (apps/CONTRACT.md).

An asyncpg pool to DATABASE_URL, made on the first request that needs it so
the server starts and serves every other endpoint without a database; those
four endpoints then raise Unavailable, which app.py answers with 503.
DATABASE_POOL_SIZE (default 8, the manifest's db_pool knob) is the app's
connection count: with THREADS worker processes each gets its share, rounded
up. /fortunes is rendered by jinja2 with autoescaping (templates/).
"""

import asyncio
import contextlib
import os
import random
import re
from urllib.parse import parse_qs

import asyncpg
import jinja2

WORLD_ROWS = 10_000
MAX_QUERIES = 500
ADDED_MESSAGE = "Additional fortune added at request time."

SELECT_WORLD = "SELECT id, randomnumber FROM world WHERE id = $1"
SELECT_FORTUNES = "SELECT id, message FROM fortune"
# One statement for the whole batch: the ids and numbers travel as two arrays.
UPDATE_WORLDS = (
    "UPDATE world SET randomnumber = new.randomnumber"
    " FROM UNNEST($1::int[], $2::int[]) AS new(id, randomnumber) WHERE world.id = new.id"
)

TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")),
    autoescape=True,
)
INTEGER = re.compile(r"[+-]?[0-9]+")


class Unavailable(Exception):
    """The database cannot answer: unset DATABASE_URL, down, or a failed query."""


def query_count(query_string: bytes) -> int:
    """The first `queries` parameter clamped to 1..500; missing, empty or not
    a decimal integer means 1 (int() alone would accept "1_0" and " 5")."""
    values = parse_qs(query_string.decode("latin-1"), keep_blank_values=True).get("queries", [""])
    if not INTEGER.fullmatch(values[0]):
        return 1
    return min(max(int(values[0]), 1), MAX_QUERIES)


def render_fortunes(rows) -> str:
    """All rows plus the request-time one, sorted by message (Python compares
    str by code point), through the autoescaping template."""
    fortunes = [{"id": row[0], "message": row[1]} for row in rows]
    fortunes.append({"id": 0, "message": ADDED_MESSAGE})
    fortunes.sort(key=lambda fortune: fortune["message"])
    return TEMPLATES.get_template("fortunes.html").render(fortunes=fortunes)


def plan_updates(worlds: list[dict], numbers: list[int]) -> tuple[list[int], list[int]]:
    """Gives worlds[i] the number numbers[i] and returns the batch to write:
    each id once, ascending (concurrent batches lock rows in one order and
    cannot deadlock). An id drawn twice keeps its last number, in the table
    and in every answered copy, so the answer is what a read-back finds."""
    last = {world["id"]: number for world, number in zip(worlds, numbers)}
    for world in worlds:
        world["randomNumber"] = last[world["id"]]
    ids = sorted(last)
    return ids, [last[i] for i in ids]


def pool_size() -> int:
    total = int(os.environ.get("DATABASE_POOL_SIZE") or 8)
    workers = int(os.environ.get("THREADS") or 1)
    return max(1, -(-total // workers))


def random_id() -> int:
    return random.randint(1, WORLD_ROWS)


class Database:
    """The pool, made once on first use; a failed attempt is retried by the
    next request rather than remembered."""

    def __init__(self):
        self._pool = None
        self._lock = asyncio.Lock()

    async def _get_pool(self) -> asyncpg.Pool:
        url = os.environ.get("DATABASE_URL")
        if not url:
            raise Unavailable("no database: DATABASE_URL is unset")
        async with self._lock:
            if self._pool is None:
                self._pool = await asyncpg.create_pool(url, min_size=0, max_size=pool_size(), timeout=5)
        return self._pool

    @contextlib.asynccontextmanager
    async def _connection(self):
        """A pooled connection; any database failure becomes Unavailable."""
        try:
            pool = self._pool or await self._get_pool()
            async with pool.acquire(timeout=30) as conn:
                yield conn
        except (OSError, asyncio.TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
            raise Unavailable(f"database: {e}") from e

    async def _read_worlds(self, conn, count: int) -> list[dict]:
        statement = await conn.prepare(SELECT_WORLD)
        worlds = []
        for _ in range(count):
            world_id, number = await statement.fetchrow(random_id())
            worlds.append({"id": world_id, "randomNumber": number})
        return worlds

    async def random_worlds(self, count: int) -> list[dict]:
        async with self._connection() as conn:
            return await self._read_worlds(conn, count)

    async def fortunes(self) -> str:
        async with self._connection() as conn:
            rows = await conn.fetch(SELECT_FORTUNES)
        return render_fortunes(rows)

    async def update_worlds(self, count: int) -> list[dict]:
        async with self._connection() as conn:
            worlds = await self._read_worlds(conn, count)
            ids, numbers = plan_updates(worlds, [random_id() for _ in worlds])
            await conn.execute(UPDATE_WORLDS, ids, numbers)
        return worlds
