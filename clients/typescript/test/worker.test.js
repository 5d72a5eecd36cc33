// The worker against the real local server: 200 jobs with 10-way
// concurrency, a handler that throws, a job that times out (the stale
// worker's report refused with 409), shutdown mid-job, AbortSignal.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './helpers/server.js';
import { Client, Worker, permanent, withGroup, retryIn, JobLostError, ShutdownError, isStaleAttempt } from '../src/index.js';

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
 * Polls cond until it holds, or fails after ms.
 * @param {() => Promise<boolean> | boolean} cond
 */
async function until(cond, ms = 10_000, what = 'condition') {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A promise and its resolver. */
function deferred() {
  /** @type {(v?: any) => void} */
  let resolve = () => {};
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

test('a worker processes 200 jobs with 10-way concurrency', { timeout: 60_000 }, async () => {
  await c.putQueue('w-many', {});
  const ids = await c.createJobs('w-many', Array.from({ length: 200 }, (_, i) => ({ input: { n: i } })));
  let running = 0;
  let most = 0;
  /** @type {Map<number, unknown>} */
  const finished = new Map();
  const all = deferred();
  const w = new Worker(c, async (job) => {
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, 5 + (job.input.n % 7)));
    running--;
    return { double: job.input.n * 2 };
  }, {
    queues: ['w-many'], concurrency: 10, name: 'w-many-1', shutdownSignals: [],
    onFinish: (job, err) => {
      finished.set(job.id, err);
      if (finished.size === 200) all.resolve();
    },
  });
  const run = w.run();
  await all.promise;
  w.stop();
  await run;
  assert.equal(finished.size, 200);
  assert.deepEqual([...finished.values()].filter((e) => e !== null), []);
  assert.equal(most, 10, 'ten handlers ran at once');
  const page = await c.listQueueJobs('w-many', { status: 'completed', limit: 1000, fields: ['id', 'output', 'worker', 'attempt'] });
  assert.equal(page.jobs.length, 200);
  for (const j of page.jobs) {
    const n = ids.indexOf(j.id);
    assert.deepEqual(j.output, { double: n * 2 });
    assert.equal(j.worker, 'w-many-1');
    assert.equal(j.attempt, 1);
  }
});

test('a handler that throws fails its job: retried by policy, then in its group; permanent at once', { timeout: 60_000 }, async () => {
  await c.putQueue('w-throw', { retries: 1, retry_delays: ['0s'] });
  const { id: flaky } = await c.createJob('w-throw', { input: 'flaky' });
  const { id: bad } = await c.createJob('w-throw', { input: 'bad' });
  const { id: boom } = await c.createJob('w-throw', { input: 'boom' });
  /** @type {unknown[]} */
  const errors = [];
  const done = deferred();
  let n = 0;
  const w = new Worker(c, async (job) => {
    if (job.input === 'flaky' && job.attempt === 1) throw retryIn(new Error('try again'), 0);
    if (job.input === 'flaky') return 'ok at last';
    if (job.input === 'bad') throw withGroup(permanent(new TypeError('bad input')), 'validation');
    throw new Error('boom');
  }, {
    queues: ['w-throw'], concurrency: 2, shutdownSignals: [], heartbeatInterval: -1,
    onFinish: (job, err) => { errors.push(err); if (++n === 5) done.resolve(); },
  });
  const run = w.run();
  await done.promise; // flaky twice, bad once, boom twice (one retry)
  w.stop();
  await run;
  assert.equal(errors.filter((e) => e === null).length, 1);
  const f = await c.getJob(flaky, { fields: ['status', 'output', 'history'] });
  assert.equal(f.status, 'completed');
  assert.equal(f.output, 'ok at last');
  assert.equal(f.history?.[0].status, 'failed');
  assert.equal(f.history?.[0].error?.group, 'failed');
  assert.match(String(f.history?.[0].error?.message), /^Error: try again/);
  const b = await c.getJob(bad, { fields: ['status', 'error', 'retries_attempted'] });
  assert.equal(b.status, 'failed');
  assert.equal(b.error?.group, 'validation');
  assert.match(String(b.error?.message), /TypeError: bad input/);
  assert.equal(b.retries_attempted, 0, 'a permanent failure uses no retry');
  const x = await c.getJob(boom, { fields: ['status', 'error', 'retries_attempted'] });
  assert.equal(x.status, 'failed');
  assert.equal(x.error?.group, 'failed');
  assert.equal(x.retries_attempted, 1);
  assert.deepEqual((await c.failureJobs('validation', { fields: ['id'] })).jobs, [{ id: bad }]);
});

