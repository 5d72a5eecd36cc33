package httpapi

import (
	"math"
	"strconv"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
	"github.com/ocyless/ocyless/shared/wire"
)

// jobUpdateFields are the keys of PATCH /job/{id}'s body: Ocypod's two,
// then the extension's.
var jobUpdateFields = []string{
	"status", "output", "error", "retry", "retry_at", "retry_in", "next",
	"priority", "run_at", "delay", "depends_on", "tags", "tracked",
}

// statusVariants is serde's list of the Status enum's variants.
const statusVariants = "`queued`, `running`, `completed`, `failed`, `cancelled`, `timed_out`"

// decodeJobUpdate reads PATCH /job/{id}'s body, output canonicalised. null
// stands for an absent field, so PATCH cannot set the output to null. The
// extension fields are checked against the status they need.
func decodeJobUpdate(d *wire.Doc, rules *inputRules) (ocypod.JobUpdate, error) {
	var u ocypod.JobUpdate
	if hasAny(&d.Root, jobUpdateFields[2:]) {
		if err := rules.usesExtension(); err != nil {
			return u, err
		}
	}
	if rules.strict {
		if err := refuseUnknown(&d.Root, jobUpdateFields, ""); err != nil {
			return u, err
		}
	}
	err := d.Members(&d.Root, jobUpdateFields, func(key string, v *wire.Value) (err error) {
		if v.Kind == wire.Null {
			return nil
		}
		switch key {
		case "output":
			u.Output = wire.Canonical(v)
		case "status":
			if v.Kind != wire.String {
				return d.InvalidType(v, "a status string")
			}
			// Ocypod's six only: a client cannot ask for scheduled or
			// waiting.
			st, ok := ocypod.ParseStatus(v.Text)
			if !ok || st == ocypod.StatusScheduled || st == ocypod.StatusWaiting {
				return d.Fail(v.End, "unknown variant `"+v.Text+"`, expected one of "+statusVariants)
			}
			u.Status = &st
		case "error":
			u.Error, err = jobErrorValue(d, v)
		case "retry":
			u.Retry, err = ptr(boolValue(v, key))
		case "retry_at":
			u.RetryAt, err = ptr(timeValue(v, key))
		case "retry_in":
			u.RetryIn, err = ptr(durationValue(v, key))
		case "next":
			u.Next, err = nextValue(d, v)
		case "priority":
			u.Priority, err = ptr(intValue(v, key, ocypod.MinPriority, ocypod.MaxPriority))
		case "run_at":
			u.RunAt, err = ptr(timeValue(v, key))
		case "delay":
			u.Delay, err = ptr(durationValue(v, key))
		case "depends_on":
			u.DependsOn, err = idsValue(v, key, ocypod.MaxDependencies)
			u.DependsOnSet = true
		case "tags":
			// Through JobSpec.Validate, as at creation: no empty tag, at
			// most ocypod.MaxTags.
			spec := ocypod.JobSpec{}
			if spec.Tags, err = d.Strings(v); err == nil {
				err = spec.Validate()
			}
			u.Tags, u.TagsSet = spec.Tags, true
		case "tracked":
			u.Tracked, err = ptr(boolValue(v, key))
		}
		return err
	})
	if err != nil {
		return ocypod.JobUpdate{}, err
	}
	return u, checkUpdate(&u)
}

// checkUpdate refuses the combinations of a PATCH that make no sense.
func checkUpdate(u *ocypod.JobUpdate) error {
	is := func(sts ...ocypod.Status) bool {
		for _, st := range sts {
			if u.Status != nil && *u.Status == st {
				return true
			}
		}
		return false
	}
	switch {
	case u.Error != nil && !is(ocypod.StatusFailed, ocypod.StatusTimedOut):
		return invalid("error", "only with status failed or timed_out")
	case u.Retry != nil && !is(ocypod.StatusFailed):
		return invalid("retry", "only with status failed")
	case u.RetryAt != nil && u.RetryIn != nil:
		return invalid("retry_at", "give retry_at or retry_in, not both")
	case u.RetryAt != nil && !is(ocypod.StatusFailed):
		return invalid("retry_at", "only with status failed")
	case u.RetryIn != nil && !is(ocypod.StatusFailed):
		return invalid("retry_in", "only with status failed")
	case (u.RetryAt != nil || u.RetryIn != nil) && u.Retry != nil && !*u.Retry:
		return invalid("retry", "false leaves no retry to schedule")
	case u.Next != nil && !is(ocypod.StatusCompleted):
		return invalid("next", "only with status completed")
	case u.RunAt != nil && u.Delay != nil:
		return invalid("run_at", "give run_at or delay, not both")
	}
	// priority, run_at and depends_on change a pending job in place; a
	// status change moves it elsewhere, so they do not go together.
	for _, f := range []struct {
		set  bool
		name string
	}{{u.Priority != nil, "priority"}, {u.RunAt != nil, "run_at"}, {u.Delay != nil, "delay"}, {u.DependsOnSet, "depends_on"}} {
		if f.set && u.Status != nil {
			return invalid(f.name, "changes a pending job; not with status")
		}
	}
	return nil
}

