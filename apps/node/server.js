// Stampede's Node.js reference server: node:http (and pg for the database), doing the
// work in apps/CONTRACT.md so its numbers can be compared with other runtimes.
// This file holds the server's lifecycle: listening and clean shutdown on
// SIGTERM; process.js the process model (one process, or a node:cluster
// primary with THREADS workers). Routes are in routes.js, the work in work.js.
//
// How to run:   PORT=9009 THREADS=2 node server.js
// Environment:  PORT (default 9009); THREADS unset, empty or 1 runs one
//               process, N > 1 forks N cluster workers sharing the port.
//               DATABASE_URL and DATABASE_POOL_SIZE (default 8, shared among
//               the workers), see database.js.
'use strict';

const http = require('node:http');
const { failWith, positiveInteger: positive, run } = require('./process');
const { handle } = require('./routes');

const HOST = '0.0.0.0';
// A stuck request (/sleep is at most 10 s) must not outlive the contract's
// 5 s SIGTERM deadline; this is the last resort after closing connections.
const FORCED_EXIT_MS = 4000;

const fail = failWith('node');
const positiveInteger = (name, text, fallback) => positive(fail, name, text, fallback);

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

run('node', threads, serve);
