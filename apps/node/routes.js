// Maps a request path to its answer, per apps/CONTRACT.md: the routing table,
// the strict reading of path integers, and the headers every response must
// carry. server.js only wires this handler to node:http. The database
// endpoints' work is in database.js and fortunes.js.
'use strict';

const { setTimeout: sleep } = require('node:timers/promises');
const { xorshift, lockedXorshift, countText, fibText, allocate } = require('./work');
const { Database, Unavailable, queryCount } = require('./database');
const { renderFortunes } = require('./fortunes');

const SERVER = 'node';
const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json';
const HTML = 'text/html; charset=utf-8';
const HELLO = 'Hello, World!';

// Each answer is { status, type, body }; the body is a string.
const ok = (type, body) => ({ status: 200, type, body });
const json = (value) => ok(JSON_TYPE, JSON.stringify(value));
const BAD_REQUEST = { status: 400, type: TEXT, body: 'Bad Request' };
const NOT_FOUND = { status: 404, type: TEXT, body: 'Not Found' };

// A path integer is ASCII digits only, leading zeros allowed; a sign, a
// letter, a space or a value above max is a 400. Leading zeros are stripped
// and the length checked first, so a 30-digit number never reaches Number()
// and every value that does is exact. Returns null when the text is invalid.
const DIGITS = /^[0-9]+$/;

function pathInteger(text, max) {
  if (!DIGITS.test(text)) return null;
  const significant = text.replace(/^0+/, '');
  if (significant.length > String(max).length) return null;
  const value = Number(significant);
  return value <= max ? value : null;
}

// Endpoints taking one integer: their maximum and their work. A handler may
// return a promise (for /sleep and /lock).
const PARAMETRIC = {
  values: { max: 2147483647, run: (id) => json(id) },
  cpu: { max: 10000000, run: (n) => json({ result: xorshift(n) }) },
  lock: {
    max: 10000000,
    run: async (n) => json({ result: await lockedXorshift(n) }),
  },
  alloc: { max: 65536, run: (kib) => (allocate(kib), json({ allocated_kib: kib })) },
  sleep: {
    max: 10000,
    run: async (ms) => (await sleep(ms), json({ slept_ms: ms })),
  },
};

// The sequence API: plain text, numbers separated by single spaces.
const API = {
  count: { max: 100000, run: (n) => ok(TEXT, countText(n)) },
  fib: { max: 10000, run: (n) => ok(TEXT, fibText(n)) },
};

function withInteger(endpoint, text) {
  const value = pathInteger(text, endpoint.max);
  return value === null ? BAD_REQUEST : endpoint.run(value);
}

const db = new Database(process.env);

// The database endpoints: each maps the query string to an answer.
const DATABASE = {
  '/db': async () => json((await db.randomWorlds(1))[0]),
  '/queries': async (search) => json(await db.randomWorlds(queryCount(search))),
  '/fortunes': async () => ok(HTML, renderFortunes(await db.fortunes())),
  '/updates': async (search) => json(await db.updateWorlds(queryCount(search))),
};

async function withDatabase(endpoint, search) {
  try {
    return await endpoint(search);
  } catch (err) {
    if (err instanceof Unavailable) return { status: 503, type: TEXT, body: err.message };
    throw err;
  }
}

// The answer for a path and its query string. An empty segment such as
// /values/ or an extra one such as /values/5/6 is an unknown path.
function route(path, search = '') {
  if (Object.hasOwn(DATABASE, path)) return withDatabase(DATABASE[path], search);
  if (path === '/plaintext') return ok(TEXT, HELLO);
  if (path === '/json') return json({ message: HELLO });
  const segments = path.split('/');
  if (segments[0] !== '') return NOT_FOUND;
  if (segments.length === 3 && Object.hasOwn(PARAMETRIC, segments[1]) && segments[2] !== '') {
    return withInteger(PARAMETRIC[segments[1]], segments[2]);
  }
  if (segments.length === 4 && segments[1] === 'api' && Object.hasOwn(API, segments[2]) && segments[3] !== '') {
    return withInteger(API[segments[2]], segments[3]);
  }
  return NOT_FOUND;
}

function send(res, answer) {
  // node:http adds Date (res.sendDate is on by default) on every response.
  res.writeHead(answer.status, {
    Server: SERVER,
    'Content-Type': answer.type,
    'Content-Length': Buffer.byteLength(answer.body),
  });
  res.end(answer.body);
}

// The request listener: only GET (and HEAD, which node:http answers
// without a body) is part of the contract.
async function handle(req, res) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    send(res, { status: 405, type: TEXT, body: 'Method Not Allowed' });
    return;
  }
  const query = req.url.indexOf('?');
  const path = query === -1 ? req.url : req.url.slice(0, query);
  const search = query === -1 ? '' : req.url.slice(query + 1);
  try {
    send(res, await route(path, search));
  } catch (err) {
    console.error(`node: ${req.method} ${req.url}: ${err.stack || err}`);
    if (!res.headersSent) send(res, { status: 500, type: TEXT, body: 'Internal Server Error' });
  }
}

module.exports = { handle, pathInteger, route };
