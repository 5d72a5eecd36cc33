package redisstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// refusal is the error of a script reply's code, with what the caller knows
// about the request.
func refusal(r *reply, id uint64, queue string, target *ocypod.Status, attempt ...uint64) error {
	var x struct {
		Status string `json:"status"`
		Queue  string `json:"queue"`
		ID     idStr  `json:"id"`
		Key    string `json:"key"`
		Field  string `json:"field"`
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(r.raw, &x)
	switch r.Err {
	case "job_not_found":
		return ocypod.JobNotFound(id)
	case "corrupt":
		return ocypod.Internal(fmt.Errorf("job %d: unreadable metadata", id))
	case "not_push":
		return ErrNotPush
	case "push_queue":
		if x.Queue != "" {
			queue = x.Queue
		}
		return ocypod.PushQueue(queue)
	case "queue_not_found":
		if x.Queue != "" {
			queue = x.Queue
		}
		return ocypod.QueueNotFound(queue)
	case "not_running":
		return ocypod.OutputNotRunning()
	case "stale_attempt":
		if len(attempt) == 0 {
			return ocypod.Internal(fmt.Errorf("job %d: unexpected stale_attempt", id))
		}
		return ocypod.StaleAttempt(id, attempt[0])
	case "conflict":
		cur, ok := ocypod.ParseStatus(x.Status)
		if !ok || target == nil {
			return ocypod.Internal(fmt.Errorf("job %d: conflict from status %q", id, truncate(x.Status)))
		}
		return ocypod.TransitionConflict(cur, *target)
	case "not_pending":
		return ocypod.NotPending(id, ocypod.Status(x.Status))
	case "key_exists":
		return ocypod.KeyExists(x.Key, uint64(x.ID))
	case "key_pending":
		return ocypod.KeyPending(id, uint64(x.ID))
	case "key_moved":
		return ocypod.KeyMoved(id)
	case "dep_missing":
		return ocypod.Invalid(fmt.Sprintf("Invalid depends_on: job %d does not exist", uint64(x.ID)))
	case "ids_exhausted":
		return ocypod.StorageFull("Job ids exhausted: no id below 2^53 is left in this partition")
	case "invalid":
		return ocypod.Invalid(fmt.Sprintf("Invalid %s: %s", x.Field, x.Reason))
	case "fenced":
		return errFenced
	}
	return ocypod.Internal(fmt.Errorf("unexpected script error %q", r.Err))
}

// jobCall is a script call about job id, in its partition; args names
// the job (A.id).
func (s *Store) jobCall(sc *script, id uint64, args jobArgs) *call {
	args.setJob(id)
	return &call{sc: sc, p: s.l.partitionOf(id), args: args}
}

// compact validates and compacts a JSON value; "" for JSON null or none.
func compact(msg json.RawMessage, field string) (string, error) {
	if msg == nil {
		return "", nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, msg); err != nil {
		return "", ocypod.Invalid(field + " is not valid JSON")
	}
	if buf.String() == "null" {
		return "", nil
	}
	return buf.String(), nil
}

// jobSpecArg is a create spec as create_job.lua takes it (A.specs, and
// update_job.lua's A.next.spec): every field is optional. Its fields are
// in the order of their names, so that its JSON (a schedule's stored
// spec) is the one a map of them had.
type jobSpecArg struct {
	Callback         string   `json:"callback,omitempty"`
	DelaysSet        bool     `json:"delays_set,omitempty"` // retry_delays given, maybe empty
	DependsOn        []string `json:"depends_on,omitzero"`  // [] clears an update's
	ExpiresAfter     *luaUint `json:"expires_after,omitempty"`
	HeartbeatTimeout *luaUint `json:"heartbeat_timeout,omitempty"`
	InheritBackoff   bool     `json:"inherit_backoff,omitempty"`
	InheritDelays    bool     `json:"inherit_delays,omitempty"`
	Input            string   `json:"input,omitempty"`
	Key              string   `json:"key,omitempty"`
	OnConflict       string   `json:"on_conflict,omitempty"`
	Priority         *int64   `json:"priority,omitempty"`
	Retries          *luaUint `json:"retries,omitempty"`
	RetryBackoff     string   `json:"retry_backoff,omitempty"`
	RetryDelays      string   `json:"retry_delays,omitempty"`
	RunAt            string   `json:"run_at,omitempty"`
	TagList          []string `json:"tag_list,omitzero"`
	Tags             string   `json:"tags,omitempty"`
	Timeout          *luaUint `json:"timeout,omitempty"`
	TimeoutRetries   *luaUint `json:"timeout_retries,omitempty"`
	Tracked          *bool    `json:"tracked,omitempty"`
	UpdateRunAt      string   `json:"update_run_at,omitempty"`
}

// appendJSON appends a as a JSON object.
func (a *jobSpecArg) appendJSON(b []byte) []byte {
	start := len(b)
	if a.Callback != "" {
		b = appendStringField(b, "callback", a.Callback)
	}
	if a.DelaysSet {
		b = appendBoolField(b, "delays_set", true)
	}
	if a.DependsOn != nil {
		b = appendStrings(appendField(b, "depends_on"), a.DependsOn)
	}
	b = appendOptUint(b, "expires_after", a.ExpiresAfter)
	b = appendOptUint(b, "heartbeat_timeout", a.HeartbeatTimeout)
	if a.InheritBackoff {
		b = appendBoolField(b, "inherit_backoff", true)
	}
	if a.InheritDelays {
		b = appendBoolField(b, "inherit_delays", true)
	}
	if a.Input != "" {
		b = appendStringField(b, "input", a.Input)
	}
	if a.Key != "" {
		b = appendStringField(b, "key", a.Key)
	}
	if a.OnConflict != "" {
		b = appendStringField(b, "on_conflict", a.OnConflict)
	}
	if a.Priority != nil {
		b = appendIntField(b, "priority", *a.Priority)
	}
	b = appendOptUint(b, "retries", a.Retries)
	if a.RetryBackoff != "" {
		b = appendStringField(b, "retry_backoff", a.RetryBackoff)
	}
	if a.RetryDelays != "" {
		b = appendStringField(b, "retry_delays", a.RetryDelays)
	}
	if a.RunAt != "" {
		b = appendStringField(b, "run_at", a.RunAt)
	}
	if a.TagList != nil {
		b = appendStrings(appendField(b, "tag_list"), a.TagList)
	}
	if a.Tags != "" {
		b = appendStringField(b, "tags", a.Tags)
	}
	b = appendOptUint(b, "timeout", a.Timeout)
	b = appendOptUint(b, "timeout_retries", a.TimeoutRetries)
	if a.Tracked != nil {
		b = appendBoolField(b, "tracked", *a.Tracked)
	}
	if a.UpdateRunAt != "" {
		b = appendStringField(b, "update_run_at", a.UpdateRunAt)
	}
	return closeObject(b, start)
}

// specArgs is a create spec as create_job.lua takes it.
func specArgs(spec *ocypod.JobSpec, now time.Time) (jobSpecArg, error) {
	var a jobSpecArg
	input, err := compact(spec.Input, "input")
	if err != nil {
		return a, err
	}
	a.Input = input
	if spec.Tags != nil {
		raw, back, err := encodeTags(spec.Tags)
		if err != nil {
			return a, ocypod.Internal(err)
		}
		a.Tags, a.TagList = raw, back
	}
	a.Timeout = optSecs(spec.Timeout)
	a.HeartbeatTimeout = optSecs(spec.HeartbeatTimeout)
	a.ExpiresAfter = optSecs(spec.ExpiresAfter)
	a.Retries = optUint(spec.Retries)
	switch {
	case spec.RetryDelays != nil || spec.RetryDelaysSet:
		a.RetryDelays = encodeDelays(spec.RetryDelays)
		a.DelaysSet = true
	case spec.RetryBackoff != nil:
		a.RetryBackoff = encodeBackoff(spec.RetryBackoff)
	default:
		a.InheritDelays, a.InheritBackoff = true, true
	}
	a.TimeoutRetries = optUint(spec.TimeoutRetries)
	a.Priority = spec.Priority
	a.Callback = string(spec.Callback)
	a.RunAt = runAt(spec.RunAt, spec.Delay, now)
	if spec.Key != "" {
		a.Key = spec.Key
		a.OnConflict = string(spec.OnConflict)
		a.UpdateRunAt = string(spec.UpdateRunAt)
	}
	if len(spec.DependsOn) > 0 || (spec.DependsOn != nil && spec.OnConflict == ocypod.OnConflictUpdate) {
		// An update's empty list clears the pending job's dependencies.
		a.DependsOn = idStrings(spec.DependsOn)
	}
	a.Tracked = spec.Tracked
	return a, nil
}

// optSecs is the seconds of an optional duration.
func optSecs(d *ocypod.Duration) *luaUint {
	if d == nil {
		return nil
	}
	v := luaUint(d.Secs)
	return &v
}

// runAt is the microsecond run_at of an absolute time or a delay from now
// ("" for neither).
func runAt(at *time.Time, delay *ocypod.Duration, now time.Time) string {
	switch {
	case at != nil:
		return strconv.FormatInt(at.UnixMicro(), 10)
	case delay != nil:
		return strconv.FormatInt(now.Add(delay.Std()).UnixMicro(), 10)
	}
	return ""
}

func idStrings(ids []uint64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.FormatUint(id, 10)
	}
	return out
}

