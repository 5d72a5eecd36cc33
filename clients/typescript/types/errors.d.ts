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
    constructor(status: number, body: string, method: string, path: string);
    /** The HTTP status, such as 404. */
    status: number;
    /** The server's text (for /health's 503, its reason). */
    body: string;
    /** The request's method. */
    method: string;
    /** The request's path and query. */
    path: string;
    /** 404: the job, queue, worker or schedule does not exist. */
    get isNotFound(): boolean;
    /** 409: the job's state does not allow the change, a key is taken, or a fenced attempt is stale. */
    get isConflict(): boolean;
    /** 400: refused as invalid; nothing changed. */
    get isBadRequest(): boolean;
    /** 503, or a gateway's 502, 504 or 429. A 503 may have been applied. */
    get isUnavailable(): boolean;
    /** 409 "Job <id> attempt <n> is not current": a fenced call of an attempt taken again since. */
    get isStaleAttempt(): boolean;
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
    constructor(method: string, path: string, cause: unknown);
}
export function isNotFound(err: unknown): boolean;
export function isConflict(err: unknown): boolean;
export function isBadRequest(err: unknown): boolean;
export function isStaleAttempt(err: unknown): boolean;
export function isUnavailable(err: unknown): boolean;