test('a job that times out: the stale worker is refused with 409 and its result dropped', { timeout: 60_000 }, async () => {
  await c.putQueue('w-timeout', { timeout: '1s', retries: 1, retry_delays: ['0s'] });
  const { id } = await c.createJob('w-timeout', { input: 'slow' });
  // The stale worker: no heartbeats, its handler outlives the timeout.
  const released = deferred();
  const staleStarted = deferred();
  const staleOutcome = deferred();
  const stale = new Worker(c, async () => {
    staleStarted.resolve();
    await released.promise;
    return 'too late';
  }, { queues: ['w-timeout'], heartbeatInterval: -1, shutdownSignals: [], name: 'stale', onFinish: (_j, err) => staleOutcome.resolve(err) });
  const staleRun = stale.run();
  // Stopped once its handler runs (not merely once the server handed the
  // job over: a take cut short in flight would leave the job to its timeout).
  await staleStarted.promise;
  stale.stop(); // takes nothing more; its handler still runs
  await until(async () => (await c.jobStatus(id)) !== 'running', 10_000, 'the timeout');
  // Another worker takes the retry (attempt 2) and holds it.
  const second = await c.takeOne('w-timeout', { worker: 'fresh', wait: 10_000 });
  assert.equal(second?.attempt, 2);
  released.resolve();
  const err = await staleOutcome.promise;
  assert.ok(err instanceof JobLostError, String(err));
  assert.ok(isStaleAttempt(err.cause), String(err.cause));
  assert.match(String(/** @type {Error} */ (err.cause).message), /409 Conflict: Job \d+ attempt 1 is not current/);
  await staleRun;
  assert.equal(await c.jobStatus(id), 'running', 'the newer attempt is untouched');
  assert.equal(await c.jobOutput(id), null);
  await c.complete(id, 'fresh', { attempt: 2 });
  const h = await c.getJob(id, { fields: ['history'] });
  assert.deepEqual(h.history?.map((a) => [a.attempt, a.worker, a.status]), [[1, 'stale', 'timed_out'], [2, 'fresh', 'completed']]);
});

test('heartbeats keep a long job alive; a refused heartbeat aborts the handler with JobLostError', { timeout: 60_000 }, async () => {
  await c.putQueue('w-hb', { heartbeat_timeout: '1s', timeout: '0s' });
  const { id } = await c.createJob('w-hb', { input: 1 });
  const outcome = deferred();
  /** @type {AbortSignal | undefined} */
  let seen;
  const w = new Worker(c, async (job) => {
    seen = job.signal;
    await new Promise((r) => setTimeout(r, 2500)); // over twice the heartbeat_timeout
    return 'alive';
  }, { queues: ['w-hb'], shutdownSignals: [], onFinish: (_j, err) => outcome.resolve(err) });
  const run = w.run();
  assert.equal(await outcome.promise, null);
  assert.equal(await c.jobStatus(id), 'completed');
  assert.equal(seen?.aborted, false);
  w.stop();
  await run;
  // Now a job cancelled while it runs: the next heartbeat is refused.
  const { id: id2 } = await c.createJob('w-hb', { input: 2 });
  const lost = deferred();
  const w2 = new Worker(c, async (job) => {
    await new Promise((resolve) => job.signal.addEventListener('abort', resolve, { once: true }));
    lost.resolve(job.signal.reason);
    return 'dropped';
  }, { queues: ['w-hb'], shutdownSignals: [], onFinish: () => {} });
  const run2 = w2.run();
  await until(async () => (await c.jobStatus(id2)) === 'running', 5000, 'the take');
  await c.cancel(id2);
  const reason = await lost.promise;
  assert.ok(reason instanceof JobLostError, String(reason));
  w2.stop();
  await run2;
  assert.equal(await c.jobStatus(id2), 'cancelled');
  assert.equal(await c.jobOutput(id2), null);
});

