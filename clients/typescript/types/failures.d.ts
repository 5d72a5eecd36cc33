/**
 * Marks a handler error as final: the job fails for good, whatever retries
 * it has left, and joins its failure group.
 * @param {unknown} err
 */
export function permanent(err: unknown): JobFailure;
/**
 * Names the failure group the job joins if it fails for good (1 to 128
 * printable characters; anything else is left out, and "failed" applies).
 * @param {unknown} err
 * @param {string} group
 */
export function withGroup(err: unknown, group: string): JobFailure;
/**
 * Asks for the job's retry at t instead of its policy's delay (it still
 * counts against its retries).
 * @param {unknown} err
 * @param {Date | string} t
 */
export function retryAt(err: unknown, t: Date | string): JobFailure;
/**
 * Asks for the job's retry after ms milliseconds instead of its policy's
 * delay (0: at once).
 * @param {unknown} err
 * @param {number} ms
 */
export function retryIn(err: unknown, ms: number): JobFailure;
/** The failure group of a job whose handler's error named none: the server's own default. */
export const DEFAULT_GROUP: "failed";
/** The failure group of a job released at shutdown when it had no retry left. */
export const SHUTDOWN_GROUP: "worker_shutdown";
/**
 * A handler error with instructions for the failure report. Throw one,
 * or wrap any error with permanent(), withGroup(), retryAt() or retryIn().
 */
export class JobFailure extends Error {
    /**
     * @param {string} message
     * @param {{ cause?: unknown, group?: string, permanent?: boolean, retryAt?: Date | string, retryIn?: number }} [opts]
     */
    constructor(message: string, opts?: {
        cause?: unknown;
        group?: string;
        permanent?: boolean;
        retryAt?: Date | string;
        retryIn?: number;
    });
    /** The failure group the job joins if it fails for good (1 to 128 printable characters). */
    group: string | undefined;
    /** Fail for good, whatever retries are left. */
    permanent: boolean;
    /** This retry's due time instead of the policy's delay. */
    retryAt: string | Date | undefined;
    /** This retry's delay in ms instead of the policy's (0: at once). */
    retryIn: number | undefined;
}
/**
 * The reason a handler's signal aborts when the job is no longer this
 * worker's: a heartbeat or report found it timed out, cancelled, deleted or
 * taken again. Its result is dropped: the server would refuse it.
 */
export class JobLostError extends Error {
    /** @param {string} [message] */
    constructor(message?: string, options?: {});
}
/**
 * The reason a handler's signal aborts at the end of the shutdown grace
 * period. The job has been released: failed with a retry due at once.
 */
export class ShutdownError extends Error {
    constructor();
}
