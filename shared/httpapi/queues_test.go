package httpapi

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestQueueRoutes(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	wantJSON(t, do(env.h, http.MethodGet, "/queue", ""), http.StatusOK, `[]`)
	for _, name := range []string{"b", "a.1", "A", "_", "-", ".", "job", "size", "job_ids", "Z-9_x.y"} {
		w := do(env.h, http.MethodPut, "/queue/"+name, `{}`)
		wantEmpty(t, w, http.StatusCreated)
		if loc := w.Header().Get("Location"); loc != "/queue/"+name {
			t.Errorf("PUT /queue/%s: Location = %q", name, loc)
		}
	}
	wantJSON(t, do(env.h, http.MethodGet, "/queue", ""), http.StatusOK,
		`["-",".","A","Z-9_x.y","_","a.1","b","job","job_ids","size"]`)
	// A queue named "job" is reachable; /queue/job/job takes from it.
	wantJSON(t, do(env.h, http.MethodGet, "/queue/job", ""), http.StatusOK,
		`{"timeout":"5m","heartbeat_timeout":"0s","expires_after":"5m","retries":0,"retry_delays":[]}`)
	wantEmpty(t, do(env.h, http.MethodGet, "/queue/job/job", ""), http.StatusNoContent)

	// PUT replaces every setting; missing ones take the defaults.
	env.must(t, "PUT", "/queue/b", `{"timeout":"1h 1s","retries":5,"retry_delays":["10s","1d"],"unknown":1}`, 204)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/b", ""), http.StatusOK,
		`{"timeout":"1h 1s","heartbeat_timeout":"0s","expires_after":"5m","retries":5,"retry_delays":["10s","1day"]}`)
	w := do(env.h, http.MethodPut, "/queue/b", `{"heartbeat_timeout":"1M"}`)
	wantEmpty(t, w, http.StatusNoContent)
	if loc := w.Header().Get("Location"); loc != "/queue/b" {
		t.Errorf("PUT existing queue: Location = %q, want /queue/b", loc)
	}
	wantJSON(t, do(env.h, http.MethodGet, "/queue/b", ""), http.StatusOK,
		`{"timeout":"5m","heartbeat_timeout":"1month","expires_after":"5m","retries":0,"retry_delays":[]}`)

	// Size counts queued jobs only; job_ids always has six arrays.
	for range 3 {
		env.seedJob(t, "b", `{}`)
	}
	wantJSON(t, do(env.h, http.MethodGet, "/queue/b/size", ""), http.StatusOK, `3`)
	env.take(t, "b")
	wantJSON(t, do(env.h, http.MethodGet, "/queue/b/size", ""), http.StatusOK, `2`)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/b/job_ids", ""), http.StatusOK,
		`{"queued":[2,3],"running":[1],"failed":[],"completed":[],"cancelled":[],"timed_out":[]}`)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/a.1/job_ids", ""), http.StatusOK,
		`{"queued":[],"running":[],"failed":[],"completed":[],"cancelled":[],"timed_out":[]}`)
	// The store refuses unknown queues here (upstream listed leftovers).
	wantText(t, do(env.h, http.MethodGet, "/queue/never-made/job_ids", ""), http.StatusNotFound,
		"Queue 'never-made' does not exist")

	// Deleting a queue drops its queued jobs, not its running ones.
	wantEmpty(t, do(env.h, http.MethodDelete, "/queue/b", ""), http.StatusNoContent)
	wantEmpty(t, do(env.h, http.MethodDelete, "/queue/b", ""), http.StatusNotFound)
	wantText(t, do(env.h, http.MethodGet, "/job/2", ""), http.StatusNotFound, "Job with ID 2 does not exist")
	wantJSON(t, do(env.h, http.MethodGet, "/job/1/status", ""), http.StatusOK, `"running"`)
	wantJSON(t, do(env.h, http.MethodGet, "/info", ""), http.StatusOK, `{"queues":{`+
		`"-":{"queued":0,"running":0,"failed":0,"completed":0,"cancelled":0,"timed_out":0},`+
		`".":{"queued":0,"running":0,"failed":0,"completed":0,"cancelled":0,"timed_out":0},`+
		`"A":{"queued":0,"running":0,"failed":0,"completed":0,"cancelled":0,"timed_out":0},`+
		`"Z-9_x.y":{"queued":0,"running":0,"failed":0,"completed":0,"cancelled":0,"timed_out":0},`+
		`"_":{"queued":0,"running":0,"failed":0,"completed":0,"cancelled":0,"timed_out":0},`+
		`"a.1":{"queued":0,"running":0,"failed":0,"completed":0,"cancelled":0,"timed_out":0},`+
		`"b":{"queued":0,"running":1,"failed":0,"completed":0,"cancelled":0,"timed_out":0},`+
		`"job":{"queued":0,"running":0,"failed":0,"completed":0,"cancelled":0,"timed_out":0},`+
		`"job_ids":{"queued":0,"running":0,"failed":0,"completed":0,"cancelled":0,"timed_out":0},`+
		`"size":{"queued":0,"running":0,"failed":0,"completed":0,"cancelled":0,"timed_out":0}},`+
		`"statistics":{"total_jobs_created":3,"total_jobs_completed":0,"total_jobs_retried":0,`+
		`"total_jobs_failed":0,"total_jobs_timed_out":0,"total_jobs_cancelled":0}}`)
}

