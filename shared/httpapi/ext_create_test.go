package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCreateExtensionFields: each create field of the extension shows in
// GET /job/{id} after Ocypod's 17 fields, in the contract's order, only
// when it holds a non-default value; a job that uses none reads as in
// Ocypod.
func TestCreateExtensionFields(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	env.seedJob(t, "q", `{"priority":0,"tracked":false,"depends_on":null}`) // 1: defaults only
	wantJSON(t, do(env.h, http.MethodGet, "/job/1", ""), http.StatusOK, fullJob("null", "null", "null"))

	env.seedJob(t, "q", `{"priority":-7,"key":"k é","timeout_retries":2,"tracked":true,`+
		`"retry_backoff":{"min":"1s","max":"1h","factor":1.5,"jitter":false}}`) // 2
	wantJSON(t, do(env.h, http.MethodGet, "/job/2?fields=id,priority,run_at,key,retry_backoff,timeout_retries,tracked,worker,error,attempt", ""),
		http.StatusOK, `{"id":2,"priority":-7,"run_at":null,"key":"k é","retry_backoff":{"min":"1s","max":"1h","factor":1.5,"jitter":false},`+
			`"timeout_retries":2,"tracked":true,"worker":null,"error":null,"attempt":0}`)
	body := env.must(t, http.MethodGet, "/job/2", "", http.StatusOK)
	if want := `"ended":false,"priority":-7,"key":"k é","retry_backoff":{"min":"1s","max":"1h","factor":1.5,"jitter":false},` +
		`"timeout_retries":2,"tracked":true}`; !strings.HasSuffix(body, want) {
		t.Errorf("GET /job/2 = %s, want it to end with %s", body, want)
	}

	// A backoff without factor and jitter takes 2.0 and true.
	env.seedJob(t, "q", `{"retry_backoff":{"min":"1m","max":"2h"}}`) // 3
	wantJSON(t, do(env.h, http.MethodGet, "/job/3?fields=retry_backoff,retry_delays", ""), http.StatusOK,
		`{"retry_backoff":{"min":"1m","max":"2h","factor":2.0,"jitter":true},"retry_delays":null}`)
}

// TestScheduledJobs: run_at and delay make a job scheduled until it is
// due; job_ids and /info show "scheduled" only while there is one.
func TestScheduledJobs(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	const idsNone = `{"queued":[],"running":[],"failed":[],"completed":[],"cancelled":[],"timed_out":[]}`
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job_ids", ""), http.StatusOK, idsNone)

	env.seedJob(t, "q", `{"delay":"10s"}`)                        // 1
	env.seedJob(t, "q", `{"run_at":"2024-03-01T12:00:30+02:00"}`) // 2: 10:00:30Z
	wantJSON(t, do(env.h, http.MethodGet, "/job/1/status", ""), http.StatusOK, `"scheduled"`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/2?fields=status,run_at", ""), http.StatusOK,
		`{"status":"scheduled","run_at":"2024-03-01T10:00:30Z"}`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/1?fields=run_at", ""), http.StatusOK, `{"run_at":"2024-03-01T10:00:10.123456Z"}`)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job_ids", ""), http.StatusOK,
		`{"queued":[],"running":[],"failed":[],"completed":[],"cancelled":[],"timed_out":[],"scheduled":[1,2]}`)
	wantJSON(t, do(env.h, http.MethodGet, "/info", ""), http.StatusOK, `{"queues":{"q":{"queued":0,"running":0,"failed":0,`+
		`"completed":0,"cancelled":0,"timed_out":0,"scheduled":2}},"statistics":{"total_jobs_created":2,"total_jobs_completed":0,`+
		`"total_jobs_retried":0,"total_jobs_failed":0,"total_jobs_timed_out":0,"total_jobs_cancelled":0}}`)
	wantEmpty(t, do(env.h, http.MethodGet, "/queue/q/job", ""), http.StatusNoContent)

	// Due: a take sees it at once, no sweep needed.
	env.clock.Advance(11 * time.Second)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job", ""), http.StatusOK, `{"id":1,"input":null}`)
	wantEmpty(t, do(env.h, http.MethodGet, "/queue/q/job", ""), http.StatusNoContent)
	// A scheduled job can be cancelled.
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/2", `{"status":"cancelled"}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job_ids", ""), http.StatusOK,
		`{"queued":[],"running":[1],"failed":[],"completed":[],"cancelled":[2],"timed_out":[]}`)
}

// TestPriority: higher priority is taken first, equal priority FIFO.
func TestPriority(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	for _, p := range []string{"0", "5", "-1", "5", "1000000"} {
		env.seedJob(t, "q", `{"priority":`+p+`}`)
	}
	var order []string
	for range 5 {
		order = append(order, env.take(t, "q"))
	}
	want := []string{`{"id":5,"input":null}`, `{"id":2,"input":null}`, `{"id":4,"input":null}`, `{"id":1,"input":null}`, `{"id":3,"input":null}`}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("take order %v, want %v", order, want)
	}
}

