package redisstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

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
	case "dep_missing":
		return ocypod.Invalid(fmt.Sprintf("Invalid depends_on: job %d does not exist", uint64(x.ID)))
	case "ids_exhausted":
		return ocypod.StorageFull("Job ids exhausted: no id below 2^53 is left in this partition")
	case "invalid":
		return ocypod.Invalid(fmt.Sprintf("Invalid %s: %s", x.Field, x.Reason))
	}
	return ocypod.Internal(fmt.Errorf("unexpected script error %q", r.Err))
}

// jobCall is a script call about job id, in its partition.
func (s *Store) jobCall(sc *script, id uint64, args map[string]any) *call {
	if args == nil {
		args = map[string]any{}
	}
	args["id"] = strconv.FormatUint(id, 10)
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

// specArgs is a create spec as create_job.lua takes it.
func specArgs(spec *ocypod.JobSpec, now time.Time) (map[string]any, error) {
	a := map[string]any{}
	input, err := compact(spec.Input, "input")
	if err != nil {
		return nil, err
	}
	if input != "" {
		a["input"] = input
	}
	if spec.Tags != nil {
		raw, back, err := encodeTags(spec.Tags)
		if err != nil {
			return nil, ocypod.Internal(err)
		}
		a["tags"], a["tag_list"] = raw, back
	}
	opt := func(name string, d *ocypod.Duration) {
		if d != nil {
			a[name] = num(d.Secs)
		}
	}
	opt("timeout", spec.Timeout)
	opt("heartbeat_timeout", spec.HeartbeatTimeout)
	opt("expires_after", spec.ExpiresAfter)
	if spec.Retries != nil {
		a["retries"] = num(*spec.Retries)
	}
	switch {
	case spec.RetryDelays != nil || spec.RetryDelaysSet:
		if d := encodeDelays(spec.RetryDelays); d != "" {
			a["retry_delays"] = d
		}
	case spec.RetryBackoff != nil:
		a["retry_backoff"] = encodeBackoff(spec.RetryBackoff)
	default:
		a["inherit_delays"], a["inherit_backoff"] = true, true
	}
	if spec.TimeoutRetries != nil {
		a["timeout_retries"] = num(*spec.TimeoutRetries)
	}
	if spec.Priority != nil && *spec.Priority != 0 {
		a["priority"] = *spec.Priority
	}
	if at := runAt(spec.RunAt, spec.Delay, now); at != "" {
		a["run_at"] = at
	}
	if spec.Key != "" {
		a["key"] = spec.Key
		if spec.OnConflict != "" {
			a["on_conflict"] = string(spec.OnConflict)
		}
		if spec.UpdateRunAt != "" {
			a["update_run_at"] = string(spec.UpdateRunAt)
		}
	}
	if len(spec.DependsOn) > 0 {
		a["depends_on"] = idStrings(spec.DependsOn)
	}
	if spec.Tracked != nil && *spec.Tracked {
		a["tracked"] = true
	}
	return a, nil
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
// written: one bad spec creates nothing. A batch that lands in one
// partition is one atomic round trip; on a sharded queue each shard's part
// is one (sent together). Errors as CreateJob's.
func (s *Store) CreateJobs(ctx context.Context, queue string, specs []ocypod.JobSpec) ([]ocypod.Created, error) {
	fail := func(err error) ([]ocypod.Created, error) {
		return nil, fmt.Errorf("redisstore: create job in %q: %w", queue, err)
	}
	if !ocypod.ValidQueueName(queue) {
		return fail(ocypod.InvalidQueueName())
	}
	now := s.now()
	args := make([]map[string]any, len(specs))
	var deps []uint64
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
	// Group the specs by partition: a key always goes to the same shard.
	home := s.l.home(queue)
	k := s.shards(queue)
	parts := map[int][]int{}
	var order []int
	for i := range specs {
		p := home
		if k > 1 {
			p = s.l.shard(home, s.pickShard(queue, specs[i].Key, k))
		}
		// Dependencies in the job's own partition the script checks.
		for _, d := range specs[i].DependsOn {
			if s.l.partitionOf(d) != p {
				deps = append(deps, d)
			}
		}
		if _, ok := parts[p]; !ok {
			order = append(order, p)
		}
		parts[p] = append(parts[p], i)
	}
	if err := s.checkJobsExist(ctx, deps); err != nil {
		return fail(err)
	}
	calls := make([]*call, len(order))
	outs := make([]any, len(order))
	type created struct {
		IDs      list[idStr] `json:"ids"`
		Existing list[bool]  `json:"existing"`
		Shards   list[int]   `json:"shards"`
	}
	for n, p := range order {
		batch := make([]map[string]any, len(parts[p]))
		for i, si := range parts[p] {
			batch[i] = args[si]
		}
		calls[n] = &call{sc: scriptCreateJob, p: p, queue: queue, now: now,
			args: map[string]any{"specs": batch}}
		outs[n] = new(created)
	}
	replies, errs := s.runAll(ctx, calls, outs)
	res := make([]ocypod.Created, len(specs))
	for n, p := range order {
		if err := errs[n]; err != nil {
			return fail(err)
		}
		if replies[n].Err != "" {
			return fail(refusal(replies[n], 0, queue, nil))
		}
		c := outs[n].(*created)
		s.noteShards(queue, c.Shards)
		if len(c.IDs) != len(parts[p]) {
			return fail(ocypod.Internal(fmt.Errorf("create: %d ids for %d jobs", len(c.IDs), len(parts[p]))))
		}
		for i, si := range parts[p] {
			res[si] = ocypod.Created{ID: uint64(c.IDs[i]), Existing: i < len(c.Existing) && c.Existing[i]}
		}
		s.afterCall(ctx, replies[n])
	}
	return res, nil
}
