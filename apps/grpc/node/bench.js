// The Bench service of contracts/grpc/bench.proto, as apps/CONTRACT.md
// ("gRPC") defines its answers: unary echoes the text and adds the two
// numbers, stream sends the number of replies asked for, pausing when the
// HTTP/2 stream's buffer is full (write() returns false) rather than queueing
// every reply in memory. Both answer DEADLINE_EXCEEDED once the call's
// deadline (grpc-timeout, call.getDeadline()) has passed; grpc-js answers
// UNIMPLEMENTED for unknown methods and INTERNAL for a message that does not
// decode. The .proto is loaded at start-up by @grpc/proto-loader (no code
// generation), from its one declaration.
'use strict';

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO = path.join(__dirname, '../../../contracts/grpc/bench.proto');
// The largest count a Stream call may ask for (the contract's).
const MAX_STREAM = 100000;

// int64 fields as JavaScript numbers: a sum of two int32 is exact in a double.
const definition = protoLoader.loadSync(PROTO, { longs: Number, defaults: true });
const bench = grpc.loadPackageDefinition(definition).stampede.bench.v1;

// grpc-js gives the deadline as a Date or as milliseconds since the epoch
// (the server's own parse of grpc-timeout), Infinity when there is none.
function expired(call) {
  const deadline = call.getDeadline();
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(ms) && Date.now() >= ms;
}

const deadlineExceeded = { code: grpc.status.DEADLINE_EXCEEDED, details: 'deadline exceeded' };

function unary(call, callback) {
  if (expired(call)) return callback(deadlineExceeded);
  const { text, a, b } = call.request;
  callback(null, { text, sum: a + b, seq: 0 });
}

function stream(call) {
  const { text, count } = call.request;
  if (count < 0 || count > MAX_STREAM) {
    call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: `count ${count} is outside 0..${MAX_STREAM}` });
    return;
  }
  if (expired(call)) {
    call.emit('error', deadlineExceeded);
    return;
  }
  let seq = 1;
  let cancelled = false;
  call.on('cancelled', () => { cancelled = true; });
  const send = () => {
    while (!cancelled && seq <= count) {
      if (expired(call)) {
        call.emit('error', deadlineExceeded);
        return;
      }
      const more = call.write({ text, sum: 0, seq });
      seq += 1;
      if (!more) {
        call.once('drain', send);
        return;
      }
    }
    if (!cancelled) call.end();
  };
  send();
}

// A grpc-js server with the Bench service, not yet bound.
function newServer() {
  const server = new grpc.Server();
  server.addService(bench.Bench.service, { unary, stream });
  return server;
}

module.exports = { newServer, unary, stream, bench, MAX_STREAM };
