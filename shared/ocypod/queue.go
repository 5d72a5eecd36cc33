package ocypod

// QueueSettings are a queue's settings: Ocypod's defaults, copied into every
// job created on it, then the queue controls of the extended job model.
type QueueSettings struct {
	Timeout          Duration   // running longer than this fails the job as timed_out; 0 disables
	HeartbeatTimeout Duration   // no heartbeat for longer than this times the job out; 0 disables
	ExpiresAfter     Duration   // an ended job is deleted this long after it ended; 0 keeps it
	Retries          uint64     // automatic retries after a failure or a timeout
	RetryDelays      []Duration // wait before retry n: RetryDelays[n-1], or the last one

	Paused          bool       // takes get nothing
	Concurrency     uint64     // most running jobs; 0: no limit
	RateLimit       *RateLimit // most takes per second; nil: no limit
	RetryBackoff    *Backoff   // inherited by jobs created without retry_delays/retry_backoff
	TimeoutRetries  *uint64    // inherited by jobs created without timeout_retries
	DeadLetterQueue string     // where jobs that end failed for good are copied; "" none
	Shards          uint64     // partitions the queue's jobs spread over; 0 and 1: one
	Push            Sealed     // push delivery target (package push's stored form); nil: takes
	Callback        Sealed     // callback new jobs copy when they name none; nil: none
}

// RateLimit is a token bucket: PerSecond tokens a second, at most Burst
// saved up.
type RateLimit struct {
	PerSecond float64
	Burst     uint64
}

// DefaultQueueSettings returns Ocypod's built-in defaults: timeout 5m,
// heartbeat_timeout 0s, expires_after 5m, no retries, no retry delays, and
// no extension setting.
func DefaultQueueSettings() QueueSettings {
	return QueueSettings{Timeout: Seconds(300), ExpiresAfter: Seconds(300)}
}

// QueuePatch is a PATCH /queue/{name}: the settings it names replace the
// queue's, the others stay. ClearX fields remove an optional setting
// (JSON null).
type QueuePatch struct {
	Timeout          *Duration
	HeartbeatTimeout *Duration
	ExpiresAfter     *Duration
	Retries          *uint64
	RetryDelays      []Duration
	RetryDelaysSet   bool

	Paused              *bool
	Concurrency         *uint64
	RateLimit           *RateLimit
	ClearRateLimit      bool
	RetryBackoff        *Backoff
	ClearRetryBackoff   bool
	TimeoutRetries      *uint64
	ClearTimeoutRetries bool
	DeadLetterQueue     *string // "" clears
	Shards              *uint64
	// Push and Callback replace the setting when their Set flag is true
	// (nil then removes it).
	Push        Sealed
	PushSet     bool
	Callback    Sealed
	CallbackSet bool
}

// Apply returns s with the patch applied.
func (p *QueuePatch) Apply(s QueueSettings) QueueSettings {
	set := func(dst *Duration, v *Duration) {
		if v != nil {
			*dst = *v
		}
	}
	set(&s.Timeout, p.Timeout)
	set(&s.HeartbeatTimeout, p.HeartbeatTimeout)
	set(&s.ExpiresAfter, p.ExpiresAfter)
	if p.Retries != nil {
		s.Retries = *p.Retries
	}
	if p.RetryDelaysSet {
		s.RetryDelays = p.RetryDelays
	}
	if p.Paused != nil {
		s.Paused = *p.Paused
	}
	if p.Concurrency != nil {
		s.Concurrency = *p.Concurrency
	}
	switch {
	case p.ClearRateLimit:
		s.RateLimit = nil
	case p.RateLimit != nil:
		s.RateLimit = p.RateLimit
	}
	switch {
	case p.ClearRetryBackoff:
		s.RetryBackoff = nil
	case p.RetryBackoff != nil:
		s.RetryBackoff = p.RetryBackoff
	}
	switch {
	case p.ClearTimeoutRetries:
		s.TimeoutRetries = nil
	case p.TimeoutRetries != nil:
		s.TimeoutRetries = p.TimeoutRetries
	}
	if p.DeadLetterQueue != nil {
		s.DeadLetterQueue = *p.DeadLetterQueue
	}
	if p.Shards != nil {
		s.Shards = *p.Shards
	}
	if p.PushSet {
		s.Push = p.Push
	}
	if p.CallbackSet {
		s.Callback = p.Callback
	}
	return s
}

// MaxNameLength bounds queue names and tags. Ocypod had no limit; a name is
// part of Redis keys and index entries, so we keep it reasonable.
const MaxNameLength = 1024

// MaxShards bounds a queue's shards (and the store's partitions).
const MaxShards = 1024

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
	Queued, Running, Failed, Completed, Cancelled, TimedOut, Scheduled, Waiting uint64
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
	// DeadLettersSkipped counts the dead letters dropped because their
	// queue no longer existed (the jobs stayed failed). /info does not
	// show it; the local server's /metrics does.
	DeadLettersSkipped uint64
	// CallbacksGivenUp counts the job callbacks given up after 24 hours of
	// failed tries; also a /metrics counter only.
	CallbacksGivenUp uint64
}

// JobIDs are the ids of one queue's jobs grouped by status.
type JobIDs struct {
	Queued, Running, Failed, Completed, Cancelled, TimedOut, Scheduled, Waiting []uint64
}
