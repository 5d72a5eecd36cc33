// The client: one typed method per route of the server's route table, plus
// the batch routes of the third API part (PATCH /jobs, POST /jobs/heartbeat).

import { OcylessError, ConnectionError } from './errors.js';
import { durationValue, timeValue } from './durations.js';

/** @typedef {import('./types.js').JsonValue} JsonValue */
/** @typedef {import('./types.js').Job} Job */
/** @typedef {import('./types.js').JobSpec} JobSpec */
/** @typedef {import('./types.js').JobUpdate} JobUpdate */
/** @typedef {import('./types.js').TakenJob} TakenJob */
/** @typedef {import('./types.js').Status} Status */
/** @typedef {import('./durations.js').DurationInput} DurationInput */
/** @typedef {import('./durations.js').TimeInput} TimeInput */

/** The longest long-poll wait the server accepts, in milliseconds. */
export const MAX_WAIT = 20_000;

/** The User-Agent header sent unless ClientOptions.userAgent replaces it. */
export const DEFAULT_USER_AGENT = 'ocyless-typescript-client';

/**
 * @typedef {object} ClientOptions
 * @property {number} [retries] how many times a call is sent again after a failure that is safe to retry (default 3; 0 turns retries off)
 * @property {number} [backoff] the first wait between attempts in ms, doubled per attempt with jitter up to 32 times (default 100)
 * @property {string} [userAgent]
 * @property {Record<string, string>} [headers] sent with every request (a proxy's, an API key's)
 * @property {typeof fetch} [fetch] the fetch to use (default: the global one); the hook for request signing
 */

/**
 * Options every call takes.
 * @typedef {object} CallOptions
 * @property {AbortSignal} [signal] aborts the call (and its retries)
 */

/**
 * @typedef {object} TakeOptions
 * @property {number} [count] how many jobs at most, 1 to 100 (default 1)
 * @property {string} [worker] names the taker: recorded on the job, listed by workers()
 * @property {DurationInput} [wait] long-poll up to this long (at most 20s); 0 answers at once
 * @property {AbortSignal} [signal]
 */

/**
 * @typedef {object} WaitOptions
 * @property {string[]} [fields] the fields of the answer, by the server's names ("status", "output"...)
 * @property {AbortSignal} [signal] aborts the wait (and its retries)
 */

/**
 * The answer of createAndWait.
 * @typedef {object} WaitResult
 * @property {number} id the job's id, also when it did not end within the wait
 * @property {boolean} ended whether it ended for good within the wait
 * @property {Job | null} job when ended, the job's id, status, output and error (or the fields named); null otherwise
 */

/**
 * A low-level request: what request() sends.
 * @typedef {object} RequestOptions
 * @property {Record<string, string | number | boolean | undefined>} [query]
 * @property {unknown} [body] a value sent as JSON (undefined: no body)
 * @property {string} [rawBody] a body sent as it is, with Content-Type application/json
 * @property {boolean} [idempotent] also sent again after a 502, 503, 504 or a failed connection
 * @property {boolean} [allowError] answer a 4xx or 5xx instead of throwing
 * @property {AbortSignal} [signal]
 */

/**
 * A low-level answer.
 * @typedef {object} Response
 * @property {number} status
 * @property {Headers} headers
 * @property {string} text the body as text
 */

/**
 * One path segment, escaped. "." and ".." (valid queue names) cannot be
 * sent through fetch: URL parsing would take them, even escaped, as
 * directory steps and call another route, so they are refused.
 * @param {string} s
 */
export function segment(s) {
  if (typeof s !== 'string' || s === '') throw new TypeError(`ocyless: invalid path segment ${JSON.stringify(s)}`);
  if (s === '.' || s === '..') {
    throw new TypeError(`ocyless: the name ${JSON.stringify(s)} cannot be sent in a URL path through fetch`);
  }
  return encodeURIComponent(s);
}

/** @param {number} id */
function jobPath(id, suffix = '') {
  if (!Number.isSafeInteger(id) || id <= 0) throw new TypeError(`ocyless: invalid job id ${String(id)}`);
  return `/job/${id}${suffix}`;
}

/** @param {number | undefined} attempt */
function attemptQuery(attempt) {
  /** @type {Record<string, number>} */
  const q = {};
  if (attempt === undefined || attempt === 0) return q;
  if (!Number.isSafeInteger(attempt) || attempt < 0) throw new TypeError(`ocyless: invalid attempt ${String(attempt)}`);
  q.attempt = attempt;
  return q;
}

const DURATION_KEYS = ['timeout', 'heartbeat_timeout', 'expires_after', 'delay', 'retry_in', 'every'];
const TIME_KEYS = ['run_at', 'retry_at'];

