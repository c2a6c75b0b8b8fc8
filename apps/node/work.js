// The work behind /cpu, /lock, /api/count, /api/fib and /alloc, kept apart from HTTP so
// each piece can be read against apps/CONTRACT.md on its own. Every function
// here is plain synchronous JavaScript, as a Node user would write it.
'use strict';

// The contract's xorshift runs on an unsigned 64-bit integer, and JS numbers
// are doubles with 53 bits of integer precision. BigInt with
// BigInt.asUintN(64, ...) would be exact but allocates a heap BigInt per
// operation and runs orders of magnitude slower, so the benchmark would
// measure BigInt, not the hot numeric code a Node engineer writes. We keep the
// value as two unsigned 32-bit halves (hi, lo) instead: the 64-bit shift is a
// 32-bit shift of each half plus the bits carried across, `>>> 0` keeps each
// half unsigned, and V8 runs it all in 32-bit registers. Only the final
// answer goes through BigInt, once per request, to print it in decimal.
const SEED_HI = 0x9e3779b9;
const SEED_LO = 0x7f4a7c15;

function xorshift(iters) {
  let hi = SEED_HI;
  let lo = SEED_LO;
  for (let i = 0; i < iters; i++) {
    // x ^= x << 13
    hi = (hi ^ ((hi << 13) | (lo >>> 19))) >>> 0;
    lo = (lo ^ (lo << 13)) >>> 0;
    // x ^= x >> 7 (logical)
    lo = (lo ^ ((lo >>> 7) | (hi << 25))) >>> 0;
    hi = (hi ^ (hi >>> 7)) >>> 0;
    // x ^= x << 17
    hi = (hi ^ ((hi << 17) | (lo >>> 15))) >>> 0;
    lo = (lo ^ (lo << 17)) >>> 0;
  }
  return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
}

// Node runs JavaScript on one thread per process, so nothing ever contends
// for this lock. /lock takes it all the same, as the contract asks: a promise
// chain is the usual async mutex in Node, and waiting on it costs a microtask
// hop per request, which is the honest price of an uncontended lock here.
class Mutex {
  constructor() {
    this.tail = Promise.resolve();
  }

  // Runs fn() once every earlier holder has released, and returns its value.
  async withLock(fn) {
    const previous = this.tail;
    let release;
    this.tail = new Promise((resolve) => {
      release = resolve;
    });
    await previous;
    try {
      return fn();
    } finally {
      release();
    }
  }
}

const processLock = new Mutex();

function lockedXorshift(iters) {
  return processLock.withLock(() => xorshift(iters));
}

// "1 2 … n": decimal, single spaces, nothing after the last number.
function countText(n) {
  return Array.from({ length: n }, (_, i) => i + 1).join(' ');
}

// "F0 F1 … Fn" (n+1 numbers). A JavaScript number is a double, exact only up
// to 2^53 (F78), so the sequence is computed with BigInt, exact at any size.
function fibText(n) {
  const numbers = [];
  let a = 0n;
  let b = 1n;
  for (let i = 0; i <= n; i++) {
    numbers.push(a.toString());
    [a, b] = [b, a + b];
  }
  return numbers.join(' ');
}

// About `kib` KiB as 256-byte Buffers kept in an array until all exist, each
// written so the memory is touched, then dropped for the collector. A
// Buffer's bytes live outside the V8 heap, but each one is a heap object
// with a backing store the collector must track and free: the pressure the
// contract asks for.
const CHUNK_BYTES = 256;

function allocate(kib) {
  const count = (kib * 1024) / CHUNK_BYTES;
  const chunks = [];
  for (let i = 0; i < count; i++) {
    const chunk = Buffer.alloc(CHUNK_BYTES);
    chunk[0] = i & 0xff;
    chunk[CHUNK_BYTES - 1] = i & 0xff;
    chunks.push(chunk);
  }
  return chunks.length;
}

module.exports = { xorshift, lockedXorshift, countText, fibText, allocate };
