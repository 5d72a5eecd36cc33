// The worker: takes jobs with long polls, runs an async handler on each
// (up to `concurrency` at once), sends heartbeats fenced by the job's
// attempt, reports each outcome, and shuts down gracefully.

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { MAX_WAIT, sleep } from './client.js';
import { parseDuration } from './durations.js';
import { OcylessError, isConflict, isNotFound, isStaleAttempt, isUnavailable, isBadRequest } from './errors.js';
import { DEFAULT_GROUP, SHUTDOWN_GROUP, JobFailure, JobLostError, ShutdownError } from './failures.js';

/** @typedef {import('./client.js').Client} Client */
/** @typedef {import('./types.js').TakenJob} TakenJob */
/** @typedef {import('./types.js').JobUpdate} JobUpdate */
/** @typedef {import('./types.js').JsonValue} JsonValue */

/**
 * Receives a line per failed request and per job that failed, was lost or
 * released. `console` will do.
 * @typedef {object} Logger
 * @property {(msg: string, fields?: Record<string, unknown>) => void} warn
 * @property {(msg: string, fields?: Record<string, unknown>) => void} error
 */

/**
 * @typedef {object} WorkerOptions
 * @property {string[]} queues to take jobs from (at least one)
 * @property {'ordered' | 'round_robin'} [order] how a take from several queues picks among them
 * @property {number} [concurrency] how many handlers run at once (default 1)
 * @property {string} [name] recorded on the jobs it takes (1 to 128 printable characters; default "<host>-<pid>-<random>")
 * @property {number} [wait] the long-poll wait of a take in ms (default and most: 20000)
 * @property {number} [heartbeatInterval] ms between a running job's heartbeats; 0 (default) reads each job's heartbeat_timeout once its handler has run 250ms and sends one every third of it; negative sends none
 * @property {number} [shutdownGrace] ms running handlers may go on once the worker stops (default 30000); jobs still running then are released
 * @property {number} [errorBackoff] the first wait in ms after a take failed, doubled while it keeps failing (default 1000)
 * @property {boolean | { maxItems?: number }} [batch] report outcomes with PATCH /jobs (taking the next jobs in the same request with ?take=) and send heartbeats with POST /jobs/heartbeat: one request for many jobs
 * @property {NodeJS.Signals[]} [shutdownSignals] process signals that stop the worker while run() runs (default SIGINT and SIGTERM; a second one ends the grace period at once); [] installs none
 * @property {Logger | null} [logger]
 * @property {(job: Job, err: unknown) => void} [onFinish] called once per job taken, after its outcome was reported: err is null when it completed, else the handler's error (an AggregateError with a failed report), a JobLostError or a ShutdownError
 */

/**
 * A job the worker took, handed to the handler.
 */
export class Job {
  /**
   * @param {TakenJob} tj
   * @param {Client} client
   * @param {AbortSignal} signal
   */
  constructor(tj, client, signal) {
    /** The job's id. */
    this.id = tj.id;
    /** The queue it was taken from. */
    this.queue = tj.queue;
    /** This attempt's number: it fences every call about the job. */
    this.attempt = tj.attempt;
    /** The job's input. */
    this.input = tj.input;
    /**
     * Aborts when the job is lost (reason JobLostError) or at the end of
     * the shutdown grace period (reason ShutdownError). It does not abort
     * when the worker stops: a running handler may finish during the grace
     * period.
     */
    this.signal = signal;
    /** @private */ this.client = client;
  }

  /**
   * Replaces the job's output while it runs (progress, partial results),
   * fenced by its attempt.
   * @param {JsonValue} output
   */
  setOutput(output) { return this.client.setJobOutput(this.id, output, { attempt: this.attempt, signal: this.signal }); }

  /** Sends a heartbeat now, fenced by the job's attempt. The worker sends them by itself. */
  heartbeat() { return this.client.heartbeat(this.id, { attempt: this.attempt, signal: this.signal }); }
}

