// The batch routes of the third API part (PATCH /jobs, PATCH /jobs?take=,
// POST /jobs/heartbeat) through the client and the worker. The server does
// not have them yet: these tests run against a fake that follows the
// contract (test/helpers/fake.js).

import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { FakeServer } from './helpers/fake.js';
import { Client, Worker, JobLostError } from '../src/index.js';

/** @type {FakeServer} */
let fake;
/** @type {Client} */
let c;

beforeEach(async () => {
  fake = new FakeServer();
  c = new Client(await fake.listen(), { backoff: 1 });
});
afterEach(async () => { await fake.close(); });

function deferred() {
  /** @type {(v?: any) => void} */
  let resolve = () => {};
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

test('the client sends the batch routes as the contract has them', { timeout: 60_000 }, async () => {
  const [a, b] = fake.add('q', ['a', 'b']);
  const taken = await c.take('q', { count: 2, worker: 'w' });
  assert.deepEqual(taken.map((t) => [t.id, t.attempt]), [[a, 1], [b, 1]]);
  assert.deepEqual(await c.heartbeatJobs([{ id: a, attempt: 1 }, { id: b, attempt: 2 }]), [
    { id: a, status: 204 }, { id: b, status: 409, error: `Job ${b} attempt 2 is not current` },
  ]);
  assert.deepEqual(fake.requests.at(-1), { method: 'POST', path: '/jobs/heartbeat', query: {}, body: [{ id: a, attempt: 1 }, { id: b, attempt: 2 }] });
  const results = await c.updateJobs([
    { id: a, attempt: 1, status: 'completed', output: { ok: true } },
    { id: b, attempt: 1, status: 'failed', error: { group: 'g', message: 'm' }, retry_in: 1500 },
  ]);
  assert.deepEqual(results, [{ id: a, status: 204 }, { id: b, status: 204 }]);
  assert.deepEqual(fake.requests.at(-1)?.body, [
    { id: a, attempt: 1, status: 'completed', output: { ok: true } },
    { id: b, attempt: 1, status: 'failed', error: { group: 'g', message: 'm' }, retry_in: '1s 500ms' },
  ]);
  const [c1, c2] = fake.add('q', ['c1', 'c2']);
  const [t1] = await c.take('q', { worker: 'w' });
  const r = await c.updateJobsAndTake([{ id: t1.id, attempt: t1.attempt, status: 'completed' }], { queue: 'q', count: 3, worker: 'w', wait: 1000 });
  assert.deepEqual(r, { results: [{ id: c1, status: 204 }], jobs: [{ id: c2, input: 'c2', attempt: 1, queue: 'q' }] });
  assert.deepEqual(fake.requests.at(-1)?.query, { take: 'q', count: '3', worker: 'w', wait: '1s' });
  await assert.rejects(() => c.updateJobs([]), (e) => e.status === 400);
  await assert.rejects(() => c.updateJobsAndTake([{ id: c2, status: 'completed' }], { queue: 'nope' }), (e) => e.status === 404);
});

test('a batch update is not sent again after a 503; a batch heartbeat is', { timeout: 60_000 }, async () => {
  const [a] = fake.add('q', ['a']);
  await c.take('q');
  fake.failBatches.push(503);
  const before = fake.requests.length;
  await assert.rejects(() => c.updateJobs([{ id: a, attempt: 1, status: 'completed' }]), (e) => e.status === 503);
  assert.equal(fake.requests.length - before, 1, 'sent once');
  fake.failHeartbeats.push(503, 502);
  assert.deepEqual(await c.heartbeatJobs([{ id: a, attempt: 1 }]), [{ id: a, status: 204 }]);
  assert.equal(fake.requests.length - before, 4, 'sent three times');
});

test('a batch worker reports with PATCH /jobs?take= and takes the next jobs in the same request', { timeout: 60_000 }, async () => {
  const ids = fake.add('q', Array.from({ length: 60 }, (_, i) => i));
  /** @type {Map<number, unknown>} */
  const outcomes = new Map();
  const all = deferred();
  const w = new Worker(c, async (job) => {
    await new Promise((r) => setTimeout(r, 2 + (Number(job.input) % 5)));
    return Number(job.input) * 10;
  }, {
    queues: ['q'], concurrency: 10, batch: true, shutdownSignals: [], heartbeatInterval: -1, name: 'bw',
    onFinish: (job, err) => { outcomes.set(job.id, err); if (outcomes.size === 60) all.resolve(); },
  });
  const run = w.run();
  await all.promise;
  w.stop();
  await run;
  assert.deepEqual([...outcomes.values()].filter((e) => e !== null), []);
  for (const [i, id] of ids.entries()) {
    assert.equal(fake.jobs.get(id)?.status, 'completed');
    assert.equal(fake.jobs.get(id)?.output, i * 10);
  }
  const reports = fake.requests.filter((r) => r.method === 'PATCH' && r.path === '/jobs');
  const single = fake.requests.filter((r) => r.method === 'PATCH' && r.path.startsWith('/job/'));
  assert.equal(single.length, 0, 'no report went alone');
  assert.equal(reports.flatMap((r) => r.body).length, 60);
  assert.ok(reports.length < 60, `${reports.length} batch requests for 60 reports`);
  assert.ok(reports.some((r) => r.body.length > 1), 'some batch carried several reports');
  for (const r of reports) {
    for (const item of r.body) assert.equal(typeof item.attempt, 'number', 'every report is fenced');
    if (r.query.take) {
      assert.equal(r.query.worker, 'bw');
      assert.ok(Number(r.query.count) >= 1 && Number(r.query.count) <= r.body.length);
    }
  }
  assert.ok(reports.some((r) => r.query.take === 'q'), 'reports take the next jobs');
  const takes = fake.requests.filter((r) => r.method === 'GET');
  assert.ok(takes.some((r) => Number(r.query.count) > 1), 'the long poll takes as many as there are free slots');
});

test('a batch worker sends heartbeats together, and a refused one aborts its handler', { timeout: 60_000 }, async () => {
  const ids = fake.add('q', ['a', 'b', 'c'], '1s');
  const started = [deferred(), deferred(), deferred()];
  /** @type {Map<number, unknown>} */
  const reasons = new Map();
  /** @type {Map<number, unknown>} */
  const outcomes = new Map();
  const done = deferred();
  const w = new Worker(c, async (job) => {
    started[ids.indexOf(job.id)].resolve();
    await new Promise((resolve) => {
      const t = setTimeout(resolve, 1500);
      job.signal.addEventListener('abort', () => { clearTimeout(t); reasons.set(job.id, job.signal.reason); resolve(undefined); }, { once: true });
    });
    return 'done';
  }, {
    queues: ['q'], concurrency: 3, batch: true, shutdownSignals: [],
    onFinish: (job, err) => { outcomes.set(job.id, err); if (outcomes.size === 3) done.resolve(); },
  });
  const run = w.run();
  await Promise.all(started.map((d) => d.promise));
  // Job c is taken again elsewhere (as after a timeout): its attempt moves on.
  /** @type {import('./helpers/fake.js').FakeJob} */ (fake.jobs.get(ids[2])).attempt = 2;
  await done.promise;
  w.stop();
  await run;
  const beats = fake.requests.filter((r) => r.path === '/jobs/heartbeat');
  assert.ok(beats.length >= 1, 'heartbeats were sent');
  assert.ok(beats.some((r) => r.body.length >= 2), `one request carried several heartbeats: ${JSON.stringify(beats.map((r) => r.body))}`);
  assert.equal(fake.requests.filter((r) => r.path.endsWith('/heartbeat') && r.path !== '/jobs/heartbeat').length, 0);
  assert.ok(reasons.get(ids[2]) instanceof JobLostError);
  assert.ok(outcomes.get(ids[2]) instanceof JobLostError);
  assert.equal(fake.jobs.get(ids[2])?.status, 'running', 'the lost job was not reported');
  assert.equal(outcomes.get(ids[0]), null);
  assert.equal(fake.jobs.get(ids[0])?.status, 'completed');
  assert.equal(fake.jobs.get(ids[1])?.status, 'completed');
  assert.ok(/** @type {import('./helpers/fake.js').FakeJob} */ (fake.jobs.get(ids[0])).beats >= 1);
});

test('a batch that answers 503 is reported again job by job, as a repeat', { timeout: 60_000 }, async () => {
  const [a] = fake.add('q', ['a']);
  fake.failBatches.push(503);
  const done = deferred();
  const w = new Worker(c, async () => 'ok', {
    queues: ['q'], batch: true, shutdownSignals: [], heartbeatInterval: -1, onFinish: (_j, err) => done.resolve(err),
  });
  const run = w.run();
  assert.equal(await done.promise, null);
  w.stop();
  await run;
  assert.equal(fake.jobs.get(a)?.status, 'completed');
  const single = fake.requests.filter((r) => r.method === 'PATCH' && r.path === `/job/${a}`);
  assert.equal(single.length, 1);
  assert.deepEqual(single[0].query, { attempt: '1' }, 'a repeat takes nothing');
});

test('a refused batch item fails the lane alone; the job taken for it still runs', { timeout: 60_000 }, async () => {
  const [a, b] = fake.add('q', ['a', 'b']);
  /** @type {Map<number, unknown>} */
  const outcomes = new Map();
  const done = deferred();
  let first = true;
  const w = new Worker(c, async (job) => {
    if (first) {
      first = false;
      // The job is taken again elsewhere while this handler runs.
      /** @type {import('./helpers/fake.js').FakeJob} */ (fake.jobs.get(job.id)).attempt = 9;
    }
    return 'ok';
  }, {
    queues: ['q'], batch: true, shutdownSignals: [], heartbeatInterval: -1,
    onFinish: (job, err) => { outcomes.set(job.id, err); if (outcomes.size === 2) done.resolve(); },
  });
  const run = w.run();
  await done.promise;
  w.stop();
  await run;
  assert.ok(outcomes.get(a) instanceof JobLostError, String(outcomes.get(a)));
  assert.equal(outcomes.get(b), null);
  assert.equal(fake.jobs.get(b)?.status, 'completed');
});

test('a report that answers 503 is sent again, without its take, until it is applied', { timeout: 60_000 }, async () => {
  const [a, b] = fake.add('q', ['a', 'b']);
  fake.failSingles.push(503, 503);
  /** @type {Map<number, unknown>} */
  const outcomes = new Map();
  const done = deferred();
  const w = new Worker(c, async () => 'ok', {
    queues: ['q'], shutdownSignals: [], heartbeatInterval: -1,
    onFinish: (job, err) => { outcomes.set(job.id, err); if (outcomes.size === 2) done.resolve(); },
  });
  const run = w.run();
  await done.promise;
  w.stop();
  await run;
  assert.equal(outcomes.get(a), null);
  assert.equal(outcomes.get(b), null);
  const reports = fake.requests.filter((r) => r.method === 'PATCH' && r.path === `/job/${a}`);
  assert.equal(reports.length, 3);
  assert.equal(reports[0].query.take, 'q', 'the first report takes the next job');
  assert.equal(reports[1].query.take, undefined, 'a repeat takes nothing');
  assert.equal(reports[2].query.take, undefined);
  assert.equal(fake.jobs.get(a)?.status, 'completed');
  assert.equal(fake.jobs.get(b)?.status, 'completed');
});
