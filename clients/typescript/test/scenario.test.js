// Runs the cross-client scenario (clients/scenario/scenario.json, its
// format in clients/scenario/README.md) through this client against a
// fresh local server: the Go and Python clients run the same steps.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, repoRoot } from './helpers/server.js';
import { routeTable, recordingFetch } from './helpers/routes.js';
import { Client, OcylessError } from '../src/index.js';

const file = process.env.OCYLESS_SCENARIO ?? join(repoRoot, 'clients/scenario/scenario.json');

/** @typedef {import('../src/client.js').Client} C */

/**
 * Each op: the arguments it takes (required ones marked with !) and the
 * call, whose result is the scenario's JSON.
 * @type {Record<string, [string[], (c: C, a: any) => Promise<unknown>]>}
 */
const ops = {
  health: [[], async (c) => { await c.health(); return null; }],
  version: [[], (c) => c.version()],
  openapi: [[], (c) => c.openapi()],
  info: [[], (c) => c.info()],
  list_queues: [[], (c) => c.listQueues()],
  put_queue: [['queue!', 'settings!'], (c, a) => c.putQueue(a.queue, a.settings)],
  get_queue: [['queue!'], (c, a) => c.getQueue(a.queue)],
  patch_queue: [['queue!', 'patch!'], async (c, a) => { await c.patchQueue(a.queue, a.patch); return null; }],
  delete_queue: [['queue!'], async (c, a) => { await c.deleteQueue(a.queue); return null; }],
  queue_size: [['queue!'], (c, a) => c.queueSize(a.queue)],
  queue_job_ids: [['queue!'], (c, a) => c.queueJobIds(a.queue)],
  create_job: [['queue!', 'job!'], (c, a) => c.createJob(a.queue, a.job)],
  create_jobs: [['queue!', 'jobs!'], (c, a) => c.createJobs(a.queue, a.jobs)],
  get_job: [['id!', 'fields'], (c, a) => c.getJob(a.id, { fields: a.fields })],
  wait_job: [['id!', 'wait!', 'fields'], (c, a) => c.waitJob(a.id, a.wait, { fields: a.fields })],
  create_and_wait: [['queue!', 'job!', 'wait!', 'fields'], (c, a) => c.createAndWait(a.queue, a.job, a.wait, { fields: a.fields })],
  job_status: [['id!'], (c, a) => c.jobStatus(a.id)],
  job_output: [['id!'], (c, a) => c.jobOutput(a.id)],
  set_job_output: [['id!', 'attempt', 'output!'], async (c, a) => { await c.setJobOutput(a.id, a.output, { attempt: a.attempt }); return null; }],
  heartbeat: [['id!', 'attempt'], async (c, a) => { await c.heartbeat(a.id, { attempt: a.attempt }); return null; }],
  delete_job: [['id!'], async (c, a) => { await c.deleteJob(a.id); return null; }],
  retry_job: [['id!', 'run_at', 'delay'], (c, a) => c.retryJob(a.id, { run_at: a.run_at, delay: a.delay })],
  job_ids_by_tag: [['tag!'], (c, a) => c.jobIdsByTag(a.tag)],
  take: [['queue!', 'worker', 'count', 'wait'], (c, a) => c.take(a.queue, { worker: a.worker, count: a.count, wait: a.wait })],
  take_from: [['queues!', 'order', 'worker', 'count', 'wait'],
    (c, a) => c.takeFrom(a.queues, { order: a.order, worker: a.worker, count: a.count, wait: a.wait })],
  update_job: [['id!', 'attempt', 'update!', 'take'], async (c, a) => {
    const r = await c.updateJob(a.id, a.update, { attempt: a.attempt, take: a.take });
    return { next_id: r.nextId ?? null, taken: a.take ? r.taken : null };
  }],
  complete: [['id!', 'attempt', 'output!'], async (c, a) => {
    await c.complete(a.id, a.output ?? undefined, { attempt: a.attempt });
    return null;
  }],
  fail: [['id!', 'attempt', 'error', 'no_retry', 'retry_in', 'retry_at'], async (c, a) => {
    await c.fail(a.id, { error: a.error, permanent: a.no_retry, retryIn: a.retry_in, retryAt: a.retry_at }, { attempt: a.attempt });
    return null;
  }],
  cancel: [['id!'], async (c, a) => { await c.cancel(a.id); return null; }],
  requeue: [['id!'], async (c, a) => { await c.requeue(a.id); return null; }],
  list_jobs: [['status', 'tag', 'key', 'worker', 'tracked', 'fields', 'limit', 'cursor'], (c, a) => c.listJobs(a)],
  list_queue_jobs: [['queue!', 'status', 'tag', 'key', 'worker', 'tracked', 'fields', 'limit', 'cursor'],
    (c, a) => { const { queue, ...o } = a; return c.listQueueJobs(queue, o); }],
  failures: [[], (c) => c.failures()],
  failure_jobs: [['group!', 'limit', 'cursor', 'fields'], (c, a) => c.failureJobs(a.group, a)],
  retry_failures: [['group!', 'limit', 'queue'], async (c, a) => ({ retried: await c.retryFailures(a.group, { limit: a.limit, queue: a.queue }) })],
  workers: [[], (c) => c.workers()],
  worker_jobs: [['name!'], (c, a) => c.workerJobs(a.name)],
  queue_stats: [['queue!', 'date'], (c, a) => c.queueStats(a.queue, { date: a.date })],
  put_schedule: [['queue!', 'id!', 'schedule!'], (c, a) => c.putSchedule(a.queue, a.id, a.schedule)],
  get_schedule: [['queue!', 'id!'], (c, a) => c.getSchedule(a.queue, a.id)],
  list_schedules: [['queue!'], (c, a) => c.listSchedules(a.queue)],
  delete_schedule: [['queue!', 'id!'], async (c, a) => { await c.deleteSchedule(a.queue, a.id); return null; }],
  update_jobs: [['items!'], (c, a) => c.updateJobs(a.items)],
  update_jobs_and_take: [['items!', 'queue!', 'worker', 'count', 'wait'],
    (c, a) => c.updateJobsAndTake(a.items, { queue: a.queue, worker: a.worker, count: a.count, wait: a.wait })],
  heartbeat_jobs: [['items!'], (c, a) => c.heartbeatJobs(a.items)],
};

