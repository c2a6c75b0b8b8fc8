"""Garbage-collector settings and event recording for the Python server.

The `gc` knob in app.toml reaches us as PY_GC, and must be applied in every
process that serves requests: uvicorn's workers are spawned processes that
import app.py afresh, so app.py calls configure() at import time.

When STAMPEDE_GC_LOG names a file, each serving process appends one line per
collector phase to `<STAMPEDE_GC_LOG>.<pid>`:

    <start|stop> <generation> <time.monotonic_ns()>

so a run can line GC pauses up with slow requests. The file is line-buffered:
uvicorn ends a process by re-raising SIGTERM, and spawned workers leave via
os._exit, so nothing left in a buffer would be written.
"""

import gc
import os
import sys
import time

# PY_GC value -> what it does to the collector; "default" leaves it alone.
AGGRESSIVE_THRESHOLDS = (100, 5, 5)
MODES = ("default", "off", "aggressive")


def gc_mode() -> str:
    """PY_GC, checked; server.py calls this first so a typo fails at once
    instead of in every worker uvicorn would restart."""
    mode = os.environ.get("PY_GC", "") or "default"
    if mode not in MODES:
        sys.exit(f"python: error: PY_GC={mode!r} is not one of {', '.join(MODES)}")
    return mode


def configure() -> None:
    """Applies PY_GC and STAMPEDE_GC_LOG to this process."""
    mode = gc_mode()
    if mode == "off":
        gc.disable()
    elif mode == "aggressive":
        gc.set_threshold(*AGGRESSIVE_THRESHOLDS)

    log_path = os.environ.get("STAMPEDE_GC_LOG", "")
    if log_path:
        record_events(f"{log_path}.{os.getpid()}")


def record_events(path: str) -> None:
    log = open(path, "a", buffering=1, encoding="ascii")
    started_ns = 0

    def on_gc(phase: str, info: dict) -> None:
        # The start time is kept and both lines are written at stop, so the
        # file write falls outside the interval it measures.
        nonlocal started_ns
        now_ns = time.monotonic_ns()
        if phase == "start":
            started_ns = now_ns
            return
        generation = info["generation"]
        log.write(f"start {generation} {started_ns}\nstop {generation} {now_ns}\n")

    gc.callbacks.append(on_gc)