func TestMissingQueue(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	const missing = "Queue 'nope' does not exist"
	wantText(t, do(env.h, http.MethodGet, "/queue/nope", ""), http.StatusNotFound, missing)
	wantText(t, do(env.h, http.MethodGet, "/queue/nope/size", ""), http.StatusNotFound, missing)
	wantText(t, do(env.h, http.MethodGet, "/queue/nope/job", ""), http.StatusNotFound, missing)
	wantText(t, do(env.h, http.MethodPost, "/queue/nope/job", `{"input":1}`), http.StatusNotFound, missing)
	wantEmpty(t, do(env.h, http.MethodDelete, "/queue/nope", ""), http.StatusNotFound)
	if keys := env.snapshot(t); len(keys) != 0 {
		t.Errorf("keys after refused requests: %v", keys)
	}
}

func TestTagsAndInfo(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	for i := range 12 {
		tags := `["all"]`
		if i%2 == 0 {
			tags = `["all","even","a/b c","é"]`
		}
		env.seedJob(t, "q", `{"tags":`+tags+`}`)
	}
	wantJSON(t, do(env.h, http.MethodGet, "/tag/all", ""), http.StatusOK, `[1,2,3,4,5,6,7,8,9,10,11,12]`)
	wantJSON(t, do(env.h, http.MethodGet, "/tag/even", ""), http.StatusOK, `[1,3,5,7,9,11]`)
	wantJSON(t, do(env.h, http.MethodGet, "/tag/a%2Fb%20c", ""), http.StatusOK, `[1,3,5,7,9,11]`)
	wantJSON(t, do(env.h, http.MethodGet, "/tag/%C3%A9", ""), http.StatusOK, `[1,3,5,7,9,11]`)
	wantJSON(t, do(env.h, http.MethodGet, "/tag/unknown", ""), http.StatusOK, `[]`)
	wantJSON(t, do(env.h, http.MethodGet, "/tag/"+strings.Repeat("x", 2000), ""), http.StatusOK, `[]`)
}

func TestHealthAndVersion(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	wantJSON(t, do(env.h, http.MethodGet, "/health", ""), http.StatusOK, `{"status":"healthy"}`)
	wantJSON(t, do(env.h, http.MethodGet, "/info/version", ""), http.StatusOK, `"0.8.0"`)
}

func TestNextJobDelay(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	env := newEnv(t, Options{NextJobDelay: delay})
	env.seedQueue(t, "q", `{}`)
	start := time.Now()
	wantEmpty(t, do(env.h, http.MethodGet, "/queue/q/job", ""), http.StatusNoContent)
	if d := time.Since(start); d < delay {
		t.Errorf("empty queue answered after %v, want at least %v", d, delay)
	}
	// GET /job waits as well; a take with wait= does not add the delay.
	start = time.Now()
	wantEmpty(t, do(env.h, http.MethodGet, "/job?queues=q", ""), http.StatusNoContent)
	if d := time.Since(start); d < delay {
		t.Errorf("empty GET /job answered after %v, want at least %v", d, delay)
	}
	start = time.Now()
	wantEmpty(t, do(env.h, http.MethodGet, "/queue/q/job?wait=10ms", ""), http.StatusNoContent)
	if d := time.Since(start); d >= delay {
		t.Errorf("empty long-poll answered after %v, want its wait without the %v delay", d, delay)
	}
	// A job is answered at once.
	env.seedJob(t, "q", `{}`)
	start = time.Now()
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job", ""), http.StatusOK, `{"id":1,"input":null}`)
	if d := time.Since(start); d >= delay {
		t.Errorf("non-empty queue answered after %v, want no delay", d)
	}
	// A client that goes away cuts the delay short, and still gets a status.
	ctx, cancel := context.WithCancel(t.Context())
	r := newRequest(http.MethodGet, "/queue/q/job", "").WithContext(ctx)
	time.AfterFunc(20*time.Millisecond, cancel)
	start = time.Now()
	wantEmpty(t, serve(env.h, r), http.StatusNoContent)
	if d := time.Since(start); d >= delay {
		t.Errorf("cancelled request answered after %v, want less than %v", d, delay)
	}
}

// TestBadInputWritesNothing runs every bad input against the real store
// and checks both the answer and that Redis did not change.
func TestBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{MaxBodySize: badInputLimit})
	env.seedQueue(t, "q", `{"retries":1}`)
	env.seedJob(t, "q", `{"input":{"k":"v"},"tags":["t"]}`)
	env.seedJob(t, "q", `{}`)
	env.take(t, "q") // job 1 runs: every PATCH and output would be legal
	before := env.snapshot(t)
	if len(before) == 0 {
		t.Fatal("empty snapshot: the key pattern matches nothing")
	}
	job := env.must(t, http.MethodGet, "/job/1", "", http.StatusOK)
	for _, tt := range badInputs() {
		wantTextNamed(t, tt.name, serve(env.h, tt.request("1")), tt.status, tt.text)
	}
	if after := env.snapshot(t); !reflect.DeepEqual(before, after) {
		t.Errorf("Redis changed after refused requests:\nbefore %q\nafter  %q", before, after)
	}
	wantJSON(t, do(env.h, http.MethodGet, "/job/1", ""), http.StatusOK, job)
}
