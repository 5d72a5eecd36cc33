// Worker processes against the real local server: the README's worker
// example as written, and SIGTERM in the middle of a job. Also the
// README's Lambda signature example.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, symlinkSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './helpers/server.js';
import { Client, signPayload } from '../src/index.js';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
/** @type {Awaited<ReturnType<typeof startServer>>} */
let server;
/** @type {Client} */
let c;
/** A directory where `import 'ocyless'` finds this package, as after npm install of its path. */
let app = '';

before(async () => {
  server = await startServer();
  c = new Client(server.url);
  app = mkdtempSync(join(tmpdir(), 'ocyless-ts-app-'));
  mkdirSync(join(app, 'node_modules'));
  symlinkSync(pkg, join(app, 'node_modules', 'ocyless'), 'dir');
});
after(async () => {
  await server?.stop();
  if (app) rmSync(app, { recursive: true, force: true });
});

/**
 * The code blocks of the README that follow a heading.
 * @param {string} heading
 */
function blocks(heading) {
  const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `README has no "## ${heading}"`);
  const section = readme.slice(start + 1).split(/\n## /)[0];
  return [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/**
 * Runs a script, collecting its output; resolves with the exit code.
 * @param {string} file
 * @param {Record<string, string>} env
 */
function run(file, env) {
  const child = spawn(process.execPath, [file], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const exited = new Promise((r) => child.once('exit', (code, sig) => r(code ?? sig)));
  return { child, exited, out: () => out };
}

/**
 * @param {() => Promise<boolean> | boolean} cond
 */
async function until(cond, ms = 15_000, what = 'condition') {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('the README worker example runs as written and stops on SIGTERM', { timeout: 60_000 }, async () => {
  const [code] = blocks('A worker in 15 lines');
  assert.ok(code.trimEnd().split('\n').length <= 15, 'at most 15 lines');
  const file = join(app, 'worker.mjs');
  writeFileSync(file, code);
  const p = run(file, { OCYLESS_URL: server.url });
  try {
    await until(async () => {
      const ids = await c.queueJobIds('numbers').catch(() => null);
      return !!ids && ids.completed.length === 1;
    }, 15_000, `the example's job to complete; output so far: ${p.out()}`);
    const [id] = (await c.queueJobIds('numbers')).completed;
    assert.deepEqual(await c.jobOutput(id), { double: 42 });
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0, p.out());
    assert.match(p.out(), /worker stopped/);
  } finally {
    p.child.kill('SIGKILL');
  }
});

test('the README wait example runs as written', { timeout: 60_000 }, async () => {
  const [code] = blocks('Waiting for a result');
  await c.putQueue('resize', {});
  const file = join(app, 'wait.mjs');
  writeFileSync(file, code);
  const p = run(file, { OCYLESS_URL: server.url });
  try {
    const j = await c.takeOne('resize', { wait: 20_000 });
    assert.ok(j, `nothing to take; output so far: ${p.out()}`);
    await c.complete(j.id, { url: `/img/${j.input.width}.png` }, { attempt: j.attempt });
    assert.equal(await p.exited, 0, p.out());
    assert.equal(p.out().trim(), 'completed {"url":"/img/640.png"}');
    assert.deepEqual((await c.getJob(j.id, { fields: ['tags'] })).tags, ['thumbnail']);
  } finally {
    p.child.kill('SIGKILL');
  }
});

test('SIGTERM mid-job: the job finishes within the grace period, then the process exits', { timeout: 60_000 }, async () => {
  await c.putQueue('p-finish', {});
  const { id } = await c.createJob('p-finish', { input: { ms: 700 } });
  const p = run(join(pkg, 'test/helpers/sigterm-worker.js'), { OCYLESS_URL: server.url, QUEUE: 'p-finish', GRACE_MS: '10000' });
  try {
    await until(() => p.out().includes(`started ${id}`), 15_000, 'the job to start');
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0, p.out());
    assert.equal(await c.jobStatus(id), 'completed');
    assert.deepEqual(await c.jobOutput(id), { slept: 700 });
  } finally {
    p.child.kill('SIGKILL');
  }
});

test('SIGTERM mid-job: a job still running after the grace period is released for another worker', { timeout: 60_000 }, async () => {
  await c.putQueue('p-release', { retries: 1 });
  const { id } = await c.createJob('p-release', { input: { ms: 60_000 } });
  const p = run(join(pkg, 'test/helpers/sigterm-worker.js'), { OCYLESS_URL: server.url, QUEUE: 'p-release', GRACE_MS: '300' });
  try {
    await until(() => p.out().includes(`started ${id}`), 15_000, 'the job to start');
    const t0 = Date.now();
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0, p.out());
    assert.ok(Date.now() - t0 < 5000, 'the process did not wait for the handler');
    assert.match(p.out(), new RegExp(`aborted ${id}: ShutdownError`));
    const j = await c.getJob(id, { fields: ['status', 'history'] });
    assert.equal(j.history?.[0].status, 'failed');
    assert.equal(j.history?.[0].error?.group, 'worker_shutdown');
    const again = await c.takeOne('p-release', { wait: 5000 });
    assert.equal(again?.id, id);
    assert.equal(again?.attempt, 2);
  } finally {
    p.child.kill('SIGKILL');
  }
});

test('the README Lambda signature example accepts a signed delivery and refuses others', { timeout: 60_000 }, async () => {
  const examples = blocks('Verifying push deliveries');
  const lambda = examples.find((b) => b.includes('export const handler'));
  assert.ok(lambda, 'the Lambda example');
  const file = join(app, 'lambda.mjs');
  writeFileSync(file, lambda);
  process.env.PUSH_SECRET = 'a-secret-of-sixteen-bytes-or-more';
  const { handler } = await import(file);
  const body = JSON.stringify({ id: 1, attempt: 1, queue: 'emails', input: { to: 'a@example.com' } });
  const sig = signPayload(body, process.env.PUSH_SECRET);
  const ok = await handler({ body, isBase64Encoded: false, headers: { 'ocyless-signature': sig } });
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(JSON.parse(ok.body), { sent: 'a@example.com' });
  const b64 = await handler({ body: Buffer.from(body).toString('base64'), isBase64Encoded: true, headers: { 'ocyless-signature': sig } });
  assert.equal(b64.statusCode, 200);
  const bad = await handler({ body: body.replace('a@', 'b@'), isBase64Encoded: false, headers: { 'ocyless-signature': sig } });
  assert.equal(bad.statusCode, 401);
  assert.equal((await handler({ body, isBase64Encoded: false, headers: {} })).statusCode, 401);
});
