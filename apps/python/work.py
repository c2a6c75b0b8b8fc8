"""The work behind /cpu, /lock, /api/count, /api/fib and /alloc.

Kept apart from HTTP so each piece can be read against apps/CONTRACT.md on
its own. Plain synchronous Python, as a Python user would write it.
"""

import threading

MASK_64 = 0xFFFF_FFFF_FFFF_FFFF
SEED = 0x9E37_79B9_7F4A_7C15


def xorshift(iters: int) -> str:
    """The contract's 64-bit xorshift, as a decimal string.

    Python ints never overflow, so the left shifts are masked back to 64 bits
    to get the contract's wrapping arithmetic; the right shift needs no mask.
    """
    x = SEED
    for _ in range(iters):
        x ^= (x << 13) & MASK_64
        x ^= x >> 7
        x ^= (x << 17) & MASK_64
    return str(x)


# One lock for the whole process (each uvicorn worker is its own process).
# The handler is a coroutine on the event loop, so nothing else runs while it
# holds this lock: it is never contended, and the CPU work inside it blocks
# the loop, as it does for /cpu. That is exactly what /lock measures in a
# single-threaded runtime: the honest cost of a global lock on a hot path.
PROCESS_LOCK = threading.Lock()


def locked_xorshift(iters: int) -> str:
    with PROCESS_LOCK:
        return xorshift(iters)


def count_text(n: int) -> str:
    """The text "1 2 ... n": decimal, single spaces, nothing after the last."""
    return " ".join(str(i) for i in range(1, n + 1))


def fib_text(n: int) -> str:
    """The text "F0 F1 ... Fn" (n + 1 numbers); Python ints are exact at any size."""
    numbers = []
    a, b = 0, 1
    for _ in range(n + 1):
        numbers.append(str(a))
        a, b = b, a + b
    return " ".join(numbers)


CHUNK_BYTES = 256


def allocate(kib: int) -> int:
    """Allocates about kib KiB as 256-byte bytearrays, then drops them all.

    Each chunk is written (zero-filled on creation, then its first and last
    byte set) and kept in a list until all exist. CPython frees them by
    reference counting when the list goes; the point is allocator and
    collector pressure, not peak memory.
    """
    chunks = []
    for i in range(kib * 1024 // CHUNK_BYTES):
        chunk = bytearray(CHUNK_BYTES)
        chunk[0] = chunk[-1] = i & 0xFF
        chunks.append(chunk)
    return len(chunks)
