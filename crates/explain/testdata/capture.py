#!/usr/bin/env python3
"""How the fixtures in this folder were captured (see docs/explain.md).

Runs a server command with its stderr (and stdout) piped, writes every line it
prints to OUT as `<CLOCK_MONOTONIC ns at read>\t<line>`, and the monotonic time
just before exec to OUT.exec. Stops the server with SIGTERM after SECONDS.

    capture.py OUT SECONDS -- ENV=VALUE... command args...
"""
import os, subprocess, sys, threading, time

out, seconds = sys.argv[1], float(sys.argv[2])
rest = sys.argv[sys.argv.index("--") + 1:]
env = dict(os.environ)
while rest and "=" in rest[0] and not rest[0].startswith("-"):
    k, v = rest.pop(0).split("=", 1)
    env[k] = v
with open(out, "w") as log:
    exec_ns = time.monotonic_ns()
    proc = subprocess.Popen(rest, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    def pump():
        for line in proc.stdout:
            log.write(f"{time.monotonic_ns()}\t{line.rstrip()}\n")
            log.flush()
    t = threading.Thread(target=pump)
    t.start()
    time.sleep(seconds)
    proc.terminate()
    proc.wait(10)
    t.join()
with open(out + ".exec", "w") as f:
    f.write(f"{exec_ns}\n")
