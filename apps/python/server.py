"""Stampede's Python reference server: an ASGI app (app.py) on uvicorn.

This file reads the environment and starts uvicorn, nothing else, so that
the app's own code is the same whatever the loop, parser or worker count.

How to run:   .venv/bin/python server.py   (after the build in app.toml)
Environment:  PORT (default 9009); THREADS = uvicorn worker processes (unset
              or empty: 1, served in this process); UVICORN_LOOP (uvloop or
              asyncio) and UVICORN_HTTP (httptools or h11), the names
              uvicorn's own command line reads; PY_GC and STAMPEDE_GC_LOG,
              see collector.py. DATABASE_URL and DATABASE_POOL_SIZE (default
              8, shared among the workers), see database.py.

SIGTERM is uvicorn's: it stops accepting, closes idle keep-alive
connections, waits for requests in flight up to GRACEFUL_SHUTDOWN_S, then
exits. With workers, the parent forwards it to each and waits for them.
"""

import os
import sys

import uvicorn

import collector

HOST = "0.0.0.0"
# /sleep may take 10 s; the contract wants every process gone within 5 s.
GRACEFUL_SHUTDOWN_S = 3
CHOICES = {"UVICORN_LOOP": ("uvloop", "asyncio"), "UVICORN_HTTP": ("httptools", "h11")}


def fail(message: str) -> None:
    sys.exit(f"python: error: {message}")


def positive_integer(name: str, default: int) -> int:
    text = os.environ.get(name, "")
    if not text:
        return default
    if not (text.isascii() and text.isdigit() and int(text) > 0):
        fail(f"{name}={text!r} is not a positive integer; unset it or give e.g. {name}={default}")
    return int(text)


def choice(name: str) -> str:
    allowed = CHOICES[name]
    value = os.environ.get(name, "") or allowed[0]
    if value not in allowed:
        fail(f"{name}={value!r} is not one of {', '.join(allowed)}")
    return value


def main() -> None:
    collector.gc_mode()
    positive_integer("DATABASE_POOL_SIZE", 8)  # read by database.py; fail here, not per request
    uvicorn.run(
        "app:app",
        app_dir=os.path.dirname(os.path.abspath(__file__)),
        host=HOST,
        port=positive_integer("PORT", 9009),
        workers=positive_integer("THREADS", 1),
        loop=choice("UVICORN_LOOP"),
        http=choice("UVICORN_HTTP"),
        ws="none",
        lifespan="off",
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )


if __name__ == "__main__":
    main()
