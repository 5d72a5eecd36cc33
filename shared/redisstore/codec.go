package redisstore

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// storedQueue is a queue's settings as stored in a partition's q hash
// (short names; records.lua reads them). Durations are whole seconds.
type storedQueue struct {
	Timeout          flexNum   `json:"t,omitempty"`
	HeartbeatTimeout flexNum   `json:"h,omitempty"`
	ExpiresAfter     flexNum   `json:"e,omitempty"`
	Retries          flexNum   `json:"r,omitempty"`
	RetryDelays      string    `json:"d,omitempty"` // JSON array of seconds
	Gen              flexNum   `json:"g,omitempty"`
	Home             int       `json:"o"`
	Shards           int       `json:"k,omitempty"`
	Span             int       `json:"s,omitempty"`
	Paused           bool      `json:"pa,omitempty"`
	Concurrency      flexNum   `json:"c,omitempty"`
	RateLimit        *storedRL `json:"rl,omitempty"`
	RetryBackoff     string    `json:"bo,omitempty"` // JSON {min, max, factor, jitter}
	TimeoutRetries   *flexNum  `json:"tr,omitempty"`
	DeadLetterQueue  string    `json:"dl,omitempty"`
	// Push and Callback are the sealed settings' text (package push's
	// stored form, secret included).
	Push     string `json:"pu,omitempty"`
	Callback string `json:"cb,omitempty"`
}

type storedRL struct {
	PerSecond float64 `json:"r"`
	Burst     flexNum `json:"b"`
}

// storedBackoff is a retry_backoff as stored (seconds).
type storedBackoff struct {
	Min    uint64  `json:"min"`
	Max    uint64  `json:"max"`
	Factor float64 `json:"factor"`
	Jitter bool    `json:"jitter"`
}

func encodeBackoff(b *ocypod.Backoff) string {
	if b == nil {
		return ""
	}
	f := b.Factor
	if f == 0 {
		f = ocypod.DefaultBackoffFactor
	}
	out, _ := json.Marshal(storedBackoff{Min: b.Min.Secs, Max: b.Max.Secs, Factor: f, Jitter: b.Jitter})
	return string(out)
}

func decodeBackoff(s string) (*ocypod.Backoff, error) {
	if s == "" {
		return nil, nil
	}
	var b storedBackoff
	if err := json.Unmarshal([]byte(s), &b); err != nil {
		return nil, err
	}
	return &ocypod.Backoff{Min: ocypod.Seconds(b.Min), Max: ocypod.Seconds(b.Max), Factor: b.Factor, Jitter: b.Jitter}, nil
}

// encodeDelays is the stored form of retry delays: a JSON array of whole
// seconds, "" when there are none.
func encodeDelays(ds []ocypod.Duration) string {
	if len(ds) == 0 {
		return ""
	}
	secs := make([]uint64, len(ds))
	for i, d := range ds {
		secs[i] = d.Secs
	}
	b, _ := json.Marshal(secs)
	return string(b)
}

func decodeDelays(s string) ([]ocypod.Duration, error) {
	if s == "" {
		return nil, nil
	}
	var secs []flexNum
	if err := json.Unmarshal([]byte(s), &secs); err != nil {
		return nil, err
	}
	if len(secs) == 0 {
		return nil, nil
	}
	out := make([]ocypod.Duration, len(secs))
	for i, v := range secs {
		n, err := v.uint()
		if err != nil {
			return nil, err
		}
		out[i] = ocypod.Seconds(n)
	}
	return out, nil
}

