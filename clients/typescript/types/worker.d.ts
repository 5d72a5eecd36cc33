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
    constructor(tj: TakenJob, client: Client, signal: AbortSignal);
    /** The job's id. */
    id: number;
    /** The queue it was taken from. */
    queue: string;
    /** This attempt's number: it fences every call about the job. */
    attempt: number;
    /** The job's input. */
    input: any;
    /**
     * Aborts when the job is lost (reason JobLostError) or at the end of
     * the shutdown grace period (reason ShutdownError). It does not abort
     * when the worker stops: a running handler may finish during the grace
     * period.
     */
    signal: AbortSignal;
    /** @private */ private client;
    /**
     * Replaces the job's output while it runs (progress, partial results),
     * fenced by its attempt.
     * @param {JsonValue} output
     */
    setOutput(output: JsonValue): Promise<void>;
    /** Sends a heartbeat now, fenced by the job's attempt. The worker sends them by itself. */
    heartbeat(): Promise<void>;
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
    constructor(client: Client, handler: Handler, options: WorkerOptions);
    /** @private */ private client;
    /** @private */ private handler;
    /** @private */ private opts;
    /** @private */ private state;
    /** @private */ private reportTimeout;
    /** The worker's name, recorded on the jobs it takes. */
    get name(): string;
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
    run(opts?: {
        signal?: AbortSignal;
    }): Promise<void>;
    /**
     * Starts the graceful shutdown of run(): no more takes; running handlers
     * have shutdownGrace to finish.
     */
    stop(): void;
    /**
     * Takes jobs while slots are free, until the worker stops.
     * @private
     * @param {RunState} st
     */
    private poll;
    /**
     * @private
     * @param {number} n
     * @param {AbortSignal} signal
     */
    private take;
    /**
     * The queue a report may take the next job from in the same request, ""
     * for none: the only queue, or the first of ordered queues. Round-robin
     * takes stay with the long poll, which alone rotates fairly.
     * @private
     * @param {RunState} st
     */
    private takeQueue;
    /**
     * Runs a lane on a slot already counted: the job, then each job its
     * report took, until one takes nothing.
     * @private
     * @param {RunState} st
     * @param {TakenJob} first
     */
    private lane;
    /**
     * Runs the handler on one job and reports its outcome; returns the job
     * the report took, if any.
     * @private
     * @param {RunState} st
     * @param {TakenJob} tj
     * @returns {Promise<TakenJob | null>}
     */
    private work;
    /**
     * @private
     * @param {Task} task
     * @param {unknown} err
     */
    private finished;
    /**
     * Completes or fails the job; returns the job a completion took.
     * @private
     * @param {RunState} st
     * @param {Task} task
     * @param {unknown} out
     * @param {unknown} herr
     * @returns {Promise<TakenJob | null>}
     */
    private report;
    /**
     * @private
     * @param {RunState} st
     * @param {Task} task
     * @param {unknown} herr
     * @param {AbortSignal} signal
     */
    private fail;
    /**
     * Fails a job whose handler did not finish in time, with a retry due at
     * once, so another worker takes it while it has retries left.
     * @private
     * @param {Task} task
     */
    private release;
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
    private send;
    /**
     * @private
     * @param {Task} task
     * @param {JobUpdate} u
     * @param {AbortSignal} signal
     * @param {string} takeQ
     * @param {boolean} repeated
     * @returns {Promise<TakenJob | null>}
     */
    private sendOne;
    /**
     * Whether the task's attempt ended with status want, as a repeated
     * update that found it ended asks.
     * @private
     * @param {Task} task
     * @param {string} want
     * @param {AbortSignal} signal
     */
    private applied;
    /**
     * Sends the task's heartbeats until its handler returns (with batches,
     * registers the task with the batch loop instead). A heartbeat refused
     * because the job is no longer this attempt's (409, 404) aborts the
     * handler's signal with JobLostError.
     * @private
     * @param {RunState} st
     * @param {Task} task
     */
    private heartbeat;
    /**
     * @private
     * @param {Task} task
     * @param {unknown} err
     */
    private lose;
    /**
     * Reads the job's heartbeat_timeout in ms, trying again each second
     * while the server cannot answer; throws when stop aborts.
     * @private
     * @param {Task} task
     * @param {AbortSignal} stop
     * @returns {Promise<number>}
     */
    private heartbeatTimeout;
    /**
     * With batches: one POST /jobs/heartbeat for every running job whose
     * heartbeat is due, at the pace of the shortest interval. A job is sent
     * early rather than late (each is due within its interval of the last).
     * @private
     * @param {RunState} st
     */
    private heartbeatBatches;
    /**
     * Waits for the lanes up to the grace period, then releases the jobs
     * still running and waits for the reports under way.
     * @private
     * @param {RunState} st
     */
    private shutdown;
    /**
     * @private
     * @param {'warn' | 'error'} level
     * @param {string} msg
     * @param {Record<string, unknown>} [f]
     */
    private log;
}
export type Client = import("./client.js").Client;
export type TakenJob = import("./types.js").TakenJob;
export type JobUpdate = import("./types.js").JobUpdate;
export type JsonValue = import("./types.js").JsonValue;
/**
 * Receives a line per failed request and per job that failed, was lost or
 * released. `console` will do.
 */
