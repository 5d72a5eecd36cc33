// Package redisstore is the job store on Redis: the only package that talks
// to Redis. It implements httpapi.Store, the sweeps the scheduled Lambdas
// and the local server run, the upgrade of a version-1 namespace and the
// import of an Ocypod database.
//
// # Partitions
//
// A namespace's data lives in P partitions (Options.Partitions, 1 to 1024,
// fixed once data exists: Open refuses another value and says why). Every
// key of partition p starts with the hash tag "{<tag>}:", so a partition is
// one cluster slot: with P = 1 the tag is the namespace itself ("{ns}:j"),
// as in version 1; with more, partition p's tag is "<ns>:<p>:<n>" with n
// chosen so that the P slots fall in P equal slices of the slot range, so a
// cluster whose slots are split evenly gives each shard its share
// (partition.go). Job ids carry their partition: id = seq*P + p, seq being
// the partition's counter, so with P = 1 ids are 1, 2, 3...; they stay below
// 2^53 (a JSON number any client reads exactly).
//
// A queue lives in its home partition (a hash of its name) unless PATCH
// shards = K spreads it: its settings are copied to K partitions, creates
// pick one at random (a job key always the same one), takes try them from
// a random one on. Shard i is home + the i-th of 0..P-1 in bit-reversed
// order, so a queue's first shards lie on different nodes. Each shard is
// FIFO; across shards, order is best effort. Per-queue limits (concurrency,
// rate) are split between the shards.
//
// An operation on one job or one queue is one script on one partition: one
// round trip. Reads across partitions (/info, /queue, a tag, job_ids,
// listings, failures, workers) send one call per partition in one pipelined
// round. Sweeps walk every partition within their time budget.
//
// # Scripts
//
// Every change is one Lua script (scripts/<op>.lua), atomic, with no
// WATCH/MULTI loop and no intermediate list a crash could strand a job in.
// scripts/lib.lua holds the shared helpers: the status codes, the job
// record's short field names, attach/detach (every index entry of a job
// follows from its metadata alone), the transitions, the table-driven sweep
// steps. scripts.go composes each script from the helpers it uses, and
// finds every key it names (K.<name>): those, all of one partition, are
// exactly the keys it is given in KEYS, so no script builds a key name and
// every script is legal on Redis Cluster and ElastiCache Serverless. A
// call's arguments are one JSON object (A: now, ms, p, P and the
// operation's own); replies are one JSON object with named fields.
//
// Where the server has Redis Functions (Redis 7, Valkey) every script is a
// function of one library, loaded once, named after the hash of its code,
// so two versions of the store on one Redis never call each other's code;
// elsewhere (miniredis, and ElastiCache Serverless unless configured
// otherwise) the same code runs through EVALSHA (Options.Scripts). The time
// comes from Options.Now and travels in A; no script calls TIME.
//
//	create_job   CreateJob, CreateJobs      one or a batch; keys, dependencies
//	take         Take, NextJob              inline timeouts, due jobs, limits
//	update_job   UpdateJob                  transitions, in-place changes, + take
//	heartbeat    Heartbeat                  fenced by attempt
//	set_output   SetJobOutput               fenced by attempt
//	get_job      GetJob, GetJobParts        metadata + the parts asked for
//	retry_job    RetryJob                   POST /job/{id}/retry
//	delete_job   DeleteJob                  the job and every index entry
//	put_queue    PutQueue                   Ocypod settings; shard copies
//	patch_queue  PatchQueue                 extension settings, shards
//	delete_queue DeleteQueue                settings at once, pending jobs in slices
//	drop_queue   (sweeps)                   the next slice of a deleted queue
//	queue_jobs   QueueSize, QueueJobIDs     one partition's share
//	info         Info, ListQueues           one partition's counts
//	list         ListJobs, FailureJobs      one partition's page (signed cursors)
//	retry_group  RetryFailures              requeue a failure group's jobs
//	workers      Workers, Worker            the worker registry
//	schedule     Put/Get/DeleteSchedule...  recurring jobs; due ones create jobs
//	sweep        Sweep*                     timeouts, due jobs, expiry
//	apply        (outbox)                   an effect from another partition
//	upgrade      Upgrade                    version-1 data, a batch at a time
//	import       Import                     an Ocypod 0.8 database, a batch at a time
//
// # Layout of a partition
//
//	j      HASH  id -> the job's metadata: compact JSON with short keys
//	             (lib.lua META); an input of up to 256 bytes is kept in it
//	inp    HASH  id -> a longer input; out, err, hist: output, last error,
//	             earlier attempts
//	deps   HASH  id -> ids of the jobs waiting on it
//	idx    ZSET  score 0, "<queue> <status code> <sort>": each queue's jobs
//	             of one status are one lex range, queued jobs in take order
//	             (priority, then the order they were queued in)
//	run    ZSET  running id -> deadline (ms); due: scheduled and retrying id
//	             -> due time; dq: the same by queue; exp: ended id -> expiry
//	tag, trk, fg, wk   lex indexes of tags, tracked jobs, failure groups,
//	             workers' jobs; fgc: failure group -> count; wks: workers
//	keys   HASH  "p|r <queue> <key>" -> the pending / running job of a key
//	q      HASH  queue -> settings; "<queue> w": long-poll until (ms);
//	             "<queue> d": earliest time a job may fall due
//	ob, obt      the outbox (effects for other partitions) and its times;
//	             ap, apt: effects applied here, to apply each once
//	tot    HASH  all-time counters (Ocypod's /info statistics)
//	st:<day>     HASH  a day's per-queue counts and histogram buckets
//	rl, sch, scht, schl, drop, wake:<queue>, ctr   rate buckets, schedules,
//	             deleted queues being dropped, long-poll wake lists, counters
//
// and "{<ns>}:meta", the layout record: version 2 and P. Version-1 data
// (one hash per job) is upgraded in place by Upgrade: resumable, idempotent,
// under a lock; the local server runs it at start, the sweepers within
// their budget, `make migrate` on demand.
//
// # Effects across partitions
//
// A change that has consequences in another partition (a dependency ended,
// a follow-up job, a dead letter, a schedule's job) records them in its own
// partition's outbox in the same script. The store applies them right
// after the call and deletes them; the outbox sweep applies what a crashed
// process left, after outboxGrace. Applying is idempotent (the target
// remembers applied effect ids for a day), so an effect lands exactly once.
//
// # Sweeps and latency
//
// One table-driven mechanism (sweep.lua) moves due entries of run (time
// out), due (scheduled jobs and retries to queue) and exp (expire), at most
// Options.SweepBatch per partition and call, re-checking each job in the
// script that moves it: O(log n + k), safe alongside every operation. Takes
// also time out up to Options.InlineSweep overdue jobs and promote their
// queues' due jobs, so a polling worker sees both at once; without
// workers, they wait for the next sweep. A long-poll take (Wait) blocks on
// its queues' wake lists, pushed by the scripts that make a job ready.
//
// # Errors
//
// Methods return errors wrapping an *ocypod.Error (errors.As works through
// the "redisstore: <op>: " context): the refusals of each method's
// contract, ocypod.Unavailable (503) for the failures in errors.go's table
// (dial and I/O errors, timeouts, a closed client or exhausted pool, BUSY,
// LOADING, OOM, READONLY, CLUSTERDOWN, TRYAGAIN, MASTERDOWN, NOREPLICAS,
// NOAUTH, WRONGPASS, max clients), with a fixed text per class, and
// ocypod.Internal for anything else. A refusal writes nothing. Open and
// Ping refuse a Redis whose maxmemory-policy may evict keys (allkeys-*):
// evicted job data would be lost silently.
//
// Scripts are not idempotent, so NewClient disables command retries, and a
// cluster client built by it does not send a command again once it may
// have reached Redis (failures before sending and error replies such as
// MOVED are still retried). A script may still have run although the call
// failed: an Unavailable error after the command was sent (a timeout, a
// broken connection), when Redis runs it later.
package redisstore
