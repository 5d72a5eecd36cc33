// A lifecycle per route, against the real local server: every route of
// shared/httpapi/routes.go is called through the client (checked at the end).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './helpers/server.js';
import { routeTable, recordingFetch } from './helpers/routes.js';
import { Client, OcylessError, isNotFound, isConflict, isBadRequest, isStaleAttempt, parseDuration } from '../src/index.js';

const table = routeTable();
const seen = new Set();
/** @type {{ method: string, path: string }[]} */
const unknown = [];
/** @type {Awaited<ReturnType<typeof startServer>>} */
let server;
/** @type {Client} */
let c;

before(async () => {
  server = await startServer();
  c = new Client(server.url, { fetch: recordingFetch(table, seen, unknown) });
});
after(async () => { await server?.stop(); });

/** @param {() => Promise<unknown>} fn @param {number} status */
async function refused(fn, status, text = '') {
  await assert.rejects(fn, (err) => {
    assert.ok(err instanceof OcylessError, String(err));
    assert.equal(err.status, status, err.message);
    if (text) assert.match(err.body, new RegExp(text));
    return true;
  });
}

test('server routes: health, version, info, openapi, dashboard', { timeout: 60_000 }, async () => {
  assert.deepEqual(await c.health(), { status: 'healthy' });
  assert.equal(await c.version(), '0.8.0');
  const info = await c.info();
  assert.ok(info.queues && info.statistics && typeof info.statistics.total_jobs_created === 'number');
  const doc = await c.openapi();
  assert.match(doc.openapi, /^3\.1/);
  assert.ok(doc.paths['/queue/{name}/job']);
  assert.match(await c.dashboard(), /<html/i);
});

test('queue routes: put, get, patch, list, size, job_ids, stats, delete', { timeout: 60_000 }, async () => {
  assert.deepEqual(await c.putQueue('q-life', { timeout: 90_000, retries: 2, retry_delays: ['1s', 2000] }), { created: true });
  assert.deepEqual(await c.putQueue('q-life', { timeout: '1m 30s', retries: 2 }), { created: false });
  let q = await c.getQueue('q-life');
  assert.equal(q.timeout, '1m 30s');
  assert.equal(q.retries, 2);
  assert.deepEqual(q.retry_delays, []);
  await c.patchQueue('q-life', { paused: true, concurrency: 5, rate_limit: { per_second: 10, burst: 2 } });
  q = await c.getQueue('q-life');
  assert.equal(q.paused, true);
  assert.equal(q.concurrency, 5);
  assert.deepEqual(q.rate_limit, { per_second: 10, burst: 2 });
  await c.patchQueue('q-life', { paused: false, rate_limit: null });
  q = await c.getQueue('q-life');
  assert.equal(q.paused, false);
  assert.equal(q.rate_limit, undefined);
  assert.ok((await c.listQueues()).includes('q-life'));
  assert.equal(await c.queueSize('q-life'), 0);
  await c.createJob('q-life', { input: 1 });
  assert.equal(await c.queueSize('q-life'), 1);
  const ids = await c.queueJobIds('q-life');
  assert.equal(ids.queued.length, 1);
  const stats = await c.queueStats('q-life');
  assert.equal(stats.created, 1);
  assert.equal(stats.wait.histogram.length, 172);
  assert.equal((await c.queueStats('q-life', { date: '2020-01-01' })).created, 0);
  await c.deleteQueue('q-life');
  await refused(() => c.getQueue('q-life'), 404, "Queue 'q-life' does not exist");
  await refused(() => c.deleteQueue('q-life'), 404);
  await refused(() => c.patchQueue('q-life', { paused: true }), 404);
  await refused(() => c.putQueue('bad name', {}), 400, 'Invalid queue name');
  await assert.rejects(() => c.getQueue('..'), /cannot be sent/);
  await assert.rejects(() => c.queueSize('.'), /cannot be sent/);
});

