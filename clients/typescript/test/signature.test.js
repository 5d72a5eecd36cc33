// The push signature check (Ocyless-Signature: t=<unix seconds>,v1=<hex
// HMAC-SHA256 of "<t>.<body>">), against signatures computed here
// independently.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { verifySignature, isValidSignature, signPayload, SignatureError } from '../src/index.js';

const secret = 'a-secret-of-sixteen-bytes-or-more';
const body = '{"id":7,"attempt":1,"queue":"emails","input":{"to":"a@example.com"}}';
const t = 1_764_000_000;
const mac = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

test('a signature made as the contract says verifies, from a string or bytes', () => {
  assert.deepEqual(verifySignature(body, `t=${t},v1=${mac}`, secret, { now: t }), { timestamp: t });
  assert.ok(isValidSignature(Buffer.from(body), `t=${t},v1=${mac}`, Buffer.from(secret), { now: t + 299 }));
  assert.equal(signPayload(body, secret, t), `t=${t},v1=${mac}`);
  assert.ok(isValidSignature(body, ` t=${t} , v1=${'0'.repeat(64)}, v1=${mac.toUpperCase()}`, secret, { now: t }), 'any v1 may match (rotation)');
});

test('a wrong body, secret or signature is refused', () => {
  assert.throws(() => verifySignature(body + ' ', `t=${t},v1=${mac}`, secret, { now: t }), SignatureError);
  assert.throws(() => verifySignature(body, `t=${t},v1=${mac}`, 'another-secret-entirely', { now: t }), /does not match/);
  assert.throws(() => verifySignature(body, `t=${t + 1},v1=${mac}`, secret, { now: t }), /does not match/);
  assert.throws(() => verifySignature(body, `t=${t},v1=${mac.slice(0, 63)}`, secret, { now: t }), /does not match/);
});

test('a signature outside the tolerance window is refused (replays)', () => {
  assert.throws(() => verifySignature(body, `t=${t},v1=${mac}`, secret, { now: t + 301 }), /outside the tolerance/);
  assert.throws(() => verifySignature(body, `t=${t},v1=${mac}`, secret, { now: t - 301 }), /outside the tolerance/);
  assert.ok(isValidSignature(body, `t=${t},v1=${mac}`, secret, { now: t + 3600, tolerance: 3600 }));
  assert.ok(!isValidSignature(body, signPayload(body, secret, Math.floor(Date.now() / 1000) - 1000), secret));
  assert.ok(isValidSignature(body, signPayload(body, secret), secret), 'the clock is the default now');
});

test('malformed headers and a parsed body are refused with a reason', () => {
  assert.throws(() => verifySignature(body, undefined, secret), /no Ocyless-Signature header/);
  assert.throws(() => verifySignature(body, '', secret), /no Ocyless-Signature header/);
  assert.throws(() => verifySignature(body, `v1=${mac}`, secret, { now: t }), /no t=/);
  assert.throws(() => verifySignature(body, `t=abc,v1=${mac}`, secret, { now: t }), /no t=/);
  assert.throws(() => verifySignature(body, `t=${t}`, secret, { now: t }), /no v1/);
  // @ts-expect-error: a parsed body is a mistake the check names
  assert.throws(() => verifySignature(JSON.parse(body), `t=${t},v1=${mac}`, secret, { now: t }), /raw body/);
  assert.throws(() => verifySignature(body, `t=${t},v1=${mac}`, '', { now: t }), /empty secret/);
  assert.equal(isValidSignature(body, 'garbage', secret), false);
});
