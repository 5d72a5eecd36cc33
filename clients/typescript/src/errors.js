// Errors of the client: a refused request (OcylessError, with the HTTP
// status and the server's text) and a request that got no answer
// (ConnectionError).

const STATUS_TEXT = /** @type {Record<number, string>} */ ({
  400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict',
  413: 'Payload Too Large', 429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway',
  503: 'Service Unavailable', 504: 'Gateway Timeout', 507: 'Insufficient Storage',
});

/**
 * A request the server refused: its HTTP status and the server's message
 * (the plain-text body, such as "Job with ID 7 does not exist"; empty for
 * a bare 404).
 */
export class OcylessError extends Error {
  /**
   * @param {number} status
   * @param {string} body
   * @param {string} method
   * @param {string} path the path and query, without the base URL
   */
  constructor(status, body, method, path) {
    super(`ocyless: ${method} ${path}: ${status} ${STATUS_TEXT[status] ?? ''}`.trimEnd() + (body ? `: ${body}` : ''));
    this.name = 'OcylessError';
    /** The HTTP status, such as 404. */
    this.status = status;
    /** The server's text (for /health's 503, its reason). */
    this.body = body;
    /** The request's method. */
    this.method = method;
    /** The request's path and query. */
    this.path = path;
  }

  /** 404: the job, queue, worker or schedule does not exist. */
  get isNotFound() { return this.status === 404; }
  /** 409: the job's state does not allow the change, a key is taken, or a fenced attempt is stale. */
  get isConflict() { return this.status === 409; }
  /** 400: refused as invalid; nothing changed. */
  get isBadRequest() { return this.status === 400; }
  /** 503, or a gateway's 502, 504 or 429. A 503 may have been applied. */
  get isUnavailable() { return [429, 502, 503, 504].includes(this.status); }
  /** 409 "Job <id> attempt <n> is not current": a fenced call of an attempt taken again since. */
  get isStaleAttempt() { return this.status === 409 && this.body.endsWith(' is not current'); }
}

/**
 * A request that got no answer: the connection failed or broke. The
 * request may have reached the server. The fetch error is the cause.
 */
export class ConnectionError extends Error {
  /**
   * @param {string} method
   * @param {string} path
   * @param {unknown} cause
   */
  constructor(method, path, cause) {
    const why = cause instanceof Error ? (cause.cause instanceof Error ? `${cause.message}: ${cause.cause.message}` : cause.message) : String(cause);
    super(`ocyless: ${method} ${path}: ${why}`, { cause });
    this.name = 'ConnectionError';
  }
}

/** @param {unknown} err @returns {err is OcylessError} */
const refused = (err) => err instanceof OcylessError;

/** @param {unknown} err */
export const isNotFound = (err) => refused(err) && err.isNotFound;
/** @param {unknown} err */
export const isConflict = (err) => refused(err) && err.isConflict;
/** @param {unknown} err */
export const isBadRequest = (err) => refused(err) && err.isBadRequest;
/** @param {unknown} err */
export const isStaleAttempt = (err) => refused(err) && err.isStaleAttempt;
/**
 * True for a 503 (or a gateway's 502, 504, 429) and for a request that got
 * no answer.
 * @param {unknown} err
 */
export const isUnavailable = (err) => (refused(err) && err.isUnavailable) || err instanceof ConnectionError;