test('job routes: create, get, status, output, heartbeat, complete, tag, delete', { timeout: 60_000 }, async () => {
  await c.putQueue('q-jobs', { heartbeat_timeout: '30s' });
  const created = await c.createJob('q-jobs', { input: { n: 21 }, tags: ['t-life'], priority: 5, key: 'k1', tracked: true });
  assert.equal(created.existing, false);
  const again = await c.createJob('q-jobs', { input: { n: 22 }, key: 'k1' });
  assert.deepEqual(again, { id: created.id, existing: true });
  await refused(() => c.createJob('q-jobs', { key: 'k1', on_conflict: 'error' }), 409, `already exists: ${created.id}`);
  const job = await c.getJob(created.id);
  assert.equal(job.status, 'queued');
  assert.deepEqual(job.input, { n: 21 });
  assert.equal(job.priority, 5);
  assert.equal(job.key, 'k1');
  assert.deepEqual(await c.getJob(created.id, { fields: ['status', 'attempt'] }), { status: 'queued', attempt: 0 });
  await refused(() => c.getJob(created.id, { fields: ['nope'] }), 400);
  assert.equal(await c.jobStatus(created.id), 'queued');
  assert.deepEqual(await c.jobIdsByTag('t-life'), [created.id]);
  await refused(() => c.setJobOutput(created.id, { p: 1 }), 409, 'Can only set output for running jobs');

  const taken = await c.takeOne('q-jobs', { worker: 'w-life' });
  assert.ok(taken);
  assert.deepEqual(taken, { id: created.id, input: { n: 21 }, attempt: 1, queue: 'q-jobs' });
  await c.heartbeat(taken.id, { attempt: 1 });
  await c.setJobOutput(taken.id, { progress: 50 }, { attempt: 1 });
  assert.deepEqual(await c.jobOutput(taken.id), { progress: 50 });
  await refused(() => c.heartbeat(taken.id, { attempt: 2 }), 409, 'attempt 2 is not current');
  assert.deepEqual(await c.workerJobs('w-life'), { running: [taken.id], timed_out: [] });
  assert.ok((await c.workers()).some((w) => w.name === 'w-life' && w.running === 1));
  await refused(() => c.workerJobs('w-nobody'), 404, "Worker 'w-nobody' does not exist");
  await c.complete(taken.id, { done: true }, { attempt: 1 });
  assert.deepEqual(await c.jobOutput(taken.id), { done: true });
  const ended = await c.getJob(taken.id, { fields: ['status', 'ended', 'history'] });
  assert.equal(ended.status, 'completed');
  assert.equal(ended.history?.[0].worker, 'w-life');
  await refused(() => c.complete(taken.id, null, { attempt: 1 }), 409, 'Cannot change status from completed to completed');
  await c.deleteJob(taken.id);
  await refused(() => c.getJob(taken.id), 404, `Job with ID ${taken.id} does not exist`);
  await refused(() => c.deleteJob(taken.id), 404);
  assert.equal(await c.takeOne('q-jobs'), null);
});

test('take routes: count, several queues, complete-and-take, batch create', { timeout: 60_000 }, async () => {
  await c.putQueue('q-a', {});
  await c.putQueue('q-b', {});
  const ids = await c.createJobs('q-a', [{ input: 'a1' }, { input: 'a2' }, { input: 'a3' }]);
  assert.equal(ids.length, 3);
  await refused(() => c.createJobs('q-a', [{ input: 1 }, { priority: 10_000_000 }]), 400, 'jobs\\[1\\]');
  const [b1] = await c.createJobs('q-b', [{ input: 'b1', priority: 1 }]);
  const two = await c.take('q-a', { count: 2, worker: 'w-take' });
  assert.deepEqual(two.map((j) => j.id), ids.slice(0, 2));
  const next = await c.completeAndTake(two[0].id, 'ok', 'q-a', { attempt: two[0].attempt, worker: 'w-take' });
  assert.equal(next?.id, ids[2]);
  const fromB = await c.takeFrom(['q-b', 'q-a'], { order: 'ordered', worker: 'w-take' });
  assert.deepEqual(fromB.map((j) => [j.id, j.queue, j.input]), [[b1, 'q-b', 'b1']]);
  assert.deepEqual(await c.takeFrom(['q-a', 'q-b'], { wait: 100 }), []);
  await refused(() => c.takeFrom(['q-missing']), 404);
  const started = Date.now();
  assert.deepEqual(await c.take('q-a', { wait: 1000 }), []);
  assert.ok(Date.now() - started >= 900, 'a long poll waits');
  // a long poll answers as soon as a job comes
  const waiting = c.takeOne('q-a', { wait: 10_000, worker: 'w-take' });
  await new Promise((r) => setTimeout(r, 200));
  const { id: late } = await c.createJob('q-a', { input: 'late' });
  assert.equal((await waiting)?.id, late);
  // a completion with next creates the follow-up job
  const r = await c.updateJob(late, { status: 'completed', next: { queue: 'q-b', input: 'follow', delay: 60_000 } });
  assert.ok(r.nextId && r.nextId > late);
  assert.equal(await c.jobStatus(r.nextId), 'scheduled');
  // a pending job changes in place
  await c.updateJob(r.nextId, { priority: 7, run_at: new Date(Date.now() + 3_600_000) });
  assert.equal((await c.getJob(r.nextId, { fields: ['priority'] })).priority, 7);
  await c.cancel(r.nextId);
  assert.equal(await c.jobStatus(r.nextId), 'cancelled');
  await c.requeue(r.nextId);
  assert.equal(await c.jobStatus(r.nextId), 'scheduled', 'a requeued job keeps its run_at');
  // an aborted long poll rejects with the signal's reason
  await c.putQueue('q-idle', {});
  const ac = new AbortController();
  const poll = c.take('q-idle', { wait: 20_000, signal: ac.signal }).catch((e) => e);
  setTimeout(() => ac.abort(new Error('stop polling')), 100);
  assert.equal((await poll).message, 'stop polling');
});

