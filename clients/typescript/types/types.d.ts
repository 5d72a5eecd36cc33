export type Status = "queued" | "running" | "completed" | "failed" | "cancelled" | "timed_out" | "scheduled" | "waiting";
/**
 * Any JSON value (a job's input or output), as JSON.parse gives it.
 */
export type JsonValue = any;
/**
 * An exponential retry policy: the delay of retry n is min(max, min·factorⁿ⁻¹).
 */
export type BackoffSpec = {
    /**
     * at least 1s
     */
    min: import("./durations.js").DurationInput;
    /**
     * at least min
     */
    max: import("./durations.js").DurationInput;
    /**
     * at least 1 (the server's default: 2)
     */
    factor?: number | undefined;
    /**
     * full jitter (the server's default: true)
     */
    jitter?: boolean | undefined;
};
export type Backoff = {
    min: string;
    max: string;
    factor: number;
    jitter: boolean;
};
/**
 * The error a worker reported with a failure.
 */
export type JobError = {
    /**
     * the failure group of a job failed for good (1 to 128 printable characters)
     */
    group?: string | undefined;
    /**
     * free text, at most 64 KiB
     */
    message?: string | undefined;
};
/**
 * A create body (POST /queue/{name}/job, each element of a batch create, a
 * schedule's job). Absent fields take the queue's settings and the
 * server's defaults.
 */
export type JobSpec = {
    input?: JsonValue;
    /**
     * at most 64, none empty
     */
    tags?: string[] | undefined;
    timeout?: import("./durations.js").DurationInput | undefined;
    heartbeat_timeout?: import("./durations.js").DurationInput | undefined;
    expires_after?: import("./durations.js").DurationInput | undefined;
    retries?: number | undefined;
    retry_delays?: import("./durations.js").DurationInput[] | undefined;
    /**
     * -1000000 to 1000000; higher is taken first
     */
    priority?: number | undefined;
    /**
     * not taken before then
     */
    run_at?: import("./durations.js").TimeInput | undefined;
    /**
     * not taken before this has passed; not with run_at
     */
    delay?: import("./durations.js").DurationInput | undefined;
    /**
     * unique per queue among live jobs
     */
    key?: string | undefined;
    /**
     * needs key
     */
    on_conflict?: "keep" | "update" | "error" | undefined;
    /**
     * needs on_conflict "update"
     */
    update_run_at?: "always" | "if_later" | "if_earlier" | "never" | undefined;
    /**
     * waiting until every one is completed
     */
    depends_on?: number[] | undefined;
    /**
     * instead of retry_delays
     */
    retry_backoff?: BackoffSpec | undefined;
    /**
     * timed-out attempts count against this instead of retries
     */
    timeout_retries?: number | undefined;
    tracked?: boolean | undefined;
};
/**
 * One entry of a job's history.
 */
export type Attempt = {
    attempt: number;
    worker: string | null;
    started_at: string;
    ended_at: string | null;
    status: Status;
    error: JobError | null;
};
/**
 * A job as GET /job/{id} shows it. With a field list only the fields named
 * are present; extension fields appear when not default.
 */
export type Job = {
    id: number;
    queue: string;
    status: Status;
    tags: string[] | null;
    created_at: string;
    started_at: string | null;
    ended_at: string | null;
    last_heartbeat: string | null;
    input: JsonValue;
    output: JsonValue;
    timeout: string;
    heartbeat_timeout: string;
    expires_after: string;
    retries: number;
    retries_attempted: number;
    retry_delays: string[] | null;
    ended: boolean;
    priority?: number | undefined;
    run_at?: string | null | undefined;
    key?: string | null | undefined;
    depends_on?: number[] | undefined;
    dependents?: number[] | undefined;
    retry_backoff?: Backoff | null | undefined;
    timeout_retries?: number | null | undefined;
    tracked?: boolean | undefined;
    attempt?: number | undefined;
    worker?: string | null | undefined;
    error?: JobError | null | undefined;
    history?: Attempt[] | undefined;
};
/**
 * A job a take handed over: it is now running, and its attempt fences the
 * worker's heartbeats and reports.
 */
export type TakenJob = {
    id: number;
    input: JsonValue;
    attempt: number;
    queue: string;
};
/**
 * A PATCH /job/{id} body. Absent fields are left as they are.
 */
export type JobUpdate = {
    /**
     * completed, failed, timed_out or cancelled for a running job; cancelled for a pending or failed one; queued to requeue
     */
    status?: Status | undefined;
    output?: JsonValue;
    /**
     * with status failed or timed_out
     */
    error?: JobError | undefined;
    /**
     * false, with status failed: fail for good
     */
    retry?: boolean | undefined;
    /**
     * with status failed
     */
    retry_at?: import("./durations.js").TimeInput | undefined;
    /**
     * with status failed
     */
    retry_in?: import("./durations.js").DurationInput | undefined;
    /**
     * with status completed: a follow-up job
     */
    next?: (JobSpec & {
        queue: string;
    }) | undefined;
    /**
     * a pending job only
     */
    priority?: number | undefined;
    /**
     * a pending job only
     */
    run_at?: import("./durations.js").TimeInput | undefined;
    /**
     * a pending job only
     */
    delay?: import("./durations.js").DurationInput | undefined;
    /**
     * a pending job only
     */
    depends_on?: number[] | undefined;
    tags?: string[] | undefined;
    tracked?: boolean | undefined;
};
/**
 * How a job failed, for Client.fail.
 */
