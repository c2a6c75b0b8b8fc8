// Stampede's Node.js gRPC reference server: contracts/grpc/bench.proto served
// by @grpc/grpc-js, the way a Node user would write it, so that numbers
// measured against it describe grpc-js. This file holds the lifecycle:
// listening and clean shutdown on SIGTERM; apps/node's process.js the process
// model (one process, or a node:cluster primary with THREADS workers sharing
// the port), the same as the HTTP app's; bench.js holds the answers.
//
// How to run:   npm ci && PORT=9009 node server.js
// Environment:  PORT (default 9009); THREADS unset, empty or 1 runs one
//               process, N > 1 forks N cluster workers sharing the port.
'use strict';

const grpc = require('@grpc/grpc-js');
// apps/node's process model, shared: the same cluster supervision.
const { failWith, positiveInteger: positive, run } = require('../../node/process');
const { newServer } = require('./bench');

const HOST = '0.0.0.0';
// A long stream must not outlive the contract's 5 s SIGTERM deadline.
const FORCED_EXIT_MS = 3000;

const fail = failWith('grpc-js');
const positiveInteger = (name, text, fallback) => positive(fail, name, text, fallback);

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

run('grpc-js', threads, serve);
