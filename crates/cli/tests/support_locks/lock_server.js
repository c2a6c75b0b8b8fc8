// A Node.js server that serialises every request on one lock. JavaScript
// runs on one thread per isolate, so a Node server can only block a thread
// on a lock where threads share memory: worker_threads over a
// SharedArrayBuffer, guarded by a mutex made of Atomics (compareExchange to
// take it, Atomics.wait to sleep while another worker holds it, which is a
// futex wait, Atomics.notify to wake one waiter). That is the lock such a
// pool really uses to guard shared state (a shared cache or counter table),
// and the only one in Node whose waiters are threads blocked in the kernel:
// an async mutex (a promise queue) keeps the waiters as callbacks on the
// event loop, with no thread blocked at all. The main thread accepts the
// requests and hands each to the next of four workers, which takes the
// lock, holds it across a blocking wait of HOLD_US microseconds (a
// synchronous call to a slow backend made under the lock; Atomics.wait with
// a timeout is Node's synchronous sleep) and answers.
//
// Usage: PORT=8080 HOLD_US=2000 node lock_server.js <marker>
'use strict';
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');

if (isMainThread) {
  const http = require('node:http');
  const shared = new SharedArrayBuffer(4);
  const hold = Number(process.env.HOLD_US || 2000);
  const workers = [];
  const pending = new Map();
  let next = 0;
  let id = 0;
  for (let i = 0; i < 4; i++) {
    const w = new Worker(__filename, { workerData: { shared, hold } });
    w.on('message', ({ id, value }) => {
      const res = pending.get(id);
      pending.delete(id);
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(String(value));
    });
    workers.push(w);
  }
  http
    .createServer((req, res) => {
      req.resume();
      id += 1;
      pending.set(id, res);
      workers[next].postMessage(id);
      next = (next + 1) % workers.length;
    })
    .listen(Number(process.env.PORT), '127.0.0.1');
  process.on('SIGTERM', () => process.exit(0));
} else {
  const lock = new Int32Array(workerData.shared);
  const holdMs = workerData.hold / 1000;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  let x = 88172645463325252n & 0xffffffffn;
  // Drepper's futex mutex ("Futexes Are Tricky", mutex 2): 0 free, 1 held,
  // 2 held with waiters.
  const acquire = () => {
    let c = Atomics.compareExchange(lock, 0, 0, 1);
    if (c === 0) return;
    if (c !== 2) c = Atomics.exchange(lock, 0, 2);
    while (c !== 0) {
      Atomics.wait(lock, 0, 2);
      c = Atomics.exchange(lock, 0, 2);
    }
  };
  const release = () => {
    if (Atomics.exchange(lock, 0, 0) === 2) Atomics.notify(lock, 0, 1);
  };
  parentPort.on('message', (id) => {
    acquire();
    Atomics.wait(sleeper, 0, 0, holdMs);
    x = (x * 6364136223846793005n + 1n) & 0xffffffffn;
    const value = Number(x % 10n);
    release();
    parentPort.postMessage({ id, value });
  });
}
