package client_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/client"
	"github.com/ocyless/ocyless/shared/ocypod"
)

// TestScenario runs the cross-client scenario (clients/scenario, the same
// file the Python and TypeScript clients run) through this client against
// a fresh server.
func TestScenario(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../clients/scenario/scenario.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version int            `json:"version"`
		Steps   []scenarioStep `json:"steps"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != 1 || len(doc.Steps) == 0 {
		t.Fatalf("scenario version %d with %d steps, want version 1 and steps", doc.Version, len(doc.Steps))
	}
	_, c := newClient(t)
	r := &scenarioRun{t: t, c: c, vars: map[string]any{}}
	for i, st := range doc.Steps {
		if !r.step(st) {
			t.Fatalf("step %d (%s: %s) stopped the run", i, st.Op, st.Name)
		}
	}
}

// TestScenarioMatcher shows the matching rules catch what they should.
func TestScenarioMatcher(t *testing.T) {
	t.Parallel()
	parse := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{`{"a":1,"b":null}`, `{"a":1.0,"c":2}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`[1]`, `[1,2]`, false},
		{`"$present"`, `null`, false},
		{`"$present"`, `0`, true},
		{`"$any"`, `null`, true},
		{`false`, `0`, false},
		{`{"a":{"b":[1,"x"]}}`, `{"a":{"b":[1,"x"]}}`, true},
	} {
		if got := scenarioMismatch(parse(tc.want), parse(tc.got), "$") == ""; got != tc.ok {
			t.Errorf("match(%s, %s) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
	vars := map[string]any{"a": float64(7)}
	got, err := scSubstitute(parse(`{"x":"${a}","y":"id ${a}"}`), vars)
	if err != nil || fmt.Sprint(got) != "map[x:7 y:id 7]" {
		t.Errorf("substitute = %v, %v", got, err)
	}
}

type scenarioStep struct {
	Name    string            `json:"name"`
	Op      string            `json:"op"`
	Args    map[string]any    `json:"args"`
	Expect  json.RawMessage   `json:"expect"`
	Error   map[string]any    `json:"error"`
	Capture map[string]string `json:"capture"`
}

type scenarioRun struct {
	t    *testing.T
	c    *client.Client
	vars map[string]any
}

// step runs one step; false when the run cannot go on (a runner error).
func (r *scenarioRun) step(st scenarioStep) bool {
	t := r.t
	t.Helper()
	label := st.Op + ": " + st.Name
	argsAny, err := scSubstitute(map[string]any(st.Args), r.vars)
	if err != nil {
		t.Errorf("%s: %v", label, err)
		return false
	}
	a := &scenarioArgs{m: argsAny.(map[string]any), used: map[string]bool{}}
	result, callErr, err := r.call(st.Op, a)
	if err == nil {
		err = a.check()
	}
	if err != nil {
		t.Errorf("%s: runner: %v", label, err)
		return false
	}
	if st.Error != nil {
		wantAny, err := scSubstitute(map[string]any(st.Error), r.vars)
		if err != nil {
			t.Errorf("%s: %v", label, err)
			return false
		}
		want := wantAny.(map[string]any)
		var e *client.Error
		if !errors.As(callErr, &e) {
			t.Errorf("%s: want error %v, got result %v, error %v", label, want, result, callErr)
			return true
		}
		if float64(e.StatusCode) != want["status"] {
			t.Errorf("%s: status %d, want %v (%v)", label, e.StatusCode, want["status"], e)
		}
		if msg, ok := want["message"]; ok && e.Message != msg {
			t.Errorf("%s: message %q, want %q", label, e.Message, msg)
		}
		if stale, ok := want["stale"]; ok && errors.Is(callErr, client.ErrStaleAttempt) != stale {
			t.Errorf("%s: errors.Is(ErrStaleAttempt) = %v, want %v", label, !stale.(bool), stale)
		}
		return true
	}
	if callErr != nil {
		t.Errorf("%s: unexpected error %v", label, callErr)
		return true
	}
	var want any
	if len(st.Expect) > 0 {
		if err := json.Unmarshal(st.Expect, &want); err != nil {
			t.Errorf("%s: expect: %v", label, err)
			return false
		}
	}
	if want, err = scSubstitute(want, r.vars); err != nil {
		t.Errorf("%s: %v", label, err)
		return false
	}
	// The result as JSON: numbers become float64, as in expect.
	got, err := scJSONRoundTrip(result)
	if err != nil {
		t.Errorf("%s: %v", label, err)
		return false
	}
	if m := scenarioMismatch(want, got, "$"); m != "" {
		t.Errorf("%s: %s", label, m)
		return true
	}
	for name, path := range st.Capture {
		v, err := scPick(got, path)
		if err != nil {
			t.Errorf("%s: capture %s: %v", label, name, err)
			return false
		}
		r.vars[name] = v
	}
	return true
}

// call runs op: result is the answer as the scenario's JSON, callErr the
// client's error, err a failure of the runner itself.
func (r *scenarioRun) call(op string, a *scenarioArgs) (result any, callErr, err error) {
	ctx := r.t.Context()
	c := r.c
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%v", v)
		}
	}()
	switch op {
	case "health":
		return nil, c.Health(ctx), nil
	case "version":
		v, err := c.Version(ctx)
		return v, err, nil
	case "openapi":
		v, err := c.OpenAPI(ctx)
		return v, err, nil
	case "info":
		v, err := c.Info(ctx)
		return v, err, nil
	case "list_queues":
		v, err := c.ListQueues(ctx)
		return scOrEmpty(v), err, nil
	case "put_queue":
		created, err := c.PutQueue(ctx, a.str("queue"), scQueueSpec(a.obj("settings")))
		return map[string]any{"created": created}, err, nil
	case "get_queue":
		s, err := c.GetQueue(ctx, a.str("queue"))
		if err != nil {
			return nil, err, nil
		}
		return scQueueJSON(s), nil, nil
	case "patch_queue":
		return nil, c.PatchQueue(ctx, a.str("queue"), scQueuePatch(a.obj("patch"))), nil
	case "delete_queue":
		return nil, c.DeleteQueue(ctx, a.str("queue")), nil
	case "queue_size":
		v, err := c.QueueSize(ctx, a.str("queue"))
		return v, err, nil
	case "queue_job_ids":
		v, err := c.QueueJobIDs(ctx, a.str("queue"))
		if err != nil {
			return nil, err, nil
		}
		return map[string]any{"queued": scOrEmpty(v.Queued), "running": scOrEmpty(v.Running), "failed": scOrEmpty(v.Failed),
			"completed": scOrEmpty(v.Completed), "cancelled": scOrEmpty(v.Cancelled), "timed_out": scOrEmpty(v.TimedOut),
			"scheduled": scOrEmpty(v.Scheduled), "waiting": scOrEmpty(v.Waiting)}, nil, nil
	case "create_job":
		v, err := c.CreateJob(ctx, a.str("queue"), scJobSpec(a.obj("job")))
		return map[string]any{"id": v.ID, "existing": v.Existing}, err, nil
	case "create_jobs":
		var specs []client.JobSpec
		for _, j := range a.list("jobs") {
			specs = append(specs, scJobSpec(j.(map[string]any)))
		}
		v, err := c.CreateJobs(ctx, a.str("queue"), specs)
		return scOrEmpty(v), err, nil
	case "get_job":
		var fields []string
		for _, f := range a.optList("fields") {
			fields = append(fields, f.(string))
		}
		j, err := c.GetJob(ctx, a.id("id"), fields...)
		if err != nil {
			return nil, err, nil
		}
		return scJobJSON(j), nil, nil
	case "wait_job":
		j, err := c.WaitJob(ctx, a.id("id"), scDurArg(a.any("wait")), scStrings(a.optList("fields"))...)
		if err != nil {
			return nil, err, nil
		}
		return scJobJSON(j), nil, nil
	case "create_and_wait":
		w, err := c.CreateAndWait(ctx, a.str("queue"), scJobSpec(a.obj("job")), scDurArg(a.any("wait")),
			scStrings(a.optList("fields"))...)
		if err != nil {
			return nil, err, nil
		}
		var job any
		if w.Job != nil {
			job = scJobJSON(w.Job)
		}
		return map[string]any{"id": w.ID, "ended": w.Ended, "job": job}, nil, nil
	case "job_status":
		v, err := c.JobStatus(ctx, a.id("id"))
		return v, err, nil
	case "job_output":
		v, err := c.JobOutput(ctx, a.id("id"))
		return scRaw(v), err, nil
	case "set_job_output":
		return nil, c.SetJobOutput(ctx, a.id("id"), a.optID("attempt"), scRawArg(a.any("output"))), nil
	case "heartbeat":
		return nil, c.Heartbeat(ctx, a.id("id"), a.optID("attempt")), nil
	case "delete_job":
		return nil, c.DeleteJob(ctx, a.id("id")), nil
	case "retry_job":
		o := client.RetryOptions{RunAt: a.optTime("run_at"), Delay: a.optDur("delay")}
		v, err := c.RetryJob(ctx, a.id("id"), o)
		return v, err, nil
	case "job_ids_by_tag":
		v, err := c.JobIDsByTag(ctx, a.str("tag"))
		return scOrEmpty(v), err, nil
	case "take":
		v, err := c.Take(ctx, a.str("queue"), scTakeOptions(a))
		return scTakenJSON(v), err, nil
	case "take_from":
		var qs []string
		for _, q := range a.list("queues") {
			qs = append(qs, q.(string))
		}
		order := client.Order(a.optStr("order"))
		v, err := c.TakeFrom(ctx, qs, order, scTakeOptions(a))
		return scTakenJSON(v), err, nil
	case "update_job":
		u := scJobUpdate(a.obj("update"))
		u.Attempt = a.optID("attempt")
		if tk, ok := a.m["take"]; ok {
			a.used["take"] = true
			ta := &scenarioArgs{m: tk.(map[string]any), used: map[string]bool{}}
			u.Take = &client.TakeAfter{Queue: ta.str("queue"), TakeOptions: scTakeOptions(ta)}
			if err := ta.check(); err != nil {
				panic(err)
			}
		}
		v, err := c.UpdateJob(ctx, a.id("id"), u)
		if err != nil {
			return nil, err, nil
		}
		res := map[string]any{"next_id": nil, "taken": nil}
		if v.NextID != 0 {
			res["next_id"] = v.NextID
		}
		if u.Take != nil {
			res["taken"] = scTakenJSON(v.Taken)
		}
		return res, nil, nil
	case "complete":
		return nil, c.Complete(ctx, a.id("id"), a.optID("attempt"), scRawArg(a.any("output"))), nil
	case "fail":
		f := client.Failure{NoRetry: a.optBool("no_retry"), RetryAt: a.optTime("retry_at")}
		if e, ok := a.m["error"]; ok {
			a.used["error"] = true
			f.Error = scJobError(e.(map[string]any))
		}
		if _, ok := a.m["retry_in"]; ok {
			f.RetryIn = a.optDur("retry_in")
			if f.RetryIn == 0 {
				// Fail sends no retry_in of 0 (its zero value): "now" goes
				// through UpdateJob.
				return nil, scUpdateOnly(c.UpdateJob(ctx, a.id("id"), client.JobUpdate{Attempt: a.optID("attempt"),
					Status: client.StatusFailed, Error: f.Error, NoRetry: f.NoRetry, RetryInSet: true})), nil
			}
		}
		return nil, c.Fail(ctx, a.id("id"), a.optID("attempt"), f), nil
	case "cancel":
		return nil, c.Cancel(ctx, a.id("id")), nil
	case "requeue":
		return nil, c.Requeue(ctx, a.id("id")), nil
	case "list_jobs", "list_queue_jobs":
		o := client.ListOptions{Status: client.Status(a.optStr("status")), Tag: a.optStr("tag"), Key: a.optStr("key"),
			Worker: a.optStr("worker"), Limit: int(a.optID("limit")), Cursor: a.optStr("cursor")}
		if v, ok := a.m["tracked"]; ok {
			a.used["tracked"] = true
			o.Tracked = new(v.(bool))
		}
		for _, f := range a.optList("fields") {
			o.Fields = append(o.Fields, f.(string))
		}
		var p *client.JobPage
		var err error
		if op == "list_jobs" {
			p, err = c.ListJobs(ctx, o)
		} else {
			p, err = c.ListQueueJobs(ctx, a.str("queue"), o)
		}
		if err != nil {
			return nil, err, nil
		}
		return map[string]any{"jobs": scJobsJSON(p.Jobs), "next_cursor": scOrNil(p.NextCursor)}, nil, nil
	case "failures":
		v, err := c.Failures(ctx)
		return v, err, nil
	case "failure_jobs":
		o := client.FailureOptions{Limit: int(a.optID("limit")), Cursor: a.optStr("cursor")}
		for _, f := range a.optList("fields") {
			o.Fields = append(o.Fields, f.(string))
		}
		p, err := c.FailureJobs(ctx, a.str("group"), o)
		if err != nil {
			return nil, err, nil
		}
		return map[string]any{"total": p.Total, "jobs": scJobsJSON(p.Jobs), "next_cursor": scOrNil(p.NextCursor)}, nil, nil
	case "retry_failures":
		n, err := c.RetryFailures(ctx, a.str("group"), int(a.optID("limit")), a.optStr("queue"))
		return map[string]any{"retried": n}, err, nil
	case "workers":
		ws, err := c.Workers(ctx)
		return scOrEmpty(ws), err, nil
	case "worker_jobs":
		v, err := c.WorkerJobs(ctx, a.str("name"))
		if err != nil {
			return nil, err, nil
		}
		return map[string]any{"running": scOrEmpty(v.Running), "timed_out": scOrEmpty(v.TimedOut)}, nil, nil
	case "queue_stats":
		var day time.Time
		if d := a.optStr("date"); d != "" {
			if day, err = time.Parse(time.DateOnly, d); err != nil {
				panic(err)
			}
		}
		v, err := c.QueueStats(ctx, a.str("queue"), day)
		return v, err, nil
	case "put_schedule":
		s := a.obj("schedule")
		sa := &scenarioArgs{m: s, used: map[string]bool{}}
		spec := client.ScheduleSpec{Cron: sa.optStr("cron"), Every: sa.optDur("every"), Job: scJobSpec(sa.obj("job"))}
		if err := sa.check(); err != nil {
			panic(err)
		}
		created, err := c.PutSchedule(ctx, a.str("queue"), a.str("id"), spec)
		return map[string]any{"created": created}, err, nil
	case "get_schedule":
		s, err := c.GetSchedule(ctx, a.str("queue"), a.str("id"))
		if err != nil {
			return nil, err, nil
		}
		return scScheduleJSON(s), nil, nil
	case "list_schedules":
		ss, err := c.ListSchedules(ctx, a.str("queue"))
		out := []any{}
		for i := range ss {
			out = append(out, scScheduleJSON(&ss[i]))
		}
		return out, err, nil
	case "delete_schedule":
		return nil, c.DeleteSchedule(ctx, a.str("queue"), a.str("id")), nil
	case "update_jobs":
		v, err := c.UpdateJobs(ctx, scBatchUpdates(a.list("items")))
		return scBatchJSON(v), err, nil
	case "update_jobs_and_take":
		v, jobs, err := c.UpdateJobsAndTake(ctx, scBatchUpdates(a.list("items")), a.str("queue"), scTakeOptions(a))
		return map[string]any{"results": scBatchJSON(v), "jobs": scTakenJSON(jobs)}, err, nil
	case "heartbeat_jobs":
		var items []client.BatchHeartbeat
		for _, it := range a.list("items") {
			m := it.(map[string]any)
			hb := client.BatchHeartbeat{ID: scToUint(m["id"])}
			if v, ok := m["attempt"]; ok && v != nil {
				hb.Attempt = scToUint(v)
			}
			items = append(items, hb)
		}
		v, err := c.HeartbeatJobs(ctx, items)
		return scBatchJSON(v), err, nil
	}
	return nil, nil, fmt.Errorf("unknown op %q", op)
}