var jobErrorFields = []string{"group", "message"}

// jobErrorValue reads a PATCH error: {"group": 1..128 printable
// characters, "message": at most 64 KiB}, both optional.
func jobErrorValue(d *wire.Doc, v *wire.Value) (*ocypod.JobError, error) {
	if v.Kind != wire.Object {
		return nil, invalid("error", `must be an object {"group": string, "message": string}`)
	}
	e := &ocypod.JobError{}
	if err := refuseUnknown(v, jobErrorFields, "error."); err != nil {
		return nil, err
	}
	err := d.Members(v, jobErrorFields, func(key string, m *wire.Value) (err error) {
		switch key {
		case "group":
			e.Group, err = nameValue(m, "error.group", ocypod.MaxGroupLength)
		case "message":
			if m.Kind != wire.String || len(m.Text) > ocypod.MaxErrorMessage {
				return invalid("error.message", "must be a string of at most 64 KiB")
			}
			e.Message = m.Text
		}
		return err
	})
	return e, err
}

// nextValue reads a PATCH next: a create body plus its "queue".
func nextValue(d *wire.Doc, v *wire.Value) (*ocypod.NextJobSpec, error) {
	if v.Kind != wire.Object {
		return nil, invalid("next", "must be a job body with a \"queue\"")
	}
	spec, err := decodeJobSpec(d, v, nil, "queue")
	if err != nil {
		return nil, within("next", err)
	}
	next := &ocypod.NextJobSpec{Spec: spec}
	err = d.Members(v, []string{"queue"}, func(_ string, q *wire.Value) (err error) {
		next.Queue, err = queueNameValue(q, "next.queue")
		return err
	})
	if err != nil {
		return nil, err
	}
	if next.Queue == "" {
		return nil, invalid("next", "needs a \"queue\"")
	}
	return next, nil
}

// queuePatchFields are the keys of PATCH /queue/{name}'s body.
var queuePatchFields = []string{
	"timeout", "heartbeat_timeout", "expires_after", "retries", "retry_delays",
	"paused", "concurrency", "rate_limit", "retry_backoff", "timeout_retries", "dead_letter_queue", "shards",
	"push", "callback",
}

// decodeQueuePatch reads PATCH /queue/{name}'s body: the settings it names
// change, the others stay. Ocypod's settings read as in PUT (null refused);
// null clears an optional extension setting.
func decodeQueuePatch(d *wire.Doc, queue string, pol *push.Policy) (ocypod.QueuePatch, error) {
	var p ocypod.QueuePatch
	if err := refuseUnknown(&d.Root, queuePatchFields, ""); err != nil {
		return p, err
	}
	err := d.Members(&d.Root, queuePatchFields, func(key string, v *wire.Value) (err error) {
		null := v.Kind == wire.Null
		switch key {
		case "timeout":
			p.Timeout, err = ptr(d.Duration(v))
		case "heartbeat_timeout":
			p.HeartbeatTimeout, err = ptr(d.Duration(v))
		case "expires_after":
			p.ExpiresAfter, err = ptr(d.Duration(v))
		case "retries":
			p.Retries, err = ptr(d.Uint64(v))
		case "retry_delays":
			p.RetryDelays, err = d.Durations(v)
			p.RetryDelaysSet = true
		case "paused":
			p.Paused, err = ptr(boolValue(v, key))
		case "concurrency":
			p.Concurrency, err = ptr(uintValue(v, key))
		case "rate_limit":
			if p.ClearRateLimit = null; !null {
				p.RateLimit, err = rateLimitValue(d, v)
			}
		case "retry_backoff":
			if p.ClearRetryBackoff = null; !null {
				p.RetryBackoff, err = backoffValue(d, v, key)
			}
		case "timeout_retries":
			if p.ClearTimeoutRetries = null; !null {
				p.TimeoutRetries, err = ptr(uintValue(v, key))
			}
		case "dead_letter_queue":
			dl := ""
			if !null {
				if dl, err = queueNameValue(v, key); err == nil && dl == queue {
					err = invalid(key, "cannot be the queue itself")
				}
			}
			p.DeadLetterQueue = &dl
		case "shards":
			var n int64
			n, err = intValue(v, key, 1, ocypod.MaxShards)
			k := uint64(n)
			p.Shards = &k
		case "push":
			p.PushSet = true
			p.Push, err = pushValue(v, pol)
		case "callback":
			p.CallbackSet = true
			p.Callback, err = callbackValue(v, pol)
		}
		return err
	})
	if err != nil {
		return ocypod.QueuePatch{}, err
	}
	if p.RetryBackoff != nil && p.RetryDelaysSet {
		return ocypod.QueuePatch{}, invalid("retry_backoff", "give retry_delays or retry_backoff, not both")
	}
	return p, nil
}

