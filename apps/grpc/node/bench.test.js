// The Bench service over a real loopback connection (port 0) with grpc-js's
// client: the answer is computed from the request, a stream sends exactly the
// count asked, a count out of range is INVALID_ARGUMENT, an unknown method
// UNIMPLEMENTED; and, given a call whose deadline has passed, both handlers
// answer DEADLINE_EXCEEDED (over the wire grpc-js's client would not send a
// call already past its deadline, so the server's side is tested where it
// lives); a stream whose deadline passes while its reader is slow ends with
// DEADLINE_EXCEEDED in its trailers, read by node:http2 (grpc-js's client
// would report its own deadline whatever the server sent).
//   node --test apps/grpc/node/
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { EventEmitter } = require('node:events');
const http2 = require('node:http2');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { newServer, unary, stream, bench, MAX_STREAM } = require('./bench');

async function withServer(body) {
  const server = newServer();
  const port = await new Promise((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  try {
    await body(port);
  } finally {
    server.forceShutdown();
  }
}

const withClient = (body) => withServer(async (port) => {
  const client = new bench.Bench(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  try {
    await body(client);
  } finally {
    client.close();
  }
});

const soon = () => ({ deadline: Date.now() + 10000 });

function collect(call) {
  return new Promise((resolve, reject) => {
    const replies = [];
    call.on('data', (r) => replies.push(r));
    call.on('error', reject);
    call.on('end', () => resolve(replies));
  });
}

test('unary answer is computed from the request', () => withClient(async (client) => {
  for (const [text, a, b] of [['hello', 2, 3], ['', 2147483647, 2147483647], ['négatif', -2147483648, -1]]) {
    const reply = await new Promise((resolve, reject) => {
      client.unary({ text, a, b }, soon(), (err, r) => (err ? reject(err) : resolve(r)));
    });
    assert.deepEqual(reply, { text, sum: a + b, seq: 0 });
  }
}));

test('stream sends the count asked', () => withClient(async (client) => {
  for (const count of [0, 1, 1000]) {
    const replies = await collect(client.stream({ text: 's', count }, soon()));
    assert.equal(replies.length, count);
    replies.forEach((r, i) => assert.deepEqual(r, { text: 's', sum: 0, seq: i + 1 }));
  }
}));

test('stream count out of range is INVALID_ARGUMENT', () => withClient(async (client) => {
  for (const count of [-1, MAX_STREAM + 1]) {
    await assert.rejects(collect(client.stream({ count }, soon())), { code: grpc.status.INVALID_ARGUMENT });
  }
}));

test('unknown method is UNIMPLEMENTED', () => withClient(async (client) => {
  const identity = (x) => x;
  await assert.rejects(new Promise((resolve, reject) => {
    client.makeUnaryRequest('/stampede.bench.v1.Bench/Nope', identity, identity, Buffer.alloc(0), soon(),
      (err, r) => (err ? reject(err) : resolve(r)));
  }), { code: grpc.status.UNIMPLEMENTED });
}));

test('an expired deadline is DEADLINE_EXCEEDED', () => {
  const past = new Date(Date.now() - 1000);
  let answer;
  unary({ request: { text: '', a: 1, b: 2 }, getDeadline: () => past }, (err, reply) => { answer = { err, reply }; });
  assert.equal(answer.err.code, grpc.status.DEADLINE_EXCEEDED);
  assert.equal(answer.reply, undefined);
  const call = Object.assign(new EventEmitter(), {
    request: { text: '', count: 5 },
    getDeadline: () => past,
    written: 0,
    write() { this.written += 1; return true; },
    end() { this.ended = true; },
  });
  let error;
  call.on('error', (e) => { error = e; });
  stream(call);
  assert.equal(error.code, grpc.status.DEADLINE_EXCEEDED);
  assert.equal(call.written, 0);
  assert.equal(call.ended, undefined);
});

// The regression: grpc-js's deadline timer ended the HTTP/2 stream while
// replies were still queued in the call, and the call stayed open with
// neither trailers nor a reset. The reader takes nothing until well past the
// deadline, so the server's flow-control window is full when it passes.
test('stream deadline passing while the reader is slow ends DEADLINE_EXCEEDED', () => withServer(async (port) => {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  try {
    const message = bench.Bench.service.Stream.requestSerialize({ text: 'slow reader', count: MAX_STREAM });
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(message.length, 1);
    const req = session.request({
      ':method': 'POST', ':path': '/stampede.bench.v1.Bench/Stream',
      'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': '200m',
    });
    req.pause();
    req.end(Buffer.concat([prefix, message]));
    const trailers = new Promise((resolve, reject) => {
      req.on('trailers', resolve);
      req.on('error', reject);
      req.on('close', () => reject(new Error(`stream closed without trailers (code ${req.rstCode})`)));
      setTimeout(() => reject(new Error('no trailers 5 s after the 200 ms deadline')), 5000).unref();
    });
    // Part of the scenario, not a wait for a state: read nothing for twice the deadline.
    setTimeout(() => req.resume(), 400);
    const got = await trailers;
    assert.equal(got['grpc-status'], String(grpc.status.DEADLINE_EXCEEDED));
  } finally {
    session.destroy();
  }
}));

// Server reflection (grpc.reflection.v1), as grpcurl and `stampede load
// --grpc` without --proto ask for it: the services it lists name Bench.
test('reflection lists stampede.bench.v1.Bench', () => withServer(async (port) => {
  const proto = require.resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto');
  const loaded = grpc.loadPackageDefinition(protoLoader.loadSync(proto));
  const client = new loaded.grpc.reflection.v1.ServerReflection(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  try {
    const call = client.ServerReflectionInfo(soon());
    const reply = await new Promise((resolve, reject) => {
      call.on('data', resolve);
      call.on('error', reject);
      call.write({ listServices: '' });
    });
    call.end();
    const names = reply.listServicesResponse.service.map((s) => s.name);
    assert.ok(names.includes('stampede.bench.v1.Bench'), `reflection lists ${names.join(', ')}`);
  } finally {
    client.close();
  }
}));