// scBatchUpdates reads a batch's items: {"id", "attempt"?, <PATCH body>}.
func scBatchUpdates(items []any) []client.BatchUpdate {
	var out []client.BatchUpdate
	for _, it := range items {
		m := maps.Clone(it.(map[string]any))
		b := client.BatchUpdate{ID: scToUint(m["id"])}
		if v, ok := m["attempt"]; ok && v != nil {
			b.Attempt = scToUint(v)
		}
		delete(m, "id")
		delete(m, "attempt")
		attempt := b.Attempt
		b.JobUpdate = scJobUpdate(m)
		b.Attempt = attempt
		out = append(out, b)
	}
	return out
}

// scBatchJSON is a batch's results as the server writes them.
func scBatchJSON(rs []client.BatchResult) []any {
	out := []any{}
	for _, r := range rs {
		m := map[string]any{"id": r.ID, "status": r.Status}
		if r.Error != "" {
			m["error"] = r.Error
		}
		if r.NextID != 0 {
			m["next"] = r.NextID
		}
		out = append(out, m)
	}
	return out
}

func scUpdateOnly(_ client.UpdateResult, err error) error { return err }

// scenarioArgs are a step's arguments; check fails on any not read, so a
// runner never drops an argument it does not know.
type scenarioArgs struct {
	m    map[string]any
	used map[string]bool
}

