// Unit tests for the Node server's work and routing against the vectors and
// rules in apps/CONTRACT.md, runnable without starting a server:
//   node --test apps/node/
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { xorshift, lockedXorshift, countText, fibText, allocate } = require('./work');
const { pathInteger, route } = require('./routes');

const VECTORS = {
  0: '11400714819323198485',
  1: '15860402102123842989',
  2: '7273575876580499574',
  10: '10344392119048899982',
  1000: '6248290529083013365',
  100000: '16046154385989997852',
};

// The same recurrence on BigInt, slow but obviously right.
function reference(iters) {
  const mask = (1n << 64n) - 1n;
  let x = 0x9e3779b97f4a7c15n;
  for (let i = 0; i < iters; i++) {
    x ^= (x << 13n) & mask;
    x ^= x >> 7n;
    x ^= (x << 17n) & mask;
  }
  return x.toString();
}

test('xorshift matches the contract vectors', async () => {
  for (const [iters, expected] of Object.entries(VECTORS)) {
    assert.equal(xorshift(Number(iters)), expected);
    assert.equal(await lockedXorshift(Number(iters)), expected);
  }
});

test('xorshift in 32-bit halves agrees with BigInt', () => {
  for (let iters = 0; iters < 300; iters++) assert.equal(xorshift(iters), reference(iters));
});

test('fib lists F0 to Fn, exact beyond 2^53', () => {
  assert.equal(fibText(0), '0');
  assert.equal(fibText(10), '0 1 1 2 3 5 8 13 21 34 55');
  assert.ok(fibText(90).endsWith(' 1779979416004714189 2880067194370816120'));
  const f4000 = fibText(4000).split(' ');
  assert.equal(f4000.length, 4001);
  assert.equal(f4000[4000].length, 836);
  assert.ok(f4000[4000].endsWith('3025993715274875'));
});

test('count has single spaces and no trailing space', () => {
  assert.equal(countText(0), '');
  assert.equal(countText(5), '1 2 3 4 5');
});

test('allocate makes kib KiB of 256-byte chunks', () => {
  assert.equal(allocate(0), 0);
  assert.equal(allocate(64), 256);
});

test('path integers are digits only, within range', () => {
  assert.equal(pathInteger('007', 10), 7);
  assert.equal(pathInteger('2147483647', 2147483647), 2147483647);
  for (const bad of ['-1', '+1', '1a', ' 1', '1.0', '0x1', '2147483648', '99999999999999999999999', '']) {
    assert.equal(pathInteger(bad, 2147483647), null, bad);
  }
});

test('routes answer 400 and 404 per the contract', async () => {
  assert.equal((await route('/values/5')).body, '5');
  assert.equal((await route('/values/-1')).status, 400);
  assert.equal((await route('/values/')).status, 404);
  assert.equal((await route('/values/5/6')).status, 404);
  assert.equal((await route('/api/count/0')).body, '');
  assert.equal((await route('/api/count/3')).type, 'text/plain; charset=utf-8');
  assert.equal((await route('/api/fib/10001')).status, 400);
  assert.equal((await route('/api/count/100001')).status, 400);
  assert.equal((await route('/api/fib/abc')).status, 400);
  assert.equal((await route('/sleep/0')).body, '{"slept_ms":0}');
});