/**
 * Does one job's work. What it returns completes the job with that output
 * (undefined leaves the output as it is); what it throws fails the job,
 * retried by the job's policy unless wrapped with permanent(), retryAt()
 * or retryIn().
 * @typedef {(job: Job) => Promise<JsonValue | undefined | void> | JsonValue | undefined | void} Handler
 */

const READ_HEARTBEAT_AFTER = 250;
const REPORT_TIMEOUT = 30_000;
const MAX_TAKE = 100;
const MAX_MESSAGE = 64 << 10;
const BATCH_MAX = 1000;

/**
 * @param {string} s
 * @param {number} max
 */
function printable(s, max) {
  return typeof s === 'string' && s !== '' && [...s].length <= max && !/[\p{C}\p{Zl}\p{Zp}]/u.test(s);
}

/** @param {unknown} err */
function messageOf(err) {
  let msg = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
  const buf = new Uint8Array(MAX_MESSAGE);
  const { read, written } = new TextEncoder().encodeInto(msg, buf);
  if (read < msg.length) msg = new TextDecoder().decode(buf.subarray(0, written));
  return msg;
}

/** @param {unknown} err */
function errText(err) { return err instanceof Error ? err.message : String(err); }

/**
 * One job in the worker: its handler's signal and who reports its outcome.
 */
class Task {
  /** @param {Job} job @param {AbortController} ctl */
  constructor(job, ctl) {
    this.job = job;
    this.ctl = ctl;
    this.claimed = false;
    this.done = false;
    /** stops the heartbeats when the handler returns */
    this.hbStop = new AbortController();
    /** @type {() => void} */
    this.markReported = () => {};
    this.reported = new Promise((/** @type {(v?: unknown) => void} */ r) => { this.markReported = r; });
    /** heartbeat interval in ms once known (batch heartbeats) */
    this.every = 0;
    this.lastBeat = Date.now();
  }

  /** Makes the caller the one that reports the outcome. */
  claim() {
    if (this.claimed) return false;
    this.claimed = true;
    return true;
  }

  get lost() { return this.ctl.signal.aborted && this.ctl.signal.reason instanceof JobLostError; }
}

/**
 * Takes jobs and runs a handler on each. Create one, then `await
 * worker.run()`: it runs until stop() is called, run's signal aborts or
 * the process gets SIGINT or SIGTERM, then shuts down gracefully.
 */
export class Worker {
  /**
   * @param {Client} client
   * @param {Handler} handler
   * @param {WorkerOptions} options
   */
  constructor(client, handler, options) {
    if (!client || typeof handler !== 'function') throw new TypeError('worker: a client and a handler function are needed');
    const o = { ...options };
    if (!Array.isArray(o.queues) || o.queues.length === 0) throw new TypeError('worker: no queue');
    for (const k of /** @type {const} */ (['concurrency', 'shutdownGrace', 'errorBackoff', 'wait'])) {
      const v = o[k];
      if (v !== undefined && !(typeof v === 'number' && v >= 0)) throw new RangeError(`worker: ${k} must be a number >= 0`);
    }
    if ((o.wait ?? 0) > MAX_WAIT) throw new RangeError(`worker: wait ${o.wait}ms is over the server's 20s`);
    o.name ||= defaultName();
    if (!printable(o.name, 128)) throw new TypeError(`worker: name ${JSON.stringify(o.name)}: want 1 to 128 printable characters`);
    /** @private */ this.client = client;
    /** @private */ this.handler = handler;
    /** @private */ this.opts = {
      queues: o.queues, order: o.order, name: o.name,
      concurrency: Math.max(Math.floor(o.concurrency ?? 1), 1),
      wait: o.wait || MAX_WAIT,
      heartbeatInterval: o.heartbeatInterval ?? 0,
      shutdownGrace: o.shutdownGrace || 30_000,
      errorBackoff: o.errorBackoff || 1000,
      batch: o.batch ? Math.min(Math.max((typeof o.batch === 'object' && o.batch.maxItems) || BATCH_MAX, 1), BATCH_MAX) : 0,
      shutdownSignals: o.shutdownSignals ?? /** @type {NodeJS.Signals[]} */ (['SIGINT', 'SIGTERM']),
      logger: o.logger ?? null,
      onFinish: o.onFinish,
    };
    /** @private */ this.state = null;
    /** @private */ this.reportTimeout = REPORT_TIMEOUT;
  }

