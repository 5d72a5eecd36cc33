// ocyless: a client of every route of an ocyless server (Ocypod 0.8's API
// and its extensions), a worker, and the push signature check.

export { Client, MAX_WAIT, DEFAULT_USER_AGENT, encodeBody, segment } from './client.js';
export { OcylessError, ConnectionError, isNotFound, isConflict, isBadRequest, isStaleAttempt, isUnavailable } from './errors.js';
export { formatDuration, parseDuration } from './durations.js';
export { Worker, Job } from './worker.js';
export {
  JobFailure, JobLostError, ShutdownError, permanent, withGroup, retryAt, retryIn, DEFAULT_GROUP, SHUTDOWN_GROUP,
} from './failures.js';
export { verifySignature, isValidSignature, signPayload, SignatureError, SIGNATURE_HEADER, DEFAULT_TOLERANCE } from './signature.js';

// The API's shapes, for TypeScript users (types only).
/** @typedef {import('./types.js').Status} Status */
/** @typedef {import('./types.js').JsonValue} JsonValue */
/** @typedef {import('./types.js').Job} JobObject a job as GET /job/{id} shows it (Job is the worker's) */
/** @typedef {import('./types.js').JobSpec} JobSpec */
/** @typedef {import('./types.js').JobUpdate} JobUpdate */
/** @typedef {import('./types.js').JobError} JobError */
/** @typedef {import('./types.js').Attempt} Attempt */
/** @typedef {import('./types.js').TakenJob} TakenJob */
/** @typedef {import('./types.js').Failure} Failure */
/** @typedef {import('./types.js').BackoffSpec} BackoffSpec */
/** @typedef {import('./types.js').Backoff} Backoff */
/** @typedef {import('./types.js').RateLimit} RateLimit */
/** @typedef {import('./types.js').QueueSettings} QueueSettings */
/** @typedef {import('./types.js').QueueSpec} QueueSpec */
/** @typedef {import('./types.js').QueuePatch} QueuePatch */
/** @typedef {import('./types.js').QueueJobIds} QueueJobIds */
/** @typedef {import('./types.js').QueueCounts} QueueCounts */
/** @typedef {import('./types.js').Info} Info */
/** @typedef {import('./types.js').JobPage} JobPage */
/** @typedef {import('./types.js').FailurePage} FailurePage */
/** @typedef {import('./types.js').WorkerSummary} WorkerSummary */
/** @typedef {import('./types.js').WorkerJobs} WorkerJobs */
/** @typedef {import('./types.js').QueueStats} QueueStats */
/** @typedef {import('./types.js').DurationStats} DurationStats */
/** @typedef {import('./types.js').ScheduleSpec} ScheduleSpec */
/** @typedef {import('./types.js').Schedule} Schedule */
/** @typedef {import('./types.js').BatchUpdate} BatchUpdate */
/** @typedef {import('./types.js').BatchResult} BatchResult */
/** @typedef {import('./client.js').ClientOptions} ClientOptions */
/** @typedef {import('./client.js').CallOptions} CallOptions */
/** @typedef {import('./client.js').TakeOptions} TakeOptions */
/** @typedef {import('./client.js').WaitOptions} WaitOptions */
/** @typedef {import('./client.js').WaitResult} WaitResult */
/** @typedef {import('./client.js').ListOptions} ListOptions */
/** @typedef {import('./worker.js').WorkerOptions} WorkerOptions */
/** @typedef {import('./worker.js').Handler} Handler */
/** @typedef {import('./worker.js').Logger} Logger */
/** @typedef {import('./durations.js').DurationInput} DurationInput */
/** @typedef {import('./durations.js').TimeInput} TimeInput */
/** @typedef {import('./signature.js').VerifyOptions} VerifyOptions */
