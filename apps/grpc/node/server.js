// Stampede's Node.js gRPC reference server: contracts/grpc/bench.proto served
// by @grpc/grpc-js, the way a Node user would write it, so that numbers
// measured against it describe grpc-js. This file holds the process model:
// one process, or a node:cluster primary with THREADS workers sharing the
// port (as apps/node does), and clean shutdown on SIGTERM; bench.js holds the
// answers.
//
// How to run:   npm ci && PORT=9009 node server.js
// Environment:  PORT (default 9009); THREADS unset, empty or 1 runs one
//               process, N > 1 forks N cluster workers sharing the port.
'use strict';

const cluster = require('node:cluster');
const grpc = require('@grpc/grpc-js');
const { newServer } = require('./bench');

const HOST = '0.0.0.0';
// A long stream must not outlive the contract's 5 s SIGTERM deadline.
const FORCED_EXIT_MS = 3000;

function fail(message) {
  console.error(`grpc-js: error: ${message}`);
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

// One gRPC server in this process. On SIGTERM it stops accepting and lets
// running calls finish (tryShutdown), then cuts off what is left.
function serve() {
  const server = newServer();
  server.bindAsync(`${HOST}:${port}`, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) fail(`cannot listen on ${HOST}:${port}: ${err.message}`);
  });
  let stopping = false;
  process.on('SIGTERM', () => {
    if (stopping) return;
    stopping = true;
    server.tryShutdown(() => process.exit(0));
    setTimeout(() => {
      server.forceShutdown();
      process.exit(0);
    }, FORCED_EXIT_MS).unref();
  });
}

// The primary forks and supervises, as apps/node's does: a worker that dies
// outside a shutdown stops the others and the primary exits 1.
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
      console.error(`grpc-js: worker ${worker.process.pid} died (${signal || `exit ${status}`}); stopping`);
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