  /** The worker's name, recorded on the jobs it takes. */
  get name() { return this.opts.name; }

  /**
   * Takes jobs and runs the handler on them until stop() is called, the
   * signal aborts, or the process gets one of shutdownSignals. Then it takes
   * no more jobs (a take in flight is cut short), lets running handlers
   * finish within shutdownGrace and report, releases the jobs still running
   * after that (failed with a retry due at once, error group
   * "worker_shutdown"), and resolves. A failed take is logged and tried
   * again after errorBackoff. One run at a time.
   * @param {{ signal?: AbortSignal }} [opts]
   * @returns {Promise<void>}
   */
  async run(opts = {}) {
    if (this.state) throw new Error('worker: run is already running');
    const st = new RunState();
    this.state = st;
    const onAbort = () => this.stop();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) this.stop();
    const onSignal = () => { if (st.stop.signal.aborted) st.force.abort(); else this.stop(); };
    for (const s of this.opts.shutdownSignals) process.on(s, onSignal);
    const hb = this.opts.batch ? this.heartbeatBatches(st) : null;
    try {
      await this.poll(st);
      await this.shutdown(st);
    } finally {
      for (const s of this.opts.shutdownSignals) process.off(s, onSignal);
      opts.signal?.removeEventListener('abort', onAbort);
      st.ended.abort();
      st.wake();
      await hb;
      this.state = null;
    }
  }

  /**
   * Starts the graceful shutdown of run(): no more takes; running handlers
   * have shutdownGrace to finish.
   */
  stop() {
    const st = this.state;
    if (!st || st.stop.signal.aborted) return;
    st.stop.abort();
    st.wake();
  }

  // ---- Taking -----------------------------------------------------------

  /**
   * Takes jobs while slots are free, until the worker stops.
   * @private
   * @param {RunState} st
   */
  async poll(st) {
    let backoff = this.opts.errorBackoff;
    const stop = st.stop.signal;
    while (!stop.aborted) {
      while (st.active >= this.opts.concurrency && !stop.aborted) await st.sleep();
      if (stop.aborted) return;
      const n = Math.min(this.opts.concurrency - st.active, MAX_TAKE);
      st.active += n;
      /** @type {TakenJob[]} */
      let jobs = [];
      let failed = null;
      try {
        jobs = await this.take(n, stop);
      } catch (err) {
        failed = err;
      }
      st.active -= n - jobs.length;
      for (const j of jobs) this.lane(st, j);
      if (!failed) {
        backoff = this.opts.errorBackoff;
        continue;
      }
      if (stop.aborted) return;
      this.log('error', 'take failed', { queues: this.opts.queues, error: errText(failed) });
      await sleep(backoff, stop).catch(() => {});
      backoff = Math.min(backoff * 2, this.opts.errorBackoff * 32);
    }
  }

  /**
   * @private
   * @param {number} n
   * @param {AbortSignal} signal
   */
  take(n, signal) {
    const o = { count: n, worker: this.opts.name, wait: this.opts.wait, signal };
    if (this.opts.queues.length === 1) return this.client.take(this.opts.queues[0], o);
    return this.client.takeFrom(this.opts.queues, { ...o, order: this.opts.order });
  }

  /**
   * The queue a report may take the next job from in the same request, ""
   * for none: the only queue, or the first of ordered queues. Round-robin
   * takes stay with the long poll, which alone rotates fairly.
   * @private
   * @param {RunState} st
   */
  takeQueue(st) {
    if (st.stop.signal.aborted) return '';
    if (this.opts.queues.length === 1 || this.opts.order !== 'round_robin') return this.opts.queues[0];
    return '';
  }

  /**
   * Runs a lane on a slot already counted: the job, then each job its
   * report took, until one takes nothing.
   * @private
   * @param {RunState} st
   * @param {TakenJob} first
   */
  async lane(st, first) {
    /** @type {TakenJob | null} */
    let tj = first;
    try {
      while (tj) tj = await this.work(st, tj);
    } catch (err) {
      this.log('error', 'worker lane failed', { error: errText(err) });
    } finally {
      st.active--;
      st.wake();
    }
  }

  // ---- One job ----------------------------------------------------------

  /**
   * Runs the handler on one job and reports its outcome; returns the job
   * the report took, if any.
   * @private
   * @param {RunState} st
   * @param {TakenJob} tj
   * @returns {Promise<TakenJob | null>}
   */
  async work(st, tj) {
    const ctl = new AbortController();
    const task = new Task(new Job(tj, this.client, ctl.signal), ctl);
    if (st.expired) {
      // The grace period is over: a job a report took late is released unrun.
      task.claim();
      ctl.abort(new ShutdownError());
      await this.release(task);
      return null;
    }
    st.tasks.add(task);
    try {
      const hb = this.heartbeat(st, task);
      let out;
      let herr = null;
      try {
        out = await this.handler(task.job);
      } catch (err) {
        herr = err ?? new Error('handler threw ' + String(err));
      }
      task.done = true;
      task.hbStop.abort();
      await hb;
      if (!task.claim()) return null; // released by shutdown: its result is dropped
      try {
        if (task.lost) {
          this.log('warn', 'job lost: its result is dropped', fields(task));
          this.finished(task, ctl.signal.reason);
          return null;
        }
        let next = null;
        let rerr = null;
        try {
          next = await this.report(st, task, out, herr);
        } catch (err) {
          rerr = err;
        }
        if (rerr && (isConflict(rerr) || isNotFound(rerr))) {
          this.log('warn', 'job lost: its outcome was refused', { ...fields(task), error: errText(rerr) });
          rerr = new JobLostError(`worker: the job is no longer this worker's: ${errText(rerr)}`, { cause: rerr });
        } else if (rerr) {
          this.log('error', "reporting the job's outcome failed", { ...fields(task), error: errText(rerr) });
        } else if (herr) {
          this.log('warn', 'job failed', { ...fields(task), error: errText(herr).split('\n')[0] });
        }
        let err = herr ?? rerr;
        if (herr && rerr) err = new AggregateError([herr, rerr], `${errText(herr)}; ${errText(rerr)}`);
        this.finished(task, err);
        return next;
      } finally {
        task.markReported();
      }
    } finally {
      st.tasks.delete(task);
    }
  }

  /**
   * @private
   * @param {Task} task
   * @param {unknown} err
   */
  finished(task, err) {
    if (!this.opts.onFinish) return;
    try {
      this.opts.onFinish(task.job, err);
    } catch (e) {
      this.log('error', 'onFinish threw', { error: errText(e) });
    }
  }

  /**
   * Completes or fails the job; returns the job a completion took.
   * @private
   * @param {RunState} st
   * @param {Task} task
   * @param {unknown} out
   * @param {unknown} herr
   * @returns {Promise<TakenJob | null>}
   */
  async report(st, task, out, herr) {
    const signal = AbortSignal.timeout(this.reportTimeout);
    if (herr === null) {
      let ok = true;
      if (out !== undefined) {
        try {
          JSON.stringify(out);
        } catch (err) {
          ok = false;
          herr = new Error(`worker: the handler's output: ${errText(err)}`, { cause: err });
        }
      }
      if (ok) {
        try {
          /** @type {JobUpdate} */
          const u = { status: 'completed' };
          if (out !== undefined) u.output = /** @type {JsonValue} */ (out);
          return await this.send(st, task, u, signal, true);
        } catch (err) {
          const e = /** @type {OcylessError} */ (err);
          if (!(isBadRequest(e) || e?.status === 413 || e?.status === 507)) throw err;
          // The server refused the output: the job cannot complete.
          herr = new Error(`worker: completing with the handler's output: ${errText(err)}`, { cause: err });
        }
      }
    }
    await this.fail(st, task, herr, signal);
    return null;
  }

  /**
   * @private
   * @param {RunState} st
   * @param {Task} task
   * @param {unknown} herr
   * @param {AbortSignal} signal
   */
  async fail(st, task, herr, signal) {
    // The group is always sent: the server's own default when the handler
    // named none (an error without a group is not kept in the job's
    // history once the job is retried).
    /** @type {JobUpdate} */
    const u = { status: 'failed', error: { group: DEFAULT_GROUP, message: messageOf(herr) } };
    if (herr instanceof JobFailure) {
      if (herr.group !== undefined && printable(herr.group, 128) && u.error) u.error.group = herr.group;
      if (herr.permanent) u.retry = false;
      else if (herr.retryAt !== undefined) u.retry_at = herr.retryAt;
      else if (herr.retryIn !== undefined) u.retry_in = herr.retryIn;
    }
    try {
      await this.send(st, task, u, signal, false);
    } catch (err) {
      if (!isBadRequest(err)) throw err;
      // Something of the failure was refused (a retry time, the error):
      // the failure itself must still be recorded.
      await this.send(st, task, { status: 'failed', retry: u.retry }, signal, false);
    }
  }

  /**
   * Fails a job whose handler did not finish in time, with a retry due at
   * once, so another worker takes it while it has retries left.
   * @private
   * @param {Task} task
   */
  async release(task) {
    try {
      await this.send(null, task, {
        status: 'failed', error: { group: SHUTDOWN_GROUP, message: new ShutdownError().message }, retry_in: 0,
      }, AbortSignal.timeout(this.reportTimeout), false);
      this.log('warn', "job released: its handler did not finish within the shutdown grace period", fields(task));
      this.finished(task, new ShutdownError());
    } catch (err) {
      this.log('error', 'releasing the job failed', { ...fields(task), error: errText(err) });
      this.finished(task, new AggregateError([new ShutdownError(), err], `${new ShutdownError().message}; ${errText(err)}`));
    } finally {
      task.markReported();
    }
  }

  /**
   * Applies an update fenced by the task's attempt, sending it again while
   * the server is unavailable or unreachable. A repeat may find the first
   * one applied: its 409 is then a success, once the job's history shows
   * this attempt ended with the status sent. A repeat never takes a job
   * (the first may have). With batches, the update goes with others in one
   * PATCH /jobs.
   * @private
   * @param {RunState | null} st
   * @param {Task} task
   * @param {JobUpdate} u
   * @param {AbortSignal} signal
   * @param {boolean} mayTake
   * @returns {Promise<TakenJob | null>}
   */
  async send(st, task, u, signal, mayTake) {
    const takeQ = st && mayTake ? this.takeQueue(st) : '';
    if (this.opts.batch && st) {
      const r = await st.reporter({
        client: this.client, name: this.opts.name, maxItems: this.opts.batch,
        takeQueue: () => this.takeQueue(st),
        startLane: (j) => { st.active++; void this.lane(st, j); },
      }).submit(task, u, takeQ);
      if (r.result) {
        if (r.result.status < 300) return r.next;
        throw new OcylessError(r.result.status, r.result.error ?? '', 'PATCH', '/jobs');
      }
      // The batch request failed whole: the item goes alone, as a repeat
      // (the batch may have been applied).
      if (!isUnavailable(r.error)) this.log('warn', 'batch report failed; reporting alone', { error: errText(r.error) });
      return this.sendOne(task, u, signal, '', !!isUnavailable(r.error));
    }
    return this.sendOne(task, u, signal, takeQ, false);
  }

  /**
   * @private
   * @param {Task} task
   * @param {JobUpdate} u
   * @param {AbortSignal} signal
   * @param {string} takeQ
   * @param {boolean} repeated
   * @returns {Promise<TakenJob | null>}
   */
  async sendOne(task, u, signal, takeQ, repeated) {
    let delay = 100;
    for (;;) {
      try {
        const take = takeQ && !repeated ? { queue: takeQ, worker: this.opts.name } : undefined;
        const r = await this.client.updateJob(task.job.id, u, { attempt: task.job.attempt, take, signal });
        return r.taken[0] ?? null;
      } catch (err) {
        if (repeated && isConflict(err) && !isStaleAttempt(err) && u.status && await this.applied(task, u.status, signal)) return null;
        if (signal.aborted || !isUnavailable(err)) throw err;
        this.log('warn', "reporting the job's outcome failed; trying again", { ...fields(task), error: errText(err) });
        repeated = true;
        try {
          await sleep(delay, signal);
        } catch {
          throw err;
        }
        delay = Math.min(delay * 2, 5000);
      }
    }
  }

  /**
   * Whether the task's attempt ended with status want, as a repeated
   * update that found it ended asks.
   * @private
   * @param {Task} task
   * @param {string} want
   * @param {AbortSignal} signal
   */
  async applied(task, want, signal) {
    try {
      const j = await this.client.getJob(task.job.id, { fields: ['history'], signal });
      const a = (j.history ?? []).find((h) => h.attempt === task.job.attempt);
      return a?.status === want;
    } catch {
      return false;
    }
  }

  // ---- Heartbeats ---------------------------------------------------------

  /**
   * Sends the task's heartbeats until its handler returns (with batches,
   * registers the task with the batch loop instead). A heartbeat refused
   * because the job is no longer this attempt's (409, 404) aborts the
   * handler's signal with JobLostError.
   * @private
   * @param {RunState} st
   * @param {Task} task
   */
  async heartbeat(st, task) {
    let every = this.opts.heartbeatInterval;
    if (every < 0) return;
    const stop = AbortSignal.any([task.hbStop.signal, task.ctl.signal]);
    try {
      if (every === 0) {
        // A heartbeat_timeout is at least a second: a handler done sooner
        // needs none, and its job costs no read of it.
        await sleep(READ_HEARTBEAT_AFTER, stop);
        const hb = await this.heartbeatTimeout(task, stop);
        if (hb <= 0) return;
        every = Math.max(hb / 3, 1);
      }
      if (this.opts.batch) {
        task.every = every;
        task.lastBeat = Date.now();
        st.beating.add(task);
        st.wake();
        if (!stop.aborted) await new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }));
        return;
      }
      for (;;) {
        await sleep(every, stop);
        try {
          await this.client.heartbeat(task.job.id, { attempt: task.job.attempt, signal: stop });
        } catch (err) {
          if (stop.aborted) return;
          if (isConflict(err) || isNotFound(err)) {
            this.lose(task, err);
            return;
          }
          this.log('warn', 'heartbeat failed', { ...fields(task), error: errText(err) });
        }
      }
    } catch {
      // stop aborted a sleep or a read
    } finally {
      st.beating.delete(task);
    }
  }

  /**
   * @private
   * @param {Task} task
   * @param {unknown} err
   */
  lose(task, err) {
    this.log('warn', 'heartbeat refused: the job is lost', { ...fields(task), error: errText(err) });
    task.ctl.abort(new JobLostError(`worker: the job is no longer this worker's: ${errText(err)}`, { cause: err }));
  }

  /**
   * Reads the job's heartbeat_timeout in ms, trying again each second
   * while the server cannot answer; throws when stop aborts.
   * @private
   * @param {Task} task
   * @param {AbortSignal} stop
   * @returns {Promise<number>}
   */
  async heartbeatTimeout(task, stop) {
    for (;;) {
      try {
        const j = await this.client.getJob(task.job.id, { fields: ['heartbeat_timeout'], signal: stop });
        return parseDuration(j.heartbeat_timeout);
      } catch (err) {
        if (stop.aborted) throw err;
        if (isNotFound(err)) {
          this.lose(task, err);
          throw err;
        }
        this.log('warn', "reading the job's heartbeat_timeout failed", { ...fields(task), error: errText(err) });
        await sleep(1000, stop);
      }
    }
  }

  /**
   * With batches: one POST /jobs/heartbeat for every running job whose
   * heartbeat is due, at the pace of the shortest interval. A job is sent
   * early rather than late (each is due within its interval of the last).
   * @private
   * @param {RunState} st
   */
  async heartbeatBatches(st) {
    const ended = st.ended.signal;
    while (!ended.aborted) {
      if (st.beating.size === 0) {
        await st.sleep();
        continue;
      }
      const tick = Math.min(...[...st.beating].map((t) => t.every));
      await sleep(tick, ended).catch(() => {});
      if (ended.aborted) return;
      const now = Date.now();
      const due = [...st.beating].filter((t) => now - t.lastBeat >= t.every - tick / 2);
      for (let i = 0; i < due.length; i += BATCH_MAX) {
        const chunk = due.slice(i, i + BATCH_MAX);
        try {
          const results = await this.client.heartbeatJobs(chunk.map((t) => ({ id: t.job.id, attempt: t.job.attempt })));
          chunk.forEach((t, k) => {
            const r = results[k];
            if (!r || r.status < 300) {
              t.lastBeat = now;
              return;
            }
            if (r.status === 409 || r.status === 404) {
              if (!t.done) this.lose(t, new OcylessError(r.status, r.error ?? '', 'POST', '/jobs/heartbeat'));
            } else {
              this.log('warn', 'heartbeat failed', { ...fields(t), error: `${r.status} ${r.error ?? ''}` });
            }
          });
        } catch (err) {
          this.log('warn', 'batch heartbeat failed', { error: errText(err) });
        }
      }
    }
  }

  // ---- Shutdown -----------------------------------------------------------

  /**
   * Waits for the lanes up to the grace period, then releases the jobs
   * still running and waits for the reports under way.
   * @private
   * @param {RunState} st
   */
  async shutdown(st) {
    const graceOver = AbortSignal.any([AbortSignal.timeout(this.opts.shutdownGrace), st.force.signal]);
    while (st.active > 0 && !graceOver.aborted) {
      await Promise.race([st.sleep(), new Promise((r) => graceOver.addEventListener('abort', r, { once: true }))]);
    }
    if (st.active === 0) return;
    st.expired = true;
    await Promise.all([...st.tasks].map(async (task) => {
      if (task.claim()) {
        task.ctl.abort(new ShutdownError());
        await this.release(task);
      }
      await task.reported;
    }));
  }

  /**
   * @private
   * @param {'warn' | 'error'} level
   * @param {string} msg
   * @param {Record<string, unknown>} [f]
   */
  log(level, msg, f = {}) {
    this.opts.logger?.[level](`ocyless worker: ${msg}`, { worker: this.opts.name, ...f });
  }
}

