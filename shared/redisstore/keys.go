package redisstore

import (
	"regexp"
	"strconv"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// DefaultNamespace is the hash tag used when Options.Namespace is empty.
const DefaultNamespace = "ocypod"

var namespaceRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ValidNamespace reports whether ns can be used as Options.Namespace: empty
// (meaning DefaultNamespace) or 1 to 64 of [A-Za-z0-9_.-]. Those characters
// can never close the "{...}" hash tag, so every key of a namespace stays in
// one cluster slot.
func ValidNamespace(ns string) bool {
	return ns == "" || namespaceRE.MatchString(ns)
}

// keys builds every Redis key of one namespace; nothing else concatenates key
// names (lib.lua's k_* builders follow the same patterns and a test compares
// them). Every key starts with the prefix "{<ns>}:".
type keys struct{ prefix string }

func newKeys(ns string) keys {
	if ns == "" {
		ns = DefaultNamespace
	}
	return keys{prefix: "{" + ns + "}:"}
}

// Prefix is "{<ns>}:", the start of every key.
func (k keys) Prefix() string { return k.prefix }

// Queues is the registry of queue names. SET.
func (k keys) Queues() string { return k.prefix + "queues" }

// Queue holds a queue's settings. HASH: timeout, heartbeat_timeout,
// expires_after (seconds), retries, retry_delays (JSON, absent when empty).
func (k keys) Queue(name string) string { return k.prefix + "queue:" + name }

// QueueJobs is a queue's pending jobs. ZSET id -> sequence number (FIFO).
func (k keys) QueueJobs(name string) string { return k.prefix + "queue:" + name + ":jobs" }

// QueueStatus indexes a queue's jobs in one status other than queued. ZSET
// id -> id.
func (k keys) QueueStatus(name string, st ocypod.Status) string {
	return k.prefix + "queue:" + name + ":" + string(st)
}

// JobQueues is the names of queues (registered or deleted) that have jobs.
// SET.
func (k keys) JobQueues() string { return k.prefix + "jobqueues" }

// Seq numbers pending entries so that queues are FIFO. STRING counter.
func (k keys) Seq() string { return k.prefix + "seq" }

// JobID is the job id counter; the first id is 1. STRING counter.
func (k keys) JobID() string { return k.prefix + "job_id" }

// Job holds one job. HASH (fields in doc.go).
func (k keys) Job(id uint64) string { return k.prefix + "job:" + formatID(id) }

// Running is every running job. ZSET id -> deadline (ms), +inf for none.
func (k keys) Running() string { return k.prefix + "running" }

// Failed is every failed or timed-out job waiting for a retry. ZSET id ->
// retry due time (ms).
func (k keys) Failed() string { return k.prefix + "failed" }

// Ended is every job waiting to expire. ZSET id -> expiry time (ms), +inf
// for never.
func (k keys) Ended() string { return k.prefix + "ended" }

// Tag is the jobs created with a tag. ZSET id -> id.
func (k keys) Tag(tag string) string { return k.prefix + "tag:" + tag }

// Stats holds the global counters. HASH: created, completed, retried,
// failed, timed_out, cancelled.
func (k keys) Stats() string { return k.prefix + "stats" }

// formatID is the decimal form of a job id, as stored.
func formatID(id uint64) string { return strconv.FormatUint(id, 10) }