test('failure routes: fail with group, failures, failure jobs, retry failures, retry job', { timeout: 60_000 }, async () => {
  await c.putQueue('q-fail', { retries: 1 });
  const { id } = await c.createJob('q-fail', { input: 'x' });
  let t = await c.takeOne('q-fail', { worker: 'w-fail' });
  assert.ok(t);
  await c.fail(t.id, { error: { group: 'io', message: 'disk on fire' }, retryIn: 0 }, { attempt: t.attempt });
  t = await c.takeOne('q-fail', { worker: 'w-fail', wait: 5000 });
  assert.equal(t?.attempt, 2);
  assert.ok(t);
  await c.fail(t.id, { error: { group: 'io', message: 'still' }, permanent: true }, { attempt: t.attempt });
  const job = await c.getJob(id, { fields: ['status', 'error', 'history'] });
  assert.equal(job.status, 'failed');
  assert.deepEqual(job.error, { group: 'io', message: 'still' });
  assert.equal(job.history?.length, 2);
  assert.equal((await c.failures()).io, 1);
  const page = await c.failureJobs('io', { limit: 10 });
  assert.equal(page.total, 1);
  assert.equal(page.jobs[0].id, id);
  const all = [];
  for await (const j of c.allFailureJobs('io', { limit: 1 })) all.push(j.id);
  assert.deepEqual(all, [id]);
  assert.deepEqual(await c.failureJobs('no-such-group'), { total: 0, jobs: [], next_cursor: null });
  assert.equal(await c.retryFailures('io', { limit: 10, queue: 'q-fail' }), 1);
  assert.equal(await c.jobStatus(id), 'queued');
  await refused(() => c.retryFailures('io', { queue: 'q-missing' }), 404);
  // explicit retry of a running job
  const { id: id2 } = await c.createJob('q-fail', { input: 'y', retries: 3 });
  await c.deleteJob(id);
  t = await c.takeOne('q-fail');
  assert.equal(t?.id, id2);
  assert.deepEqual(await c.retryJob(id2, { delay: 60_000 }), { status: 'scheduled', retries_attempted: 1 });
  await refused(() => c.retryJob(id2), 409);
});

test('listing routes: list jobs, list queue jobs, paging', { timeout: 60_000 }, async () => {
  await c.putQueue('q-list', {});
  const ids = await c.createJobs('q-list', Array.from({ length: 5 }, (_, i) => ({ input: i, tags: ['t-list'], tracked: i % 2 === 0 })));
  const page = await c.listQueueJobs('q-list', { status: 'queued', limit: 2, fields: ['id', 'input'] });
  assert.deepEqual(page.jobs, [{ id: ids[0], input: 0 }, { id: ids[1], input: 1 }]);
  assert.ok(page.next_cursor);
  const every = [];
  for await (const j of c.allJobs('q-list', { limit: 2, fields: ['id'] })) every.push(j.id);
  assert.deepEqual(every, ids);
  const tracked = await c.listQueueJobs('q-list', { tracked: true, fields: ['id'] });
  assert.deepEqual(tracked.jobs.map((j) => j.id), [ids[0], ids[2], ids[4]]);
  const across = [];
  for await (const j of c.allJobs(null, { tag: 't-list', limit: 3 })) across.push(j.id);
  assert.deepEqual(across, ids);
  await refused(() => c.listJobs({ key: 'x' }), 400);
  await refused(() => c.listJobs({ cursor: 'garbage' }), 400, 'Invalid cursor');
});

