// Package redisstore is the Ocypod job store on Redis: the only package that
// talks to Redis. It implements httpapi.Store and the three sweeps the
// scheduled Lambdas and the local server run.
//
// # One round trip per operation
//
// Every state change is one Lua script (scripts/<op>.lua, embedded), run
// with EVALSHA (go-redis falls back to EVAL on NOSCRIPT): atomic, with no
// WATCH/MULTI retry loop and no intermediate list a crash could strand a job
// in. Reads that are one command (HGETALL of a job or queue, HGET status,
// HMGET output, SMEMBERS queues, ZRANGE of a tag, PING) are plain commands;
// reads that need several keys (queue size, job ids, info) are scripts too.
// The time comes from Options.Now and travels in ARGV; no script calls TIME.
//
// scripts/lib.lua holds the helpers every script shares (key builders,
// result codes, score arithmetic, the state moves and sweep steps); it is
// prepended to each script's source when the package loads (scripts.go), so
// each script is self-contained on the server. Script inventory:
//
//	put_queue       PutQueue                create or replace settings, register
//	delete_queue    DeleteQueue             settings, pending set, queued jobs, registry
//	queue_size      QueueSize               existence check + ZCARD (read-only)
//	queue_job_ids   QueueJobIDs             existence check + 6 ZRANGEs (read-only)
//	create_job      CreateJob               inherit settings, INCR id, hash, pending, tags
//	next_job        NextJob                 inline sweep, ZPOPMIN, mark running
//	update_job      UpdateJob               output and/or transition (table passed from Go)
//	set_job_output  SetJobOutput            output of a running job
//	heartbeat       Heartbeat               last_heartbeat, new running deadline
//	delete_job      DeleteJob               hash and every index entry
//	info            Info                    per-queue ZCARDs + stats (read-only)
//	sweep_timeouts  SweepTimeouts           due running jobs -> timed_out
//	sweep_retries   SweepRetries            due failed jobs -> queued (or abandoned)
//	sweep_expiry    SweepExpiry             due ended jobs -> deleted
//
// # Key layout
//
// Every key starts with the hash tag "{<ns>}:" (ns = Options.Namespace, or
// "ocypod"), so all keys of a namespace live in one cluster slot and every
// script is legal on Redis Cluster, ElastiCache cluster mode and ElastiCache
// Serverless. The namespace is restricted to [A-Za-z0-9_.-]{1,64}, so it can
// never close its tag early. Scripts receive one real key in KEYS[1] (for
// routing) and the prefix in ARGV[1]; the keys they cannot know in advance
// are built in Lua with the same patterns as keys.go (a test compares them).
// Layout (this is not Ocypod's layout; sharing a database with the Rust
// server is not a goal):
//
//	{ns}:queues                 SET   registered queue names
//	{ns}:queue:<name>           HASH  timeout, heartbeat_timeout, expires_after (whole
//	                                  seconds), retries, retry_delays (JSON array of
//	                                  whole seconds, absent when empty)
//	{ns}:queue:<name>:jobs      ZSET  pending job ids -> sequence number ({ns}:seq):
//	                                  FIFO, requeues go to the back; taken with ZPOPMIN
//	{ns}:queue:<name>:<status>  ZSET  job id -> id, for status running, failed,
//	                                  completed, cancelled, timed_out: job ids and
//	                                  O(1) counts per queue and status
//	{ns}:jobqueues              SET   names of queues (registered or deleted) that have
//	                                  jobs, so /info shows deleted queues with jobs
//	{ns}:seq                    STRING pending-order counter
//	{ns}:job_id                 STRING job id counter (first id 1, never reused)
//	{ns}:job:<id>               HASH  the job (fields below)
//	{ns}:running                ZSET  running id -> deadline ms, +inf without timeouts
//	{ns}:failed                 ZSET  failed/timed_out id -> retry due time ms
//	{ns}:ended                  ZSET  ended id -> expiry time ms, +inf for never
//	{ns}:tag:<tag>              ZSET  job id -> id (any tag text; the hash tag is the
//	                                  first {...}, always the namespace's)
//	{ns}:stats                  HASH  created, completed, retried, failed, timed_out,
//	                                  cancelled
//
// Job hash fields: id, queue, status, created_at, timeout, heartbeat_timeout,
// expires_after (whole seconds), retries, retries_attempted, input (compact
// JSON, absent for none), tags (JSON array, absent when created without),
// retry_delays (JSON array of whole seconds, absent for none), started_at,
// ended_at, last_heartbeat, output (absent until set), abandoned ("1" when an
// automatic retry found the queue deleted). Timestamps are integer
// microseconds since the epoch, as decimal strings (Lua numbers lose digits
// when passed to redis.call, so the scripts pass them through as strings).
// A hash without a status field is treated as no job.
//
// Every job is in exactly one place for its status: queued in its queue's
// pending set; running in {ns}:running; failed/timed_out in {ns}:failed
// while a retry is pending, else in {ns}:ended; completed/cancelled in
// {ns}:ended. It is also in its queue's index for its status. Every script
// keeps this true (the tests check it after every case).
//
// Scores are integer milliseconds. The running deadline is the earlier of
// started_at + (timeout+1)s and (last_heartbeat or started_at) +
// (heartbeat_timeout+1)s for the limits that are not zero; the +1 reproduces
// Ocypod's strict "floor(now - t) > limit" on whole seconds (to the
// millisecond). The retry due time is ended_at + delay, delay being
// retry_delays[retries_attempted], else the last delay, else 0. The expiry
// time is ended_at + (expires_after+1)s, or never when expires_after is 0.
//
// # Sweeps and latency
//
// The sweeps take at most Options.SweepBatch due entries from their sorted
// set (O(log n + k)), re-check each job inside the script that moves it, and
// are safe to run concurrently with each other and with every operation. A
// job whose hash vanished is dropped from every index (SweepResult.Dropped).
// NextJob also runs a small inline sweep (Options.InlineSweep overdue
// timeouts and due retries, of any queue) before taking a job, so a worker
// polling any queue sees timeouts and retries within its poll interval even
// though EventBridge fires the sweeper Lambdas at most once a minute. Without
// polling workers, timeouts, retries and expiry lag by up to the sweeper
// interval (plus the time to work through a backlog, SweepBatch per call).
//
// # Deliberate differences from Ocypod 0.8.0
//
//   - A retry delay makes the job wait for it; upstream ended the job when the
//     delay had not passed at the first check.
//   - A retry whose queue was deleted is abandoned: the job ends
//     (RetryAbandoned, ended: true) and expires; upstream kept it in failed
//     forever.
//   - A job inherits its queue's retry_delays when the request has none.
//   - UpdateJob on a missing job is a 404 even for an empty update.
//   - QueueJobIDs is a 404 for a queue that is not registered; its lists are
//     queued in FIFO order and the others ascending by id.
//   - A cancel never duplicates an index entry; corrupt data gives an
//     ocypod.Internal error (or is dropped by a sweep), never a panic.
//   - Queue delete and job creation, and requeue and queue delete, are atomic.
//
// # Errors
//
// Methods return errors wrapping an *ocypod.Error (errors.As works through
// the "redisstore: <op>: " context): the refusals of each method's contract,
// ocypod.Unavailable (503) for the failures in errors.go's table (dial and
// I/O errors, timeouts, a closed client or exhausted pool, BUSY, LOADING,
// OOM, READONLY, CLUSTERDOWN, TRYAGAIN, MASTERDOWN, NOREPLICAS, NOAUTH,
// WRONGPASS, max clients), with a fixed text per class, and
// ocypod.Internal for anything else. A refusal writes nothing.
//
// Scripts are not idempotent, so NewClient disables command retries, and a
// cluster client built by it does not send a command again once it may
// have reached Redis (failures before sending and error replies such as
// MOVED are still retried). A script may still have run although the call
// failed: an Unavailable error after the command was sent (a timeout, a
// broken connection), when Redis runs it later.
package redisstore
