// The database side of /db, /queries, /fortunes and /updates
// (apps/CONTRACT.md): a node-postgres (pg) Pool to DATABASE_URL. pg's pool
// connects on first use, so the server starts and serves every other endpoint
// without a database; those four then throw Unavailable, answered with 503.
// DATABASE_POOL_SIZE (default 8, the manifest's db_pool knob) is the app's
// connection count: with THREADS cluster workers each gets its share, rounded
// up. Statements are named, so pg prepares each once per connection.
'use strict';

const { Pool } = require('pg');

const WORLD_ROWS = 10000;
const MAX_QUERIES = 500;

const SELECT_WORLD = { name: 'world', text: 'SELECT id, randomnumber FROM world WHERE id = $1' };
const SELECT_FORTUNES = { name: 'fortunes', text: 'SELECT id, message FROM fortune' };
// One statement for the whole batch: the ids and numbers travel as two arrays.
const UPDATE_WORLDS = {
  name: 'update',
  text:
    'UPDATE world SET randomnumber = new.randomnumber' +
    ' FROM UNNEST($1::int[], $2::int[]) AS new(id, randomnumber) WHERE world.id = new.id',
};
const CONNECT_TIMEOUT_MS = 5000;

class Unavailable extends Error {}

// The first `queries` parameter clamped to 1..500; missing, empty or not a
// decimal integer means 1.
function queryCount(search) {
  const text = new URLSearchParams(search).get('queries') ?? '';
  if (!/^[+-]?[0-9]+$/.test(text)) return 1;
  return Math.min(Math.max(Number(text), 1), MAX_QUERIES);
}

// Gives worlds[i] the number numbers[i] and returns the batch to write: each
// id once, ascending (concurrent batches lock rows in one order and cannot
// deadlock). An id drawn twice keeps its last number, in the table and in
// every answered copy, so the answer is what a read-back finds.
function planUpdates(worlds, numbers) {
  const last = new Map(worlds.map((w, i) => [w.id, numbers[i]]));
  for (const w of worlds) w.randomNumber = last.get(w.id);
  const ids = [...last.keys()].sort((a, b) => a - b);
  return { ids, numbers: ids.map((id) => last.get(id)) };
}

function poolSize(env) {
  const total = Number(env.DATABASE_POOL_SIZE || 8);
  const workers = Number(env.THREADS || 1);
  return Math.max(1, Math.ceil(total / workers));
}

const randomId = () => 1 + Math.floor(Math.random() * WORLD_ROWS);

class Database {
  constructor(env) {
    this.pool = null;
    if (!env.DATABASE_URL) return;
    this.pool = new Pool({
      connectionString: env.DATABASE_URL,
      max: poolSize(env),
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    // An idle connection the server closed: the pool drops it and the next
    // request makes a new one; without a listener the process would exit.
    this.pool.on('error', (err) => console.error(`node: database: ${err.message}`));
  }

  // Runs work(client) on a pooled connection; any failure becomes Unavailable.
  async with(work) {
    if (!this.pool) throw new Unavailable('no database: DATABASE_URL is unset');
    let client;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw new Unavailable(`database: ${err.message}`);
    }
    try {
      const result = await work(client);
      client.release();
      return result;
    } catch (err) {
      client.release(err); // a connection that failed is closed, not reused
      throw new Unavailable(`database: ${err.message}`);
    }
  }

  randomWorlds(count) {
    return this.with((client) => readWorlds(client, count));
  }

  fortunes() {
    return this.with(async (client) => (await client.query(SELECT_FORTUNES)).rows);
  }

  updateWorlds(count) {
    return this.with(async (client) => {
      const worlds = await readWorlds(client, count);
      const batch = planUpdates(worlds, worlds.map(randomId));
      await client.query({ ...UPDATE_WORLDS, values: [batch.ids, batch.numbers] });
      return worlds;
    });
  }
}

async function readWorlds(client, count) {
  const worlds = [];
  for (let i = 0; i < count; i++) {
    const { rows } = await client.query({ ...SELECT_WORLD, values: [randomId()] });
    worlds.push({ id: rows[0].id, randomNumber: rows[0].randomnumber });
  }
  return worlds;
}

module.exports = { Database, Unavailable, queryCount, planUpdates, poolSize };