// settingsOf decodes stored settings into the domain's.
func (q *storedQueue) settings() (ocypod.QueueSettings, error) {
	var d numReader
	s := ocypod.QueueSettings{
		Timeout:          ocypod.Seconds(d.uint(q.Timeout)),
		HeartbeatTimeout: ocypod.Seconds(d.uint(q.HeartbeatTimeout)),
		ExpiresAfter:     ocypod.Seconds(d.uint(q.ExpiresAfter)),
		Retries:          d.uint(q.Retries),
		Paused:           q.Paused,
		Concurrency:      d.uint(q.Concurrency),
		DeadLetterQueue:  q.DeadLetterQueue,
		Shards:           uint64(max(q.Shards, 1)),
	}
	if q.Shards <= 1 {
		s.Shards = 0
	}
	if q.Push != "" {
		s.Push = ocypod.Sealed(q.Push)
	}
	if q.Callback != "" {
		s.Callback = ocypod.Sealed(q.Callback)
	}
	var err error
	if s.RetryDelays, err = decodeDelays(q.RetryDelays); err != nil {
		return s, fmt.Errorf("retry_delays: %w", err)
	}
	if s.RetryBackoff, err = decodeBackoff(q.RetryBackoff); err != nil {
		return s, fmt.Errorf("retry_backoff: %w", err)
	}
	if q.RateLimit != nil {
		s.RateLimit = &ocypod.RateLimit{PerSecond: q.RateLimit.PerSecond, Burst: d.uint(q.RateLimit.Burst)}
	}
	if q.TimeoutRetries != nil {
		n := d.uint(*q.TimeoutRetries)
		s.TimeoutRetries = &n
	}
	return s, d.err
}

// numReader reads stored numbers, keeping the first error.
type numReader struct{ err error }

func (d *numReader) uint(v flexNum) uint64 {
	n, err := v.uint()
	if err != nil && d.err == nil {
		d.err = err
	}
	return n
}

func (d *numReader) int(v flexNum) int64 {
	n, err := v.int()
	if err != nil && d.err == nil {
		d.err = err
	}
	return n
}

// micros reads a stored microsecond timestamp; "" gives nil.
func (d *numReader) micros(v flexNum) *time.Time {
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil && d.err == nil {
		d.err = fmt.Errorf("invalid time %q", truncate(string(v)))
	}
	t := time.UnixMicro(n).UTC()
	return &t
}

// storedJob is a job's metadata as records.lua stores it (META there).
type storedJob struct {
	Queue            string   `json:"q"`
	Status           string   `json:"s"`
	Gen              flexNum  `json:"G"`
	CreatedAt        flexNum  `json:"c"`
	StartedAt        flexNum  `json:"b"`
	EndedAt          flexNum  `json:"f"`
	LastHeartbeat    flexNum  `json:"l"`
	QueuedAt         flexNum  `json:"Q"`
	Timeout          flexNum  `json:"t"`
	HeartbeatTimeout flexNum  `json:"h"`
	ExpiresAfter     flexNum  `json:"e"`
	Retries          flexNum  `json:"r"`
	RetriesAttempted flexNum  `json:"n"`
	RetryDelays      string   `json:"d"`
	RetryBackoff     string   `json:"B"`
	TimeoutRetries   *flexNum `json:"T"`
	TimeoutsRetried  flexNum  `json:"N"`
	Tags             *string  `json:"g"`
	Priority         flexNum  `json:"p"`
	Due              flexNum  `json:"u"`
	RunAt            flexNum  `json:"a"`
	Attempt          flexNum  `json:"A"`
	Worker           string   `json:"w"`
	Key              string   `json:"k"`
	DependsOn        string   `json:"D"`
	WaitingOn        string   `json:"W"`
	Tracked          flexBool `json:"R"`
	Abandoned        flexBool `json:"X"`
	Group            string   `json:"E"`
	Input            *string  `json:"i"` // a small input, kept with the metadata
	// Callback is the sealed callback text (also keeps "C" out of
	// CreatedAt's "c" under case-insensitive matching).
	Callback string `json:"C"`
	// Fields Go does not read, named so that encoding/json's
	// case-insensitive matching cannot pour them into the ones above.
	Sc            flexNum  `json:"o"`
	Sr            flexNum  `json:"O"`
	HasDependents flexBool `json:"H"`
	Blocked       flexBool `json:"K"`
}

// flexBool is true for JSON true or a non-zero number (records.lua stores 1).
type flexBool bool

func (b *flexBool) UnmarshalJSON(v []byte) error {
	s := string(v)
	*b = flexBool(s != "false" && s != "0" && s != "null")
	return nil
}