func (a *scenarioArgs) any(k string) any {
	v, ok := a.m[k]
	if !ok {
		panic(fmt.Sprintf("argument %q missing", k))
	}
	a.used[k] = true
	return v
}

func (a *scenarioArgs) opt(k string) (any, bool) {
	v, ok := a.m[k]
	a.used[k] = true
	return v, ok && v != nil
}

func (a *scenarioArgs) str(k string) string           { return a.any(k).(string) }
func (a *scenarioArgs) obj(k string) map[string]any   { return a.any(k).(map[string]any) }
func (a *scenarioArgs) list(k string) []any           { return a.any(k).([]any) }
func (a *scenarioArgs) id(k string) uint64            { return scToUint(a.any(k)) }
func (a *scenarioArgs) optStr(k string) string        { v, _ := a.opt(k); s, _ := v.(string); return s }
func (a *scenarioArgs) optBool(k string) bool         { v, _ := a.opt(k); b, _ := v.(bool); return b }
func (a *scenarioArgs) optList(k string) []any        { v, _ := a.opt(k); l, _ := v.([]any); return l }
func (a *scenarioArgs) optDur(k string) time.Duration { v, _ := a.opt(k); return scDurArg(v) }
func (a *scenarioArgs) optTime(k string) time.Time    { v, _ := a.opt(k); return scTimeArg(v) }
func (a *scenarioArgs) optID(k string) uint64 {
	v, ok := a.opt(k)
	if !ok {
		return 0
	}
	return scToUint(v)
}