/**
 * Encodes a body: durations given in milliseconds become the server's
 * strings, Dates RFC 3339; undefined fields are left out.
 * @param {Record<string, any>} obj
 * @returns {Record<string, any>}
 */
export function encodeBody(obj) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined) continue;
    if (v === null) out[k] = null;
    else if (DURATION_KEYS.includes(k)) out[k] = durationValue(v, k);
    else if (TIME_KEYS.includes(k)) out[k] = timeValue(v, k);
    else if (k === 'retry_delays') out[k] = /** @type {DurationInput[]} */ (v).map((d) => durationValue(d, k));
    else if (k === 'retry_backoff') {
      out[k] = { ...v, min: durationValue(v.min, 'retry_backoff.min'), max: durationValue(v.max, 'retry_backoff.max') };
    } else if (k === 'next' || k === 'job') out[k] = encodeBody(v);
    else out[k] = v;
  }
  return out;
}

/** @param {Record<string, string | number | boolean | undefined>} [query] */
function queryString(query) {
  if (!query) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/**
 * @param {number} ms
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<void>}
 */
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => { clearTimeout(t); reject(signal?.reason); };
    const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Reads a take's answer: 204 for none, else an array of take objects or one.
 * @param {Response} res
 * @param {string} where
 * @returns {TakenJob[]}
 */
function takenJobs(res, where) {
  if (res.status === 204 || res.text === '') return [];
  const v = JSON.parse(res.text);
  const jobs = Array.isArray(v) ? v : Array.isArray(v.jobs) ? v.jobs : [v];
  for (const j of jobs) {
    if (!j.attempt || !j.queue) throw new Error(`ocyless: ${where}: take object without attempt or queue: ${res.text.slice(0, 200)}`);
  }
  return jobs;
}

/**
 * ?wait= (and fields=) of a wait: a negative wait is no wait; a string goes
 * as it is (the server checks it, as it checks the 20s bound).
 * @param {DurationInput} wait
 * @param {string[] | undefined} fields
 * @returns {Record<string, string | undefined>}
 */
function waitQuery(wait, fields) {
  if (wait === undefined || wait === null) throw new TypeError('ocyless: a wait is required');
  return {
    wait: durationValue(typeof wait === 'number' ? Math.max(wait, 0) : wait, 'wait'),
    fields: fields?.length ? fields.join(',') : undefined,
  };
}

/**
 * @param {TakeOptions} opts
 * @returns {Record<string, string | number | undefined>}
 */
function takeQuery(opts) {
  const count = opts.count ?? 1;
  if (!Number.isInteger(count) || count < 1) throw new TypeError(`ocyless: invalid count ${String(count)}`);
  return {
    count,
    worker: opts.worker || undefined,
    wait: opts.wait ? durationValue(opts.wait, 'wait') : undefined,
  };
}

/**
 * A client of an ocyless server (or any server of Ocypod 0.8's API).
 *
 * A call is sent again, after a jittered exponential backoff, only when
 * that is safe: after a 429, whatever the call; after a 502, 503 or 504, or
 * a connection that failed, only for reads (every GET but a take) and the
 * PUTs of a queue, a schedule, a heartbeat or an output, PATCH of a queue
 * and the batch heartbeat. Creates, takes, job updates, deletes and
 * retries are sent once: a 503 may have been applied.
 */
export class Client {
  /**
   * @param {string} baseURL such as "http://127.0.0.1:8023" or an API Gateway URL (a path prefix is kept)
   * @param {ClientOptions} [options]
   */
  constructor(baseURL, options = {}) {
    let u;
    try {
      u = new URL(baseURL);
    } catch {
      throw new TypeError(`ocyless: base URL ${JSON.stringify(baseURL)}: not a URL`);
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !u.host) {
      throw new TypeError(`ocyless: base URL ${JSON.stringify(baseURL)}: want http:// or https:// and a host`);
    }
    if (u.search || u.hash) throw new TypeError(`ocyless: base URL ${JSON.stringify(baseURL)}: no query or fragment allowed`);
    const retries = options.retries ?? 3;
    const backoff = options.backoff ?? 100;
    if (!(retries >= 0) || !(backoff >= 0)) throw new RangeError('ocyless: retries and backoff must be >= 0');
    /** @private */ this.base = u.origin + u.pathname.replace(/\/+$/, '');
    /** @private */ this.retries = retries;
    /** @private */ this.backoff = backoff;
    /** @private */ this.headers = { 'User-Agent': options.userAgent ?? DEFAULT_USER_AGENT, ...options.headers };
    /** @private */ this.fetch = options.fetch ?? globalThis.fetch;
  }

  /**
   * Sends one API request, again after failures that are safe to retry,
   * and returns its answer; a 4xx or 5xx throws OcylessError unless
   * allowError. The typed methods are built on it; it serves routes a
   * newer server adds.
   * @param {string} method
   * @param {string} path escaped, such as "/queue/emails/job"
   * @param {RequestOptions} [opts]
   * @returns {Promise<Response>}
   */
  async request(method, path, opts = {}) {
    const where = path + queryString(opts.query);
    const url = this.base + where;
    /** @type {Record<string, string>} */
    const headers = { Accept: 'application/json', ...this.headers };
    let body;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    for (let attempt = 0; ; attempt++) {
      /** @type {Response | undefined} */
      let res;
      /** @type {unknown} */
      let failure;
      try {
        const r = await this.fetch(url, { method, headers, body, signal: opts.signal, redirect: 'manual' });
        res = { status: r.status, headers: r.headers, text: await r.text() };
      } catch (err) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        failure = new ConnectionError(method, where, err);
      }
      let retry = false;
      let wait = 0;
      if (failure) retry = !!opts.idempotent;
      else if (res && res.status === 429) { retry = true; wait = retryAfter(res.headers); }
      else if (res && [502, 503, 504].includes(res.status)) { retry = !!opts.idempotent; wait = retryAfter(res.headers); }
      if (!retry || attempt >= this.retries || opts.signal?.aborted) {
        if (failure || !res) throw failure;
        if (res.status >= 400 && !opts.allowError) throw new OcylessError(res.status, res.text, method, where);
        return res;
      }
      await sleep(Math.max(wait, this.delay(attempt)), opts.signal);
    }
  }

  /**
   * The wait before retry attempt+1: the backoff doubled per attempt,
   * capped at 32 times, the upper half jittered.
   * @private
   * @param {number} attempt
   */
  delay(attempt) {
    const d = Math.min(this.backoff * 2 ** attempt, this.backoff * 32);
    return d / 2 + Math.random() * (d / 2);
  }

  /**
   * An idempotent GET, its JSON answer parsed.
   * @private
   * @param {string} path
   * @param {Record<string, string | number | boolean | undefined>} [query]
   * @param {CallOptions} [opts]
   * @returns {Promise<any>}
   */
  async get(path, query, opts = {}) {
    const res = await this.request('GET', path, { query, idempotent: true, signal: opts.signal });
    return JSON.parse(res.text);
  }

  // ---- Server -----------------------------------------------------------

  /**
   * Checks that the server reaches its Redis (GET /health). A 503 throws
   * an OcylessError whose body is the server's reason.
   * @param {CallOptions} [opts]
   * @returns {Promise<{ status: string }>}
   */
  async health(opts = {}) {
    try {
      return await this.get('/health', undefined, opts);
    } catch (err) {
      if (err instanceof OcylessError && err.status === 503) {
        try {
          const reason = JSON.parse(err.body).error;
          if (typeof reason === 'string' && reason) throw new OcylessError(503, reason, err.method, err.path);
        } catch (e) {
          if (e instanceof OcylessError) throw e;
        }
      }
      throw err;
    }
  }

  /**
   * The job counts of every queue and the global counters (GET /info).
   * @param {CallOptions} [opts]
   * @returns {Promise<import('./types.js').Info>}
   */
  async info(opts = {}) { return this.get('/info', undefined, opts); }

  /**
   * The Ocypod API version the server implements, such as "0.8.0" (GET /info/version).
   * @param {CallOptions} [opts]
   * @returns {Promise<string>}
   */
  async version(opts = {}) { return this.get('/info/version', undefined, opts); }

  /**
   * The server's OpenAPI 3.1 document (GET /openapi.json).
   * @param {CallOptions} [opts]
   * @returns {Promise<Record<string, any>>}
   */
  async openapi(opts = {}) { return this.get('/openapi.json', undefined, opts); }

  /**
   * The operators' page, HTML (GET /ui).
   * @param {CallOptions} [opts]
   * @returns {Promise<string>}
   */
  async dashboard(opts = {}) {
    return (await this.request('GET', '/ui', { idempotent: true, signal: opts.signal })).text;
  }

  // ---- Jobs -------------------------------------------------------------

  /**
   * Creates a job in queue (POST /queue/{name}/job). existing is true when
   * a pending job of the queue held the spec's key: id is that job's, and
   * no job was added. Sent again after a 429 only; to retry it yourself
   * without a second job, give it a key.
   * @param {string} queue
   * @param {JobSpec} [spec]
   * @param {CallOptions} [opts]
   * @returns {Promise<{ id: number, existing: boolean }>}
   */
  async createJob(queue, spec = {}, opts = {}) {
    const res = await this.request('POST', `/queue/${segment(queue)}/job`, { body: encodeBody(spec), signal: opts.signal });
    return { id: JSON.parse(res.text), existing: res.status === 200 };
  }

  /**
   * Creates 1 to 1000 jobs in one request (POST /queue/{name}/jobs) and
   * returns their ids in order. The batch is checked whole: one bad spec
   * is a 400 naming its index and creates nothing.
   * @param {string} queue
   * @param {JobSpec[]} specs
   * @param {CallOptions} [opts]
   * @returns {Promise<number[]>}
   */
  async createJobs(queue, specs, opts = {}) {
    const res = await this.request('POST', `/queue/${segment(queue)}/jobs`, { body: specs.map(encodeBody), signal: opts.signal });
    return JSON.parse(res.text);
  }

  /**
   * A job (GET /job/{id}): all its fields, or only those named (such as
   * "status", "attempt", "history").
   * @param {number} id
   * @param {CallOptions & { fields?: string[] }} [opts]
   * @returns {Promise<Job>}
   */
  async getJob(id, opts = {}) {
    return this.get(jobPath(id), { fields: opts.fields?.length ? opts.fields.join(',') : undefined }, opts);
  }

  /**
   * A job's status (GET /job/{id}/status).
   * @param {number} id
   * @param {CallOptions} [opts]
   * @returns {Promise<Status>}
   */
  async jobStatus(id, opts = {}) { return this.get(jobPath(id, '/status'), undefined, opts); }

  /**
   * A job's output, null when never set (GET /job/{id}/output).
   * @param {number} id
   * @param {CallOptions} [opts]
   * @returns {Promise<JsonValue>}
   */
  async jobOutput(id, opts = {}) { return this.get(jobPath(id, '/output'), undefined, opts); }

  /**
   * Replaces a running job's output (PUT /job/{id}/output). attempt fences
   * the write: a job taken again since is a 409 (isStaleAttempt).
   * @param {number} id
   * @param {JsonValue} output
   * @param {CallOptions & { attempt?: number }} [opts]
   * @returns {Promise<void>}
   */
  async setJobOutput(id, output, opts = {}) {
    await this.request('PUT', jobPath(id, '/output'), {
      query: attemptQuery(opts.attempt), rawBody: JSON.stringify(output ?? null), idempotent: true, signal: opts.signal,
    });
  }

  /**
   * Records a heartbeat of a running job (PUT /job/{id}/heartbeat),
   * fenced by attempt.
   * @param {number} id
   * @param {CallOptions & { attempt?: number }} [opts]
   * @returns {Promise<void>}
   */
  async heartbeat(id, opts = {}) {
    await this.request('PUT', jobPath(id, '/heartbeat'), { query: attemptQuery(opts.attempt), idempotent: true, signal: opts.signal });
  }

  /**
   * Applies a PATCH /job/{id}: a status change, output, the extended
   * fields, and optionally a take from opts.take.queue after it. nextId is
   * the job update.next created; taken the jobs taken. Never sent again
   * after a 503, which may have been applied.
   * @param {number} id
   * @param {JobUpdate} update
   * @param {CallOptions & { attempt?: number, take?: TakeOptions & { queue: string } }} [opts]
   * @returns {Promise<{ nextId?: number, taken: TakenJob[] }>}
   */
  async updateJob(id, update, opts = {}) {
    /** @type {Record<string, string | number | undefined>} */
    const query = attemptQuery(opts.attempt);
    if (opts.take) {
      // Without a count the answer is one take object (or 204).
      Object.assign(query, { take: opts.take.queue }, takeQuery(opts.take));
      if (opts.take.count === undefined) delete query.count;
    }
    const path = jobPath(id);
    const res = await this.request('PATCH', path, { query, body: encodeBody(update), signal: opts.signal });
    /** @type {{ nextId?: number, taken: TakenJob[] }} */
    const out = { taken: [] };
    const loc = res.headers.get('Location');
    if (loc?.startsWith('/job/')) out.nextId = Number(loc.slice(5));
    if (opts.take) out.taken = takenJobs(res, `PATCH ${path}`);
    return out;
  }

  /**
   * Completes a running job with output (undefined: the output stays as it
   * is), fenced by attempt.
   * @param {number} id
   * @param {JsonValue | undefined} output
   * @param {CallOptions & { attempt?: number }} [opts]
   * @returns {Promise<void>}
   */
  async complete(id, output, opts = {}) {
    await this.updateJob(id, { status: 'completed', output }, opts);
  }

  /**
   * Completes a running job and takes the next one from queue in the same
   * request; null when none was ready.
   * @param {number} id
   * @param {JsonValue | undefined} output
   * @param {string} queue
   * @param {CallOptions & { attempt?: number, worker?: string, wait?: DurationInput }} [opts]
   * @returns {Promise<TakenJob | null>}
   */
  async completeAndTake(id, output, queue, opts = {}) {
    const r = await this.updateJob(id, { status: 'completed', output }, {
      attempt: opts.attempt, signal: opts.signal, take: { queue, worker: opts.worker, wait: opts.wait },
    });
    return r.taken[0] ?? null;
  }

  /**
   * Fails a running job: retried by its policy (or at retryAt / after
   * retryIn) while retries are left, else failed for good in its failure
   * group. Fenced by attempt.
   * @param {number} id
   * @param {import('./types.js').Failure} failure
   * @param {CallOptions & { attempt?: number }} [opts]
   * @returns {Promise<void>}
   */
  async fail(id, failure = {}, opts = {}) {
    await this.updateJob(id, {
      status: 'failed', error: failure.error, retry: failure.permanent ? false : undefined,
      retry_at: failure.retryAt, retry_in: failure.retryIn,
    }, opts);
  }

  /**
   * Cancels a job that is running, pending or failed.
   * @param {number} id
   * @param {CallOptions} [opts]
   */
  async cancel(id, opts = {}) { await this.updateJob(id, { status: 'cancelled' }, opts); }

  /**
   * Puts a failed, timed-out or cancelled job back in its queue.
   * @param {number} id
   * @param {CallOptions} [opts]
   */
  async requeue(id, opts = {}) { await this.updateJob(id, { status: 'queued' }, opts); }

  /**
   * Deletes a job in any state (DELETE /job/{id}). Not sent again after a 503.
   * @param {number} id
   * @param {CallOptions} [opts]
   * @returns {Promise<void>}
   */
  async deleteJob(id, opts = {}) { await this.request('DELETE', jobPath(id), { signal: opts.signal }); }

  /**
   * Retries a running, failed, timed-out or cancelled job (POST
   * /job/{id}/retry), now, at run_at or after delay; it counts against its
   * retries.
   * @param {number} id
   * @param {CallOptions & { run_at?: TimeInput, delay?: DurationInput }} [opts]
   * @returns {Promise<{ status: Status, retries_attempted: number }>}
   */
  async retryJob(id, opts = {}) {
    const body = opts.run_at !== undefined || opts.delay !== undefined ? encodeBody({ run_at: opts.run_at, delay: opts.delay }) : undefined;
    const res = await this.request('POST', jobPath(id, '/retry'), { body, signal: opts.signal });
    return JSON.parse(res.text);
  }

  /**
   * The ids of the jobs carrying tag, ascending (GET /tag/{name}).
   * @param {string} tag
   * @param {CallOptions} [opts]
   * @returns {Promise<number[]>}
   */
  async jobIdsByTag(tag, opts = {}) { return this.get(`/tag/${segment(tag)}`, undefined, opts); }

  // ---- Waiting for a result ---------------------------------------------

  /**
   * A job once it has ended for good (GET /job/{id}?wait=), or when wait
   * (at most 20 s) is over, with the job as it is then: check `ended` (or
   * the status) to tell the two apart. A failure that will be retried is
   * not an ending. opts.fields selects fields as getJob's do ("ended" among
   * them when you name any). The request is held open up to wait: the
   * client sets no timeout of its own, so a signal that bounds the call
   * (AbortSignal.timeout) must leave room for the wait. A missing job, or
   * one deleted during the wait, is a 404. Sent again after a 503, as a
   * read.
   * @param {number} id
   * @param {DurationInput} wait milliseconds, or the server's grammar ("20s")
   * @param {WaitOptions} [opts]
   * @returns {Promise<Job>}
   */
  async waitJob(id, wait, opts = {}) {
    return this.get(jobPath(id), waitQuery(wait, opts.fields), opts);
  }

  /**
   * Creates a job in queue, then waits up to wait (at most 20 s) for it to
   * end for good (POST /queue/{name}/job?wait=): a remote call through the
   * queue, answered by whichever worker takes the job. A failure that will
   * be retried is not an ending. `ended` tells whether it ended within the
   * wait (200): `job` then holds its id, status, output and error (or
   * opts.fields). Otherwise (202) `job` is null and the job goes on: wait
   * again with waitJob(id, ...), or look later. The request is held open
   * up to wait: a signal that bounds the call must leave room for it. Like
   * createJob, it is sent again after a 429 only. A bad wait is a 400 and
   * creates nothing; a job deleted during the wait is a 404.
   * @param {string} queue
   * @param {JobSpec} spec
   * @param {DurationInput} wait milliseconds, or the server's grammar ("20s")
   * @param {WaitOptions} [opts]
   * @returns {Promise<WaitResult>}
   */
  async createAndWait(queue, spec, wait, opts = {}) {
    const path = `/queue/${segment(queue)}/job`;
    const res = await this.request('POST', path, {
      query: waitQuery(wait, opts.fields), body: encodeBody(spec ?? {}), signal: opts.signal,
    });
    const v = JSON.parse(res.text);
    if (res.status === 202) {
      if (!Number.isSafeInteger(v)) throw new Error(`ocyless: POST ${path}: want the job's id, got ${res.text.slice(0, 200)}`);
      return { id: v, ended: false, job: null };
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      throw new Error(`ocyless: POST ${path}: want the ended job, got ${res.text.slice(0, 200)}`);
    }
    // The fields named may leave out the id: Location has it.
    const loc = res.headers.get('Location') ?? '';
    const id = /^\/job\/\d+$/.test(loc) ? Number(loc.slice(5)) : v.id;
    if (!Number.isSafeInteger(id)) throw new Error(`ocyless: POST ${path}: an answer without the job's id`);
    return { id, ended: true, job: v };
  }

  // ---- Takes ------------------------------------------------------------

  /**
   * Takes up to opts.count jobs from queue (GET /queue/{name}/job); they
   * are running when it returns. An empty array when none was ready (after
   * opts.wait). Not sent again after a 503: it may have handed a job to
   * nobody, which then times out and is retried by its policy.
   * @param {string} queue
   * @param {TakeOptions} [opts]
   * @returns {Promise<TakenJob[]>}
   */
  async take(queue, opts = {}) {
    const path = `/queue/${segment(queue)}/job`;
    const res = await this.request('GET', path, { query: takeQuery(opts), signal: opts.signal });
    return takenJobs(res, `GET ${path}`);
  }

  /**
   * Takes one job from queue; null when none was ready.
   * @param {string} queue
   * @param {TakeOptions} [opts]
   * @returns {Promise<TakenJob | null>}
   */
  async takeOne(queue, opts = {}) {
    return (await this.take(queue, { ...opts, count: 1 }))[0] ?? null;
  }

  /**
   * Takes up to opts.count jobs from several queues in one request (GET
   * /job?queues=), picking among them by order.
   * @param {string[]} queues
   * @param {TakeOptions & { order?: 'ordered' | 'round_robin' }} [opts]
   * @returns {Promise<TakenJob[]>}
   */
  async takeFrom(queues, opts = {}) {
    if (!queues.length) throw new TypeError('ocyless: takeFrom: no queue');
    const res = await this.request('GET', '/job', {
      query: { queues: queues.join(','), order: opts.order, ...takeQuery(opts) }, signal: opts.signal,
    });
    return takenJobs(res, 'GET /job');
  }

  // ---- Queues -----------------------------------------------------------

  /**
   * The queue names, sorted (GET /queue).
   * @param {CallOptions} [opts]
   * @returns {Promise<string[]>}
   */
  async listQueues(opts = {}) { return this.get('/queue', undefined, opts); }

  /**
   * A queue's settings (GET /queue/{name}); paused and concurrency are
   * always set (false and 0 when the server leaves them out as defaults).
   * @param {string} name
   * @param {CallOptions} [opts]
   * @returns {Promise<import('./types.js').QueueSettings>}
   */
  async getQueue(name, opts = {}) {
    const q = await this.get(`/queue/${segment(name)}`, undefined, opts);
    // The server shows extension settings only when not default.
    return { ...q, paused: q.paused ?? false, concurrency: q.concurrency ?? 0 };
  }

  /**
   * Creates a queue or replaces its Ocypod settings (PUT /queue/{name});
   * created reports a new queue.
   * @param {string} name
   * @param {import('./types.js').QueueSpec} [spec]
   * @param {CallOptions} [opts]
   * @returns {Promise<{ created: boolean }>}
   */
  async putQueue(name, spec = {}, opts = {}) {
    const res = await this.request('PUT', `/queue/${segment(name)}`, { body: encodeBody(spec), idempotent: true, signal: opts.signal });
    return { created: res.status === 201 };
  }

  /**
   * Merges settings into a queue's (PATCH /queue/{name}).
   * @param {string} name
   * @param {import('./types.js').QueuePatch} patch
   * @param {CallOptions} [opts]
   * @returns {Promise<void>}
   */
  async patchQueue(name, patch, opts = {}) {
    await this.request('PATCH', `/queue/${segment(name)}`, { body: encodeBody(patch), idempotent: true, signal: opts.signal });
  }

  /**
   * Deletes a queue and its pending jobs (DELETE /queue/{name}). Not sent
   * again after a 503.
   * @param {string} name
   * @param {CallOptions} [opts]
   * @returns {Promise<void>}
   */
  async deleteQueue(name, opts = {}) { await this.request('DELETE', `/queue/${segment(name)}`, { signal: opts.signal }); }

  /**
   * The number of queued jobs (GET /queue/{name}/size).
   * @param {string} name
   * @param {CallOptions} [opts]
   * @returns {Promise<number>}
   */
  async queueSize(name, opts = {}) { return this.get(`/queue/${segment(name)}/size`, undefined, opts); }

  /**
   * A queue's job ids by status (GET /queue/{name}/job_ids).
   * @param {string} name
   * @param {CallOptions} [opts]
   * @returns {Promise<import('./types.js').QueueJobIds>}
   */
  async queueJobIds(name, opts = {}) { return this.get(`/queue/${segment(name)}/job_ids`, undefined, opts); }

  /**
   * A queue's statistics of one UTC day (GET /queue/{name}/stats); no date
   * is the server's today.
   * @param {string} name
   * @param {CallOptions & { date?: Date | string }} [opts]
   * @returns {Promise<import('./types.js').QueueStats>}
   */
  async queueStats(name, opts = {}) {
    const date = opts.date instanceof Date ? opts.date.toISOString().slice(0, 10) : opts.date;
    return this.get(`/queue/${segment(name)}/stats`, { date }, opts);
  }

  // ---- Listing ----------------------------------------------------------

  /**
   * One page of the jobs of every queue (GET /jobs).
   * @param {ListOptions} [opts]
   * @returns {Promise<import('./types.js').JobPage>}
   */
  async listJobs(opts = {}) { return this.get('/jobs', listQuery(opts), opts); }

  /**
   * One page of a queue's jobs (GET /queue/{name}/jobs).
   * @param {string} queue
   * @param {ListOptions} [opts]
   * @returns {Promise<import('./types.js').JobPage>}
   */
  async listQueueJobs(queue, opts = {}) { return this.get(`/queue/${segment(queue)}/jobs`, listQuery(opts), opts); }

  /**
   * Every job listJobs (queue null) or listQueueJobs finds, page after page.
   * @param {string | null} queue
   * @param {ListOptions} [opts]
   * @returns {AsyncGenerator<Job>}
   */
  async *allJobs(queue, opts = {}) {
    let cursor = opts.cursor;
    for (;;) {
      const page = queue === null ? await this.listJobs({ ...opts, cursor }) : await this.listQueueJobs(queue, { ...opts, cursor });
      yield* page.jobs;
      if (!page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  /**
   * The jobs failed for good, counted by failure group (GET /failures).
   * @param {CallOptions} [opts]
   * @returns {Promise<Record<string, number>>}
   */
  async failures(opts = {}) { return this.get('/failures', undefined, opts); }

  /**
   * One page of a failure group's jobs (GET /failures/{group}); an unknown
   * group is an empty page.
   * @param {string} group
   * @param {CallOptions & { limit?: number, cursor?: string, fields?: string[] }} [opts]
   * @returns {Promise<import('./types.js').FailurePage>}
   */
  async failureJobs(group, opts = {}) {
    return this.get(`/failures/${segment(group)}`, {
      limit: opts.limit, cursor: opts.cursor, fields: opts.fields?.length ? opts.fields.join(',') : undefined,
    }, opts);
  }

  /**
   * Every job of a failure group, page after page.
   * @param {string} group
   * @param {CallOptions & { limit?: number, cursor?: string, fields?: string[] }} [opts]
   * @returns {AsyncGenerator<Job>}
   */
  async *allFailureJobs(group, opts = {}) {
    let cursor = opts.cursor;
    for (;;) {
      const page = await this.failureJobs(group, { ...opts, cursor });
      yield* page.jobs;
      if (!page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  /**
   * Requeues up to limit jobs of a failure group (POST
   * /failures/{group}/retry), into queue when given; answers how many.
   * Not sent again after a 503.
   * @param {string} group
   * @param {CallOptions & { limit?: number, queue?: string }} [opts]
   * @returns {Promise<number>}
   */
  async retryFailures(group, opts = {}) {
    const res = await this.request('POST', `/failures/${segment(group)}/retry`, {
      query: { limit: opts.limit }, body: opts.queue !== undefined ? { queue: opts.queue } : undefined, signal: opts.signal,
    });
    return JSON.parse(res.text).retried;
  }

  // ---- Workers ----------------------------------------------------------

  /**
   * The workers that took a job recently, most recent first (GET /workers).
   * @param {CallOptions} [opts]
   * @returns {Promise<import('./types.js').WorkerSummary[]>}
   */
  async workers(opts = {}) { return this.get('/workers', undefined, opts); }

  /**
   * A worker's running and timed-out job ids (GET /workers/{name}).
   * @param {string} name
   * @param {CallOptions} [opts]
   * @returns {Promise<import('./types.js').WorkerJobs>}
   */
  async workerJobs(name, opts = {}) { return this.get(`/workers/${segment(name)}`, undefined, opts); }

  // ---- Schedules --------------------------------------------------------

  /**
   * Creates or replaces a recurring job (PUT /queue/{name}/schedules/{id}).
   * @param {string} queue
   * @param {string} id
   * @param {import('./types.js').ScheduleSpec} spec
   * @param {CallOptions} [opts]
   * @returns {Promise<{ created: boolean }>}
   */
  async putSchedule(queue, id, spec, opts = {}) {
    const res = await this.request('PUT', `/queue/${segment(queue)}/schedules/${segment(id)}`, {
      body: encodeBody(spec), idempotent: true, signal: opts.signal,
    });
    return { created: res.status === 201 };
  }

  /**
   * A schedule with its next run (GET /queue/{name}/schedules/{id}).
   * @param {string} queue
   * @param {string} id
   * @param {CallOptions} [opts]
   * @returns {Promise<import('./types.js').Schedule>}
   */
  async getSchedule(queue, id, opts = {}) { return this.get(`/queue/${segment(queue)}/schedules/${segment(id)}`, undefined, opts); }

  /**
   * Deletes a schedule (DELETE /queue/{name}/schedules/{id}).
   * @param {string} queue
   * @param {string} id
   * @param {CallOptions} [opts]
   * @returns {Promise<void>}
   */
  async deleteSchedule(queue, id, opts = {}) {
    await this.request('DELETE', `/queue/${segment(queue)}/schedules/${segment(id)}`, { signal: opts.signal });
  }

  /**
   * A queue's schedules by id (GET /queue/{name}/schedules).
   * @param {string} queue
   * @param {CallOptions} [opts]
   * @returns {Promise<import('./types.js').Schedule[]>}
   */
  async listSchedules(queue, opts = {}) { return this.get(`/queue/${segment(queue)}/schedules`, undefined, opts); }

  // ---- Batches (third API part, §9) ---------------------------------------

  /**
   * Applies up to 1000 job updates in one request (PATCH /jobs); each item
   * is applied on its own and answered in order. Never sent again after a
   * 503.
   * @param {import('./types.js').BatchUpdate[]} items
   * @param {CallOptions} [opts]
   * @returns {Promise<import('./types.js').BatchResult[]>}
   */
  async updateJobs(items, opts = {}) {
    const res = await this.request('PATCH', '/jobs', { body: items.map(encodeBody), signal: opts.signal });
    return JSON.parse(res.text);
  }

  /**
   * Applies a batch of job updates, then takes up to take.count jobs from
   * take.queue in the same request (PATCH /jobs?take=).
   * @param {import('./types.js').BatchUpdate[]} items
   * @param {TakeOptions & { queue: string }} take
   * @returns {Promise<{ results: import('./types.js').BatchResult[], jobs: TakenJob[] }>}
   */
  async updateJobsAndTake(items, take) {
    const res = await this.request('PATCH', '/jobs', {
      query: { take: take.queue, ...takeQuery(take) }, body: items.map(encodeBody), signal: take.signal,
    });
    const v = JSON.parse(res.text);
    return { results: v.results, jobs: takenJobs({ ...res, text: JSON.stringify(v.jobs ?? []) }, 'PATCH /jobs') };
  }

  /**
   * Records the heartbeats of up to 1000 running jobs (POST
   * /jobs/heartbeat), each fenced by its attempt.
   * @param {{ id: number, attempt?: number }[]} items
   * @param {CallOptions} [opts]
   * @returns {Promise<import('./types.js').BatchResult[]>}
   */
  async heartbeatJobs(items, opts = {}) {
    const res = await this.request('POST', '/jobs/heartbeat', { body: items, idempotent: true, signal: opts.signal });
    return JSON.parse(res.text);
  }
}

/**
 * Filters and paging of a job listing.
 * @typedef {object} ListOptions
 * @property {Status} [status]
 * @property {string} [tag]
 * @property {string} [key] a queue's listing only
 * @property {string} [worker]
 * @property {boolean} [tracked]
 * @property {string[]} [fields]
 * @property {number} [limit] 1 to 1000 (the server's default: 100)
 * @property {string} [cursor] the previous page's next_cursor
 * @property {AbortSignal} [signal]
 */

/** @param {ListOptions} o */
function listQuery(o) {
  return {
    status: o.status, tag: o.tag, key: o.key, worker: o.worker, tracked: o.tracked,
    fields: o.fields?.length ? o.fields.join(',') : undefined, limit: o.limit, cursor: o.cursor,
  };
}

/**
 * A Retry-After header in seconds (at most a minute is honoured), in ms.
 * @param {Headers} h
 */
function retryAfter(h) {
  const n = Number.parseInt(h.get('Retry-After') ?? '', 10);
  return n > 0 ? Math.min(n, 60) * 1000 : 0;
}
