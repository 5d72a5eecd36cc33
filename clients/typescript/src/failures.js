// How a handler's error fails its job: failure group, permanent, retry time.

/** The failure group of a job whose handler's error named none: the server's own default. */
export const DEFAULT_GROUP = 'failed';

/** The failure group of a job released at shutdown when it had no retry left. */
export const SHUTDOWN_GROUP = 'worker_shutdown';

/**
 * A handler error with instructions for the failure report. Throw one,
 * or wrap any error with permanent(), withGroup(), retryAt() or retryIn().
 */
export class JobFailure extends Error {
  /**
   * @param {string} message
   * @param {{ cause?: unknown, group?: string, permanent?: boolean, retryAt?: Date | string, retryIn?: number }} [opts]
   */
  constructor(message, opts = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'JobFailure';
    /** The failure group the job joins if it fails for good (1 to 128 printable characters). */
    this.group = opts.group;
    /** Fail for good, whatever retries are left. */
    this.permanent = opts.permanent ?? false;
    /** This retry's due time instead of the policy's delay. */
    this.retryAt = opts.retryAt;
    /** This retry's delay in ms instead of the policy's (0: at once). */
    this.retryIn = opts.retryIn;
  }
}

/**
 * err as a JobFailure (a copy, keeping the settings of one it already is),
 * changed by set.
 * @param {unknown} err
 * @param {(f: JobFailure) => void} set
 * @returns {JobFailure}
 */
function failureOf(err, set) {
  const prev = err instanceof JobFailure ? err : undefined;
  const base = prev?.cause ?? err;
  const message = base instanceof Error ? base.message : String(base);
  const f = new JobFailure(message, {
    cause: base, group: prev?.group, permanent: prev?.permanent, retryAt: prev?.retryAt, retryIn: prev?.retryIn,
  });
  if (base instanceof Error && base.stack) f.stack = base.stack;
  set(f);
  return f;
}

/**
 * Marks a handler error as final: the job fails for good, whatever retries
 * it has left, and joins its failure group.
 * @param {unknown} err
 */
export function permanent(err) {
  return failureOf(err, (f) => { f.permanent = true; f.retryAt = undefined; f.retryIn = undefined; });
}

/**
 * Names the failure group the job joins if it fails for good (1 to 128
 * printable characters; anything else is left out, and "failed" applies).
 * @param {unknown} err
 * @param {string} group
 */
export function withGroup(err, group) {
  return failureOf(err, (f) => { f.group = group; });
}

/**
 * Asks for the job's retry at t instead of its policy's delay (it still
 * counts against its retries).
 * @param {unknown} err
 * @param {Date | string} t
 */
export function retryAt(err, t) {
  return failureOf(err, (f) => { f.permanent = false; f.retryAt = t; f.retryIn = undefined; });
}

/**
 * Asks for the job's retry after ms milliseconds instead of its policy's
 * delay (0: at once).
 * @param {unknown} err
 * @param {number} ms
 */
export function retryIn(err, ms) {
  return failureOf(err, (f) => { f.permanent = false; f.retryAt = undefined; f.retryIn = Math.max(ms, 0); });
}

/**
 * The reason a handler's signal aborts when the job is no longer this
 * worker's: a heartbeat or report found it timed out, cancelled, deleted or
 * taken again. Its result is dropped: the server would refuse it.
 */
export class JobLostError extends Error {
  /** @param {string} [message] */
  constructor(message = 'worker: the job is no longer this worker\'s', options = {}) {
    super(message, options);
    this.name = 'JobLostError';
  }
}

/**
 * The reason a handler's signal aborts at the end of the shutdown grace
 * period. The job has been released: failed with a retry due at once.
 */
export class ShutdownError extends Error {
  constructor() {
    super('worker: shut down before the handler finished');
    this.name = 'ShutdownError';
  }
}
