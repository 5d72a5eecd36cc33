package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
	"github.com/ocyless/ocyless/shared/wire"
)

// readJSON reads r's JSON body with Ocypod's checks (wire.ReadJSON).
func (a *API) readJSON(r *http.Request) (*wire.Doc, error) {
	return wire.ReadJSON(r, a.opts.MaxBodySize)
}

// queueSettingsFields are the keys of PUT /queue/{name}'s body.
var queueSettingsFields = []string{"timeout", "heartbeat_timeout", "expires_after", "retries", "retry_delays"}

// decodeQueueSettings reads PUT /queue/{name}'s body. Missing fields take
// the built-in defaults (not the queue's current values, as upstream); an
// explicit null is refused, as upstream's non-optional fields did.
func decodeQueueSettings(d *wire.Doc, rules *inputRules) (ocypod.QueueSettings, error) {
	s := ocypod.DefaultQueueSettings()
	if rules.strict {
		// Every queue setting: PUT takes the extension's too
		// (decodeQueueReplacement).
		if err := refuseUnknown(&d.Root, queuePatchFields, ""); err != nil {
			return s, err
		}
	}
	err := d.Members(&d.Root, queueSettingsFields, func(key string, v *wire.Value) (err error) {
		switch key {
		case "timeout":
			s.Timeout, err = d.Duration(v)
		case "heartbeat_timeout":
			s.HeartbeatTimeout, err = d.Duration(v)
		case "expires_after":
			s.ExpiresAfter, err = d.Duration(v)
		case "retries":
			s.Retries, err = d.Uint64(v)
		case "retry_delays":
			s.RetryDelays, err = d.Durations(v)
		}
		return err
	})
	return s, err
}

// decodeQueueReplacement reads the whole of a PUT /queue/{name} body as a
// patch that replaces every setting: s (the Ocypod five, defaults applied),
// then each extension setting the body names, the others at their
// defaults (shards excepted: it stays unless named). ext holds only the
// extension settings named, nil when there are none.
func decodeQueueReplacement(d *wire.Doc, name string, s ocypod.QueueSettings, pol *push.Policy) (full ocypod.QueuePatch, ext *ocypod.QueuePatch, err error) {
	var p ocypod.QueuePatch
	if hasAny(&d.Root, queuePatchFields[len(queueSettingsFields):]) {
		if p, err = decodeQueuePatch(d, name, pol); err != nil {
			return full, nil, err
		}
	}
	given := p
	given.Timeout, given.HeartbeatTimeout, given.ExpiresAfter, given.Retries = nil, nil, nil, nil
	given.RetryDelays, given.RetryDelaysSet = nil, false
	if hasAny(&d.Root, queuePatchFields[len(queueSettingsFields):]) {
		ext = &given
	}
	full = given
	full.Timeout, full.HeartbeatTimeout, full.ExpiresAfter = &s.Timeout, &s.HeartbeatTimeout, &s.ExpiresAfter
	full.Retries, full.RetryDelays, full.RetryDelaysSet = &s.Retries, s.RetryDelays, true
	if full.Paused == nil {
		full.Paused = new(bool)
	}
	if full.Concurrency == nil {
		full.Concurrency = new(uint64)
	}
	full.ClearRateLimit = full.ClearRateLimit || full.RateLimit == nil
	full.ClearRetryBackoff = full.ClearRetryBackoff || full.RetryBackoff == nil
	full.ClearTimeoutRetries = full.ClearTimeoutRetries || full.TimeoutRetries == nil
	if full.DeadLetterQueue == nil {
		full.DeadLetterQueue = new(string)
	}
	full.PushSet, full.CallbackSet = true, true
	return full, ext, nil
}

// jobSpecFields are the keys of a create body: Ocypod's seven, then the
// extension's.
var jobSpecFields = []string{
	"input", "tags", "timeout", "heartbeat_timeout", "expires_after", "retries", "retry_delays",
	"priority", "run_at", "delay", "key", "on_conflict", "update_run_at", "depends_on",
	"retry_backoff", "timeout_retries", "tracked",
}

