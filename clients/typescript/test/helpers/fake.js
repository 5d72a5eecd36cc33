// A small in-test HTTP server that follows the batch routes of the third
// API part (§9: PATCH /jobs, PATCH /jobs?take=, POST /jobs/heartbeat),
// which the real server does not have yet, plus the takes, job reads and
// single updates a worker uses. Jobs live in memory.

import { createServer } from 'node:http';

/**
 * @typedef {{ id: number, queue: string, input: unknown, status: string, attempt: number, output?: unknown, error?: unknown, heartbeat_timeout: string, beats: number }} FakeJob
 */

export class FakeServer {
  constructor() {
    /** @type {Map<number, FakeJob>} */
    this.jobs = new Map();
    /** @type {{ method: string, path: string, query: Record<string, string>, body: any }[]} */
    this.requests = [];
    this.nextId = 1;
    /** Statuses to answer to the next PATCH /jobs requests instead of applying them. */
    /** @type {number[]} */
    this.failBatches = [];
    /** Statuses to answer to the next PATCH /job/{id} requests. */
    /** @type {number[]} */
    this.failSingles = [];
    /** Statuses to answer to the next POST /jobs/heartbeat requests. */
    /** @type {number[]} */
    this.failHeartbeats = [];
    /** @type {(() => void)[]} */
    this.waiters = [];
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (d) => { raw += d; });
      req.on('end', () => { void this.handle(req, res, raw); });
    });
  }

  /** @returns {Promise<string>} the base URL */
  async listen() {
    await new Promise((r) => this.server.listen(0, '127.0.0.1', () => r(undefined)));
    const a = /** @type {import('node:net').AddressInfo} */ (this.server.address());
    return `http://127.0.0.1:${a.port}`;
  }

  async close() {
    for (const w of this.waiters) w();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(() => r(undefined)));
  }

  /**
   * @param {string} queue
   * @param {unknown[]} inputs
   * @param {string} [heartbeatTimeout]
   */
  add(queue, inputs, heartbeatTimeout = '0s') {
    const ids = [];
    for (const input of inputs) {
      const id = this.nextId++;
      this.jobs.set(id, { id, queue, input, status: 'queued', attempt: 0, heartbeat_timeout: heartbeatTimeout, beats: 0 });
      ids.push(id);
    }
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
    return ids;
  }

  /** @param {string} queue @param {number} n @param {string | undefined} worker */
  take(queue, n, worker) {
    const out = [];
    for (const j of this.jobs.values()) {
      if (out.length >= n) break;
      if (j.queue === queue && j.status === 'queued') {
        j.status = 'running';
        j.attempt++;
        out.push({ id: j.id, input: j.input, attempt: j.attempt, queue: j.queue, worker });
      }
    }
    return out.map(({ worker: _w, ...t }) => t);
  }

  /**
   * Applies one PATCH /job/{id} body; answers [status, error?].
   * @param {number} id
   * @param {number | undefined} attempt
   * @param {Record<string, any>} u
   * @returns {[number, string?]}
   */
  apply(id, attempt, u) {
    const j = this.jobs.get(id);
    if (!j) return [404, `Job with ID ${id} does not exist`];
    for (const k of Object.keys(u)) {
      if (!['status', 'output', 'error', 'retry', 'retry_in', 'retry_at'].includes(k)) return [400, `Unknown field: ${k}`];
    }
    if (attempt !== undefined && attempt !== j.attempt) return [409, `Job ${id} attempt ${attempt} is not current`];
    if (j.status !== 'running') return [409, `Cannot change status from ${j.status} to ${u.status}`];
    if (u.status === 'completed') {
      j.status = 'completed';
      if (u.output !== undefined) j.output = u.output;
    } else if (u.status === 'failed') {
      j.status = 'failed';
      j.error = u.error;
    } else {
      return [400, 'Invalid status'];
    }
    return [204];
  }

  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @param {string} raw
   */
  async handle(req, res, raw) {
    const u = new URL(req.url ?? '/', 'http://x');
    const query = Object.fromEntries(u.searchParams);
    let body;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      return send(res, 400, 'Json deserialize error');
    }
    this.requests.push({ method: req.method ?? '', path: u.pathname, query, body });
    /** @param {number} status @param {unknown} [v] */
    const json = (status, v) => send(res, status, v === undefined ? '' : JSON.stringify(v), 'application/json');
    let m;
    if (req.method === 'GET' && (m = /^\/queue\/([^/]+)\/job$/.exec(u.pathname))) {
      const n = Number(query.count ?? 1);
      let jobs = this.take(decodeURIComponent(m[1]), n, query.worker);
      if (jobs.length === 0 && query.wait) {
        await new Promise((r) => {
          const t = setTimeout(r, 200);
          this.waiters.push(() => { clearTimeout(t); r(undefined); });
        });
        jobs = this.take(decodeURIComponent(m[1]), n, query.worker);
      }
      return jobs.length ? json(200, jobs) : json(204);
    }
    if (req.method === 'GET' && (m = /^\/job\/(\d+)$/.exec(u.pathname))) {
      const j = this.jobs.get(Number(m[1]));
      if (!j) return send(res, 404, `Job with ID ${m[1]} does not exist`);
      return json(200, { heartbeat_timeout: j.heartbeat_timeout, status: j.status, attempt: j.attempt });
    }
    if (req.method === 'PATCH' && (m = /^\/job\/(\d+)$/.exec(u.pathname))) {
      if (this.failSingles.length) return send(res, /** @type {number} */ (this.failSingles.shift()), 'Failed to connect to Redis: timed out');
      const [status, error] = this.apply(Number(m[1]), query.attempt ? Number(query.attempt) : undefined, body ?? {});
      return status === 204 ? json(204) : send(res, status, error ?? '');
    }
    if (u.pathname === '/jobs' && req.method === 'PATCH') {
      if (this.failBatches.length) return send(res, /** @type {number} */ (this.failBatches.shift()), 'Failed to connect to Redis: timed out');
      if (!validBatch(body)) return send(res, 400, 'Invalid batch');
      if (query.take && ![...this.jobs.values()].some((j) => j.queue === query.take)) {
        return send(res, 404, `Queue '${query.take}' does not exist`);
      }
      const results = body.map((/** @type {any} */ item) => {
        const { id, attempt, ...fields } = item;
        const [status, error] = this.apply(id, attempt, fields);
        return error ? { id, status, error } : { id, status };
      });
      if (!query.take) return json(200, results);
      return json(200, { results, jobs: this.take(query.take, Number(query.count ?? 1), query.worker) });
    }
    if (u.pathname === '/jobs/heartbeat' && req.method === 'POST') {
      if (this.failHeartbeats.length) return send(res, /** @type {number} */ (this.failHeartbeats.shift()), 'Failed to connect to Redis: timed out');
      if (!validBatch(body)) return send(res, 400, 'Invalid batch');
      return json(200, body.map((/** @type {any} */ { id, attempt }) => {
        const j = this.jobs.get(id);
        if (!j) return { id, status: 404, error: `Job with ID ${id} does not exist` };
        if (attempt !== undefined && attempt !== j.attempt) return { id, status: 409, error: `Job ${id} attempt ${attempt} is not current` };
        if (j.status !== 'running') return { id, status: 409, error: `Cannot heartbeat job ${id}, job is not running` };
        j.beats++;
        return { id, status: 204 };
      }));
    }
    return send(res, 404, 'no such route in the fake');
  }
}

/**
 * The contract's malformed-body rules: an array of 1 to 1000 objects, each
 * with an integer id.
 * @param {unknown} body
 */
function validBatch(body) {
  return Array.isArray(body) && body.length >= 1 && body.length <= 1000 &&
    body.every((i) => i && typeof i === 'object' && !Array.isArray(i) && Number.isInteger(i.id));
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {string} text
 */
function send(res, status, text, type = 'text/plain; charset=utf-8') {
  res.writeHead(status, status === 204 ? {} : { 'Content-Type': type });
  res.end(status === 204 ? undefined : text);
}