/**
 * Replaces ${name} variables: a whole-string one by the value, one inside
 * a longer string by its text.
 * @param {unknown} v
 * @param {Record<string, unknown>} vars
 * @returns {any}
 */
export function substitute(v, vars) {
  if (typeof v === 'string') {
    const whole = /^\$\{(\w+)\}$/.exec(v);
    const get = (/** @type {string} */ name) => {
      if (!(name in vars)) throw new Error(`variable ${name} was not captured`);
      return vars[name];
    };
    if (whole) return get(whole[1]);
    return v.replace(/\$\{(\w+)\}/g, (_, name) => String(get(name)));
  }
  if (Array.isArray(v)) return v.map((x) => substitute(x, vars));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, vars)]));
  return v;
}

/**
 * Why actual does not match expect, or null when it does (the format's
 * matching rules).
 * @param {unknown} expect
 * @param {unknown} actual
 * @returns {string | null}
 */
export function mismatch(expect, actual, path = '$') {
  if (expect === '$any') return null;
  if (expect === '$present') return actual === null || actual === undefined ? `${path}: want a value, got ${JSON.stringify(actual)}` : null;
  if (actual === undefined) actual = null;
  if (Array.isArray(expect)) {
    if (!Array.isArray(actual)) return `${path}: want an array, got ${JSON.stringify(actual)}`;
    if (actual.length !== expect.length) return `${path}: want ${expect.length} elements, got ${actual.length}: ${JSON.stringify(actual)}`;
    for (let i = 0; i < expect.length; i++) {
      const m = mismatch(expect[i], actual[i], `${path}[${i}]`);
      if (m) return m;
    }
    return null;
  }
  if (expect && typeof expect === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return `${path}: want an object, got ${JSON.stringify(actual)}`;
    for (const [k, e] of Object.entries(expect)) {
      const m = mismatch(e, /** @type {Record<string, unknown>} */ (actual)[k], `${path}.${k}`);
      if (m) return m;
    }
    return null;
  }
  return expect === actual ? null : `${path}: want ${JSON.stringify(expect)}, got ${JSON.stringify(actual)}`;
}