func (a *scenarioArgs) check() error {
	var extra []string
	for k := range a.m {
		if !a.used[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return fmt.Errorf("unknown arguments %v", extra)
	}
	return nil
}

func scToUint(v any) uint64 {
	f, ok := v.(float64)
	if !ok || f < 0 || f != math.Trunc(f) {
		panic(fmt.Sprintf("want a whole number, got %v", v))
	}
	return uint64(f)
}

// scStrings is a list argument of strings (nil for none).
func scStrings(l []any) []string {
	var out []string
	for _, v := range l {
		out = append(out, v.(string))
	}
	return out
}

func scDurArg(v any) time.Duration {
	if v == nil {
		return 0
	}
	d, err := ocypod.ParseDuration(v.(string))
	if err != nil {
		panic(err)
	}
	return d.Std()
}

func scDurPtr(v any) *time.Duration { return new(scDurArg(v)) }

func scTimeArg(v any) time.Time {
	if v == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v.(string))
	if err != nil {
		panic(err)
	}
	return t
}

// rawArg passes user JSON as it is (null as nil).
func scRawArg(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return json.RawMessage(b)
}

func scJobError(m map[string]any) *client.JobError {
	e := &client.JobError{}
	for k, v := range m {
		switch k {
		case "group":
			e.Group = v.(string)
		case "message":
			e.Message = v.(string)
		default:
			panic(fmt.Sprintf("unknown error field %q", k))
		}
	}
	return e
}

