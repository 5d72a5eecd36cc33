package redisstore

import "github.com/ocyless/ocyless/shared/ocypod"

// The names of what the store keeps in Redis, in one place: the keys of a
// partition and the codes stored inside them. A script names the same keys
// as K.<name> and the same codes as literals (records.lua's CODE); doc.go
// describes the layout, and TestLayoutMatchesScripts checks the scripts
// against these names. The layout type, which puts a partition's keys
// under its hash tag, is in partition.go.

// Keys of a partition: partition p's key called name is l.key(p, name)
// ("{<tag>}:<name>"); a script's K.<name> is given partKey(p, name, ...).
const (
	keyJob          = "j"    // HASH id -> the job's metadata (JSON with records.lua's short names)
	keyInput        = "inp"  // HASH id -> an input too long for the metadata
	keyOutput       = "out"  // HASH id -> output JSON
	keyError        = "err"  // HASH id -> the last error {"group","message"}
	keyHistory      = "hist" // HASH id -> the earlier attempts (JSON list)
	keyIndex        = "idx"  // ZSET lex "<queue> <status code> <sort>": each queue's jobs by status
	keyRunning      = "run"  // ZSET running id -> deadline (ms); also the timeouts sweep's kind
	keyDue          = "due"  // ZSET scheduled or retrying id -> due time (ms); also the retries sweep's kind
	keyDueByQueue   = "dq"   // ZSET lex "<queue> <lp(due)><lp(id)>": the due jobs by queue, for takes
	keyExpiry       = "exp"  // ZSET ended id -> expiry time (ms); also the expiry sweep's kind
	keyTags         = "tag"  // ZSET lex "<esc(tag)> <lp(id)>": jobs by tag
	keyTracked      = "trk"  // ZSET lex "<queue> <lp(id)>": tracked jobs
	keyFailures     = "fg"   // ZSET lex "<esc(group)> <lp(id)>": jobs failed for good, by failure group
	keyFailCounts   = "fgc"  // HASH failure group -> how many jobs it holds
	keyWorkerJobs   = "wk"   // ZSET lex "<esc(worker)> <r|t> <lp(id)>": running and timed-out jobs by worker
	keyWorkers      = "wks"  // ZSET worker -> last seen (ms): the worker registry
	keyJobKeys      = "keys" // HASH keySlot(slot, queue, key) -> the job holding that slot of a key
	keyQueues       = "q"    // HASH queue -> settings, and per-queue fields "<queue> w|j|d|a|n" (doc.go)
	keyDrops        = "drop" // HASH queue -> drop record of its deleted generation (generations.lua)
	keyRates        = "rl"   // HASH queue -> rate-limit bucket "<tokens> <ms>"
	keyCounters     = "ctr"  // HASH id, rq, ob -> the partition's sequence counters
	keyTotals       = "tot"  // HASH all-time counters (Ocypod's /info statistics)
	keyStats        = "st"   // HASH per-queue daily statistics, "st:<day>" (partKey adds the day)
	keyMinutes      = "sm"   // HASH per-minute counts "<queue> <minute><c|d|f>", "sm:<hour>" (partKey adds the hour)
	keyPending      = "sp"   // HASH pending statistics "<queue> <minute> <code><bucket>" -> count, folded into tot, st and sm (stats.lua)
	keyWake         = "wake" // partition 0: the long-poll channel; in a script, "wake:<queue>", the legacy wake list
	keyOutbox       = "ob"   // HASH effect id -> effect (JSON), for other partitions or the Go side
	keyOutboxTimes  = "obt"  // ZSET effect id -> when it was recorded (ms)
	keyApplied      = "ap"   // HASH id of an effect (or a create's once) applied here -> its outcome, to apply each once
	keyAppliedAt    = "apt"  // ZSET effect id -> when it was applied (ms), to forget it later
	keyDependents   = "dpt"  // ZSET lex "<lp(dep)> <lp(id)>": the jobs waiting on dep
	keyDepsLegacy   = "deps" // HASH dep -> JSON list of dependents, as earlier versions wrote it
	keyDepFence     = "dfn"  // STRING the largest dependency fence number that read or wrote here
	keyDepLock      = "dlk"  // STRING (partition 0) the dependency lock (deps.go)
	keyDepFenceCtr  = "dfc"  // STRING (partition 0) the dependency fence counter
	keySchedules    = "sch"  // HASH "<queue> <id>" -> schedule (JSON)
	keySchedTimes   = "scht" // ZSET "<queue> <id>" -> next firing (ms)
	keySchedNames   = "schl" // ZSET lex "<queue> <id>": schedules by name
	keyCallbacksDue = "cbq"  // ZSET job id -> when its callback is due (ms)
	keyCallbacks    = "cbs"  // HASH job id -> its pending callback's state {e ended, a tries, d delivered} (JSON)
	keyMeta         = "meta" // HASH "{<ns>}:meta", the namespace's layout record (version, partitions, cursor_key)
)

