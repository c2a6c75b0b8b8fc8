// Unit tests for the Node server's work and routing against the vectors and
// rules in apps/CONTRACT.md, runnable without starting a server:
//   node --test apps/node/
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { xorshift, lockedXorshift, countText, fibText, allocate } = require('./work');
process.env.DATABASE_URL = ''; // the 503 test below needs no database
const { pathInteger, route } = require('./routes');
const { queryCount, planUpdates } = require('./database');
const { renderFortunes } = require('./fortunes');

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

test('query count is clamped to 1 through 500', () => {
  const cases = {
    '': 1, 'queries=': 1, 'queries=foo': 1, 'queries=3x': 1, 'queries=-4': 1, 'queries=0': 1,
    'queries=3': 3, 'queries=007': 7, 'queries=500': 500, 'queries=501': 500,
    ['queries=' + '9'.repeat(30)]: 500, 'other=9&queries=20': 20, 'myqueries=20': 1,
  };
  for (const [search, expected] of Object.entries(cases)) assert.equal(queryCount(search), expected, search);
});

test('fortunes are escaped, sorted and joined by the added one', () => {
  const page = renderFortunes([
    { id: 12, message: 'フレームワークのベンチマーク' },
    { id: 1, message: 'fortune: No such file or directory' },
    { id: 11, message: '<script>alert("x & \'y\'");</script>' },
    { id: 4, message: 'A bad random number generator' },
    { id: 13, message: '\u{1F600} (U+1F600, a surrogate pair in UTF-16)' },
    { id: 14, message: '\uFF01 (U+FF01, above every surrogate)' },
  ]);
  assert.ok(page.startsWith('<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>'));
  assert.ok(page.endsWith('</table></body></html>'));
  assert.ok(!page.includes('<script>'));
  assert.ok(page.includes('&lt;script&gt;alert(&quot;x &amp; &#39;y&#39;&quot;);&lt;/script&gt;'));
  const ids = page.split('<tr><td>').slice(1).map((row) => row.split('<')[0]);
  // '<' sorts before capitals, capitals before lower case, ASCII before kana,
  // and U+FF01 before U+1F600, which UTF-16 code-unit order would reverse.
  assert.deepEqual(ids, ['11', '4', '0', '1', '12', '14', '13']);
  assert.ok(page.includes('<td>フレームワークのベンチマーク</td>'));
});

test('an id drawn twice is written once with its last number', () => {
  const worlds = [{ id: 9, randomNumber: 1 }, { id: 2, randomNumber: 1 }, { id: 9, randomNumber: 1 }];
  assert.deepEqual(planUpdates(worlds, [10, 20, 30]), { ids: [2, 9], numbers: [20, 30] });
  assert.deepEqual(worlds.map((w) => w.randomNumber), [30, 20, 30]);
});

test('database endpoints answer 503 without a database', async () => {
  for (const path of ['/db', '/queries', '/fortunes', '/updates']) {
    assert.equal((await route(path, 'queries=3')).status, 503, path);
  }
});