func scQueueSpec(m map[string]any) client.QueueSpec {
	var s client.QueueSpec
	for k, v := range m {
		switch k {
		case "timeout":
			s.Timeout = scDurPtr(v)
		case "heartbeat_timeout":
			s.HeartbeatTimeout = scDurPtr(v)
		case "expires_after":
			s.ExpiresAfter = scDurPtr(v)
		case "retries":
			s.Retries = new(scToUint(v))
		case "retry_delays":
			s.RetryDelays = []time.Duration{}
			for _, d := range v.([]any) {
				s.RetryDelays = append(s.RetryDelays, scDurArg(d))
			}
		default:
			panic(fmt.Sprintf("unknown queue setting %q", k))
		}
	}
	return s
}

func scQueuePatch(m map[string]any) client.QueuePatch {
	var p client.QueuePatch
	for k, v := range m {
		switch k {
		case "timeout":
			p.Timeout = scDurPtr(v)
		case "heartbeat_timeout":
			p.HeartbeatTimeout = scDurPtr(v)
		case "expires_after":
			p.ExpiresAfter = scDurPtr(v)
		case "retries":
			p.Retries = new(scToUint(v))
		case "paused":
			p.Paused = new(v.(bool))
		case "concurrency":
			p.Concurrency = new(scToUint(v))
		case "dead_letter_queue":
			if v == nil {
				p.ClearDeadLetterQueue = true
			} else {
				p.DeadLetterQueue = v.(string)
			}
		default:
			panic(fmt.Sprintf("unknown queue patch field %q", k))
		}
	}
	return p
}

