package wire

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Response bodies are built by hand: Ocypod's key orders are part of the
// wire contract, and the field list of GET /job/{id} is chosen per request.

// AppendString appends s as a JSON string, escaped as serde_json does: only
// '"', '\\' and control characters; everything else, '/' and U+2028
// included, is written as is. Invalid UTF-8 becomes U+FFFD.
func AppendString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendCanonical appends v as Canonical JSON: compact, object keys sorted
// by byte order with the last of duplicate keys kept (as upstream's
// serde_json maps did), strings escaped by AppendString, numbers as written.
func AppendCanonical(b []byte, v *Value) []byte {
	switch v.Kind {
	case String:
		return AppendString(b, v.Text)
	case Array:
		b = append(b, '[')
		for i := range v.Elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendCanonical(b, &v.Elems[i])
		}
		return append(b, ']')
	case Object:
		// Stable sort by key, then keep the last member of each run.
		ms := make([]*Member, len(v.Members))
		for i := range v.Members {
			ms[i] = &v.Members[i]
		}
		slices.SortStableFunc(ms, func(x, y *Member) int { return strings.Compare(x.Key, y.Key) })
		b = append(b, '{')
		first := true
		for i, m := range ms {
			if i+1 < len(ms) && ms[i+1].Key == m.Key {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = AppendString(b, m.Key)
			b = append(b, ':')
			b = AppendCanonical(b, &m.Value)
		}
		return append(b, '}')
	default: // null, bool and number keep their literal text
		return append(b, v.Text...)
	}
}

// Canonical returns v as Canonical JSON, or nil for JSON null.
func Canonical(v *Value) json.RawMessage {
	if v.Kind == Null {
		return nil
	}
	return AppendCanonical(nil, v)
}

// AppendRaw appends stored JSON (already Canonical), or null for none.
func AppendRaw(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

func AppendUint(b []byte, n uint64) []byte { return strconv.AppendUint(b, n, 10) }

func AppendDuration(b []byte, d ocypod.Duration) []byte { return AppendString(b, d.String()) }

func AppendDurations(b []byte, ds []ocypod.Duration) []byte {
	b = append(b, '[')
	for i, d := range ds {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendDuration(b, d)
	}
	return append(b, ']')
}

func AppendIDs(b []byte, ids []uint64) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendUint(b, id)
	}
	return append(b, ']')
}

func AppendTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return AppendString(b, ocypod.FormatTime(*t))
}

// AppendKey appends `"key":`, preceded by a comma unless it opens an object.
func AppendKey(b []byte, key string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = AppendString(b, key)
	return append(b, ':')
}

// AppendJob appends the job as GET /job/{id} shows it: the given fields in
// the given order, or, when fields is nil, Ocypod's 17 in ocypod.JobFields
// order followed by the extension fields that hold a value an extension
// set (DefaultJobFields). Every name in fields must be one of
// ocypod.JobFields or ocypod.ExtJobFields.
func AppendJob(b []byte, j *ocypod.Job, fields []string) []byte {
	if fields == nil {
		fields = DefaultJobFields(j)
	}
	b = append(b, '{')
	for _, f := range fields {
		b = AppendKey(b, f)
		b = appendJobField(b, j, f)
	}
	return append(b, '}')
}

// DefaultJobFields are the fields GET /job/{id} shows without ?fields=:
// Ocypod's 17, then each extension field the job holds a non-default value
// of (attempt, dependents and history only when asked for), so a job that
// no extension touched reads exactly as in Ocypod.
func DefaultJobFields(j *ocypod.Job) []string {
	fields := ocypod.JobFields
	add := func(on bool, f string) {
		if on {
			if len(fields) == len(ocypod.JobFields) {
				fields = append([]string(nil), fields...)
			}
			fields = append(fields, f)
		}
	}
	add(j.Priority != 0, "priority")
	add(j.RunAt != nil, "run_at")
	add(j.Key != "", "key")
	add(j.DependsOn != nil, "depends_on")
	add(j.RetryBackoff != nil, "retry_backoff")
	add(j.TimeoutRetries != nil, "timeout_retries")
	add(j.Tracked, "tracked")
	add(j.Worker != "", "worker")
	add(j.Error != nil, "error")
	return fields
}