/**
 * @param {unknown} v
 * @param {string} path dot-separated keys and indexes
 */
function at(v, path) {
  let cur = /** @type {any} */ (v);
  for (const k of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !(k in cur)) throw new Error(`capture path ${path}: no ${k} in ${JSON.stringify(cur)}`);
    cur = cur[k];
  }
  return cur;
}

const present = existsSync(file);

test('the cross-client scenario runs through the TypeScript client', {
  skip: !present && process.env.CI !== 'true' ? `${file} is not in this checkout` : false,
}, async () => {
  assert.ok(present, `${file} is missing`);
  const scenario = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(scenario.version, 1, 'this runner reads version 1 of the format');
  const server = await startServer();
  try {
    const table = routeTable();
    const seen = new Set();
    const c = new Client(server.url, { fetch: recordingFetch(table, seen) });
    /** @type {Record<string, unknown>} */
    const vars = {};
    for (const [i, step] of scenario.steps.entries()) {
      const label = `step ${i + 1} "${step.name}" (${step.op})`;
      const op = ops[step.op];
      assert.ok(op, `${label}: unknown op`);
      const args = substitute(step.args ?? {}, vars);
      const known = op[0].map((a) => a.replace('!', ''));
      for (const k of Object.keys(args)) assert.ok(known.includes(k), `${label}: unknown argument ${k}`);
      for (const k of op[0].filter((a) => a.endsWith('!'))) assert.ok(k.slice(0, -1) in args, `${label}: missing argument ${k}`);
      assert.ok(('expect' in step) !== ('error' in step), `${label}: give expect or error`);
      /** @type {unknown} */
      let result;
      /** @type {unknown} */
      let failure;
      try {
        result = await op[1](c, args);
      } catch (err) {
        failure = err;
      }
      if ('error' in step) {
        const want = substitute(step.error, vars);
        assert.ok(failure instanceof OcylessError, `${label}: want an error ${JSON.stringify(want)}, got ${failure ?? JSON.stringify(result)}`);
        assert.equal(failure.status, want.status, `${label}: ${failure.message}`);
        if ('message' in want) assert.equal(failure.body, want.message, label);
        if ('stale' in want) assert.equal(failure.isStaleAttempt, want.stale, `${label}: isStaleAttempt`);
        continue;
      }
      if (failure) assert.fail(`${label}: ${failure}`);
      const m = mismatch(substitute(step.expect, vars), result);
      assert.equal(m, null, `${label}: ${m}`);
      for (const [name, path] of Object.entries(step.capture ?? {})) vars[name] = at(result, String(path));
    }
    // The scenario reaches every route a client calls (not the dashboard page).
    const missing = table.filter((r) => !seen.has(r.name) && r.name !== 'dashboard').map((r) => r.name);
    assert.deepEqual(missing, [], 'routes the scenario never reached');
  } finally {
    await server.stop();
  }
});

test('scenario matching follows the format', () => {
  assert.equal(mismatch({ a: 1 }, { a: 1.0, b: 2 }), null);
  assert.equal(mismatch({ a: null }, {}), null);
  assert.match(String(mismatch({ a: '$present' }, {})), /want a value/);
  assert.equal(mismatch({ a: '$any' }, {}), null);
  assert.match(String(mismatch([1], [1, 2])), /want 1 elements/);
  assert.match(String(mismatch('x', 'y')), /want "x"/);
  assert.deepEqual(substitute({ id: '${a}', m: 'Job ${a} x' }, { a: 7 }), { id: 7, m: 'Job 7 x' });
  assert.throws(() => substitute('${b}', {}), /not captured/);
});
