package ocypod

// QueueSettings are a queue's defaults, copied into every job created on it.
type QueueSettings struct {
	Timeout          Duration   // running longer than this fails the job as timed_out; 0 disables
	HeartbeatTimeout Duration   // no heartbeat for longer than this times the job out; 0 disables
	ExpiresAfter     Duration   // an ended job is deleted this long after it ended; 0 keeps it
	Retries          uint64     // automatic retries after a failure or a timeout
	RetryDelays      []Duration // wait before retry n: RetryDelays[n-1], or the last one
}

// DefaultQueueSettings returns Ocypod's built-in defaults: timeout 5m,
// heartbeat_timeout 0s, expires_after 5m, no retries, no retry delays.
func DefaultQueueSettings() QueueSettings {
	return QueueSettings{Timeout: Seconds(300), ExpiresAfter: Seconds(300)}
}

// MaxNameLength bounds queue names and tags. Ocypod had no limit; a name is
// part of Redis keys, so we keep it reasonable.
const MaxNameLength = 1024

// ValidQueueName reports whether name is a valid queue name: non-empty,
// made of ASCII letters, digits, '_', '.' and '-', at most MaxNameLength bytes.
func ValidQueueName(name string) bool {
	if name == "" || len(name) > MaxNameLength {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// QueueCounts are the number of jobs of one queue in each status.
type QueueCounts struct {
	Queued, Running, Failed, Completed, Cancelled, TimedOut uint64
}

// Statistics are the six server-wide counters; they only ever grow.
type Statistics struct {
	Created, Completed, Retried, Failed, TimedOut, Cancelled uint64
}

// ServerInfo is the summary served by /info: counts per queue (registered
// queues, plus deleted queues that still have jobs) and the global counters.
type ServerInfo struct {
	Queues     map[string]QueueCounts
	Statistics Statistics
}

// JobIDs are the ids of one queue's jobs grouped by status.
type JobIDs struct {
	Queued, Running, Failed, Completed, Cancelled, TimedOut []uint64
}