func scJobSpec(m map[string]any) client.JobSpec {
	var s client.JobSpec
	for k, v := range m {
		switch k {
		case "input":
			s.Input = scRawArg(v)
		case "tags":
			s.Tags = []string{}
			for _, t := range v.([]any) {
				s.Tags = append(s.Tags, t.(string))
			}
		case "timeout":
			s.Timeout = scDurPtr(v)
		case "heartbeat_timeout":
			s.HeartbeatTimeout = scDurPtr(v)
		case "expires_after":
			s.ExpiresAfter = scDurPtr(v)
		case "retries":
			s.Retries = new(scToUint(v))
		case "priority":
			s.Priority = int64(v.(float64))
		case "delay":
			s.Delay = scDurArg(v)
		case "run_at":
			s.RunAt = scTimeArg(v)
		case "key":
			s.Key = v.(string)
		case "on_conflict":
			s.OnConflict = client.OnConflict(v.(string))
		case "tracked":
			s.Tracked = v.(bool)
		case "depends_on":
			s.DependsOn = []uint64{}
			for _, d := range v.([]any) {
				s.DependsOn = append(s.DependsOn, scToUint(d))
			}
		default:
			panic(fmt.Sprintf("unknown job field %q", k))
		}
	}
	return s
}

func scJobUpdate(m map[string]any) client.JobUpdate {
	var u client.JobUpdate
	for k, v := range m {
		switch k {
		case "status":
			u.Status = client.Status(v.(string))
		case "output":
			u.Output = scRawArg(v)
		case "error":
			u.Error = scJobError(v.(map[string]any))
		case "retry":
			u.NoRetry = !v.(bool)
		case "retry_in":
			u.RetryIn, u.RetryInSet = scDurArg(v), true
		case "priority":
			u.Priority = new(int64(v.(float64)))
		case "tags":
			u.Tags = []string{}
			for _, t := range v.([]any) {
				u.Tags = append(u.Tags, t.(string))
			}
		case "next":
			n := scMaps(v)
			q, _ := n["queue"].(string)
			delete(n, "queue")
			u.Next = &client.NextJob{Queue: q, JobSpec: scJobSpec(n)}
		default:
			panic(fmt.Sprintf("unknown update field %q", k))
		}
	}
	return u
}