// decodeJob turns stored parts into a Job. raw parts absent are "".
func decodeJob(id uint64, meta string, input, output, errText *string) (*ocypod.Job, error) {
	var m storedJob
	if err := json.Unmarshal([]byte(meta), &m); err != nil {
		return nil, fmt.Errorf("job %d: unreadable metadata: %v", id, err)
	}
	if m.Status == "" {
		m.Status = string(ocypod.StatusQueued) // not stored for queued jobs
	}
	st, ok := ocypod.ParseStatus(m.Status)
	if !ok {
		return nil, fmt.Errorf("job %d: invalid status %q", id, truncate(m.Status))
	}
	var d numReader
	j := &ocypod.Job{
		ID:               id,
		Queue:            m.Queue,
		Status:           st,
		StartedAt:        d.micros(m.StartedAt),
		EndedAt:          d.micros(m.EndedAt),
		LastHeartbeat:    d.micros(m.LastHeartbeat),
		Timeout:          ocypod.Seconds(d.uint(m.Timeout)),
		HeartbeatTimeout: ocypod.Seconds(d.uint(m.HeartbeatTimeout)),
		ExpiresAfter:     ocypod.Seconds(d.uint(m.ExpiresAfter)),
		Retries:          d.uint(m.Retries),
		RetriesAttempted: d.uint(m.RetriesAttempted),
		Priority:         d.int(m.Priority),
		RunAt:            d.micros(m.RunAt),
		Key:              m.Key,
		Tracked:          bool(m.Tracked),
		Attempt:          d.uint(m.Attempt),
		Worker:           m.Worker,
	}
	if m.Callback != "" {
		j.Callback = ocypod.Sealed(m.Callback)
	}
	if t := d.micros(m.CreatedAt); t != nil {
		j.CreatedAt = *t
	}
	if m.TimeoutRetries != nil {
		n := d.uint(*m.TimeoutRetries)
		j.TimeoutRetries = &n
	}
	var err error
	if j.RetryDelays, err = decodeDelays(m.RetryDelays); err != nil {
		return nil, fmt.Errorf("job %d: retry_delays: %v", id, err)
	}
	if j.RetryBackoff, err = decodeBackoff(m.RetryBackoff); err != nil {
		return nil, fmt.Errorf("job %d: retry_backoff: %v", id, err)
	}
	if m.Tags != nil {
		if err := json.Unmarshal([]byte(*m.Tags), &j.Tags); err != nil || j.Tags == nil {
			return nil, fmt.Errorf("job %d: unreadable tags %q", id, truncate(*m.Tags))
		}
	}
	if m.DependsOn != "" {
		var deps []idStr
		if err := json.Unmarshal([]byte(m.DependsOn), &deps); err != nil {
			return nil, fmt.Errorf("job %d: unreadable depends_on", id)
		}
		j.DependsOn = ids(deps)
	}
	// Ocypod's "ended" counts retries only; a failed job that will not be
	// retried for another reason (abandoned, permanent, another budget)
	// is marked so that it reads as ended too.
	if st == ocypod.StatusFailed || st == ocypod.StatusTimedOut {
		if m.Due == "" {
			j.RetryAbandoned = !ocypod.IsEnded(st, j.Retries, j.RetriesAttempted, false)
		} else if ms, err := m.Due.int(); err == nil {
			t := time.UnixMilli(ms).UTC()
			j.RetryDue = &t
		}
	}
	if input == nil {
		input = m.Input
	}
	if input != nil {
		if j.Input, err = rawJSON(*input); err != nil {
			return nil, fmt.Errorf("job %d: input: %v", id, err)
		}
	}
	if output != nil {
		if j.Output, err = rawJSON(*output); err != nil {
			return nil, fmt.Errorf("job %d: output: %v", id, err)
		}
	}
	if errText != nil && *errText != "" {
		var e struct{ Group, Message string }
		if err := json.Unmarshal([]byte(*errText), &e); err != nil {
			return nil, fmt.Errorf("job %d: unreadable error", id)
		}
		j.Error = &ocypod.JobError{Group: e.Group, Message: e.Message}
	}
	if d.err != nil {
		return nil, fmt.Errorf("job %d: %v", id, d.err)
	}
	return j, nil
}

// rawJSON checks stored JSON; null gives nil.
func rawJSON(s string) (json.RawMessage, error) {
	if !json.Valid([]byte(s)) {
		return nil, fmt.Errorf("not JSON: %q", truncate(s))
	}
	if s == "null" {
		return nil, nil
	}
	return json.RawMessage(s), nil
}

// truncate shortens a stored value quoted in an error.
func truncate(v string) string {
	if len(v) > 64 {
		return v[:64] + "..."
	}
	return v
}
