#!/usr/bin/env bash
# Installs what the tests and the shootout need and a fresh machine of this
# project's kind lacks: the peers and servers the benchmarks and tests run
# (wrk, nginx, h2load, sshd for the multi-host test), headless Chromium for the report test, strace and perf
# for measuring, PostgreSQL for the database scenario. Toolchains (Rust, Go, Node, Python, Java + Maven) come with
# the machine. Idempotent and quick when everything is there.
set -euo pipefail

missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need wrk wrk
need nginx nginx-light
need h2load nghttp2-client
need chromium chromium
[ -d /usr/share/fonts/truetype/dejavu ] || missing+=(fonts-dejavu-core)
need strace strace
need perf linux-perf
need taskset util-linux
# The live progress line of stampede load is tested on a real terminal.
need tmux tmux
# Multi-host load (tests/hosts.rs): the ssh client, an sshd the test starts in
# its own network namespaces (the system's sshd service is never started), ip.
need ssh openssh-client
need ssh-keygen openssh-client
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
need ip iproute2
# The database scenario (scenarios/db.toml, docs/database.md): PostgreSQL's
# server programs (Debian keeps them in /usr/lib/postgresql/<version>/bin, off
# PATH; stampede finds them there) and psql.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
need psql postgresql-client
# The Go gRPC app generates its code from contracts/grpc/bench.proto at build
# time (apps/grpc/go/generate.go); protoc is the one piece not from Go's proxy.
need protoc protobuf-compiler

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The Python and Node apps' unit tests (make app-unit-tests) import their
# database modules: asyncpg and jinja2 on python3 itself, pg in node_modules.
apps="$(dirname "$0")/../apps"
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import asyncpg, jinja2' 2>/dev/null; then
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -r "$apps/python/requirements.txt"
fi
if command -v npm >/dev/null 2>&1 && [ ! -d "$apps/node/node_modules/pg" ]; then
  (cd "$apps/node" && npm ci --omit=dev --no-audit --no-fund --loglevel=error)
fi
# The gRPC apps' unit tests (make grpc-app-unit-tests): grpcio,
# grpcio-reflection and grpcio-tools on python3 itself, @grpc/grpc-js and
# @grpc/reflection in node_modules.
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import grpc, grpc_reflection, grpc_tools' 2>/dev/null; then
  echo "deps: installing grpcio, grpcio-reflection, grpcio-tools (pip)" >&2
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -r "$apps/grpc/python/requirements.txt"
fi
if command -v npm >/dev/null 2>&1 && [ ! -d "$apps/grpc/node/node_modules/@grpc/reflection" ]; then
  (cd "$apps/grpc/node" && npm ci --omit=dev --no-audit --no-fund --loglevel=error)
fi
# The OpenMetrics export is read back by the format's reference parser.
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import prometheus_client' 2>/dev/null; then
  echo "deps: installing prometheus_client (pip)" >&2
  python3 -m pip install -q prometheus_client
fi
# PostgreSQL refuses to run as root: under root, `stampede run` starts its
# private cluster as this unprivileged system user (else as `nobody`).
if [ "$(id -u)" = 0 ] && ! id stampede >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin stampede 2>/dev/null || true
fi
for tool in cargo go node python3 java mvn; do
  command -v "$tool" >/dev/null 2>&1 || echo "deps: warning: $tool is not on PATH; its app will be skipped" >&2
done