// TestKeys: a key is unique among a queue's live jobs; on_conflict keep
// answers 200 with the pending job's id, update replaces its fields, error
// is a 409; an ended job frees its key.
func TestKeys(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	w := do(env.h, http.MethodPost, "/queue/q/job", `{"key":"k","input":1}`)
	wantJSON(t, w, http.StatusCreated, `1`)
	w = do(env.h, http.MethodPost, "/queue/q/job", `{"key":"k","input":2}`)
	wantJSON(t, w, http.StatusOK, `1`)
	if loc := w.Header().Get("Location"); loc != "/job/1" {
		t.Errorf("keep: Location = %q, want /job/1", loc)
	}
	wantJSON(t, do(env.h, http.MethodGet, "/job/1/status", ""), http.StatusOK, `"queued"`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/1?fields=input,priority", ""), http.StatusOK, `{"input":1,"priority":0}`)

	wantJSON(t, do(env.h, http.MethodPost, "/queue/q/job", `{"key":"k","on_conflict":"update","input":3,"priority":9}`), http.StatusOK, `1`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/1?fields=input,priority", ""), http.StatusOK, `{"input":3,"priority":9}`)
	wantText(t, do(env.h, http.MethodPost, "/queue/q/job", `{"key":"k","on_conflict":"error"}`), http.StatusConflict,
		"Job with key 'k' already exists: 1")
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/jobs?key=k&fields=id,key,status", ""), http.StatusOK,
		`{"jobs":[{"id":1,"key":"k","status":"queued"}],"next_cursor":null}`)

	// While job 1 runs, a new job with its key waits for it.
	env.take(t, "q")
	wantJSON(t, do(env.h, http.MethodPost, "/queue/q/job", `{"key":"k"}`), http.StatusCreated, `2`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/2/status", ""), http.StatusOK, `"waiting"`)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job_ids", ""), http.StatusOK,
		`{"queued":[],"running":[1],"failed":[],"completed":[],"cancelled":[],"timed_out":[],"waiting":[2]}`)
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/1", `{"status":"completed"}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/job/2/status", ""), http.StatusOK, `"queued"`)
}

// TestDependencies: a job waits for its dependencies; an unknown id is a
// 400 and creates nothing.
func TestDependencies(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	env.seedJob(t, "q", `{}`) // 1
	before := env.snapshot(t)
	wantText(t, do(env.h, http.MethodPost, "/queue/q/job", `{"depends_on":[1,99]}`), http.StatusBadRequest,
		"Invalid depends_on: job 99 does not exist")
	if after := env.snapshot(t); !equalSnapshots(before, after) {
		t.Error("a refused create changed Redis")
	}
	env.seedJob(t, "q", `{"depends_on":[1,1]}`) // 2: 1 counts once
	wantJSON(t, do(env.h, http.MethodGet, "/job/2?fields=status,depends_on", ""), http.StatusOK, `{"status":"waiting","depends_on":[1]}`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/1?fields=dependents", ""), http.StatusOK, `{"dependents":[2]}`)
	env.take(t, "q")
	wantEmpty(t, do(env.h, http.MethodGet, "/queue/q/job", ""), http.StatusNoContent)
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/1", `{"status":"completed"}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job", ""), http.StatusOK, `{"id":2,"input":null}`)
}

// TestCreateBatch: POST /queue/{name}/jobs creates every job of the array,
// in order; one bad element creates nothing and names its index.
func TestCreateBatch(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	w := do(env.h, http.MethodPost, "/queue/q/jobs", `[{"input":"a"},{"input":"b","priority":3},{}]`)
	wantJSON(t, w, http.StatusCreated, `[1,2,3]`)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/size", ""), http.StatusOK, `3`)
	before := env.snapshot(t)
	for body, text := range map[string]string{
		`[{},{"priority":"high"},{}]`: "Invalid jobs[1]: Invalid priority: must be an integer from -1000000 to 1000000",
		`[{},{},{"tags":[""]}]`:       "Invalid jobs[2]: tags cannot be empty",
		`[{"timeout":5}]`:             "Invalid jobs[0]: Json deserialize error: invalid type: integer `5`, expected a duration string at line 1 column 14",
		`[{},7]`:                      "Invalid jobs[1]: Json deserialize error: invalid type: integer `7`, expected a JSON object at line 1 column 6",
		`[]`:                          "Invalid jobs: expected an array of 1 to 1000 job bodies",
		`{}`:                          "Invalid jobs: expected an array of 1 to 1000 job bodies",
		"[" + strings.Repeat("{},", 1000) + "{}]": "Invalid jobs: at most 1000 jobs per batch",
	} {
		wantText(t, do(env.h, http.MethodPost, "/queue/q/jobs", body), http.StatusBadRequest, text)
	}
	wantText(t, do(env.h, http.MethodPost, "/queue/nope/jobs", `[{}]`), http.StatusNotFound, "Queue 'nope' does not exist")
	if after := env.snapshot(t); !equalSnapshots(before, after) {
		t.Error("refused batches changed Redis")
	}
	// 1000 is the most.
	wantResponse(t, do(env.h, http.MethodPost, "/queue/q/jobs", "["+strings.Repeat("{},", 999)+"{}]"), http.StatusCreated,
		batchIDs(4, 1003), jsonType)
}

// batchIDs is the JSON array of the ids from to to.
func batchIDs(from, to int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := from; i <= to; i++ {
		if i > from {
			b.WriteByte(',')
		}
		b.WriteString(itoa(i))
	}
	b.WriteByte(']')
	return b.String()
}
