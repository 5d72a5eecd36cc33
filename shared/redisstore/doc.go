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
// shards = K spreads it: its settings are copied to K partitions, takes try
// them from a random one on. Shard i is home + the i-th of 0..P-1 in
// bit-reversed order, so a queue's first shards lie on different nodes.
// Each shard is FIFO; across shards, order is best effort.
//
// A create (one job or a batch) is one script in one partition, so a batch
// is all or nothing whatever the shards: without a key, one of the shards
// at random; with a key, the home (shard 0, which never moves). Keyed jobs
// live at the home whatever K is and whatever a process believes K to be,
// so a key has at most one pending and one running job across every
// change of shards; a job of a singleton waits there for the running one.
// Keyed jobs that earlier versions placed in shard hash(key) mod K are
// looked up, not moved (moving would change their ids): a keyed create on a
// queue that has spanned several partitions reads the keys' slots of the
// others first (one pipelined HMGET each) and creates a key still held
// elsewhere there, in a script that checks it is still held; a requeue of
// such a job is refused once nothing of its key runs there (keys.go). A
// queue this version spread from one partition never had such keys (its
// settings say kh) and skips the lookup; on a queue sharded earlier it
// costs one more round trip per keyed create (measured on loopback: 0.10
// ms against 0.27 ms on redis-server, 0.13 against 0.37 on a 3-node
// cluster).
//
// Per-queue limits (concurrency, rate) are split between the queue's
// members: its shards and the partitions beyond them that still hold jobs
// after its shards were lowered (those are served until they are empty).
// Each copy has an allowance (field "<queue> a" of q): a change of the
// settings lowers it in the script that writes the copy, and it is raised
// to its share only once every copy is lowered and runs no more than its
// share (shares.lua, limits.go), so the copies never exceed the limits
// together. A partition that is empty stops being a member; takes held
// back by their share ask for that at most once a second.
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
// scripts/lib holds the shared helpers, one file per concern: the status
// codes and the job record's short field names (records.lua), attach/detach
// (indexes.lua: every index entry of a job follows from its metadata
// alone), the transitions, the table-driven sweep steps. scripts.go composes each script from the helpers it uses, and
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
//	get_job      GetJob, GetJobParts, WaitJob   metadata + the parts asked for; a wait's mark
//	retry_job    RetryJob                   POST /job/{id}/retry
//	delete_job   DeleteJob                  the job and every index entry
//	put_queue    PutQueue                   Ocypod settings; shard copies
//	patch_queue  PatchQueue                 extension settings, shards
//	shares       (limits.go)                a copy's limit shares: read, raise
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
//	pin_effect   (outbox)                   fixes where an effect's job goes
//	upgrade      Upgrade                    version-1 data, a batch at a time
//	upgrade_counters Upgrade                the queues' counts of queued jobs (layout 3 to 4)
//	fold_stats   Sweep* (once a minute)     pending statistics into the figures they count in
//	dep_lock     UpdateJob (depends_on)     the dependency lock and its fence numbers
//	dep_walk     UpdateJob (depends_on)     a step of the cycle check (deps.go)
//	import       Import                     an Ocypod 0.8 database, a batch at a time
//
// # Layout of a partition
//
// layout.go names each key and the codes stored in them, for the Go side.
//
//	j      HASH  id -> the job's metadata: compact JSON with short keys
//	             (records.lua META); an input of up to 256 bytes is kept in it
//	inp    HASH  id -> a longer input; out, err, hist: output, last error,
//	             earlier attempts
//	dpt    ZSET  score 0, "<lp(id)> <lp(dependent)>": the jobs (of any
//	             partition) waiting on job id; deps HASH id -> JSON list of
//	             them, as earlier versions wrote it, is still read and
//	             emptied as those dependencies end. An end releases at
//	             most 100 dependents per call, the rest through the
//	             outbox (a 'release' effect on the same partition)
//	dfn    STRING the largest fence number of a dependency change that
//	             read or wrote here; dlk, dfc (partition 0): the dependency
//	             lock and the fence counter (deps.go)
//	idx    ZSET  score 0, "<queue> <status code> <sort>": each queue's jobs
//	             of one status are one lex range, queued jobs in take order
//	             (priority, then the order they were queued in); a queued
//	             job also has "<queue> Q <lp(id)>", by id (both in one ZADD)
//	run    ZSET  running id -> deadline (ms); due: scheduled and retrying id
//	             -> due time; dq: the same by queue; exp: ended id -> expiry
//	tag, trk, fg, wk   lex indexes of tags, tracked jobs, failure groups,
//	             workers' jobs; fgc: failure group -> count; wks: workers
//	keys   HASH  "p|r <queue> <key>" -> the pending / running job of a key
//	q      HASH  queue -> settings (g: its generation, b: the generation
//	             it was created with); "<queue> w": long-poll until (ms);
//	             "<queue> j": a job of it is waited for until (ms);
//	             "<queue> d": earliest time a job may fall due; "<queue> a":
//	             a sharded queue's limit shares here (absent: its full share);
//	             "<queue> n": how many members its queued idx range holds
//	             (absent: none), kept by every script that adds or removes
//	             one, read by /info and sizes
//	cbq    ZSET  job id -> when its callback is due (callbacks.go); cbs:
//	             HASH job id -> {e: ended (ms), a: tries, d: delivered (ms),
//	             g: given up}
//	ob, obt      the outbox (effects for other partitions) and its times;
//	             ap, apt: effects applied here, to apply each once
//	tot    HASH  all-time counters (Ocypod's /info statistics)
//	st:<day>     HASH  a day's per-queue counts and histogram buckets
//	sm:<hour>    HASH  "<queue> <minute><c|d|f>" -> that minute's created,
//	             completed, failed jobs (expires 2 hours after a write)
//	sp     HASH  "<queue> <minute> <code><bucket>" -> count: the events
//	             that count in several of tot, st and sm (a create, an
//	             attempt's end, an automatic retry), one increment each,
//	             until a sweep folds them there (fold_stats, once a minute);
//	             every read adds those still pending (stats.lua)
//	rl, sch, scht, schl, drop, ctr   rate buckets, schedules, deleted
//	             queues being dropped, counters; wake:<queue>, the long-poll
//	             wake lists of earlier versions, is no longer written (deleted
//	             with its queue)
//
// and "{<ns>}:meta", the layout record: version 4 and P, and cursor_key,
// the random key that signs listing cursors (written once, by HSETNX, by
// the first listing that answers a next cursor; data written before it
// needs no upgrade, and a cursor signed before is refused with a 400). An
// older layout (version 1: one hash per job, no record; version 2, 0.3.0's,
// without the queued jobs' "<queue> Q <lp(id)>" idx members; version 3,
// without the queues' counts of queued jobs) is upgraded in
// place by Upgrade, step by step (upgrade.go): resumable, idempotent, under
// the lock "{<ns>}:upgrade" with a short lease its holder renews (others
// wait, and take over when it lapses); the local server runs it at start,
// the sweepers within their budget, `make migrate` on demand, and nothing
// serves until it is done (Open reports it unfinished).
//
// A job records its queue's generation (G). Deleting a queue leaves a
// drop record per partition (drop: queue -> the deleted generation, how
// many of its pending jobs are left by status, the dropper's progress);
// until its slices are dropped, pending jobs of that generation or older
// are never taken, counted or listed, also by a queue created again under
// the same name (generations.lua's drop_of). Settings without b, and drop
// records without counts (written before they were kept), read as before:
// every job current, counts taken on first use.
//
// # Effects across partitions
//
// A change that has consequences in another partition (a dependency ended,
// a follow-up job, a dead letter, a schedule's job) records them in its own
// partition's outbox in the same script. The store applies them right
// after the call and deletes them; the outbox sweep applies what a crashed
// process left, after outboxGrace. Applying is idempotent (the target
// remembers applied effect ids for a day), so an effect lands exactly once.
// An effect that creates a job names its partition (part): chosen when it
// is recorded (a follow-up, a schedule's job, a failed job retried
// elsewhere) or by the first to apply it (pin_effect: a dead letter), so
// every application of it, by any process, meets the first one's record,
// also in a sharded queue. A partition that has no copy of the queue (the
// shards were stale) records that too, and the job goes to the queue's
// home.
//
// # Sweeps and latency
//
// One table-driven mechanism (sweep.lua) moves due entries of run (time
// out), due (scheduled jobs and retries to queue) and exp (expire), at most
// Options.SweepBatch per partition and call, re-checking each job in the
// script that moves it: O(log n + k), safe alongside every operation. Takes
// also time out up to Options.InlineSweep overdue jobs and promote their
// queues' due jobs, so a polling worker sees both at once; without
// workers, they wait for the next sweep.
//
// # Long-polls
//
// A take with Wait that finds nothing marks its queues as waited on
// ("<queue> w" in q) and waits in the store's hub (waiters.go), with no
// Redis connection of its own. A script that may let such a take have a job
// (one made ready, a running job of a concurrency-limited queue ended, the
// queue's settings changed) names the queue in its reply when it is waited
// on; the store then publishes the names on the namespace's channel
// "{<tag of partition 0>}:wake" (PUBLISH: every process, every node of a
// cluster). Each process holds one subscription to it, and wakes the
// longest-waiting take of each queue named; a take that took all it asked
// for hands the wake-up to the next. A take also looks again at the due
// time of its queues' scheduled jobs and retries and at a rate limit's next
// token (take.lua's next_due), and every take looks again whenever the
// subscription is (re)established. Options.MaxLongPolls caps the waiting
// takes of a process; past it a take answers at once.
//
// A GET /job/{id}?wait= (WaitJob) waits in the same hub, under the same
// cap. Its reads (get_job with watch) mark the job's queue in the job's
// partition ("<queue> j" in q, until the wait's end); a script that ends
// a job for good (transitions.lua's after_end) while the mark holds names "#<id>"
// in its reply, which the store publishes on the same channel, waking every
// waiter of that job, which reads it again. An expired mark is deleted by
// the next ending that finds it.
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
//
// The script calls of concurrent operations share round trips (automatic
// pipelining, autopipe.go; Options.AutoPipeline) under the same rules: a
// call is sent at most once, keeps its own context, and goes whole to the
// node of its partition.
package redisstore