test('schedule routes: put, get, list, delete', { timeout: 60_000 }, async () => {
  await c.putQueue('q-sched', {});
  assert.deepEqual(await c.putSchedule('q-sched', 'nightly', { cron: '0 3 * * *', job: { input: { report: true }, timeout: 60_000 } }), { created: true });
  assert.deepEqual(await c.putSchedule('q-sched', 'nightly', { every: 3_600_000, job: { input: 1 } }), { created: false });
  const s = await c.getSchedule('q-sched', 'nightly');
  assert.equal(s.id, 'nightly');
  assert.equal(s.every, '1h');
  assert.ok(s.next_run);
  assert.deepEqual((await c.listSchedules('q-sched')).map((x) => x.id), ['nightly']);
  await refused(() => c.putSchedule('q-sched', 'bad', { cron: 'nope', job: {} }), 400, 'Invalid cron');
  await c.deleteSchedule('q-sched', 'nightly');
  await refused(() => c.getSchedule('q-sched', 'nightly'), 404, "Schedule 'nightly' of queue 'q-sched' does not exist");
});

test('fencing: a stale attempt is refused and changes nothing', { timeout: 60_000 }, async () => {
  await c.putQueue('q-fence', { retries: 1 });
  const { id } = await c.createJob('q-fence', { input: 1 });
  const first = await c.takeOne('q-fence', { worker: 'w1' });
  assert.ok(first);
  await c.retryJob(id); // as a timeout would: the job goes back and is taken again
  const second = await c.takeOne('q-fence', { worker: 'w2' });
  assert.equal(second?.attempt, 2);
  await assert.rejects(() => c.complete(id, 'stale', { attempt: first.attempt }), (e) => isStaleAttempt(e) && isConflict(e));
  await assert.rejects(() => c.setJobOutput(id, 'stale', { attempt: first.attempt }), isStaleAttempt);
  assert.equal(await c.jobStatus(id), 'running');
  assert.equal(await c.jobOutput(id), null);
  assert.ok(!isNotFound(new Error('x')) && !isBadRequest(null));
});

test('durations round-trip with the server', { timeout: 60_000 }, async () => {
  await c.putQueue('q-dur', { timeout: 2 * 86_400_000 + 3_600_000 + 1000, expires_after: 0 });
  const q = await c.getQueue('q-dur');
  assert.equal(q.timeout, '2days 1h 1s');
  assert.equal(parseDuration(q.timeout), 2 * 86_400_000 + 3_600_000 + 1000);
  assert.equal(q.expires_after, '0s');
});

test('batch routes: report and take in one request, batch heartbeats', { timeout: 60_000 }, async () => {
  await c.putQueue('q-batch', {});
  const ids = await c.createJobs('q-batch', [{ input: 1 }, { input: 2 }, { input: 3 }]);
  const taken = await c.take('q-batch', { count: 2, worker: 'w-batch' });
  assert.deepEqual(taken.map((j) => j.id), ids.slice(0, 2));
  const beats = await c.heartbeatJobs(taken.map((j) => ({ id: j.id, attempt: j.attempt })));
  assert.deepEqual(beats.map((b) => b.status), [204, 204]);
  const { results, jobs } = await c.updateJobsAndTake(
    [{ id: taken[0].id, attempt: taken[0].attempt, status: 'completed' }], { queue: 'q-batch', count: 5, worker: 'w-batch' });
  assert.deepEqual(results.map((r) => [r.id, r.status]), [[taken[0].id, 204]]);
  assert.deepEqual(jobs.map((j) => j.id), [ids[2]]);
  const done = await c.updateJobs([
    { id: taken[1].id, attempt: taken[1].attempt, status: 'completed' },
    { id: taken[1].id, attempt: taken[1].attempt + 1, status: 'completed' },
  ]);
  assert.deepEqual(done.map((r) => r.status), [204, 409]);
  assert.equal(await c.jobStatus(taken[1].id), 'completed');
});

test('every route of the route table was called', { skip: false }, () => {
  const missing = table.filter((r) => !seen.has(r.name)).map((r) => `${r.method} ${r.pattern} (${r.name})`);
  assert.deepEqual(missing, [], `routes never called: ${missing.join(', ')}`);
  assert.deepEqual(unknown, [], 'requests that match no route');
});