func scMaps(v any) map[string]any {
	out := map[string]any{}
	for k, x := range v.(map[string]any) {
		out[k] = x
	}
	return out
}

func scTakeOptions(a *scenarioArgs) client.TakeOptions {
	return client.TakeOptions{Count: int(a.optID("count")), Worker: a.optStr("worker"), Wait: a.optDur("wait")}
}

func scOrEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func scOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func scRaw(r json.RawMessage) any {
	if r == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(r, &v); err != nil {
		panic(err)
	}
	return v
}

func scDur(d time.Duration) string { return ocypod.FromStd(d).String() }

func scDurs(ds []time.Duration) any {
	if ds == nil {
		return nil
	}
	out := []string{}
	for _, d := range ds {
		out = append(out, scDur(d))
	}
	return out
}

func scTm(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return t.Format(time.RFC3339Nano)
}

func scJobErrorJSON(e *client.JobError) any {
	if e == nil {
		return nil
	}
	return map[string]any{"group": scOrNil(e.Group), "message": e.Message}
}

func scBackoffJSON(b *client.Backoff) any {
	if b == nil {
		return nil
	}
	return map[string]any{"min": scDur(b.Min), "max": scDur(b.Max), "factor": b.Factor, "jitter": !b.NoJitter}
}

func scQueueJSON(s *client.QueueSettings) map[string]any {
	var rl any
	if s.RateLimit != nil {
		rl = map[string]any{"per_second": s.RateLimit.PerSecond, "burst": s.RateLimit.Burst}
	}
	var tr any
	if s.TimeoutRetries != nil {
		tr = *s.TimeoutRetries
	}
	return map[string]any{"timeout": scDur(s.Timeout), "heartbeat_timeout": scDur(s.HeartbeatTimeout),
		"expires_after": scDur(s.ExpiresAfter), "retries": s.Retries, "retry_delays": scOrEmpty(scDurs(s.RetryDelays).([]string)),
		"paused": s.Paused, "concurrency": s.Concurrency, "rate_limit": rl, "retry_backoff": scBackoffJSON(s.RetryBackoff),
		"timeout_retries": tr, "dead_letter_queue": scOrNil(s.DeadLetterQueue), "shards": s.Shards}
}