export type Logger = {
    warn: (msg: string, fields?: Record<string, unknown>) => void;
    error: (msg: string, fields?: Record<string, unknown>) => void;
};
export type WorkerOptions = {
    /**
     * to take jobs from (at least one)
     */
    queues: string[];
    /**
     * how a take from several queues picks among them
     */
    order?: "ordered" | "round_robin" | undefined;
    /**
     * how many handlers run at once (default 1)
     */
    concurrency?: number | undefined;
    /**
     * recorded on the jobs it takes (1 to 128 printable characters; default "<host>-<pid>-<random>")
     */
    name?: string | undefined;
    /**
     * the long-poll wait of a take in ms (default and most: 20000)
     */
    wait?: number | undefined;
    /**
     * ms between a running job's heartbeats; 0 (default) reads each job's heartbeat_timeout once its handler has run 250ms and sends one every third of it; negative sends none
     */
    heartbeatInterval?: number | undefined;
    /**
     * ms running handlers may go on once the worker stops (default 30000); jobs still running then are released
     */
    shutdownGrace?: number | undefined;
    /**
     * the first wait in ms after a take failed, doubled while it keeps failing (default 1000)
     */
    errorBackoff?: number | undefined;
    /**
     * report outcomes with PATCH /jobs (taking the next jobs in the same request with ?take=) and send heartbeats with POST /jobs/heartbeat: one request for many jobs
     */
    batch?: boolean | {
        maxItems?: number;
    } | undefined;
    /**
     * process signals that stop the worker while run() runs (default SIGINT and SIGTERM; a second one ends the grace period at once); [] installs none
     */
    shutdownSignals?: NodeJS.Signals[] | undefined;
    logger?: Logger | null | undefined;
    /**
     * called once per job taken, after its outcome was reported: err is null when it completed, else the handler's error (an AggregateError with a failed report), a JobLostError or a ShutdownError
     */
    onFinish?: ((job: Job, err: unknown) => void) | undefined;
};
/**
 * Does one job's work. What it returns completes the job with that output
 * (undefined leaves the output as it is); what it throws fails the job,
 * retried by the job's policy unless wrapped with permanent(), retryAt()
 * or retryIn().
 */
export type Handler = (job: Job) => Promise<JsonValue | undefined | void> | JsonValue | undefined | void;
export type BatchOutcome = {
    /**
     * the item's answer
     */
    result?: import("./types.js").BatchResult | undefined;
    /**
     * the job taken for the item's lane
     */
    next: TakenJob | null;
    /**
     * the batch request's failure
     */
    error?: unknown;
};
