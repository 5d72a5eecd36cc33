package wire

import (
	"strconv"

	"github.com/ocyless/ocyless/shared/ocypod"
)

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
		// A job waiting for a retry by policy shows when it is due, when
		// asked (?fields=run_at, listings): the default object of a failed
		// job stays Ocypod's.
		if j.RunAt == nil && j.RetryDue != nil && !j.Ended() {
			return AppendTime(b, j.RetryDue)
		}
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
	case "callback":
		return appendCallback(b, j.CallbackView)
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
	b = AppendFloat(b, bo.Factor)
	b = append(b, `,"jitter":`...)
	b = strconv.AppendBool(b, bo.Jitter)
	return append(b, '}')
}

// appendCallback appends {"url","on","delivered_at","attempts"}, or null.
func appendCallback(b []byte, c *ocypod.JobCallback) []byte {
	if c == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"url":`...)
	b = AppendString(b, c.URL)
	b = append(b, `,"on":[`...)
	for i, st := range c.On {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, string(st))
	}
	b = append(b, `],"delivered_at":`...)
	b = AppendTime(b, c.DeliveredAt)
	b = append(b, `,"attempts":`...)
	b = AppendUint(b, c.Attempts)
	return append(b, '}')
}
