// The Bench service of contracts/grpc/bench.proto, as apps/CONTRACT.md
// ("gRPC") defines its answers: unary echoes the text and adds the two
// numbers, stream sends the number of replies asked for, pausing when the
// call's buffer is full (write() returns false) rather than queueing every
// reply in memory, or, for a call with a deadline, one reply at a time (see
// `stream`).
// Both answer DEADLINE_EXCEEDED once the call's deadline (grpc-timeout,
// call.getDeadline()) has passed; grpc-js answers UNIMPLEMENTED for unknown
// methods and INTERNAL for a message that does not decode. The .proto is
// loaded at start-up by @grpc/proto-loader (no code generation), from its one
// declaration; server reflection describes it to clients that lack it.
'use strict';

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { ReflectionService } = require('@grpc/reflection');

const PROTO = path.join(__dirname, '../../../contracts/grpc/bench.proto');
// The largest count a Stream call may ask for (the contract's).
const MAX_STREAM = 100000;

// int64 fields as JavaScript numbers: a sum of two int32 is exact in a double.
const definition = protoLoader.loadSync(PROTO, { longs: Number, defaults: true });
const bench = grpc.loadPackageDefinition(definition).stampede.bench.v1;

// grpc-js gives the deadline as a Date or as milliseconds since the epoch
// (the server's own parse of grpc-timeout), Infinity when there is none.
function deadlineMs(call) {
  const deadline = call.getDeadline();
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

// `slackMs` moves the deadline earlier: see `stream`.
function expired(call, slackMs = 0) {
  const ms = deadlineMs(call);
  return Number.isFinite(ms) && Date.now() >= ms - slackMs;
}

const deadlineExceeded = { code: grpc.status.DEADLINE_EXCEEDED, details: 'deadline exceeded' };

function unary(call, callback) {
  if (expired(call)) return callback(deadlineExceeded);
  const { text, a, b } = call.request;
  callback(null, { text, sum: a + b, seq: 0 });
}

// grpc-js 1.14.7 ends the HTTP/2 stream from its own deadline timer, which
// fires on the millisecond clock up to 1 ms before Date.now() reaches
// getDeadline(). A reply still queued in the call (write() returned false,
// the handler waiting for 'drain') is then written after that end: Node marks
// the HTTP/2 stream errored, and neither the trailers nor a reset are ever
// sent (apps/grpc/README.md). So a call with a deadline writes a reply only
// once the previous one has left the call, and not within 1 ms of the
// deadline: nothing is queued when grpc-js's timer fires, and the call ends
// DEADLINE_EXCEEDED. A call without one has no timer, and writes until the
// call's buffer is full (about 10% more replies/s with grpc-js).
const TIMER_SLACK_MS = 1;

function stream(call) {
  const { text, count } = call.request;
  if (count < 0 || count > MAX_STREAM) {
    call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: `count ${count} is outside 0..${MAX_STREAM}` });
    return;
  }
  let seq = 1;
  let cancelled = false;
  call.on('cancelled', () => { cancelled = true; });
  const timed = Number.isFinite(deadlineMs(call));
  const next = (err) => {
    if (err || cancelled) return;
    if (timed && expired(call, TIMER_SLACK_MS)) {
      call.emit('error', deadlineExceeded);
      return;
    }
    while (seq <= count) {
      const reply = { text, sum: 0, seq };
      seq += 1;
      if (timed) {
        call.write(reply, next);
        return;
      }
      if (!call.write(reply)) {
        call.once('drain', next);
        return;
      }
    }
    call.end();
  };
  next();
}

// A grpc-js server with the Bench service and server reflection (v1 and
// v1alpha, @grpc/reflection, from the same loaded .proto), not yet bound.
function newServer() {
  const server = new grpc.Server();
  server.addService(bench.Bench.service, { unary, stream });
  new ReflectionService(definition).addToServer(server);
  return server;
}

module.exports = { newServer, unary, stream, bench, MAX_STREAM };
