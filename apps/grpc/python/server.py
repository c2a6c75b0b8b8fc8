"""Stampede's Python gRPC reference server: contracts/grpc/bench.proto served
by grpcio's asyncio server (bench.py), the way a Python user would write it.
This file holds the process model: one process, or THREADS worker processes
sharing the port through SO_REUSEPORT (grpcio's documented way to use more
than one core), and shutdown on SIGTERM.

How to run:   .venv/bin/python server.py   (after the build in app.toml)
Environment:  PORT (default 9009); THREADS = worker processes (unset or
              empty: 1, served in this process); PY_GC and STAMPEDE_GC_LOG as
              apps/python reads them (its collector.py, shared).
"""

import asyncio
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import collector  # noqa: E402  (apps/python's: the gc knob and GC events)

HOST = "0.0.0.0"
# A long stream must not outlive the contract's 5 s SIGTERM deadline.
GRACEFUL_SHUTDOWN_S = 3


def fail(message: str) -> None:
    sys.exit(f"grpcio: error: {message}")


def positive_integer(name: str, default: int) -> int:
    text = os.environ.get(name, "")
    if not text:
        return default
    if not (text.isascii() and text.isdigit() and int(text) > 0):
        fail(f"{name}={text!r} is not a positive integer; unset it or give e.g. {name}={default}")
    return int(text)


async def serve(port: int, reuse_port: bool) -> None:
    # Imported here, after any fork: grpcio must not be started before one.
    from bench import new_server

    collector.configure()
    server = new_server(reuse_port)
    try:
        server.add_insecure_port(f"{HOST}:{port}")
    except RuntimeError as e:
        fail(f"cannot listen on {HOST}:{port} (set PORT to a free port): {e}")
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(GRACEFUL_SHUTDOWN_S)


def supervise(port: int, workers: int) -> None:
    """Forks the workers; SIGTERM is forwarded to each, and a worker that dies
    outside a shutdown stops the others (a benchmark with a missing worker
    would measure the wrong server)."""
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            asyncio.run(serve(port, reuse_port=True))
            os._exit(0)
        children.append(pid)
    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True
        for child in children:
            try:
                os.kill(child, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    status = 0
    while children:
        pid, code = os.wait()
        children.remove(pid)
        if not stopping:
            print(f"grpcio: error: worker {pid} died (status {code}); stopping", file=sys.stderr)
            status = 1
            stop()
    sys.exit(status)


def main() -> None:
    collector.gc_mode()
    port = positive_integer("PORT", 9009)
    workers = positive_integer("THREADS", 1)
    if workers == 1:
        asyncio.run(serve(port, reuse_port=False))
    else:
        supervise(port, workers)


if __name__ == "__main__":
    main()
