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
export function segment(s: string): string;
/**
 * Encodes a body: durations given in milliseconds become the server's
 * strings, Dates RFC 3339; undefined fields are left out.
 * @param {Record<string, any>} obj
 * @returns {Record<string, any>}
 */
export function encodeBody(obj: Record<string, any>): Record<string, any>;
/**
 * @param {number} ms
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<void>}
 */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void>;
/** @typedef {import('./types.js').JsonValue} JsonValue */
/** @typedef {import('./types.js').Job} Job */
/** @typedef {import('./types.js').JobSpec} JobSpec */
/** @typedef {import('./types.js').JobUpdate} JobUpdate */
/** @typedef {import('./types.js').TakenJob} TakenJob */
/** @typedef {import('./types.js').Status} Status */
/** @typedef {import('./durations.js').DurationInput} DurationInput */
/** @typedef {import('./durations.js').TimeInput} TimeInput */
/** The longest long-poll wait the server accepts, in milliseconds. */
export const MAX_WAIT: 20000;
/** The User-Agent header sent unless ClientOptions.userAgent replaces it. */
export const DEFAULT_USER_AGENT: "ocyless-typescript-client";
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
    constructor(baseURL: string, options?: ClientOptions);
    /** @private */ private base;
    /** @private */ private retries;
    /** @private */ private backoff;
    /** @private */ private headers;
    /** @private */ private fetch;
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
    request(method: string, path: string, opts?: RequestOptions): Promise<Response>;
    /**
     * The wait before retry attempt+1: the backoff doubled per attempt,
     * capped at 32 times, the upper half jittered.
     * @private
     * @param {number} attempt
     */
    private delay;
    /**
     * An idempotent GET, its JSON answer parsed.
     * @private
     * @param {string} path
     * @param {Record<string, string | number | boolean | undefined>} [query]
     * @param {CallOptions} [opts]
     * @returns {Promise<any>}
     */
    private get;
    /**
     * Checks that the server reaches its Redis (GET /health). A 503 throws
     * an OcylessError whose body is the server's reason.
     * @param {CallOptions} [opts]
     * @returns {Promise<{ status: string }>}
     */
    health(opts?: CallOptions): Promise<{
        status: string;
    }>;
    /**
     * The job counts of every queue and the global counters (GET /info).
     * @param {CallOptions} [opts]
     * @returns {Promise<import('./types.js').Info>}
     */
    info(opts?: CallOptions): Promise<import("./types.js").Info>;
    /**
     * The Ocypod API version the server implements, such as "0.8.0" (GET /info/version).
     * @param {CallOptions} [opts]
     * @returns {Promise<string>}
     */
    version(opts?: CallOptions): Promise<string>;
    /**
     * The server's OpenAPI 3.1 document (GET /openapi.json).
     * @param {CallOptions} [opts]
     * @returns {Promise<Record<string, any>>}
     */
    openapi(opts?: CallOptions): Promise<Record<string, any>>;
    /**
     * The operators' page, HTML (GET /ui).
     * @param {CallOptions} [opts]
     * @returns {Promise<string>}
     */
    dashboard(opts?: CallOptions): Promise<string>;
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
    createJob(queue: string, spec?: JobSpec, opts?: CallOptions): Promise<{
        id: number;
        existing: boolean;
    }>;
    /**
     * Creates 1 to 1000 jobs in one request (POST /queue/{name}/jobs) and
     * returns their ids in order. The batch is checked whole: one bad spec
     * is a 400 naming its index and creates nothing.
     * @param {string} queue
     * @param {JobSpec[]} specs
     * @param {CallOptions} [opts]
     * @returns {Promise<number[]>}
     */
    createJobs(queue: string, specs: JobSpec[], opts?: CallOptions): Promise<number[]>;
    /**
     * A job (GET /job/{id}): all its fields, or only those named (such as
     * "status", "attempt", "history").
     * @param {number} id
     * @param {CallOptions & { fields?: string[] }} [opts]
     * @returns {Promise<Job>}
     */
    getJob(id: number, opts?: CallOptions & {
        fields?: string[];
    }): Promise<Job>;
    /**
     * A job's status (GET /job/{id}/status).
     * @param {number} id
     * @param {CallOptions} [opts]
     * @returns {Promise<Status>}
     */
    jobStatus(id: number, opts?: CallOptions): Promise<Status>;
    /**
     * A job's output, null when never set (GET /job/{id}/output).
     * @param {number} id
     * @param {CallOptions} [opts]
     * @returns {Promise<JsonValue>}
     */
    jobOutput(id: number, opts?: CallOptions): Promise<JsonValue>;
    /**
     * Replaces a running job's output (PUT /job/{id}/output). attempt fences
     * the write: a job taken again since is a 409 (isStaleAttempt).
     * @param {number} id
     * @param {JsonValue} output
     * @param {CallOptions & { attempt?: number }} [opts]
     * @returns {Promise<void>}
     */
    setJobOutput(id: number, output: JsonValue, opts?: CallOptions & {
        attempt?: number;
    }): Promise<void>;
    /**
     * Records a heartbeat of a running job (PUT /job/{id}/heartbeat),
     * fenced by attempt.
     * @param {number} id
     * @param {CallOptions & { attempt?: number }} [opts]
     * @returns {Promise<void>}
     */
    heartbeat(id: number, opts?: CallOptions & {
        attempt?: number;
    }): Promise<void>;
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
    updateJob(id: number, update: JobUpdate, opts?: CallOptions & {
        attempt?: number;
        take?: TakeOptions & {
            queue: string;
        };
    }): Promise<{
        nextId?: number;
        taken: TakenJob[];
    }>;
    /**
     * Completes a running job with output (undefined: the output stays as it
     * is), fenced by attempt.
     * @param {number} id
     * @param {JsonValue | undefined} output
     * @param {CallOptions & { attempt?: number }} [opts]
     * @returns {Promise<void>}
     */
    complete(id: number, output: JsonValue | undefined, opts?: CallOptions & {
        attempt?: number;
    }): Promise<void>;
    /**
     * Completes a running job and takes the next one from queue in the same
     * request; null when none was ready.
     * @param {number} id
     * @param {JsonValue | undefined} output
     * @param {string} queue
     * @param {CallOptions & { attempt?: number, worker?: string, wait?: DurationInput }} [opts]
     * @returns {Promise<TakenJob | null>}
     */
    completeAndTake(id: number, output: JsonValue | undefined, queue: string, opts?: CallOptions & {
        attempt?: number;
        worker?: string;
        wait?: DurationInput;
    }): Promise<TakenJob | null>;
    /**
     * Fails a running job: retried by its policy (or at retryAt / after
     * retryIn) while retries are left, else failed for good in its failure
     * group. Fenced by attempt.
     * @param {number} id
     * @param {import('./types.js').Failure} failure
     * @param {CallOptions & { attempt?: number }} [opts]
     * @returns {Promise<void>}
     */
    fail(id: number, failure?: import("./types.js").Failure, opts?: CallOptions & {
        attempt?: number;
    }): Promise<void>;
    /**
     * Cancels a job that is running, pending or failed.
     * @param {number} id
     * @param {CallOptions} [opts]
     */
    cancel(id: number, opts?: CallOptions): Promise<void>;
    /**
     * Puts a failed, timed-out or cancelled job back in its queue.
     * @param {number} id
     * @param {CallOptions} [opts]
     */
    requeue(id: number, opts?: CallOptions): Promise<void>;
    /**
     * Deletes a job in any state (DELETE /job/{id}). Not sent again after a 503.
     * @param {number} id
     * @param {CallOptions} [opts]
     * @returns {Promise<void>}
     */
    deleteJob(id: number, opts?: CallOptions): Promise<void>;
    /**
     * Retries a running, failed, timed-out or cancelled job (POST
     * /job/{id}/retry), now, at run_at or after delay; it counts against its
     * retries.
     * @param {number} id
     * @param {CallOptions & { run_at?: TimeInput, delay?: DurationInput }} [opts]
     * @returns {Promise<{ status: Status, retries_attempted: number }>}
     */
    retryJob(id: number, opts?: CallOptions & {
        run_at?: TimeInput;
        delay?: DurationInput;
    }): Promise<{
        status: Status;
        retries_attempted: number;
    }>;
    /**
     * The ids of the jobs carrying tag, ascending (GET /tag/{name}).
     * @param {string} tag
     * @param {CallOptions} [opts]
     * @returns {Promise<number[]>}
     */
    jobIdsByTag(tag: string, opts?: CallOptions): Promise<number[]>;
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
    waitJob(id: number, wait: DurationInput, opts?: WaitOptions): Promise<Job>;
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
    createAndWait(queue: string, spec: JobSpec, wait: DurationInput, opts?: WaitOptions): Promise<WaitResult>;
    /**
     * Takes up to opts.count jobs from queue (GET /queue/{name}/job); they
     * are running when it returns. An empty array when none was ready (after
     * opts.wait). Not sent again after a 503: it may have handed a job to
     * nobody, which then times out and is retried by its policy.
     * @param {string} queue
     * @param {TakeOptions} [opts]
     * @returns {Promise<TakenJob[]>}
     */
    take(queue: string, opts?: TakeOptions): Promise<TakenJob[]>;
    /**
     * Takes one job from queue; null when none was ready.
     * @param {string} queue
     * @param {TakeOptions} [opts]
     * @returns {Promise<TakenJob | null>}
     */
    takeOne(queue: string, opts?: TakeOptions): Promise<TakenJob | null>;
    /**
     * Takes up to opts.count jobs from several queues in one request (GET
     * /job?queues=), picking among them by order.
     * @param {string[]} queues
     * @param {TakeOptions & { order?: 'ordered' | 'round_robin' }} [opts]
     * @returns {Promise<TakenJob[]>}
     */
    takeFrom(queues: string[], opts?: TakeOptions & {
        order?: "ordered" | "round_robin";
    }): Promise<TakenJob[]>;
    /**
     * The queue names, sorted (GET /queue).
     * @param {CallOptions} [opts]
     * @returns {Promise<string[]>}
     */
    listQueues(opts?: CallOptions): Promise<string[]>;
    /**
     * A queue's settings (GET /queue/{name}); paused and concurrency are
     * always set (false and 0 when the server leaves them out as defaults).
     * @param {string} name
     * @param {CallOptions} [opts]
     * @returns {Promise<import('./types.js').QueueSettings>}
     */
    getQueue(name: string, opts?: CallOptions): Promise<import("./types.js").QueueSettings>;
    /**
     * Creates a queue or replaces its Ocypod settings (PUT /queue/{name});
     * created reports a new queue.
     * @param {string} name
     * @param {import('./types.js').QueueSpec} [spec]
     * @param {CallOptions} [opts]
     * @returns {Promise<{ created: boolean }>}
     */
    putQueue(name: string, spec?: import("./types.js").QueueSpec, opts?: CallOptions): Promise<{
        created: boolean;
    }>;
    /**
     * Merges settings into a queue's (PATCH /queue/{name}).
     * @param {string} name
     * @param {import('./types.js').QueuePatch} patch
     * @param {CallOptions} [opts]
     * @returns {Promise<void>}
     */
    patchQueue(name: string, patch: import("./types.js").QueuePatch, opts?: CallOptions): Promise<void>;
    /**
     * Deletes a queue and its pending jobs (DELETE /queue/{name}). Not sent
     * again after a 503.
     * @param {string} name
     * @param {CallOptions} [opts]
     * @returns {Promise<void>}
     */
    deleteQueue(name: string, opts?: CallOptions): Promise<void>;
    /**
     * The number of queued jobs (GET /queue/{name}/size).
     * @param {string} name
     * @param {CallOptions} [opts]
     * @returns {Promise<number>}
     */
    queueSize(name: string, opts?: CallOptions): Promise<number>;
    /**
     * A queue's job ids by status (GET /queue/{name}/job_ids).
     * @param {string} name
     * @param {CallOptions} [opts]
     * @returns {Promise<import('./types.js').QueueJobIds>}
     */
    queueJobIds(name: string, opts?: CallOptions): Promise<import("./types.js").QueueJobIds>;
    /**
     * A queue's statistics of one UTC day (GET /queue/{name}/stats); no date
     * is the server's today.
     * @param {string} name
     * @param {CallOptions & { date?: Date | string }} [opts]
     * @returns {Promise<import('./types.js').QueueStats>}
     */
    queueStats(name: string, opts?: CallOptions & {
        date?: Date | string;
    }): Promise<import("./types.js").QueueStats>;
    /**
     * One page of the jobs of every queue (GET /jobs).
     * @param {ListOptions} [opts]
     * @returns {Promise<import('./types.js').JobPage>}
     */
    listJobs(opts?: ListOptions): Promise<import("./types.js").JobPage>;
    /**
     * One page of a queue's jobs (GET /queue/{name}/jobs).
     * @param {string} queue
     * @param {ListOptions} [opts]
     * @returns {Promise<import('./types.js').JobPage>}
     */
    listQueueJobs(queue: string, opts?: ListOptions): Promise<import("./types.js").JobPage>;
    /**
     * Every job listJobs (queue null) or listQueueJobs finds, page after page.
     * @param {string | null} queue
     * @param {ListOptions} [opts]
     * @returns {AsyncGenerator<Job>}
     */
    allJobs(queue: string | null, opts?: ListOptions): AsyncGenerator<Job>;
    /**
     * The jobs failed for good, counted by failure group (GET /failures).
     * @param {CallOptions} [opts]
     * @returns {Promise<Record<string, number>>}
     */
    failures(opts?: CallOptions): Promise<Record<string, number>>;
    /**
     * One page of a failure group's jobs (GET /failures/{group}); an unknown
     * group is an empty page.
     * @param {string} group
     * @param {CallOptions & { limit?: number, cursor?: string, fields?: string[] }} [opts]
     * @returns {Promise<import('./types.js').FailurePage>}
     */
    failureJobs(group: string, opts?: CallOptions & {
        limit?: number;
        cursor?: string;
        fields?: string[];
    }): Promise<import("./types.js").FailurePage>;
    /**
     * Every job of a failure group, page after page.
     * @param {string} group
     * @param {CallOptions & { limit?: number, cursor?: string, fields?: string[] }} [opts]
     * @returns {AsyncGenerator<Job>}
     */
    allFailureJobs(group: string, opts?: CallOptions & {
        limit?: number;
        cursor?: string;
        fields?: string[];
    }): AsyncGenerator<Job>;
    /**
     * Requeues up to limit jobs of a failure group (POST
     * /failures/{group}/retry), into queue when given; answers how many.
     * Not sent again after a 503.
     * @param {string} group
     * @param {CallOptions & { limit?: number, queue?: string }} [opts]
     * @returns {Promise<number>}
     */
    retryFailures(group: string, opts?: CallOptions & {
        limit?: number;
        queue?: string;
    }): Promise<number>;
    /**
     * The workers that took a job recently, most recent first (GET /workers).
     * @param {CallOptions} [opts]
     * @returns {Promise<import('./types.js').WorkerSummary[]>}
     */
    workers(opts?: CallOptions): Promise<import("./types.js").WorkerSummary[]>;
    /**
     * A worker's running and timed-out job ids (GET /workers/{name}).
     * @param {string} name
     * @param {CallOptions} [opts]
     * @returns {Promise<import('./types.js').WorkerJobs>}
     */
    workerJobs(name: string, opts?: CallOptions): Promise<import("./types.js").WorkerJobs>;
    /**
     * Creates or replaces a recurring job (PUT /queue/{name}/schedules/{id}).
     * @param {string} queue
     * @param {string} id
     * @param {import('./types.js').ScheduleSpec} spec
     * @param {CallOptions} [opts]
     * @returns {Promise<{ created: boolean }>}
     */
    putSchedule(queue: string, id: string, spec: import("./types.js").ScheduleSpec, opts?: CallOptions): Promise<{
        created: boolean;
    }>;
    /**
     * A schedule with its next run (GET /queue/{name}/schedules/{id}).
     * @param {string} queue
     * @param {string} id
     * @param {CallOptions} [opts]
     * @returns {Promise<import('./types.js').Schedule>}
     */
    getSchedule(queue: string, id: string, opts?: CallOptions): Promise<import("./types.js").Schedule>;
    /**
     * Deletes a schedule (DELETE /queue/{name}/schedules/{id}).
     * @param {string} queue
     * @param {string} id
     * @param {CallOptions} [opts]
     * @returns {Promise<void>}
     */
    deleteSchedule(queue: string, id: string, opts?: CallOptions): Promise<void>;
    /**
     * A queue's schedules by id (GET /queue/{name}/schedules).
     * @param {string} queue
     * @param {CallOptions} [opts]
     * @returns {Promise<import('./types.js').Schedule[]>}
     */
    listSchedules(queue: string, opts?: CallOptions): Promise<import("./types.js").Schedule[]>;
    /**
     * Applies up to 1000 job updates in one request (PATCH /jobs); each item
     * is applied on its own and answered in order. Never sent again after a
     * 503.
     * @param {import('./types.js').BatchUpdate[]} items
     * @param {CallOptions} [opts]
     * @returns {Promise<import('./types.js').BatchResult[]>}
     */
    updateJobs(items: import("./types.js").BatchUpdate[], opts?: CallOptions): Promise<import("./types.js").BatchResult[]>;
    /**
     * Applies a batch of job updates, then takes up to take.count jobs from
     * take.queue in the same request (PATCH /jobs?take=).
     * @param {import('./types.js').BatchUpdate[]} items
     * @param {TakeOptions & { queue: string }} take
     * @returns {Promise<{ results: import('./types.js').BatchResult[], jobs: TakenJob[] }>}
     */
    updateJobsAndTake(items: import("./types.js").BatchUpdate[], take: TakeOptions & {
        queue: string;
    }): Promise<{
        results: import("./types.js").BatchResult[];
        jobs: TakenJob[];
    }>;
    /**
     * Records the heartbeats of up to 1000 running jobs (POST
     * /jobs/heartbeat), each fenced by its attempt.
     * @param {{ id: number, attempt?: number }[]} items
     * @param {CallOptions} [opts]
     * @returns {Promise<import('./types.js').BatchResult[]>}
     */
    heartbeatJobs(items: {
        id: number;
        attempt?: number;
    }[], opts?: CallOptions): Promise<import("./types.js").BatchResult[]>;
}
export type ClientOptions = {
    /**
     * how many times a call is sent again after a failure that is safe to retry (default 3; 0 turns retries off)
     */
    retries?: number | undefined;
    /**
     * the first wait between attempts in ms, doubled per attempt with jitter up to 32 times (default 100)
     */
    backoff?: number | undefined;
    userAgent?: string | undefined;
    /**
     * sent with every request (a proxy's, an API key's)
     */
    headers?: Record<string, string> | undefined;
    /**
     * the fetch to use (default: the global one); the hook for request signing
     */
    fetch?: typeof fetch | undefined;
};
/**
 * Options every call takes.
 */