test('shutdown mid-job: a handler that finishes within the grace period completes; one that does not is released', { timeout: 60_000 }, async () => {
  await c.putQueue('w-stop', { retries: 1 });
  const { id: quick } = await c.createJob('w-stop', { input: 'quick' });
  const { id: stuck } = await c.createJob('w-stop', { input: 'stuck' });
  const started = { quick: deferred(), stuck: deferred() };
  /** @type {unknown} */
  let stuckReason;
  /** @type {Map<number, unknown>} */
  const outcomes = new Map();
  const ac = new AbortController();
  const w = new Worker(c, async (job) => {
    started[/** @type {'quick' | 'stuck'} */ (job.input)].resolve();
    if (job.input === 'quick') {
      await new Promise((r) => setTimeout(r, 300));
      return 'finished during the grace period';
    }
    await new Promise((resolve) => job.signal.addEventListener('abort', resolve, { once: true }));
    stuckReason = job.signal.reason;
    return 'dropped';
  }, {
    queues: ['w-stop'], concurrency: 2, shutdownGrace: 1000, shutdownSignals: [], heartbeatInterval: -1,
    onFinish: (job, err) => outcomes.set(job.id, err),
  });
  const run = w.run({ signal: ac.signal });
  await Promise.all([started.quick.promise, started.stuck.promise]);
  const t0 = Date.now();
  ac.abort();
  await run;
  const took = Date.now() - t0;
  assert.ok(took >= 900 && took < 5000, `run returned after the grace period (${took}ms)`);
  assert.equal(outcomes.get(quick), null);
  assert.equal(await c.jobStatus(quick), 'completed');
  assert.ok(stuckReason instanceof ShutdownError, String(stuckReason));
  assert.ok(outcomes.get(stuck) instanceof ShutdownError);
  const j = await c.getJob(stuck, { fields: ['history', 'retries_attempted'] });
  assert.equal(j.history?.[0].status, 'failed');
  assert.equal(j.history?.[0].error?.group, 'worker_shutdown');
  // Released with a retry due at once: another worker takes it.
  const again = await c.takeOne('w-stop', { wait: 5000 });
  assert.equal(again?.id, stuck);
  assert.equal(again?.attempt, 2);
});

test('a worker over several queues takes in order and names itself on the jobs', { timeout: 60_000 }, async () => {
  await c.putQueue('w-hi', {});
  await c.putQueue('w-lo', {});
  const { id: lo } = await c.createJob('w-lo', { input: 'lo' });
  const { id: hi } = await c.createJob('w-hi', { input: 'hi' });
  /** @type {string[]} */
  const order = [];
  const done = deferred();
  const w = new Worker(c, (job) => { order.push(job.queue); }, {
    queues: ['w-hi', 'w-lo'], shutdownSignals: [], name: 'multi',
    onFinish: () => { if (order.length === 2) done.resolve(); },
  });
  const run = w.run();
  await done.promise;
  w.stop();
  await run;
  assert.deepEqual(order, ['w-hi', 'w-lo']);
  assert.equal((await c.getJob(hi, { fields: ['worker'] })).worker, 'multi');
  assert.equal(await c.jobStatus(lo), 'completed');
});

test('worker options are checked', () => {
  assert.throws(() => new Worker(c, async () => {}, { queues: [] }), /no queue/);
  assert.throws(() => new Worker(c, async () => {}, { queues: ['q'], wait: 30_000 }), /over the server's 20s/);
  assert.throws(() => new Worker(c, async () => {}, { queues: ['q'], name: 'a\nb' }), /printable/);
  assert.match(new Worker(c, async () => {}, { queues: ['q'] }).name, /-\d+-[0-9a-f]{6}$/);
});