/** @param {Task} task */
function fields(task) {
  return { job_id: task.job.id, queue: task.job.queue, attempt: task.job.attempt };
}

/** "<host>-<pid>-<random>", unique enough that two processes never share a name. */
function defaultName() {
  const name = `${hostname() || 'worker'}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const chars = [...name];
  return chars.length > 128 ? chars.slice(-128).join('') : name;
}

/**
 * The state of one run.
 */
class RunState {
  constructor() {
    this.stop = new AbortController(); // ends taking
    this.force = new AbortController(); // ends the grace period at once
    this.ended = new AbortController(); // run() is returning
    this.active = 0; // slots held by lanes and by a take in flight
    /** @type {Set<Task>} */
    this.tasks = new Set();
    /** @type {Set<Task>} */
    this.beating = new Set();
    this.expired = false;
    /** @type {(() => void)[]} */
    this.waiters = [];
    /** @type {Reporter | null} */
    this.rep = null;
  }

  /** Resolves at the next wake(). */
  sleep() { return new Promise((/** @type {(v?: unknown) => void} */ r) => this.waiters.push(r)); }

  wake() {
    const w = this.waiters;
    this.waiters = [];
    for (const r of w) r();
  }

  /**
   * @param {{ client: Client, name: string, maxItems: number, takeQueue: () => string, startLane: (j: TakenJob) => void }} env
   */
  reporter(env) {
    this.rep ??= new Reporter(env);
    return this.rep;
  }
}

/**
 * @typedef {object} BatchOutcome
 * @property {import('./types.js').BatchResult} [result] the item's answer
 * @property {TakenJob | null} next the job taken for the item's lane
 * @property {unknown} [error] the batch request's failure
 */

/**
 * Collects the reports of finished handlers and sends them together: one
 * PATCH /jobs (with ?take= for the lanes that may take) per batch. A batch
 * leaves as soon as no other is in flight; reports that come meanwhile
 * wait for the next, so batches grow with the load.
 */
class Reporter {
  /**
   * @param {{ client: Client, name: string, maxItems: number, takeQueue: () => string, startLane: (j: TakenJob) => void }} env
   */
  constructor(env) {
    this.env = env;
    /** @type {{ task: Task, u: JobUpdate, takeQ: string, resolve: (o: BatchOutcome) => void }[]} */
    this.queue = [];
    this.busy = false;
    this.scheduled = false;
  }

  /**
   * @param {Task} task
   * @param {JobUpdate} u
   * @param {string} takeQ
   * @returns {Promise<BatchOutcome>}
   */
  submit(task, u, takeQ) {
    return new Promise((resolve) => {
      this.queue.push({ task, u, takeQ, resolve });
      this.schedule();
    });
  }

  schedule() {
    if (this.busy || this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => { this.scheduled = false; void this.flush(); });
  }

  async flush() {
    const { client, name, maxItems } = this.env;
    const batch = this.queue.splice(0, maxItems);
    if (batch.length === 0) return;
    this.busy = true;
    try {
      const items = batch.map((b) => ({ id: b.task.job.id, attempt: b.task.job.attempt, ...b.u }));
      const takeQ = this.env.takeQueue();
      const takers = takeQ ? batch.filter((b) => b.takeQ === takeQ) : [];
      const count = Math.min(takers.length, MAX_TAKE);
      /** @type {import('./types.js').BatchResult[]} */
      let results;
      /** @type {TakenJob[]} */
      let jobs = [];
      try {
        const signal = AbortSignal.timeout(REPORT_TIMEOUT);
        if (count > 0) ({ results, jobs } = await client.updateJobsAndTake(items, { queue: takeQ, count, worker: name, signal }));
        else results = await client.updateJobs(items, { signal });
      } catch (error) {
        for (const b of batch) b.resolve({ error, next: null });
        return;
      }
      // Each lane whose report was applied runs one of the jobs taken; jobs
      // left over (their lane's report was refused) get lanes of their own.
      let k = 0;
      batch.forEach((b, i) => {
        const r = results[i] ?? { id: b.task.job.id, status: 500, error: 'no answer for this item' };
        const next = takers.includes(b) && r.status < 300 && k < jobs.length ? jobs[k++] : null;
        b.resolve({ result: r, next });
      });
      for (; k < jobs.length; k++) this.env.startLane(jobs[k]);
    } finally {
      this.busy = false;
      this.schedule();
    }
  }
}
