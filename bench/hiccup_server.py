#!/usr/bin/env python3
"""A server with known stalls, for bench/hiccup.sh.

Answers `Hello, World!` at once, except that nothing is answered during the
first STALL_MS of every PERIOD_MS: a request arriving then waits for the end
of the stall. For requests arriving at a uniform rate, the true latency
distribution is then known exactly: P(latency > x) = (STALL - x) / PERIOD for
0 <= x < STALL, which is what the benchmark compares each tool against.

    python3 bench/hiccup_server.py PORT STALL_MS PERIOD_MS
"""
import asyncio
import sys
import time

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!"


async def main(port: int, stall_s: float, period_s: float) -> None:
    t0 = time.monotonic()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if not head:
                    break
                phase = (time.monotonic() - t0) % period_s
                if phase < stall_s:
                    await asyncio.sleep(stall_s - phase)
                writer.write(RESPONSE)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    port, stall_ms, period_ms = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    asyncio.run(main(port, stall_ms / 1000, period_ms / 1000))
