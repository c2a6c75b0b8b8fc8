#!/usr/bin/env python3
"""A small apps/CONTRACT.md server for the `stampede run` tests: standard
library only (http.server), so a test app needs no build.

    PORT=9009 THREADS=2 python3 contract_server.py [--name NAME]

THREADS > 1 forks that many worker processes sharing the listening socket,
so the probe has a process tree to find. CRASH_AFTER=N makes a worker write
a message to stderr and exit with status 3 after N requests (the crash test).
SETSID_CHILD=1 forks a child that leaves the process group with setsid() and
sleeps: a descendant a stop of the group alone would never reach.
DAEMON_CHILD=1 daemonizes a helper the classic way (fork, setsid, fork, the
middle process exits at once): the helper's parent is gone before anyone
could have seen it as the server's descendant.
MALFORMED_EVERY=N answers every Nth request with bytes that are not HTTP and
closes the connection; BAD_STATUS_EVERY=M answers every Mth with a 500 (the
error-count test: a malformed answer and a bad status are counted apart).
ONLY=sequence serves the sequence API alone (/api/count, /api/fib) and 404
elsewhere, /plaintext and / included: an app a /plaintext poll never finds.
STALL_MS=S with PERIOD_MS=P answers nothing during the first S ms of every
P ms (from the server's start): a request arriving then waits for the end of
the stall, so at any steady arrival rate p99 is known (S=100, P=1000: 90 ms).
HEADERS_TO=FILE appends every request header line not seen before to FILE
(the secrets test: what the load generator really sent).
HANG_AFTER=N answers N requests, then answers nothing more (each later
request waits, unanswered, until SIGTERM): a server that stopped answering.
DEFER_ACCEPT=1 sets TCP_DEFER_ACCEPT on the listener, as fasthttp's reuseport
listener does: the kernel drops each handshake's bare ACK on purpose (the
listener's sk_drops rises) and hands the connection over once data arrives.
"""
import json
import os
import re
import socket
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NAME = sys.argv[sys.argv.index("--name") + 1] if "--name" in sys.argv else "contract-py"
CRASH_AFTER = int(os.environ.get("CRASH_AFTER") or 0)
MALFORMED_EVERY = int(os.environ.get("MALFORMED_EVERY") or 0)
BAD_STATUS_EVERY = int(os.environ.get("BAD_STATUS_EVERY") or 0)
SEQUENCE_ONLY = os.environ.get("ONLY") == "sequence"
STALL_S = int(os.environ.get("STALL_MS") or 0) / 1000
PERIOD_S = int(os.environ.get("PERIOD_MS") or 1000) / 1000
HEADERS_TO = os.environ.get("HEADERS_TO")
HEADERS_SEEN = set()
HANG_AFTER = int(os.environ.get("HANG_AFTER") or 0)
HEARD = [0]
STARTED = time.monotonic()
LOCK = threading.Lock()
COUNT = [0]
SEEN = [0]
DIGITS = re.compile(r"^[0-9]+$")
MASK = (1 << 64) - 1


def xorshift(iters):
    x = 0x9E3779B97F4A7C15
    for _ in range(iters):
        x ^= (x << 13) & MASK
        x ^= x >> 7
        x ^= (x << 17) & MASK
    return x


def fib(n):
    """F(0) to F(n) inclusive, exact (the sequence API)."""
    out, a, b = [], 0, 1
    for _ in range(n + 1):
        out.append(a)
        a, b = b, a + b
    return out


def alloc(kib):
    chunks = [bytearray(256) for _ in range(kib * 4)]
    for c in chunks:
        c[0] = 1
    return len(chunks)


ROUTES = {
    "values": (2147483647, lambda n: str(n)),
    "api/count": (100000, lambda n: " ".join(map(str, range(1, n + 1)))),
    "api/fib": (10000, lambda n: " ".join(map(str, fib(n)))),
    "cpu": (10000000, lambda n: json.dumps({"result": str(xorshift(n))})),
    "alloc": (65536, lambda n: (alloc(n), json.dumps({"allocated_kib": n}))[1]),
    "sleep": (10000, lambda n: (time.sleep(n / 1000), json.dumps({"slept_ms": n}))[1]),
}