// encodeTags is the stored JSON of tags and the tags as that JSON reads
// back, which name the tag index entries: JSON cannot hold invalid UTF-8,
// so such bytes read back as U+FFFD and the index must use the same string.
func encodeTags(tags []string) (string, []string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tags); err != nil {
		return "", nil, err
	}
	raw := string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	var back []string
	if err := json.Unmarshal([]byte(raw), &back); err != nil {
		return "", nil, err
	}
	return raw, back, nil
}

// validateSpec checks a spec before anything is sent.
func validateSpec(spec *ocypod.JobSpec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	if spec.RunAt != nil && spec.Delay != nil {
		return ocypod.Invalid("Invalid run_at: give run_at or delay, not both")
	}
	if spec.RetryBackoff != nil && (spec.RetryDelays != nil || spec.RetryDelaysSet) {
		return ocypod.Invalid("Invalid retry_backoff: give retry_delays or retry_backoff, not both")
	}
	return nil
}

// CreateJob creates a job in queue and returns its id: new (ids start at
// 1 with one partition, carry their partition otherwise, and are never
// reused), or the pending job that already has the spec's key (on_conflict
// keep or update; Existing is then set). Fields absent from spec inherit
// the queue's settings, retry_delays included (unlike Ocypod). Returns
// ocypod.QueueNotFound, ocypod.InvalidQueueName, the 400s of an invalid
// spec or of an unknown dependency, ocypod.KeyExists (on_conflict error),
// ocypod.StorageFull when Options.Admit refuses or ids are exhausted.
func (s *Store) CreateJob(ctx context.Context, queue string, spec ocypod.JobSpec) (ocypod.Created, error) {
	cs, err := s.CreateJobs(ctx, queue, []ocypod.JobSpec{spec})
	if err != nil {
		return ocypod.Created{}, err
	}
	return cs[0], nil
}