export type CallOptions = {
    /**
     * aborts the call (and its retries)
     */
    signal?: AbortSignal | undefined;
};
export type TakeOptions = {
    /**
     * how many jobs at most, 1 to 100 (default 1)
     */
    count?: number | undefined;
    /**
     * names the taker: recorded on the job, listed by workers()
     */
    worker?: string | undefined;
    /**
     * long-poll up to this long (at most 20s); 0 answers at once
     */
    wait?: import("./durations.js").DurationInput | undefined;
    signal?: AbortSignal | undefined;
};
export type WaitOptions = {
    /**
     * the fields of the answer, by the server's names ("status", "output"...)
     */
    fields?: string[] | undefined;
    /**
     * aborts the wait (and its retries)
     */
    signal?: AbortSignal | undefined;
};
/**
 * The answer of createAndWait.
 */
export type WaitResult = {
    /**
     * the job's id, also when it did not end within the wait
     */
    id: number;
    /**
     * whether it ended for good within the wait
     */
    ended: boolean;
    /**
     * when ended, the job's id, status, output and error (or the fields named); null otherwise
     */
    job: Job | null;
};
/**
 * A low-level request: what request() sends.
 */
export type RequestOptions = {
    query?: Record<string, string | number | boolean | undefined> | undefined;
    /**
     * a value sent as JSON (undefined: no body)
     */
    body?: unknown;
    /**
     * a body sent as it is, with Content-Type application/json
     */
    rawBody?: string | undefined;
    /**
     * also sent again after a 502, 503, 504 or a failed connection
     */
    idempotent?: boolean | undefined;
    /**
     * answer a 4xx or 5xx instead of throwing
     */
    allowError?: boolean | undefined;
    signal?: AbortSignal | undefined;
};
/**
 * A low-level answer.
 */
export type Response = {
    status: number;
    headers: Headers;
    /**
     * the body as text
     */
    text: string;
};
/**
 * Filters and paging of a job listing.
 */
export type ListOptions = {
    status?: import("./types.js").Status | undefined;
    tag?: string | undefined;
    /**
     * a queue's listing only
     */
    key?: string | undefined;
    worker?: string | undefined;
    tracked?: boolean | undefined;
    fields?: string[] | undefined;
    /**
     * 1 to 1000 (the server's default: 100)
     */
    limit?: number | undefined;
    /**
     * the previous page's next_cursor
     */
    cursor?: string | undefined;
    signal?: AbortSignal | undefined;
};
export type JsonValue = import("./types.js").JsonValue;
export type Job = import("./types.js").Job;
export type JobSpec = import("./types.js").JobSpec;
export type JobUpdate = import("./types.js").JobUpdate;
export type TakenJob = import("./types.js").TakenJob;
export type Status = import("./types.js").Status;
export type DurationInput = import("./durations.js").DurationInput;
export type TimeInput = import("./durations.js").TimeInput;