export type Failure = {
    /**
     * kept in the history; its group is the failure group
     */
    error?: JobError | undefined;
    /**
     * fail for good, whatever retries are left
     */
    permanent?: boolean | undefined;
    /**
     * this retry's due time instead of the policy's
     */
    retryAt?: import("./durations.js").TimeInput | undefined;
    /**
     * or its delay
     */
    retryIn?: import("./durations.js").DurationInput | undefined;
};
export type RateLimit = {
    /**
     * above 0
     */
    per_second: number;
    /**
     * at least 1
     */
    burst: number;
};
/**
 * A queue's settings as GET /queue/{name} shows them (extension settings
 * only when not default).
 */
export type QueueSettings = {
    timeout: string;
    heartbeat_timeout: string;
    expires_after: string;
    retries: number;
    retry_delays: string[];
    paused: boolean;
    /**
     * most running jobs; 0: no limit
     */
    concurrency: number;
    rate_limit?: RateLimit | undefined;
    retry_backoff?: Backoff | undefined;
    timeout_retries?: number | undefined;
    dead_letter_queue?: string | undefined;
    shards?: number | undefined;
};
/**
 * A PUT /queue/{name} body: absent fields return to their defaults.
 */
export type QueueSpec = {
    timeout?: import("./durations.js").DurationInput | undefined;
    heartbeat_timeout?: import("./durations.js").DurationInput | undefined;
    expires_after?: import("./durations.js").DurationInput | undefined;
    retries?: number | undefined;
    retry_delays?: import("./durations.js").DurationInput[] | undefined;
};
/**
 * A PATCH /queue/{name} body: the settings given change, the others stay;
 * null removes an optional setting.
 */
export type QueuePatch = {
    timeout?: import("./durations.js").DurationInput | undefined;
    heartbeat_timeout?: import("./durations.js").DurationInput | undefined;
    expires_after?: import("./durations.js").DurationInput | undefined;
    retries?: number | undefined;
    retry_delays?: import("./durations.js").DurationInput[] | undefined;
    paused?: boolean | undefined;
    /**
     * most running jobs; 0: no limit
     */
    concurrency?: number | undefined;
    rate_limit?: RateLimit | null | undefined;
    retry_backoff?: BackoffSpec | null | undefined;
    timeout_retries?: number | null | undefined;
    dead_letter_queue?: string | null | undefined;
    shards?: number | undefined;
};
export type QueueJobIds = {
    /**
     * in take order
     */
    queued: number[];
    running: number[];
    failed: number[];
    completed: number[];
    cancelled: number[];
    timed_out: number[];
    scheduled?: number[] | undefined;
    waiting?: number[] | undefined;
};
export type QueueCounts = {
    queued: number;
    running: number;
    failed: number;
    completed: number;
    cancelled: number;
    timed_out: number;
    scheduled?: number | undefined;
    waiting?: number | undefined;
};
export type Info = {
    queues: Record<string, QueueCounts>;
    statistics: {
        total_jobs_created: number;
        total_jobs_completed: number;
        total_jobs_retried: number;
        total_jobs_failed: number;
        total_jobs_timed_out: number;
        total_jobs_cancelled: number;
    };
};
export type JobPage = {
    jobs: Job[];
    next_cursor: string | null;
};
export type FailurePage = {
    total: number;
    /**
     * each with its error
     */
    jobs: Job[];
    next_cursor: string | null;
};
export type WorkerSummary = {
    name: string;
    last_seen: string;
    running: number;
    timed_out: number;
};
export type WorkerJobs = {
    running: number[];
    timed_out: number[];
};
export type DurationStats = {
    count: number;
    /**
     * seconds
     */
    mean: number;
    variance: number;
    /**
     * 172 buckets
     */
    histogram: number[];
};
export type QueueStats = {
    created: number;
    completed: number;
    failed: number;
    retries: number;
    wait: DurationStats;
    run: DurationStats;
};
/**
 * A recurring job: cron (5 fields, UTC) or every, and the create body of
 * the jobs it makes.
 */
export type ScheduleSpec = {
    cron?: string | undefined;
    every?: import("./durations.js").DurationInput | undefined;
    job: JobSpec;
};
export type Schedule = {
    id: string;
    queue: string;
    cron?: string | undefined;
    every?: string | undefined;
    job: {
        [key: string]: JsonValue;
    };
    next_run: string | null;
};
/**
 * One item of PATCH /jobs: a job id, its attempt (fencing) and the
 * fields of a PATCH /job/{id}.
 */
export type BatchUpdate = JobUpdate & {
    id: number;
    attempt?: number;
};
/**
 * The answer for one item of a batch: 204 applied, 201 with next, or a
 * 4xx with the sentence the single call would give.
 */
export type BatchResult = {
    id: number;
    status: number;
    error?: string | undefined;
    next?: number | undefined;
};
