// Waiting for a result: waitJob (GET /job/{id}?wait=) and createAndWait
// (POST /queue/{name}/job?wait=), against the real local server and a
// scripted one for what goes on the wire.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { startServer } from './helpers/server.js';
import { Client, OcylessError } from '../src/index.js';

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server;
/** @type {Client} */
let c;

before(async () => {
  server = await startServer();
  c = new Client(server.url);
});
after(async () => { await server?.stop(); });

/**
 * A worker that takes one job of queue (waiting up to 8 s) and completes it
 * with fn(input); resolves to the job's id.
 * @param {string} queue
 * @param {(input: any) => any} fn
 */
async function worker(queue, fn) {
  const j = await c.takeOne(queue, { wait: 8000 });
  if (!j) throw new Error('nothing taken');
  await c.complete(j.id, fn(j.input), { attempt: j.attempt });
  return j.id;
}

/** @param {() => Promise<unknown>} fn @param {number} status */
async function refused(fn, status, text = '') {
  await assert.rejects(fn, (err) => {
    assert.ok(err instanceof OcylessError, String(err));
    assert.equal(err.status, status, err.message);
    if (text) assert.equal(err.body, text);
    return true;
  });
}

test('createAndWait answers the job a worker ended within the wait', { timeout: 60_000 }, async () => {
  await c.putQueue('sum');
  const w = worker('sum', (x) => ({ sum: x[0] + x[1] }));
  const r = await c.createAndWait('sum', { input: [1, 2], tags: ['rpc'] }, 8000);
  assert.equal(await w, r.id);
  assert.equal(r.ended, true);
  assert.deepEqual(r.job, { id: r.id, status: 'completed', output: { sum: 3 }, error: null });
  assert.deepEqual((await c.getJob(r.id, { fields: ['tags'] })).tags, ['rpc']);

  // Fields without the id: the id comes from Location.
  const w2 = worker('sum', (x) => x * 2);
  const r2 = await c.createAndWait('sum', { input: 21 }, '8s', { fields: ['status', 'output'] });
  assert.equal(await w2, r2.id);
  assert.deepEqual(r2, { id: r2.id, ended: true, job: { status: 'completed', output: 42 } });
});

test('createAndWait of a job nobody takes: its id after the wait (202)', { timeout: 60_000 }, async () => {
  await c.putQueue('idle');
  const r = await c.createAndWait('idle', { input: 'x' }, 300, { fields: ['status'] });
  assert.deepEqual(r, { id: r.id, ended: false, job: null });
  assert.equal((await c.getJob(r.id, { fields: ['input'] })).input, 'x');
  assert.equal((await c.createAndWait('idle', {}, -1)).ended, false); // a negative wait is no wait
  assert.equal(await c.queueSize('idle'), 2);

  await refused(() => c.createAndWait('idle', { input: 'z' }, '21s'), 400, 'Invalid wait: must be at most 20s');
  await refused(() => c.createAndWait('idle', { input: 'z' }, 21_000), 400);
  assert.equal(await c.queueSize('idle'), 2, 'a refused create creates nothing');
  await refused(() => c.createAndWait('idle-none', {}, 1000), 404, "Queue 'idle-none' does not exist");
  await assert.rejects(() => c.createAndWait('idle', {}, Number.NaN), RangeError);
});

test('waitJob answers an ending for good, not a failure that will be retried', { timeout: 60_000 }, async () => {
  await c.putQueue('retried', { retries: 1, retry_delays: [] });
  const { id } = await c.createJob('retried', {});

  const j = await c.waitJob(id, 300, { fields: ['status', 'ended'] });
  assert.deepEqual(j, { status: 'queued', ended: false });

  const waiting = c.waitJob(id, 8000, { fields: ['status', 'retries_attempted', 'ended'] });
  let t = await c.takeOne('retried');
  assert.ok(t);
  await c.fail(id, {}, { attempt: t.attempt }); // retried: not an ending
  t = await c.takeOne('retried');
  assert.ok(t);
  await c.fail(id, {}, { attempt: t.attempt }); // failed for good
  assert.deepEqual(await waiting, { status: 'failed', retries_attempted: 1, ended: true });

  // An ended job answers at once, with all its fields when none is named.
  const all = await c.waitJob(id, '20s');
  assert.equal(all.id, id);
  assert.equal(all.queue, 'retried');
  assert.equal(all.status, 'failed');
  assert.equal(all.ended, true);

  await refused(() => c.waitJob(999999, 1000), 404, 'Job with ID 999999 does not exist');
  await refused(() => c.waitJob(id, '21s'), 400);
  // @ts-expect-error: a wait is required
  await assert.rejects(() => c.waitJob(id), TypeError);
});