def locked_cpu(n):
    with LOCK:
        return json.dumps({"result": str(xorshift(n))})


ROUTES["lock"] = (10000000, locked_cpu)


def record_headers(headers):
    lines = {f"{name}: {value}" for name, value in headers.items()}
    with LOCK:
        new = lines - HEADERS_SEEN
        if new:
            HEADERS_SEEN.update(new)
            with open(HEADERS_TO, "a") as out:
                out.write("".join(line + "\n" for line in sorted(new)))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = NAME

    def log_message(self, *args):
        pass

    def answer(self, status, body, ctype):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if HEADERS_TO:
            record_headers(self.headers)
        if HANG_AFTER:
            with LOCK:
                HEARD[0] += 1
                hang = HEARD[0] > HANG_AFTER
            while hang:
                time.sleep(1)
        if STALL_S:
            phase = (time.monotonic() - STARTED) % PERIOD_S
            if phase < STALL_S:
                time.sleep(STALL_S - phase)
        if CRASH_AFTER:
            COUNT[0] += 1
            if COUNT[0] > CRASH_AFTER:
                sys.stderr.write(f"{NAME}: fatal: simulated crash after {CRASH_AFTER} requests\n")
                sys.stderr.flush()
                os._exit(3)
        if MALFORMED_EVERY or BAD_STATUS_EVERY:
            with LOCK:
                SEEN[0] += 1
                n = SEEN[0]
            if MALFORMED_EVERY and n % MALFORMED_EVERY == 0:
                self.wfile.write(b"this is not http\r\n\r\n")
                self.wfile.flush()
                self.close_connection = True
                return
            if BAD_STATUS_EVERY and n % BAD_STATUS_EVERY == 0:
                return self.answer(500, "oops", "text/plain")
        path = self.path.split("?", 1)[0]
        if SEQUENCE_ONLY and not path.startswith("/api/"):
            return self.answer(404, "not found", "text/plain")
        if path == "/plaintext":
            return self.answer(200, "Hello, World!", "text/plain")
        if path == "/json":
            return self.answer(200, json.dumps({"message": "Hello, World!"}), "application/json")
        head, _, last = path.strip("/").rpartition("/")
        route = ROUTES.get(head)
        if SEQUENCE_ONLY and head not in ("api/count", "api/fib"):
            route = None
        if route is None or not path.startswith("/") or last == "":
            return self.answer(404, "not found", "text/plain")
        limit, make = route
        if not DIGITS.match(last) or int(last) > limit:
            return self.answer(400, "bad integer", "text/plain")
        ctype = "text/plain" if head.startswith("api/") else "application/json"
        return self.answer(200, make(int(last)), ctype)


PARENT = os.getpid()


def main():
    # BIND=0.0.0.0 lets load hosts in other network namespaces reach it (tests/hosts.rs).
    server = ThreadingHTTPServer((os.environ.get("BIND") or "127.0.0.1", int(os.environ.get("PORT") or 9009)), Handler)
    server.daemon_threads = True
    if os.environ.get("DEFER_ACCEPT"):
        server.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 5)
    workers = int(os.environ.get("THREADS") or 1)
    children = []
    for _ in range(workers - 1):
        pid = os.fork()
        if pid == 0:
            children = []
            break
        children.append(pid)

    def stop(*_):
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        os._exit(0)

    if os.environ.get("SETSID_CHILD") and os.getpid() == PARENT:
        if os.fork() == 0:
            os.setsid()
            server.socket.close()
            while True:
                time.sleep(3600)

    if os.environ.get("DAEMON_CHILD") and os.getpid() == PARENT:
        middle = os.fork()
        if middle == 0:
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
            server.socket.close()
            while True:
                time.sleep(3600)
        os.waitpid(middle, 0)

    signal.signal(signal.SIGTERM, stop)
    server.serve_forever()


main()