// CreateJobs creates a batch of jobs in queue, all checked before any is
// written: one bad spec creates nothing. A batch is one atomic script in
// one partition, also on a sharded queue (see createPlaced). Errors as
// CreateJob's.
func (s *Store) CreateJobs(ctx context.Context, queue string, specs []ocypod.JobSpec) ([]ocypod.Created, error) {
	fail := func(err error) ([]ocypod.Created, error) {
		return nil, fmt.Errorf("redisstore: create job in %q: %w", queue, err)
	}
	if !ocypod.ValidQueueName(queue) {
		return fail(ocypod.InvalidQueueName())
	}
	now := s.now()
	args := make([]jobSpecArg, len(specs))
	for i := range specs {
		if err := validateSpec(&specs[i]); err != nil {
			return fail(err)
		}
		a, err := specArgs(&specs[i], now)
		if err != nil {
			return fail(err)
		}
		args[i] = a
	}
	if err := s.admitWrite(ctx); err != nil {
		return fail(err)
	}
	res, err := s.createPlaced(ctx, queue, specs, args, now, 0)
	if err != nil {
		return fail(err)
	}
	return res, nil
}

// guardUpdateCycles refuses (ocypod.Invalid) an on_conflict update whose
// depends_on would make the pending job holding its key wait on itself;
// create_job.lua checks again, atomically, those of the job's own
// partition. Such an update changes an existing job's dependencies, so it
// runs under the dependency lock and fence of deps.go, as a PATCH does:
// it returns the fence number the create calls carry (0 when no update
// changes dependencies) and the function that releases the lock (nil
// then). parts maps each partition to the indexes of the specs sent there.
func (s *Store) guardUpdateCycles(ctx context.Context, queue string, specs []ocypod.JobSpec, parts map[int][]int) (int64, func(), error) {
	type change struct {
		holder uint64
		deps   []uint64
	}
	var changes []change
	err := s.checkUpdateCycles(ctx, queue, specs, parts, func(holder uint64, deps []uint64) {
		changes = append(changes, change{holder, deps})
	})
	if err != nil || len(changes) == 0 {
		return 0, nil, err
	}
	fence, release, err := s.lockDeps(ctx)
	if err != nil {
		return 0, nil, err
	}
	for _, c := range changes {
		if err := s.walkDeps(ctx, c.holder, c.deps, fence); err != nil {
			release()
			return 0, nil, err
		}
	}
	return fence, release, nil
}

// checkUpdateCycles is guardUpdateCycles' read-only check: found is called
// with each pending job a spec's update would change the dependencies of.
func (s *Store) checkUpdateCycles(ctx context.Context, queue string, specs []ocypod.JobSpec, parts map[int][]int, found func(holder uint64, deps []uint64)) error {
	type ask struct {
		spec *ocypod.JobSpec
		cmd  *redis.StringCmd
	}
	var asks []ask
	octx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	for p, idx := range parts {
		for _, i := range idx {
			sp := &specs[i]
			if sp.OnConflict == ocypod.OnConflictUpdate && sp.Key != "" && len(sp.DependsOn) > 0 {
				asks = append(asks, ask{sp, pipe.HGet(octx, s.l.key(p, keyJobKeys), keySlot(slotPending, queue, sp.Key))})
			}
		}
	}
	if len(asks) == 0 {
		return nil
	}
	if _, err := pipe.Exec(octx); err != nil && !isNil(err) {
		return translate(err)
	}
	for _, a := range asks {
		holder, err := strconv.ParseUint(a.cmd.Val(), 10, 64)
		if a.cmd.Err() != nil || err != nil {
			continue // no pending job holds the key: a new job has no dependents
		}
		if slices.Contains(a.spec.DependsOn, holder) {
			return ocypod.Invalid("Invalid depends_on: a job cannot depend on itself")
		}
		if err := s.checkNoCycle(ctx, holder, a.spec.DependsOn); err != nil {
			return err
		}
		found(holder, a.spec.DependsOn)
	}
	return nil
}
