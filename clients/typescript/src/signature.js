// Verifying the signature of a push delivery or a callback:
// Ocyless-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">.

import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries the signature (lower case, as Node shows headers). */
export const SIGNATURE_HEADER = 'ocyless-signature';

/** The default tolerance between the signature's time and now, in seconds. */
export const DEFAULT_TOLERANCE = 300;

/** Why a signature was refused. */
export class SignatureError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'SignatureError';
  }
}

/**
 * @typedef {object} VerifyOptions
 * @property {number} [tolerance] seconds the signature's time may be from now, either way (default 300)
 * @property {number} [now] the current time in unix seconds (default: the clock's)
 */

/**
 * Signs body with secret at time t (unix seconds), as the server does:
 * the value of an Ocyless-Signature header. For tests of your handler.
 * @param {string | Uint8Array} body the exact bytes of the request body
 * @param {string | Uint8Array} secret
 * @param {number} [t]
 * @returns {string}
 */
export function signPayload(body, secret, t = Math.floor(Date.now() / 1000)) {
  return `t=${t},v1=${hmac(secret, t, body).toString('hex')}`;
}

/**
 * @param {string | Uint8Array} secret
 * @param {number | string} t
 * @param {string | Uint8Array} body
 */
function hmac(secret, t, body) {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest();
}

/**
 * Verifies a push delivery's or callback's signature, and throws a
 * SignatureError when it does not hold: a missing or malformed header, a
 * time outside the tolerance window (a replayed request), or no v1 value
 * that is the HMAC-SHA256 of "<t>.<body>" under secret (compared in
 * constant time). Several v1 values are accepted (any may match), for a
 * secret being rotated. Pass the raw body, before any JSON parsing: a
 * re-serialised body does not verify.
 * @param {string | Uint8Array} body the exact bytes of the request body
 * @param {string | null | undefined | string[]} header the Ocyless-Signature header's value
 * @param {string | Uint8Array} secret the queue's (or callback's) secret
 * @param {VerifyOptions} [opts]
 * @returns {{ timestamp: number }} the signature's time
 */
export function verifySignature(body, header, secret, opts = {}) {
  if (Array.isArray(header)) header = header.join(',');
  if (typeof header !== 'string' || header === '') throw new SignatureError('no Ocyless-Signature header');
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    throw new TypeError('verifySignature: body must be the raw body, a string or bytes (not a parsed object)');
  }
  if (!secret || secret.length === 0) throw new TypeError('verifySignature: empty secret');
  /** @type {string | undefined} */
  let t;
  /** @type {string[]} */
  const v1 = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't') t = v;
    else if (k === 'v1') v1.push(v);
  }
  if (t === undefined || !/^\d{1,12}$/.test(t)) throw new SignatureError('malformed Ocyless-Signature header: no t=<unix seconds>');
  if (v1.length === 0) throw new SignatureError('malformed Ocyless-Signature header: no v1 signature');
  const ts = Number(t);
  const tolerance = opts.tolerance ?? DEFAULT_TOLERANCE;
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - ts) > tolerance) throw new SignatureError(`signature time ${ts} is outside the tolerance of ${tolerance}s`);
  const want = hmac(secret, t, body);
  let ok = false;
  for (const v of v1) {
    if (!/^[0-9a-fA-F]{64}$/.test(v)) continue;
    // Every candidate is compared, so the time taken tells nothing of which matched.
    if (timingSafeEqual(Buffer.from(v, 'hex'), want)) ok = true;
  }
  if (!ok) throw new SignatureError('signature does not match');
  return { timestamp: ts };
}

/**
 * verifySignature as a boolean.
 * @param {string | Uint8Array} body
 * @param {string | null | undefined | string[]} header
 * @param {string | Uint8Array} secret
 * @param {VerifyOptions} [opts]
 * @returns {boolean}
 */
export function isValidSignature(body, header, secret, opts = {}) {
  try {
    verifySignature(body, header, secret, opts);
    return true;
  } catch (err) {
    if (err instanceof SignatureError) return false;
    throw err;
  }
}
