// The API's JSON shapes, as JSDoc types (no code). Bodies and answers keep
// the server's snake_case keys, so the API documentation applies as it is;
// durations are the server's strings in answers and milliseconds or
// strings in requests.

/**
 * @typedef {'queued' | 'running' | 'completed' | 'failed' | 'cancelled' | 'timed_out' | 'scheduled' | 'waiting'} Status
 */

/**
 * Any JSON value (a job's input or output), as JSON.parse gives it.
 * @typedef {any} JsonValue
 */

/**
 * An exponential retry policy: the delay of retry n is min(max, min·factorⁿ⁻¹).
 * @typedef {object} BackoffSpec
 * @property {import('./durations.js').DurationInput} min at least 1s
 * @property {import('./durations.js').DurationInput} max at least min
 * @property {number} [factor] at least 1 (the server's default: 2)
 * @property {boolean} [jitter] full jitter (the server's default: true)
 */

/**
 * @typedef {object} Backoff
 * @property {string} min
 * @property {string} max
 * @property {number} factor
 * @property {boolean} jitter
 */

/**
 * The error a worker reported with a failure.
 * @typedef {object} JobError
 * @property {string} [group] the failure group of a job failed for good (1 to 128 printable characters)
 * @property {string} [message] free text, at most 64 KiB
 */

/**
 * A create body (POST /queue/{name}/job, each element of a batch create, a
 * schedule's job). Absent fields take the queue's settings and the
 * server's defaults.
 * @typedef {object} JobSpec
 * @property {JsonValue} [input]
 * @property {string[]} [tags] at most 64, none empty
 * @property {import('./durations.js').DurationInput} [timeout]
 * @property {import('./durations.js').DurationInput} [heartbeat_timeout]
 * @property {import('./durations.js').DurationInput} [expires_after]
 * @property {number} [retries]
 * @property {import('./durations.js').DurationInput[]} [retry_delays]
 * @property {number} [priority] -1000000 to 1000000; higher is taken first
 * @property {import('./durations.js').TimeInput} [run_at] not taken before then
 * @property {import('./durations.js').DurationInput} [delay] not taken before this has passed; not with run_at
 * @property {string} [key] unique per queue among live jobs
 * @property {'keep' | 'update' | 'error'} [on_conflict] needs key
 * @property {'always' | 'if_later' | 'if_earlier' | 'never'} [update_run_at] needs on_conflict "update"
 * @property {number[]} [depends_on] waiting until every one is completed
 * @property {BackoffSpec} [retry_backoff] instead of retry_delays
 * @property {number} [timeout_retries] timed-out attempts count against this instead of retries
 * @property {boolean} [tracked]
 */

/**
 * One entry of a job's history.
 * @typedef {object} Attempt
 * @property {number} attempt
 * @property {string | null} worker
 * @property {string} started_at
 * @property {string | null} ended_at
 * @property {Status} status
 * @property {JobError | null} error
 */

/**
 * A job as GET /job/{id} shows it. With a field list only the fields named
 * are present; extension fields appear when not default.
 * @typedef {object} Job
 * @property {number} id
 * @property {string} queue
 * @property {Status} status
 * @property {string[] | null} tags
 * @property {string} created_at
 * @property {string | null} started_at
 * @property {string | null} ended_at
 * @property {string | null} last_heartbeat
 * @property {JsonValue} input
 * @property {JsonValue} output
 * @property {string} timeout
 * @property {string} heartbeat_timeout
 * @property {string} expires_after
 * @property {number} retries
 * @property {number} retries_attempted
 * @property {string[] | null} retry_delays
 * @property {boolean} ended
 * @property {number} [priority]
 * @property {string | null} [run_at]
 * @property {string | null} [key]
 * @property {number[]} [depends_on]
 * @property {number[]} [dependents]
 * @property {Backoff | null} [retry_backoff]
 * @property {number | null} [timeout_retries]
 * @property {boolean} [tracked]
 * @property {number} [attempt]
 * @property {string | null} [worker]
 * @property {JobError | null} [error]
 * @property {Attempt[]} [history]
 */

/**
 * A job a take handed over: it is now running, and its attempt fences the
 * worker's heartbeats and reports.
 * @typedef {object} TakenJob
 * @property {number} id
 * @property {JsonValue} input
 * @property {number} attempt
 * @property {string} queue
 */

/**
 * A PATCH /job/{id} body. Absent fields are left as they are.
 * @typedef {object} JobUpdate
 * @property {Status} [status] completed, failed, timed_out or cancelled for a running job; cancelled for a pending or failed one; queued to requeue
 * @property {JsonValue} [output]
 * @property {JobError} [error] with status failed or timed_out
 * @property {boolean} [retry] false, with status failed: fail for good
 * @property {import('./durations.js').TimeInput} [retry_at] with status failed
 * @property {import('./durations.js').DurationInput} [retry_in] with status failed
 * @property {JobSpec & { queue: string }} [next] with status completed: a follow-up job
 * @property {number} [priority] a pending job only
 * @property {import('./durations.js').TimeInput} [run_at] a pending job only
 * @property {import('./durations.js').DurationInput} [delay] a pending job only
 * @property {number[]} [depends_on] a pending job only
 * @property {string[]} [tags]
 * @property {boolean} [tracked]
 */

