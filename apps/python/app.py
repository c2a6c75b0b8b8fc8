"""The ASGI application: routes, strict path integers and responses.

A plain ASGI callable, the interface uvicorn serves, doing the work in
apps/CONTRACT.md. uvicorn itself adds the Server and Date headers to every
response, including 400 and 404. server.py starts uvicorn; the work is in
work.py, the database endpoints' in database.py.
"""

import asyncio
import json

import collector
import database
import work

collector.configure()

TEXT = b"text/plain; charset=utf-8"
JSON = b"application/json"
HTML = b"text/html; charset=utf-8"
HELLO = "Hello, World!"


def as_json(value) -> tuple[int, bytes, bytes]:
    return 200, JSON, json.dumps(value, separators=(",", ":")).encode()


BAD_REQUEST = (400, TEXT, b"Bad Request")
NOT_FOUND = (404, TEXT, b"Not Found")
METHOD_NOT_ALLOWED = (405, TEXT, b"Method Not Allowed")

DB = database.Database()


async def fortunes(_query: bytes):
    return 200, HTML, (await DB.fortunes()).encode()


async def db_row(_query: bytes):
    return as_json((await DB.random_worlds(1))[0])


async def queries(query: bytes):
    return as_json(await DB.random_worlds(database.query_count(query)))


async def updates(query: bytes):
    return as_json(await DB.update_worlds(database.query_count(query)))


# The database endpoints: path -> handler of the query string.
DATABASE = {"/db": db_row, "/queries": queries, "/fortunes": fortunes, "/updates": updates}


def path_integer(text: str, maximum: int) -> int | None:
    """The value of a path integer, or None when it must answer 400.

    ASCII digits only (str.isdigit alone would accept other scripts' digits,
    and int() would accept signs, spaces and underscores). Leading zeros are
    stripped and the length checked before int(), so a huge number is
    rejected without being converted.
    """
    if not (text.isascii() and text.isdigit()):
        return None
    significant = text.lstrip("0") or "0"
    if len(significant) > len(str(maximum)):
        return None
    value = int(significant)
    return value if value <= maximum else None


async def sleep(ms: int):
    await asyncio.sleep(ms / 1000)
    return as_json({"slept_ms": ms})


def allocate(kib: int):
    work.allocate(kib)
    return as_json({"allocated_kib": kib})


# Endpoints taking one integer: name -> (maximum, handler). A handler
# returns (status, content type, body), or a coroutine giving one.
PARAMETRIC = {
    "values": (2_147_483_647, as_json),
    "cpu": (10_000_000, lambda n: as_json({"result": work.xorshift(n)})),
    "lock": (10_000_000, lambda n: as_json({"result": work.locked_xorshift(n)})),
    "alloc": (65_536, allocate),
    "sleep": (10_000, sleep),
}
# The sequence API: plain text, numbers separated by single spaces.
API = {
    "count": (100_000, lambda n: (200, TEXT, work.count_text(n).encode())),
    "fib": (10_000, lambda n: (200, TEXT, work.fib_text(n).encode())),
}


async def route(path: str, query: bytes = b"") -> tuple[int, bytes, bytes]:
    """The answer for a path. An empty or extra segment is an unknown path."""
    if path in DATABASE:
        try:
            return await DATABASE[path](query)
        except database.Unavailable as e:
            return 503, TEXT, str(e).encode()
    if path == "/plaintext":
        return 200, TEXT, HELLO.encode()
    if path == "/json":
        return as_json({"message": HELLO})
    segments = path.split("/")
    endpoint = None
    if len(segments) == 3 and segments[0] == "" and segments[2]:
        endpoint, text = PARAMETRIC.get(segments[1]), segments[2]
    elif len(segments) == 4 and segments[:2] == ["", "api"] and segments[3]:
        endpoint, text = API.get(segments[2]), segments[3]
    if endpoint is None:
        return NOT_FOUND
    maximum, handler = endpoint
    value = path_integer(text, maximum)
    if value is None:
        return BAD_REQUEST
    answer = handler(value)
    return await answer if asyncio.iscoroutine(answer) else answer


async def app(scope, receive, send):
    assert scope["type"] == "http", "server.py turns lifespan and websockets off"
    # Only GET is in the contract; uvicorn answers HEAD without the body.
    if scope["method"] in ("GET", "HEAD"):
        status, content_type, body = await route(scope["path"], scope["query_string"])
    else:
        status, content_type, body = METHOD_NOT_ALLOWED
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    if status == 405:
        headers.append((b"allow", b"GET, HEAD"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