test('a signal ends a wait in flight', { timeout: 60_000 }, async () => {
  await c.putQueue('cut');
  const { id } = await c.createJob('cut', {});
  /** @type {() => void} */
  let sent = () => {};
  const inFlight = new Promise((r) => { sent = () => r(undefined); });
  const cc = new Client(server.url, {
    fetch: (url, init) => { const p = fetch(url, init); sent(); return p; },
  });
  const ctl = new AbortController();
  const waiting = cc.waitJob(id, '20s', { signal: ctl.signal });
  await inFlight;
  ctl.abort(new Error('enough'));
  await assert.rejects(waiting, /enough/);
  await assert.rejects(() => cc.createAndWait('cut', {}, '20s', { signal: AbortSignal.abort(new Error('never sent')) }), /never sent/);
  assert.equal(await c.queueSize('cut'), 1);
});

test('what a wait sends, and which failures send it again', async () => {
  /** @type {{ method: string, url: string, body: string }[]} */
  const seen = [];
  /** @type {[number, string, Record<string, string>?][]} */
  const answers = [];
  const s = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      const [status, text, headers = {}] = answers.shift() ?? [500, 'no answer left'];
      res.writeHead(status, headers);
      res.end(text);
    });
  });
  await new Promise((r) => s.listen(0, '127.0.0.1', () => r(undefined)));
  try {
    const port = /** @type {import('node:net').AddressInfo} */ (s.address()).port;
    const cc = new Client(`http://127.0.0.1:${port}`, { backoff: 1 });

    answers.push([200, '{"id":7,"status":"running","ended":false}']);
    assert.equal((await cc.waitJob(7, 2500, { fields: ['status', 'ended'] })).ended, false);
    assert.equal(seen.at(-1)?.url, '/job/7?wait=2s+500ms&fields=status%2Cended');
    answers.push([200, '{"id":7}']);
    await cc.waitJob(7, -3);
    assert.equal(seen.at(-1)?.url, '/job/7?wait=0s');

    answers.push([202, '8', { Location: '/job/8' }]);
    assert.deepEqual(await cc.createAndWait('q', { input: { a: 1 }, key: 'k', retry_delays: [1000] }, '5s'),
      { id: 8, ended: false, job: null });
    assert.deepEqual(seen.at(-1), { method: 'POST', url: '/queue/q/job?wait=5s', body: '{"input":{"a":1},"key":"k","retry_delays":["1s"]}' });

    // A wait is a read: sent again after a 503. A create is not.
    seen.length = 0;
    answers.push([503, 'x'], [200, '{"id":1,"status":"completed","ended":true}']);
    assert.equal((await cc.waitJob(1, 1000)).ended, true);
    assert.equal(seen.length, 2);
    answers.push([503, 'x']);
    await assert.rejects(() => cc.createAndWait('q', {}, 1000), (e) => e instanceof OcylessError && e.status === 503);
    assert.equal(seen.length, 3);
    answers.push([429, 'slow down'], [200, '{"id":4,"status":"completed","output":1,"error":null}', { Location: '/job/4' }]);
    assert.deepEqual(await cc.createAndWait('q', {}, 1000), { id: 4, ended: true, job: { id: 4, status: 'completed', output: 1, error: null } });
    assert.equal(seen.length, 5);
  } finally {
    s.closeAllConnections();
    await new Promise((r) => s.close(() => r(undefined)));
  }
});