/**
 * How a job failed, for Client.fail.
 * @typedef {object} Failure
 * @property {JobError} [error] kept in the history; its group is the failure group
 * @property {boolean} [permanent] fail for good, whatever retries are left
 * @property {import('./durations.js').TimeInput} [retryAt] this retry's due time instead of the policy's
 * @property {import('./durations.js').DurationInput} [retryIn] or its delay
 */

/**
 * @typedef {object} RateLimit
 * @property {number} per_second above 0
 * @property {number} burst at least 1
 */

/**
 * A queue's settings as GET /queue/{name} shows them (extension settings
 * only when not default).
 * @typedef {object} QueueSettings
 * @property {string} timeout
 * @property {string} heartbeat_timeout
 * @property {string} expires_after
 * @property {number} retries
 * @property {string[]} retry_delays
 * @property {boolean} paused
 * @property {number} concurrency most running jobs; 0: no limit
 * @property {RateLimit} [rate_limit]
 * @property {Backoff} [retry_backoff]
 * @property {number} [timeout_retries]
 * @property {string} [dead_letter_queue]
 * @property {number} [shards]
 */

/**
 * A PUT /queue/{name} body: absent fields return to their defaults.
 * @typedef {object} QueueSpec
 * @property {import('./durations.js').DurationInput} [timeout]
 * @property {import('./durations.js').DurationInput} [heartbeat_timeout]
 * @property {import('./durations.js').DurationInput} [expires_after]
 * @property {number} [retries]
 * @property {import('./durations.js').DurationInput[]} [retry_delays]
 */

/**
 * A PATCH /queue/{name} body: the settings given change, the others stay;
 * null removes an optional setting.
 * @typedef {object} QueuePatch
 * @property {import('./durations.js').DurationInput} [timeout]
 * @property {import('./durations.js').DurationInput} [heartbeat_timeout]
 * @property {import('./durations.js').DurationInput} [expires_after]
 * @property {number} [retries]
 * @property {import('./durations.js').DurationInput[]} [retry_delays]
 * @property {boolean} [paused]
 * @property {number} [concurrency] most running jobs; 0: no limit
 * @property {RateLimit | null} [rate_limit]
 * @property {BackoffSpec | null} [retry_backoff]
 * @property {number | null} [timeout_retries]
 * @property {string | null} [dead_letter_queue]
 * @property {number} [shards]
 */

/**
 * @typedef {object} QueueJobIds
 * @property {number[]} queued in take order
 * @property {number[]} running
 * @property {number[]} failed
 * @property {number[]} completed
 * @property {number[]} cancelled
 * @property {number[]} timed_out
 * @property {number[]} [scheduled]
 * @property {number[]} [waiting]
 */

/**
 * @typedef {object} QueueCounts
 * @property {number} queued
 * @property {number} running
 * @property {number} failed
 * @property {number} completed
 * @property {number} cancelled
 * @property {number} timed_out
 * @property {number} [scheduled]
 * @property {number} [waiting]
 */

/**
 * @typedef {object} Info
 * @property {Record<string, QueueCounts>} queues
 * @property {{ total_jobs_created: number, total_jobs_completed: number, total_jobs_retried: number, total_jobs_failed: number, total_jobs_timed_out: number, total_jobs_cancelled: number }} statistics
 */

/**
 * @typedef {object} JobPage
 * @property {Job[]} jobs
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} FailurePage
 * @property {number} total
 * @property {Job[]} jobs each with its error
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} WorkerSummary
 * @property {string} name
 * @property {string} last_seen
 * @property {number} running
 * @property {number} timed_out
 */

/**
 * @typedef {object} WorkerJobs
 * @property {number[]} running
 * @property {number[]} timed_out
 */

/**
 * @typedef {object} DurationStats
 * @property {number} count
 * @property {number} mean seconds
 * @property {number} variance
 * @property {number[]} histogram 172 buckets
 */

/**
 * @typedef {object} QueueStats
 * @property {number} created
 * @property {number} completed
 * @property {number} failed
 * @property {number} retries
 * @property {DurationStats} wait
 * @property {DurationStats} run
 */

/**
 * A recurring job: cron (5 fields, UTC) or every, and the create body of
 * the jobs it makes.
 * @typedef {object} ScheduleSpec
 * @property {string} [cron]
 * @property {import('./durations.js').DurationInput} [every]
 * @property {JobSpec} job
 */

/**
 * @typedef {object} Schedule
 * @property {string} id
 * @property {string} queue
 * @property {string} [cron]
 * @property {string} [every]
 * @property {{ [key: string]: JsonValue }} job
 * @property {string | null} next_run
 */

/**
 * One item of PATCH /jobs: a job id, its attempt (fencing) and the
 * fields of a PATCH /job/{id}.
 * @typedef {JobUpdate & { id: number, attempt?: number }} BatchUpdate
 */

/**
 * The answer for one item of a batch: 204 applied, 201 with next, or a
 * 4xx with the sentence the single call would give.
 * @typedef {object} BatchResult
 * @property {number} id
 * @property {number} status
 * @property {string} [error]
 * @property {number} [next]
 */

export {};