// decodeJobSpec reads a create body (POST /queue/{name}/job, an element of
// a batch, a schedule's job, a PATCH's next), input canonicalised. null
// stands for an absent field. The spec is validated: tags (JobSpec.Validate)
// and the fields that go together. rules is the request's when obj is its
// whole body (POST /queue/{name}/job); nil inside an extension (a batch,
// a schedule, a next), where unknown keys other than extra are refused.
func decodeJobSpec(d *wire.Doc, obj *wire.Value, rules *inputRules, extra ...string) (ocypod.JobSpec, error) {
	var s ocypod.JobSpec
	var onConflict, updateRunAt bool
	strict := rules == nil
	if !strict && hasAny(obj, jobSpecFields[7:]) {
		if err := rules.usesExtension(); err != nil {
			return s, err
		}
	}
	if strict || rules.strict {
		if err := refuseUnknown(obj, append(extra, jobSpecFields...), ""); err != nil {
			return s, err
		}
	}
	err := d.Members(obj, jobSpecFields, func(key string, v *wire.Value) (err error) {
		if v.Kind == wire.Null {
			return nil
		}
		switch key {
		case "input":
			s.Input = wire.Canonical(v)
		case "tags":
			s.Tags, err = d.Strings(v)
		case "timeout":
			s.Timeout, err = ptr(d.Duration(v))
		case "heartbeat_timeout":
			s.HeartbeatTimeout, err = ptr(d.Duration(v))
		case "expires_after":
			s.ExpiresAfter, err = ptr(d.Duration(v))
		case "retries":
			s.Retries, err = ptr(d.Uint64(v))
		case "retry_delays":
			s.RetryDelays, err = d.Durations(v)
			s.RetryDelaysSet = true
		default:
			err = decodeSpecExt(d, &s, key, v)
			onConflict = onConflict || key == "on_conflict"
			updateRunAt = updateRunAt || key == "update_run_at"
		}
		return err
	})
	if err != nil {
		return ocypod.JobSpec{}, err
	}
	switch {
	case s.RunAt != nil && s.Delay != nil:
		return ocypod.JobSpec{}, invalid("run_at", "give run_at or delay, not both")
	case s.RetryBackoff != nil && s.RetryDelaysSet:
		return ocypod.JobSpec{}, invalid("retry_backoff", "give retry_delays or retry_backoff, not both")
	case onConflict && s.Key == "":
		return ocypod.JobSpec{}, invalid("on_conflict", "needs a key")
	case updateRunAt && s.OnConflict != ocypod.OnConflictUpdate:
		return ocypod.JobSpec{}, invalid("update_run_at", `needs on_conflict "update"`)
	}
	if err := s.Validate(); err != nil {
		return ocypod.JobSpec{}, err
	}
	return s, nil
}

// decodeSpecExt reads one extension field of a create body.
func decodeSpecExt(d *wire.Doc, s *ocypod.JobSpec, key string, v *wire.Value) error {
	var err error
	switch key {
	case "priority":
		s.Priority, err = ptr(intValue(v, key, ocypod.MinPriority, ocypod.MaxPriority))
	case "run_at":
		s.RunAt, err = ptr(timeValue(v, key))
	case "delay":
		s.Delay, err = ptr(durationValue(v, key))
	case "key":
		s.Key, err = nameValue(v, key, ocypod.MaxKeyLength)
	case "on_conflict":
		var c string
		c, err = enumValue(v, key, "keep", "update", "error")
		s.OnConflict = ocypod.OnConflict(c)
	case "update_run_at":
		var u string
		u, err = enumValue(v, key, "always", "if_later", "if_earlier", "never")
		s.UpdateRunAt = ocypod.UpdateRunAt(u)
	case "depends_on":
		s.DependsOn, err = idsValue(v, key, ocypod.MaxDependencies)
	case "retry_backoff":
		s.RetryBackoff, err = backoffValue(d, v, key)
	case "timeout_retries":
		s.TimeoutRetries, err = ptr(uintValue(v, key))
	case "tracked":
		s.Tracked, err = ptr(boolValue(v, key))
	}
	return err
}

// decodeJobSpecs reads POST /queue/{name}/jobs's body: an array of 1 to
// ocypod.MaxBatch create bodies, all checked before any is used. The
// error of a bad element names its index.
func decodeJobSpecs(d *wire.Doc) ([]ocypod.JobSpec, error) {
	if d.Root.Kind != wire.Array || len(d.Root.Elems) == 0 {
		return nil, invalid("jobs", "expected an array of 1 to "+strconv.Itoa(ocypod.MaxBatch)+" job bodies")
	}
	if len(d.Root.Elems) > ocypod.MaxBatch {
		return nil, invalid("jobs", "at most "+strconv.Itoa(ocypod.MaxBatch)+" jobs per batch")
	}
	specs := make([]ocypod.JobSpec, len(d.Root.Elems))
	for i := range d.Root.Elems {
		var err error
		if specs[i], err = decodeJobSpec(d, &d.Root.Elems[i], nil); err != nil {
			return nil, within("jobs["+strconv.Itoa(i)+"]", err)
		}
	}
	return specs, nil
}

// decodeOutput reads PUT /job/{id}/output's body: any JSON value, null
// included, canonicalised.
func decodeOutput(d *wire.Doc) json.RawMessage {
	return wire.AppendCanonical(nil, &d.Root)
}