func appendJobField(b []byte, j *ocypod.Job, field string) []byte {
	switch field {
	case "id":
		return AppendUint(b, j.ID)
	case "queue":
		return AppendString(b, j.Queue)
	case "status":
		return AppendString(b, string(j.Status))
	case "tags":
		if j.Tags == nil { // null without tags, [] for "tags":[]
			return append(b, "null"...)
		}
		return AppendStrings(b, j.Tags)
	case "created_at":
		return AppendTime(b, &j.CreatedAt)
	case "started_at":
		return AppendTime(b, j.StartedAt)
	case "ended_at":
		return AppendTime(b, j.EndedAt)
	case "last_heartbeat":
		return AppendTime(b, j.LastHeartbeat)
	case "input":
		return AppendRaw(b, j.Input)
	case "output":
		return AppendRaw(b, j.Output)
	case "timeout":
		return AppendDuration(b, j.Timeout)
	case "heartbeat_timeout":
		return AppendDuration(b, j.HeartbeatTimeout)
	case "expires_after":
		return AppendDuration(b, j.ExpiresAfter)
	case "retries":
		return AppendUint(b, j.Retries)
	case "retries_attempted":
		return AppendUint(b, j.RetriesAttempted)
	case "retry_delays":
		if len(j.RetryDelays) == 0 { // null when none, never []
			return append(b, "null"...)
		}
		return AppendDurations(b, j.RetryDelays)
	case "ended":
		return strconv.AppendBool(b, j.Ended())
	case "priority":
		return strconv.AppendInt(b, j.Priority, 10)
	case "run_at":
		return AppendTime(b, j.RunAt)
	case "key":
		return appendOptString(b, j.Key)
	case "depends_on":
		if j.DependsOn == nil {
			return append(b, "null"...)
		}
		return AppendIDs(b, j.DependsOn)
	case "dependents":
		return AppendIDs(b, j.Dependents)
	case "retry_backoff":
		return AppendBackoff(b, j.RetryBackoff)
	case "timeout_retries":
		if j.TimeoutRetries == nil {
			return append(b, "null"...)
		}
		return AppendUint(b, *j.TimeoutRetries)
	case "tracked":
		return strconv.AppendBool(b, j.Tracked)
	case "attempt":
		return AppendUint(b, j.Attempt)
	case "worker":
		return appendOptString(b, j.Worker)
	case "error":
		return AppendJobError(b, j.Error)
	case "history":
		b = append(b, '[')
		for i, a := range j.History {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"attempt":`...)
			b = AppendUint(b, a.Attempt)
			b = append(b, `,"worker":`...)
			b = appendOptString(b, a.Worker)
			b = append(b, `,"started_at":`...)
			b = AppendTime(b, &a.StartedAt)
			b = append(b, `,"ended_at":`...)
			b = AppendTime(b, a.EndedAt)
			b = append(b, `,"status":`...)
			b = AppendString(b, string(a.Status))
			b = append(b, `,"error":`...)
			b = AppendJobError(b, a.Error)
			b = append(b, '}')
		}
		return append(b, ']')
	}
	panic("wire: unknown job field " + field)
}

// appendOptString appends s, or null when it is empty.
func appendOptString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return AppendString(b, s)
}

// AppendJobError appends {"group":...,"message":...}, or null.
func AppendJobError(b []byte, e *ocypod.JobError) []byte {
	if e == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"group":`...)
	b = AppendString(b, e.Group)
	b = append(b, `,"message":`...)
	b = AppendString(b, e.Message)
	return append(b, '}')
}

// AppendBackoff appends a retry_backoff object, or null.
func AppendBackoff(b []byte, bo *ocypod.Backoff) []byte {
	if bo == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"min":`...)
	b = AppendDuration(b, bo.Min)
	b = append(b, `,"max":`...)
	b = AppendDuration(b, bo.Max)
	b = append(b, `,"factor":`...)
	b = strconv.AppendFloat(b, bo.Factor, 'f', -1, 64)
	b = append(b, `,"jitter":`...)
	b = strconv.AppendBool(b, bo.Jitter)
	return append(b, '}')
}

// AppendQueueSettings appends GET /queue/{name}'s object; retry_delays is
// always an array there.
func AppendQueueSettings(b []byte, s ocypod.QueueSettings) []byte {
	b = append(b, `{"timeout":`...)
	b = AppendDuration(b, s.Timeout)
	b = append(b, `,"heartbeat_timeout":`...)
	b = AppendDuration(b, s.HeartbeatTimeout)
	b = append(b, `,"expires_after":`...)
	b = AppendDuration(b, s.ExpiresAfter)
	b = append(b, `,"retries":`...)
	b = AppendUint(b, s.Retries)
	b = append(b, `,"retry_delays":`...)
	b = AppendDurations(b, s.RetryDelays)
	return append(b, '}')
}

// AppendInfo appends /info's object, queues sorted by name.
func AppendInfo(b []byte, info ocypod.ServerInfo) []byte {
	names := make([]string, 0, len(info.Queues))
	for name := range info.Queues {
		names = append(names, name)
	}
	slices.Sort(names)
	b = append(b, `{"queues":{`...)
	for _, name := range names {
		c := info.Queues[name]
		b = AppendKey(b, name)
		b = append(b, `{"queued":`...)
		b = AppendUint(b, c.Queued)
		b = append(b, `,"running":`...)
		b = AppendUint(b, c.Running)
		b = append(b, `,"failed":`...)
		b = AppendUint(b, c.Failed)
		b = append(b, `,"completed":`...)
		b = AppendUint(b, c.Completed)
		b = append(b, `,"cancelled":`...)
		b = AppendUint(b, c.Cancelled)
		b = append(b, `,"timed_out":`...)
		b = AppendUint(b, c.TimedOut)
		b = append(b, '}')
	}
	s := info.Statistics
	b = append(b, `},"statistics":{"total_jobs_created":`...)
	b = AppendUint(b, s.Created)
	b = append(b, `,"total_jobs_completed":`...)
	b = AppendUint(b, s.Completed)
	b = append(b, `,"total_jobs_retried":`...)
	b = AppendUint(b, s.Retried)
	b = append(b, `,"total_jobs_failed":`...)
	b = AppendUint(b, s.Failed)
	b = append(b, `,"total_jobs_timed_out":`...)
	b = AppendUint(b, s.TimedOut)
	b = append(b, `,"total_jobs_cancelled":`...)
	b = AppendUint(b, s.Cancelled)
	return append(b, "}}"...)
}

// AppendJobIDs appends /queue/{name}/job_ids's object: all six statuses,
// each an array (never null).
func AppendJobIDs(b []byte, ids ocypod.JobIDs) []byte {
	b = append(b, `{"queued":`...)
	b = AppendIDs(b, ids.Queued)
	b = append(b, `,"running":`...)
	b = AppendIDs(b, ids.Running)
	b = append(b, `,"failed":`...)
	b = AppendIDs(b, ids.Failed)
	b = append(b, `,"completed":`...)
	b = AppendIDs(b, ids.Completed)
	b = append(b, `,"cancelled":`...)
	b = AppendIDs(b, ids.Cancelled)
	b = append(b, `,"timed_out":`...)
	b = AppendIDs(b, ids.TimedOut)
	return append(b, '}')
}

// AppendStrings appends a JSON array of strings ([] when empty).
func AppendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, s)
	}
	return append(b, ']')
}
