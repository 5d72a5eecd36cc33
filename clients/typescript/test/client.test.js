// The client's own rules, against small in-test HTTP servers: which calls
// are sent again after which failures, errors, durations, base URLs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import {
  Client, OcylessError, ConnectionError, isUnavailable, isStaleAttempt, formatDuration, parseDuration, encodeBody,
} from '../src/index.js';

/**
 * A server answering each request with the next of answers (the last one
 * repeats), recording the requests.
 * @param {[number, string?, Record<string, string>?][]} answers
 */
async function scripted(answers) {
  /** @type {{ method: string, url: string, body: string, headers: import('node:http').IncomingHttpHeaders }[]} */
  const seen = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      const [status, text = '', headers = {}] = answers[Math.min(seen.length - 1, answers.length - 1)];
      res.writeHead(status, headers);
      res.end(status === 204 ? undefined : text);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  return {
    url: `http://127.0.0.1:${port}`, seen,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r(undefined)); }),
  };
}

test('reads and PUTs are sent again after a 503; creates, takes, updates and deletes are not', async () => {
  const s = await scripted([[503, 'Failed to connect to Redis: timed out'], [200, '"queued"']]);
  try {
    const c = new Client(s.url, { backoff: 1 });
    assert.equal(await c.jobStatus(1), 'queued');
    assert.equal(s.seen.length, 2);
    for (const call of [
      () => c.createJob('q', { input: 1 }),
      () => c.take('q'),
      () => c.complete(1, 'x', { attempt: 1 }),
      () => c.deleteJob(1),
      () => c.retryJob(1),
      () => c.updateJobs([{ id: 1, status: 'completed' }]),
    ]) {
      s.seen.length = 0;
      await assert.rejects(call, (e) => e instanceof OcylessError && e.status === 503 && isUnavailable(e));
      assert.equal(s.seen.length, 1, `sent once: ${s.seen[0]?.method} ${s.seen[0]?.url}`);
    }
    for (const call of [() => c.heartbeat(1, { attempt: 2 }), () => c.setJobOutput(1, { p: 1 }), () => c.putQueue('q'), () => c.patchQueue('q', { paused: true })]) {
      s.seen.length = 0;
      await call();
      assert.equal(s.seen.length, 2, `sent again: ${s.seen[0]?.method} ${s.seen[0]?.url}`);
    }
  } finally {
    await s.close();
  }
});

test('a 429 is sent again whatever the call, honouring Retry-After; retries stop after the limit', async () => {
  const s = await scripted([[429, '', { 'Retry-After': '1' }], [201, '7', { Location: '/job/7' }]]);
  try {
    const c = new Client(s.url, { backoff: 1 });
    const t0 = Date.now();
    assert.deepEqual(await c.createJob('q', { input: 1 }), { id: 7, existing: false });
    assert.ok(Date.now() - t0 >= 950, 'waited for Retry-After');
    assert.equal(s.seen.length, 2);
  } finally {
    await s.close();
  }
  const always = await scripted([[503, 'down']]);
  try {
    const c = new Client(always.url, { backoff: 1, retries: 2 });
    await assert.rejects(() => c.listQueues(), (e) => e instanceof OcylessError && e.body === 'down');
    assert.equal(always.seen.length, 3);
    const none = new Client(always.url, { retries: 0 });
    always.seen.length = 0;
    await assert.rejects(() => none.listQueues());
    assert.equal(always.seen.length, 1);
  } finally {
    await always.close();
  }
});

test('a connection that fails is a ConnectionError; only idempotent calls go again', async () => {
  const s = await scripted([[200, '[]']]);
  const url = s.url;
  await s.close();
  let calls = 0;
  /** @type {typeof fetch} */
  const counting = (input, init) => { calls++; return fetch(input, init); };
  const c = new Client(url, { backoff: 1, retries: 2, fetch: counting });
  await assert.rejects(() => c.listQueues(), (e) => e instanceof ConnectionError && isUnavailable(e));
  assert.equal(calls, 3);
  calls = 0;
  await assert.rejects(() => c.createJob('q'), ConnectionError);
  assert.equal(calls, 1);
});

test('an abort ends a call and its retries with the signal\'s reason', async () => {
  const s = await scripted([[503, 'down']]);
  try {
    const c = new Client(s.url, { backoff: 10_000 });
    const ac = new AbortController();
    const p = c.listQueues({ signal: ac.signal });
    setTimeout(() => ac.abort(new Error('enough')), 100);
    await assert.rejects(p, /enough/);
    assert.equal(s.seen.length, 1);
  } finally {
    await s.close();
  }
});

