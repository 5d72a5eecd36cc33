package redisstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// decoder reads stored hash fields into domain values. Missing fields read
// as zero; the first unreadable one is kept in err (later reads still return
// zero values), so corrupt data becomes an error, never a panic.
type decoder struct{ err error }

func (d *decoder) fail(field, v string, err error) {
	if d.err == nil {
		d.err = fmt.Errorf("field %s: unreadable value %q: %v", field, truncate(v), err)
	}
}

// truncate shortens a stored value quoted in an error.
func truncate(v string) string {
	if len(v) > 64 {
		return v[:64] + "..."
	}
	return v
}

func (d *decoder) uint(m map[string]string, f string) uint64 {
	v, ok := m[f]
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		d.fail(f, v, err)
	}
	return n
}

// duration reads whole seconds.
func (d *decoder) duration(m map[string]string, f string) ocypod.Duration {
	return ocypod.Seconds(d.uint(m, f))
}

// delays reads a JSON array of whole seconds; none or empty gives nil.
func (d *decoder) delays(m map[string]string, f string) []ocypod.Duration {
	v, ok := m[f]
	if !ok {
		return nil
	}
	var secs []uint64
	if err := json.Unmarshal([]byte(v), &secs); err != nil {
		d.fail(f, v, err)
		return nil
	}
	if len(secs) == 0 {
		return nil
	}
	out := make([]ocypod.Duration, len(secs))
	for i, n := range secs {
		out[i] = ocypod.Seconds(n)
	}
	return out
}

// time reads microseconds since the epoch; absent gives nil.
func (d *decoder) time(m map[string]string, f string) *time.Time {
	v, ok := m[f]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		d.fail(f, v, err)
		return nil
	}
	t := time.UnixMicro(n).UTC()
	return &t
}

// json reads stored JSON; absent or null gives nil.
func (d *decoder) json(m map[string]string, f string) json.RawMessage {
	v, ok := m[f]
	if !ok {
		return nil
	}
	return d.jsonValue(f, v)
}

func (d *decoder) jsonValue(f, v string) json.RawMessage {
	if !json.Valid([]byte(v)) {
		d.fail(f, v, fmt.Errorf("not JSON"))
		return nil
	}
	b := bytes.TrimSpace([]byte(v))
	if string(b) == "null" {
		return nil
	}
	return json.RawMessage(b)
}

// strings reads a JSON array of strings; absent gives nil, "[]" gives an
// empty non-nil slice.
func (d *decoder) strings(m map[string]string, f string) []string {
	v, ok := m[f]
	if !ok {
		return nil
	}
	var out []string
	if err := json.Unmarshal([]byte(v), &out); err != nil || out == nil {
		if err == nil {
			err = fmt.Errorf("not an array")
		}
		d.fail(f, v, err)
		return nil
	}
	return out
}

// decodeJob reads a job hash. A hash without a status field is no job: the
// caller reports it missing. Anything else unreadable is an error.
func decodeJob(id uint64, m map[string]string) (*ocypod.Job, error) {
	raw := m["status"]
	status, ok := ocypod.ParseStatus(raw)
	if !ok {
		return nil, fmt.Errorf("job %d: invalid status %q", id, truncate(raw))
	}
	var d decoder
	j := &ocypod.Job{
		ID:               id,
		Queue:            m["queue"],
		Status:           status,
		Tags:             d.strings(m, "tags"),
		StartedAt:        d.time(m, "started_at"),
		EndedAt:          d.time(m, "ended_at"),
		LastHeartbeat:    d.time(m, "last_heartbeat"),
		Input:            d.json(m, "input"),
		Output:           d.json(m, "output"),
		Timeout:          d.duration(m, "timeout"),
		HeartbeatTimeout: d.duration(m, "heartbeat_timeout"),
		ExpiresAfter:     d.duration(m, "expires_after"),
		Retries:          d.uint(m, "retries"),
		RetriesAttempted: d.uint(m, "retries_attempted"),
		RetryDelays:      d.delays(m, "retry_delays"),
		RetryAbandoned:   m["abandoned"] == "1",
	}
	if t := d.time(m, "created_at"); t != nil {
		j.CreatedAt = *t
	}
	if d.err != nil {
		return nil, fmt.Errorf("job %d: %w", id, d.err)
	}
	return j, nil
}