func scJobJSON(j *client.Job) map[string]any {
	created := j.CreatedAt
	var hist any
	if j.History != nil {
		h := []any{}
		for _, a := range j.History {
			h = append(h, map[string]any{"attempt": a.Attempt, "worker": scOrNil(a.Worker), "started_at": scTm(&a.StartedAt),
				"ended_at": scTm(a.EndedAt), "status": a.Status, "error": scJobErrorJSON(a.Error)})
		}
		hist = h
	}
	var tr any
	if j.TimeoutRetries != nil {
		tr = *j.TimeoutRetries
	}
	return map[string]any{
		"id": j.ID, "queue": scOrNil(j.Queue), "status": scOrNil(string(j.Status)), "tags": j.Tags, "created_at": scTm(&created),
		"started_at": scTm(j.StartedAt), "ended_at": scTm(j.EndedAt), "last_heartbeat": scTm(j.LastHeartbeat),
		"input": scRaw(j.Input), "output": scRaw(j.Output), "timeout": scDur(j.Timeout),
		"heartbeat_timeout": scDur(j.HeartbeatTimeout), "expires_after": scDur(j.ExpiresAfter), "retries": j.Retries,
		"retries_attempted": j.RetriesAttempted, "retry_delays": scDurs(j.RetryDelays), "ended": j.Ended,
		"priority": j.Priority, "run_at": scTm(j.RunAt), "key": scOrNil(j.Key), "depends_on": j.DependsOn,
		"dependents": j.Dependents, "retry_backoff": scBackoffJSON(j.RetryBackoff), "timeout_retries": tr,
		"tracked": j.Tracked, "attempt": j.Attempt, "worker": scOrNil(j.Worker), "error": scJobErrorJSON(j.Error),
		"history": hist,
	}
}

func scJobsJSON(js []client.Job) []any {
	out := []any{}
	for i := range js {
		out = append(out, scJobJSON(&js[i]))
	}
	return out
}

func scTakenJSON(js []client.TakenJob) []any {
	out := []any{}
	for _, j := range js {
		out = append(out, map[string]any{"id": j.ID, "input": scRaw(j.Input), "attempt": j.Attempt, "queue": j.Queue})
	}
	return out
}

func scScheduleJSON(s *client.Schedule) map[string]any {
	var every any
	if s.Every != 0 {
		every = scDur(s.Every)
	}
	return map[string]any{"id": s.ID, "queue": s.Queue, "cron": scOrNil(s.Cron), "every": every,
		"job": scRaw(s.Job), "next_run": scTm(s.NextRun)}
}

func scJSONRoundTrip(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

var scenarioVar = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

// substitute replaces the captured variables in v.
func scSubstitute(v any, vars map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		if m := scenarioVar.FindStringSubmatch(x); m != nil && m[0] == x {
			val, ok := vars[m[1]]
			if !ok {
				return nil, fmt.Errorf("variable %s was never captured", m[1])
			}
			return val, nil
		}
		var missing error
		s := scenarioVar.ReplaceAllStringFunc(x, func(m string) string {
			name := m[2 : len(m)-1]
			val, ok := vars[name]
			if !ok {
				missing = fmt.Errorf("variable %s was never captured", name)
				return m
			}
			if f, ok := val.(float64); ok {
				return strconv.FormatFloat(f, 'f', -1, 64)
			}
			return fmt.Sprint(val)
		})
		return s, missing
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			s, err := scSubstitute(e, vars)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	case []any:
		out := []any{}
		for _, e := range x {
			s, err := scSubstitute(e, vars)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	return v, nil
}

// scenarioMismatch says where got does not match want, "" when it does.
func scenarioMismatch(want, got any, path string) string {
	show := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	switch w := want.(type) {
	case string:
		switch w {
		case "$any":
			return ""
		case "$present":
			if got == nil {
				return path + ": want a value, got null"
			}
			return ""
		}
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path + ": want an object, got " + show(got)
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if m := scenarioMismatch(w[k], g[k], path+"."+k); m != "" {
				return m
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path + ": want " + show(want) + ", got " + show(got)
		}
		for i := range w {
			if m := scenarioMismatch(w[i], g[i], path+"["+strconv.Itoa(i)+"]"); m != "" {
				return m
			}
		}
		return ""
	}
	if show(want) != show(got) {
		return path + ": want " + show(want) + ", got " + show(got)
	}
	return ""
}

func scPick(v any, path string) (any, error) {
	if path == "" {
		return v, nil
	}
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("no element %q", part)
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("no %q in %v", part, v)
		}
	}
	return v, nil
}