test('errors carry the status, the server\'s text and the request; stale attempts are told apart', async () => {
  const s = await scripted([[409, 'Job 5 attempt 1 is not current'], [409, 'Cannot change status from completed to completed'], [503, '{"status":"unhealthy","error":"Failed to connect to Redis: refused"}']]);
  try {
    const c = new Client(`${s.url}/prefix/`, { retries: 0, userAgent: 'test-agent', headers: { 'X-Api-Key': 'k' } });
    const e1 = await c.heartbeat(5, { attempt: 1 }).catch((e) => e);
    assert.ok(e1 instanceof OcylessError);
    assert.equal(e1.message, 'ocyless: PUT /job/5/heartbeat?attempt=1: 409 Conflict: Job 5 attempt 1 is not current');
    assert.ok(e1.isStaleAttempt && isStaleAttempt(e1) && e1.isConflict);
    assert.equal(s.seen[0].url, '/prefix/job/5/heartbeat?attempt=1');
    assert.equal(s.seen[0].headers['user-agent'], 'test-agent');
    assert.equal(s.seen[0].headers['x-api-key'], 'k');
    const e2 = await c.complete(5, null).catch((e) => e);
    assert.ok(e2.isConflict && !e2.isStaleAttempt);
    assert.equal(s.seen[1].body, '{"status":"completed","output":null}');
    assert.equal(s.seen[1].headers['content-type'], 'application/json');
    const e3 = await c.health().catch((e) => e);
    assert.equal(e3.status, 503);
    assert.equal(e3.body, 'Failed to connect to Redis: refused');
  } finally {
    await s.close();
  }
});

test('base URLs, ids and names are checked before anything is sent', async () => {
  assert.throws(() => new Client('ftp://x'), /http/);
  assert.throws(() => new Client('http://x/?a=1'), /no query/);
  assert.throws(() => new Client('nope'), /not a URL/);
  const c = new Client('http://127.0.0.1:1');
  await assert.rejects(() => c.jobStatus(0), /invalid job id/);
  await assert.rejects(() => c.jobStatus(1.5), /invalid job id/);
  await assert.rejects(() => c.heartbeat(1, { attempt: -1 }), /invalid attempt/);
  await assert.rejects(() => c.queueSize('..'), /cannot be sent/);
  await assert.rejects(() => c.takeFrom([]), /no queue/);
});

test('durations: the server\'s grammar both ways', () => {
  assert.equal(formatDuration(0), '0s');
  assert.equal(formatDuration(1500), '1s 500ms');
  assert.equal(formatDuration(5_400_000), '1h 30m');
  assert.equal(formatDuration(86_400_000), '1day');
  assert.equal(formatDuration(2 * 86_400_000 + 61_000), '2days 1m 1s');
  assert.throws(() => formatDuration(-1), /invalid duration/);
  assert.throws(() => formatDuration(NaN), /invalid duration/);
  assert.equal(parseDuration('1h 30m'), 5_400_000);
  assert.equal(parseDuration('14days 10h 17m 36s'), 14 * 86_400_000 + 10 * 3_600_000 + 17 * 60_000 + 36_000);
  assert.equal(parseDuration('1month'), 2_630_016_000);
  assert.equal(parseDuration('250ms'), 250);
  assert.throws(() => parseDuration(''), /invalid duration/);
  assert.throws(() => parseDuration('5 parsecs'), /unit/);
  assert.deepEqual(encodeBody({ timeout: 60_000, retry_delays: [1000, '2m'], run_at: new Date(0), input: { timeout: 5 }, x: undefined, rate_limit: null }), {
    timeout: '1m', retry_delays: ['1s', '2m'], run_at: '1970-01-01T00:00:00.000Z', input: { timeout: 5 }, rate_limit: null,
  });
  assert.deepEqual(encodeBody({ retry_backoff: { min: 1000, max: '1h', factor: 3 } }), { retry_backoff: { min: '1s', max: '1h', factor: 3 } });
  assert.deepEqual(encodeBody({ status: 'completed', next: { queue: 'q', delay: 5000 } }), { status: 'completed', next: { queue: 'q', delay: '5s' } });
});
