// The process model both Node.js reference servers share (apps/node for HTTP,
// apps/grpc/node for gRPC), so the two are measured under the same one:
// settings read from the environment, refused with a one-line error and
// exit 2; and, for THREADS > 1, a node:cluster primary that forks the workers
// and supervises them.
'use strict';

const cluster = require('node:cluster');

// A fail(message) that prints `<label>: error: <message>` and exits 2.
function failWith(label) {
  return (message) => {
    console.error(`${label}: error: ${message}`);
    process.exit(2);
  };
}

// The environment variable `name`, whose value is `text`: unset or empty
// gives `fallback`, anything but a positive integer fails.
function positiveInteger(fail, name, text, fallback) {
  if (text === undefined || text === '') return fallback;
  if (!/^[0-9]+$/.test(text) || Number(text) < 1) {
    fail(`${name}=${JSON.stringify(text)} is not a positive integer; unset it or give e.g. ${name}=${fallback}`);
  }
  return Number(text);
}

// The cluster primary only forks and supervises; workers accept in turn
// (node:cluster's default round-robin on Linux). A worker that dies while
// we are not shutting down takes the others with it and the primary exits
// 1: a benchmark with a silently missing worker would measure the wrong
// server. On SIGTERM the primary forwards it and exits once all are gone.
function supervise(label, threads) {
  const alive = new Set();
  let stopping = false;
  let exitCode = 0;
  const stop = (code) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    for (const worker of alive) worker.process.kill('SIGTERM');
    if (alive.size === 0) process.exit(exitCode);
  };
  cluster.on('exit', (worker, status, signal) => {
    alive.delete(worker);
    if (!stopping) {
      console.error(`${label}: worker ${worker.process.pid} died (${signal || `exit ${status}`}); stopping`);
      stop(1);
    } else if (alive.size === 0) {
      process.exit(exitCode);
    }
  });
  process.on('SIGTERM', () => stop(0));
  for (let i = 0; i < threads; i++) alive.add(cluster.fork());
}

// serve() in this process, or, with threads > 1, in each of that many
// cluster workers under a supervising primary.
function run(label, threads, serve) {
  if (threads > 1 && cluster.isPrimary) {
    supervise(label, threads);
  } else {
    serve();
  }
}

module.exports = { failWith, positiveInteger, run };