// partitionKeys are every key name partKey can build.
var partitionKeys = []string{
	keyJob, keyInput, keyOutput, keyError, keyHistory, keyIndex, keyRunning, keyDue, keyDueByQueue,
	keyExpiry, keyTags, keyTracked, keyFailures, keyFailCounts, keyWorkerJobs, keyWorkers, keyJobKeys,
	keyQueues, keyDrops, keyRates, keyCounters, keyTotals, keyStats, keyMinutes, keyPending, keyWake, keyOutbox, keyOutboxTimes,
	keyApplied, keyAppliedAt, keyDependents, keyDepsLegacy, keyDepFence, keyDepLock, keyDepFenceCtr,
	keySchedules, keySchedTimes, keySchedNames, keyCallbacksDue, keyCallbacks, keyMeta,
}

// Status codes: the second word of an idx member and of a wk member
// (records.lua's CODE).
const (
	codeQueued    = "q"
	codeRunning   = "r"
	codeFailed    = "f"
	codeCompleted = "c"
	codeCancelled = "x"
	codeTimedOut  = "t"
	codeScheduled = "s"
	codeWaiting   = "w"
)

// codeStatus maps idx status codes to statuses.
var codeStatus = map[string]ocypod.Status{
	codeQueued: ocypod.StatusQueued, codeRunning: ocypod.StatusRunning, codeFailed: ocypod.StatusFailed,
	codeCompleted: ocypod.StatusCompleted, codeCancelled: ocypod.StatusCancelled, codeTimedOut: ocypod.StatusTimedOut,
	codeScheduled: ocypod.StatusScheduled, codeWaiting: ocypod.StatusWaiting,
}

// Slots of a job key in keyJobKeys (job_keys.lua): the pending job and the
// running job of a key in a queue.
const (
	slotPending = "p"
	slotRunning = "r"
)

// keySlot is the keyJobKeys field of slot of key k in queue q.
func keySlot(slot, q, k string) string { return slot + " " + q + " " + k }

// Statistics fields of keyStats: "<queue> <code>" for the counters,
// "<queue> <histogram><bucket>" for the histograms (stats.lua).
const (
	statCreated   = "c" // jobs created
	statCompleted = "d" // jobs completed
	statFailed    = "f" // attempts failed (timed out ones are statTimedOut)
	statTimedOut  = "t" // attempts timed out
	statRetried   = "r" // automatic retries
	statWait      = "w" // histogram of wait times (queued to running)
	statRun       = "r" // histogram of run times (running to ended)
)

// Per-minute counts of keyMinutes: "<queue> <minute><code>".
const (
	minuteCreated   = "c"
	minuteCompleted = "d"
	minuteFailed    = "f" // failed or timed out
)

// pendingCodes is stats.lua's PENDING: where each code of a keyPending
// field counts (a code that ends an attempt also counts its bucket, when
// the field has one, in the statRun histogram).
var pendingCodes = map[string]struct{ total, day, minute string }{
	"c": {"created", statCreated, minuteCreated},
	"y": {"retried", statRetried, ""},
	"d": {"completed", statCompleted, minuteCompleted},
	"f": {"failed", statFailed, minuteFailed},
	"t": {"timed_out", statTimedOut, minuteFailed},
	"x": {"cancelled", "", ""},
	"F": {"", statFailed, minuteFailed},
}