var rateLimitFields = []string{"per_second", "burst"}

// rateLimitValue reads {"per_second": number > 0, "burst": integer >= 1}.
func rateLimitValue(d *wire.Doc, v *wire.Value) (*ocypod.RateLimit, error) {
	shape := `must be an object {"per_second": number above 0, "burst": integer of at least 1}`
	if v.Kind != wire.Object {
		return nil, invalid("rate_limit", shape)
	}
	rl := &ocypod.RateLimit{}
	if err := refuseUnknown(v, rateLimitFields, "rate_limit."); err != nil {
		return nil, err
	}
	err := d.Members(v, rateLimitFields, func(key string, m *wire.Value) error {
		if m.Kind != wire.Number {
			return invalid("rate_limit", shape)
		}
		switch key {
		case "per_second":
			f, err := strconv.ParseFloat(m.Text, 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) {
				return invalid("rate_limit", shape)
			}
			rl.PerSecond = f
		case "burst":
			n, err := uintValue(m, "rate_limit.burst")
			if err != nil || n == 0 {
				return invalid("rate_limit", shape)
			}
			rl.Burst = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if rl.PerSecond == 0 || rl.Burst == 0 {
		return nil, invalid("rate_limit", shape)
	}
	return rl, nil
}

var runAtFields = []string{"run_at", "delay"}

// decodeRunAt reads POST /job/{id}/retry's optional body, {"run_at"} or
// {"delay"}: the time the retry is due, nil for now.
func (a *API) decodeRunAt(d *wire.Doc) (*time.Time, error) {
	if d == nil {
		return nil, nil
	}
	var at *time.Time
	var n int
	if err := refuseUnknown(&d.Root, runAtFields, ""); err != nil {
		return nil, err
	}
	err := d.Members(&d.Root, runAtFields, func(key string, v *wire.Value) error {
		if v.Kind == wire.Null {
			return nil
		}
		n++
		if key == "run_at" {
			t, err := timeValue(v, key)
			at = &t
			return err
		}
		dur, err := durationValue(v, key)
		t := a.opts.Now().Add(dur.Std()).UTC()
		at = &t
		return err
	})
	if err == nil && n > 1 {
		err = invalid("run_at", "give run_at or delay, not both")
	}
	return at, err
}

var scheduleFields = []string{"cron", "every", "job"}

// decodeSchedule reads PUT /queue/{name}/schedules/{id}'s body: a cron
// expression or a period (ocypod.ParseRecurrence), and the create body of
// the jobs it makes, checked as a create body and kept canonical.
func decodeSchedule(d *wire.Doc, queue, id string) (ocypod.Schedule, error) {
	s := ocypod.Schedule{ID: id, Queue: queue}
	var job *wire.Value
	if err := refuseUnknown(&d.Root, scheduleFields, ""); err != nil {
		return ocypod.Schedule{}, err
	}
	err := d.Members(&d.Root, scheduleFields, func(key string, v *wire.Value) (err error) {
		if v.Kind == wire.Null {
			return nil
		}
		switch key {
		case "cron":
			if v.Kind != wire.String {
				return invalid("cron", "must be a 5-field cron expression")
			}
			s.Cron = v.Text
		case "every":
			s.Every, err = durationValue(v, key)
		case "job":
			job = v
		}
		return err
	})
	if err != nil {
		return ocypod.Schedule{}, err
	}
	if _, err := ocypod.ParseRecurrence(s.Cron, s.Every); err != nil {
		return ocypod.Schedule{}, err
	}
	if job == nil {
		return ocypod.Schedule{}, invalid("job", "give the body of the jobs to create")
	}
	if job.Kind != wire.Object {
		return ocypod.Schedule{}, invalid("job", "must be a job body (an object)")
	}
	spec, err := decodeJobSpec(d, job, nil)
	if err != nil {
		return ocypod.Schedule{}, within("job", err)
	}
	if spec.RunAt != nil || spec.Delay != nil {
		return ocypod.Schedule{}, invalid("job", "a schedule's job cannot have run_at or delay")
	}
	s.Job, s.Spec = wire.Canonical(job), spec
	return s, nil
}

// decodeRetryQueue reads POST /failures/{group}/retry's optional body,
// {"queue": <name>}: where to requeue ("" for each job's own queue).
func decodeRetryQueue(d *wire.Doc) (string, error) {
	if d == nil {
		return "", nil
	}
	queue := ""
	if err := refuseUnknown(&d.Root, []string{"queue"}, ""); err != nil {
		return "", err
	}
	err := d.Members(&d.Root, []string{"queue"}, func(_ string, v *wire.Value) (err error) {
		if v.Kind != wire.Null {
			queue, err = queueNameValue(v, "queue")
		}
		return err
	})
	return queue, err
}
