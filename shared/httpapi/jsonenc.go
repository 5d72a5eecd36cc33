package httpapi

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

// appendString appends s as a JSON string, escaped as serde_json does: only
// '"', '\\' and control characters; everything else, '/' and U+2028
// included, is written as is. Invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
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

// appendCanonical appends v as canonical JSON: compact, object keys sorted
// by byte order with the last of duplicate keys kept (as upstream's
// serde_json maps did), strings escaped by appendString, numbers as written.
func appendCanonical(b []byte, v *jsonValue) []byte {
	switch v.kind {
	case jsonString:
		return appendString(b, v.text)
	case jsonArray:
		b = append(b, '[')
		for i := range v.elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonical(b, &v.elems[i])
		}
		return append(b, ']')
	case jsonObject:
		// Stable sort by key, then keep the last member of each run.
		ms := make([]*jsonMember, len(v.members))
		for i := range v.members {
			ms[i] = &v.members[i]
		}
		slices.SortStableFunc(ms, func(x, y *jsonMember) int { return strings.Compare(x.key, y.key) })
		b = append(b, '{')
		first := true
		for i, m := range ms {
			if i+1 < len(ms) && ms[i+1].key == m.key {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendString(b, m.key)
			b = append(b, ':')
			b = appendCanonical(b, &m.value)
		}
		return append(b, '}')
	default: // null, bool and number keep their literal text
		return append(b, v.text...)
	}
}

// canonical returns v as canonical JSON, or nil for JSON null.
func canonical(v *jsonValue) json.RawMessage {
	if v.kind == jsonNull {
		return nil
	}
	return appendCanonical(nil, v)
}

// appendRaw appends stored JSON (already canonical), or null for none.
func appendRaw(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

func appendUint(b []byte, n uint64) []byte { return strconv.AppendUint(b, n, 10) }

func appendDuration(b []byte, d ocypod.Duration) []byte { return appendString(b, d.String()) }

func appendDurations(b []byte, ds []ocypod.Duration) []byte {
	b = append(b, '[')
	for i, d := range ds {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendDuration(b, d)
	}
	return append(b, ']')
}

func appendIDs(b []byte, ids []uint64) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendUint(b, id)
	}
	return append(b, ']')
}

func appendTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return appendString(b, ocypod.FormatTime(*t))
}

// appendKey appends `"key":`, preceded by a comma unless it opens an object.
func appendKey(b []byte, key string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = appendString(b, key)
	return append(b, ':')
}

// appendJob appends the job as GET /job/{id} shows it: the given fields in
// the given order (duplicates kept), all 17 in ocypod.JobFields order if
// fields is nil. Every name in fields must be one of ocypod.JobFields.
func appendJob(b []byte, j *ocypod.Job, fields []string) []byte {
	if fields == nil {
		fields = ocypod.JobFields
	}
	b = append(b, '{')
	for _, f := range fields {
		b = appendKey(b, f)
		b = appendJobField(b, j, f)
	}
	return append(b, '}')
}

func appendJobField(b []byte, j *ocypod.Job, field string) []byte {
	switch field {
	case "id":
		return appendUint(b, j.ID)
	case "queue":
		return appendString(b, j.Queue)
	case "status":
		return appendString(b, string(j.Status))
	case "tags":
		if j.Tags == nil { // null without tags, [] for "tags":[]
			return append(b, "null"...)
		}
		return appendStrings(b, j.Tags)
	case "created_at":
		return appendTime(b, &j.CreatedAt)
	case "started_at":
		return appendTime(b, j.StartedAt)
	case "ended_at":
		return appendTime(b, j.EndedAt)
	case "last_heartbeat":
		return appendTime(b, j.LastHeartbeat)
	case "input":
		return appendRaw(b, j.Input)
	case "output":
		return appendRaw(b, j.Output)
	case "timeout":
		return appendDuration(b, j.Timeout)
	case "heartbeat_timeout":
		return appendDuration(b, j.HeartbeatTimeout)
	case "expires_after":
		return appendDuration(b, j.ExpiresAfter)
	case "retries":
		return appendUint(b, j.Retries)
	case "retries_attempted":
		return appendUint(b, j.RetriesAttempted)
	case "retry_delays":
		if len(j.RetryDelays) == 0 { // null when none, never []
			return append(b, "null"...)
		}
		return appendDurations(b, j.RetryDelays)
	case "ended":
		return strconv.AppendBool(b, j.Ended())
	}
	panic("httpapi: unknown job field " + field)
}

// appendQueueSettings appends GET /queue/{name}'s object; retry_delays is
// always an array there.
func appendQueueSettings(b []byte, s ocypod.QueueSettings) []byte {
	b = append(b, `{"timeout":`...)
	b = appendDuration(b, s.Timeout)
	b = append(b, `,"heartbeat_timeout":`...)
	b = appendDuration(b, s.HeartbeatTimeout)
	b = append(b, `,"expires_after":`...)
	b = appendDuration(b, s.ExpiresAfter)
	b = append(b, `,"retries":`...)
	b = appendUint(b, s.Retries)
	b = append(b, `,"retry_delays":`...)
	b = appendDurations(b, s.RetryDelays)
	return append(b, '}')
}

// appendInfo appends /info's object, queues sorted by name.
func appendInfo(b []byte, info ocypod.ServerInfo) []byte {
	names := make([]string, 0, len(info.Queues))
	for name := range info.Queues {
		names = append(names, name)
	}
	slices.Sort(names)
	b = append(b, `{"queues":{`...)
	for _, name := range names {
		c := info.Queues[name]
		b = appendKey(b, name)
		b = append(b, `{"queued":`...)
		b = appendUint(b, c.Queued)
		b = append(b, `,"running":`...)
		b = appendUint(b, c.Running)
		b = append(b, `,"failed":`...)
		b = appendUint(b, c.Failed)
		b = append(b, `,"completed":`...)
		b = appendUint(b, c.Completed)
		b = append(b, `,"cancelled":`...)
		b = appendUint(b, c.Cancelled)
		b = append(b, `,"timed_out":`...)
		b = appendUint(b, c.TimedOut)
		b = append(b, '}')
	}
	s := info.Statistics
	b = append(b, `},"statistics":{"total_jobs_created":`...)
	b = appendUint(b, s.Created)
	b = append(b, `,"total_jobs_completed":`...)
	b = appendUint(b, s.Completed)
	b = append(b, `,"total_jobs_retried":`...)
	b = appendUint(b, s.Retried)
	b = append(b, `,"total_jobs_failed":`...)
	b = appendUint(b, s.Failed)
	b = append(b, `,"total_jobs_timed_out":`...)
	b = appendUint(b, s.TimedOut)
	b = append(b, `,"total_jobs_cancelled":`...)
	b = appendUint(b, s.Cancelled)
	return append(b, "}}"...)
}

// appendJobIDs appends /queue/{name}/job_ids's object: all six statuses,
// each an array (never null).
func appendJobIDs(b []byte, ids ocypod.JobIDs) []byte {
	b = append(b, `{"queued":`...)
	b = appendIDs(b, ids.Queued)
	b = append(b, `,"running":`...)
	b = appendIDs(b, ids.Running)
	b = append(b, `,"failed":`...)
	b = appendIDs(b, ids.Failed)
	b = append(b, `,"completed":`...)
	b = appendIDs(b, ids.Completed)
	b = append(b, `,"cancelled":`...)
	b = appendIDs(b, ids.Cancelled)
	b = append(b, `,"timed_out":`...)
	b = appendIDs(b, ids.TimedOut)
	return append(b, '}')
}

// appendStrings appends a JSON array of strings ([] when empty).
func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}
