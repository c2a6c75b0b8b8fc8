// Stampede's Node.js reference server: node:http (and pg for the database), doing the
// work in apps/CONTRACT.md so its numbers can be compared with other runtimes.
// This file holds the process model: one process, or a node:cluster primary
// with THREADS workers, and clean shutdown on SIGTERM. Routes are in
// routes.js, the work in work.js.
//
// How to run:   PORT=9009 THREADS=2 node server.js
// Environment:  PORT (default 9009); THREADS unset, empty or 1 runs one
//               process, N > 1 forks N cluster workers sharing the port.
//               DATABASE_URL and DATABASE_POOL_SIZE (default 8, shared among
//               the workers), see database.js.
'use strict';

const cluster = require('node:cluster');
const http = require('node:http');
const { handle } = require('./routes');

const HOST = '0.0.0.0';
// A stuck request (/sleep is at most 10 s) must not outlive the contract's
// 5 s SIGTERM deadline; this is the last resort after closing connections.
const FORCED_EXIT_MS = 4000;

function fail(message) {
  console.error(`node: error: ${message}`);
  process.exit(2);
}

function positiveInteger(name, text, fallback) {
  if (text === undefined || text === '') return fallback;
  if (!/^[0-9]+$/.test(text) || Number(text) < 1) {
    fail(`${name}=${JSON.stringify(text)} is not a positive integer; unset it or give e.g. ${name}=${fallback}`);
  }
  return Number(text);
}

const port = positiveInteger('PORT', process.env.PORT, 9009);
const threads = positiveInteger('THREADS', process.env.THREADS, 1);
positiveInteger('DATABASE_POOL_SIZE', process.env.DATABASE_POOL_SIZE, 8); // read by database.js

// One HTTP server in this process. On SIGTERM it stops accepting, and
// closeAllConnections() also drops idle keep-alive connections, which
// server.close() alone would wait for until their keep-alive timeout.
function serve() {
  const server = http.createServer(handle);
  server.on('error', (err) => fail(`cannot listen on ${HOST}:${port}: ${err.message}`));
  server.listen(port, HOST);
  // process.on, not once: a second SIGTERM (the primary's forward plus a
  // signal to the whole process group) must not kill us mid-shutdown.
  let stopping = false;
  process.on('SIGTERM', () => {
    if (stopping) return;
    stopping = true;
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), FORCED_EXIT_MS).unref();
  });
}

// The cluster primary only forks and supervises; workers accept in turn
// (node:cluster's default round-robin on Linux). A worker that dies while
// we are not shutting down takes the others with it and the primary exits
// 1: a benchmark with a silently missing worker would measure the wrong
// server. On SIGTERM the primary forwards it and exits once all are gone.
function supervise() {
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
      console.error(`node: worker ${worker.process.pid} died (${signal || `exit ${status}`}); stopping`);
      stop(1);
    } else if (alive.size === 0) {
      process.exit(exitCode);
    }
  });
  process.on('SIGTERM', () => stop(0));
  for (let i = 0; i < threads; i++) alive.add(cluster.fork());
}

if (threads > 1 && cluster.isPrimary) {
  supervise();
} else {
  serve();
}
