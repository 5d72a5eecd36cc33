package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTakeParameters: count makes the answer an array, worker the
// four-key take object; without either the answer is Ocypod's.
func TestTakeParameters(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	for i := range 5 {
		env.seedJob(t, "q", `{"input":`+itoa(i+1)+`}`)
	}
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job?wait=0s", ""), http.StatusOK, `{"id":1,"input":1}`)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job?worker=w%201", ""), http.StatusOK,
		`{"id":2,"input":2,"attempt":1,"queue":"q"}`)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job?count=1", ""), http.StatusOK,
		`[{"id":3,"input":3,"attempt":1,"queue":"q"}]`)
	env.clock.Advance(time.Second)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job?count=100&worker=w2", ""), http.StatusOK,
		`[{"id":4,"input":4,"attempt":1,"queue":"q"},{"id":5,"input":5,"attempt":1,"queue":"q"}]`)
	wantEmpty(t, do(env.h, http.MethodGet, "/queue/q/job?count=3", ""), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/job/2?fields=worker,attempt", ""), http.StatusOK, `{"worker":"w 1","attempt":1}`)
	// A job taken with a worker shows it by default.
	if body := env.must(t, http.MethodGet, "/job/4", "", http.StatusOK); !strings.HasSuffix(body, `"ended":false,"worker":"w2"}`) {
		t.Errorf("GET /job/4 = %s, want the worker after Ocypod's fields", body)
	}
	wantJSON(t, do(env.h, http.MethodGet, "/workers/w2", ""), http.StatusOK, `{"running":[4,5],"timed_out":[]}`)
	wantText(t, do(env.h, http.MethodGet, "/workers/nobody", ""), http.StatusNotFound, "Worker 'nobody' does not exist")
	// Most recent first; the store keeps last_seen to the millisecond.
	wantJSON(t, do(env.h, http.MethodGet, "/workers", ""), http.StatusOK,
		`[{"name":"w2","last_seen":"2024-03-01T10:00:01.123Z","running":2,"timed_out":0},`+
			`{"name":"w 1","last_seen":"2024-03-01T10:00:00.123Z","running":1,"timed_out":0}]`)
}

// TestLongPoll: a take with wait answers as soon as a job is created, and
// 204 after the wait when none is.
func TestLongPoll(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{NextJobDelay: time.Hour}) // never used with wait
	env.seedQueue(t, "q", `{}`)
	start := time.Now()
	wantEmpty(t, do(env.h, http.MethodGet, "/queue/q/job?wait=300ms", ""), http.StatusNoContent)
	if d := time.Since(start); d < 300*time.Millisecond || d > 10*time.Second {
		t.Errorf("empty long-poll answered after %v, want the 300ms wait", d)
	}

	const wait = 15 * time.Second
	got := make(chan string, 1)
	start = time.Now()
	go func() {
		w := do(env.h, http.MethodGet, "/queue/q/job?wait=15s&worker=w", "")
		got <- itoa(w.Code) + " " + w.Body.String()
	}()
	env.seedJob(t, "q", `{"input":"x"}`)
	if g := <-got; g != `200 {"id":1,"input":"x","attempt":1,"queue":"q"}` {
		t.Errorf("long-poll = %s", g)
	}
	if d := time.Since(start); d >= wait {
		t.Errorf("long-poll answered after %v, want before its %v wait ended", d, wait)
	}
}

// TestTakeMany: GET /job takes from several queues, in order or round
// robin, with four-key take objects; unknown queues are 404.
func TestTakeMany(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	for _, q := range []string{"a", "b", "c"} {
		env.seedQueue(t, q, `{}`)
	}
	env.seedJob(t, "b", `{}`) // 1
	env.seedJob(t, "c", `{}`) // 2
	env.seedJob(t, "c", `{}`) // 3
	env.seedJob(t, "a", `{}`) // 4
	wantJSON(t, do(env.h, http.MethodGet, "/job?queues=c,a,c,b", ""), http.StatusOK, `{"id":2,"input":null,"attempt":1,"queue":"c"}`)
	wantJSON(t, do(env.h, http.MethodGet, "/job?queues=b,c&count=5", ""), http.StatusOK,
		`[{"id":1,"input":null,"attempt":1,"queue":"b"},{"id":3,"input":null,"attempt":1,"queue":"c"}]`)
	wantText(t, do(env.h, http.MethodGet, "/job?queues=a,nope", ""), http.StatusNotFound, "Queue 'nope' does not exist")
	wantJSON(t, do(env.h, http.MethodGet, "/job?queues=b,a&order=round_robin&count=2", ""), http.StatusOK,
		`[{"id":4,"input":null,"attempt":1,"queue":"a"}]`)
	wantEmpty(t, do(env.h, http.MethodGet, "/job?queues=a,b,c", ""), http.StatusNoContent)
	// Round robin starts at another queue each call: both queues get taken
	// from while both have jobs (ordered would take only from x).
	env.seedQueue(t, "x", `{}`)
	env.seedQueue(t, "y", `{}`)
	for range 10 {
		env.seedJob(t, "x", `{}`)
		env.seedJob(t, "y", `{}`)
	}
	seen := map[string]bool{}
	for range 10 {
		var j struct{ Queue string }
		mustUnmarshal(t, []byte(env.must(t, http.MethodGet, "/job?queues=x,y&order=round_robin", "", http.StatusOK)), &j)
		seen[j.Queue] = true
	}
	if !seen["x"] || !seen["y"] {
		t.Errorf("round-robin takes came from %v, want both queues", seen)
	}
}

// TestFencing: ?attempt= refuses a heartbeat, output or PATCH of an
// attempt that is not the job's current one, and changes nothing.
func TestFencing(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{"retries":1}`)
	env.seedJob(t, "q", `{}`)
	env.take(t, "q")
	wantEmpty(t, do(env.h, http.MethodPut, "/job/1/heartbeat?attempt=1", ""), http.StatusNoContent)
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/1?attempt=1", `{"status":"timed_out"}`), http.StatusNoContent)
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/1", `{"status":"queued"}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job?worker=w", ""), http.StatusOK, `{"id":1,"input":null,"attempt":2,"queue":"q"}`)
	before := env.snapshot(t)
	const stale = "Job 1 attempt 1 is not current"
	wantText(t, do(env.h, http.MethodPut, "/job/1/heartbeat?attempt=1", ""), http.StatusConflict, stale)
	wantText(t, do(env.h, http.MethodPut, "/job/1/output?attempt=1", `{"p":1}`), http.StatusConflict, stale)
	wantText(t, do(env.h, http.MethodPatch, "/job/1?attempt=1", `{"status":"completed"}`), http.StatusConflict, stale)
	if after := env.snapshot(t); !equalSnapshots(before, after) {
		t.Error("fenced requests changed Redis")
	}
	wantEmpty(t, do(env.h, http.MethodPut, "/job/1/output?attempt=2", `{"p":2}`), http.StatusNoContent)
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/1?attempt=2", `{"status":"completed"}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/job/1?fields=status,output,attempt", ""), http.StatusOK,
		`{"status":"completed","output":{"p":2},"attempt":2}`)
}

// TestCompleteAndTake: PATCH ?take= applies the change, then answers with
// the next take object (an array with count), or 204.
func TestCompleteAndTake(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	env.seedQueue(t, "other", `{}`)
	env.seedJob(t, "q", `{}`)              // 1
	env.seedJob(t, "other", `{"input":7}`) // 2
	env.seedJob(t, "other", `{}`)          // 3
	env.take(t, "q")
	wantJSON(t, do(env.h, http.MethodPatch, "/job/1?take=other&worker=w", `{"status":"completed"}`), http.StatusOK,
		`{"id":2,"input":7,"attempt":1,"queue":"other"}`)
	wantJSON(t, do(env.h, http.MethodPatch, "/job/2?take=other&count=2", `{"status":"completed"}`), http.StatusOK,
		`[{"id":3,"input":null,"attempt":1,"queue":"other"}]`)
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/3?take=q", `{"status":"completed"}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/other/job_ids", ""), http.StatusOK,
		`{"queued":[],"running":[],"failed":[],"completed":[2,3],"cancelled":[],"timed_out":[]}`)
	// A refused PATCH takes nothing.
	env.seedJob(t, "q", `{}`) // 4
	wantText(t, do(env.h, http.MethodPatch, "/job/3?take=q", `{"status":"completed"}`), http.StatusConflict,
		"Cannot change status from completed to completed")
	wantJSON(t, do(env.h, http.MethodGet, "/job/4/status", ""), http.StatusOK, `"queued"`)
	wantText(t, do(env.h, http.MethodPatch, "/job/4?take=nope", `{"status":"cancelled"}`), http.StatusNotFound,
		"Queue 'nope' does not exist")
	wantJSON(t, do(env.h, http.MethodGet, "/job/4/status", ""), http.StatusOK, `"queued"`)
}

// TestNextJob: PATCH with next creates the follow-up job: 201, its id and
// Location.
func TestNextJob(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	env.seedQueue(t, "then", `{}`)
	env.seedJob(t, "q", `{}`)
	env.take(t, "q")
	wantText(t, do(env.h, http.MethodPatch, "/job/1", `{"status":"completed","next":{"queue":"nope"}}`), http.StatusNotFound,
		"Queue 'nope' does not exist")
	wantJSON(t, do(env.h, http.MethodGet, "/job/1/status", ""), http.StatusOK, `"running"`)
	w := do(env.h, http.MethodPatch, "/job/1", `{"status":"completed","next":{"queue":"then","input":{"step":2},"priority":4}}`)
	wantJSON(t, w, http.StatusCreated, `2`)
	if loc := w.Header().Get("Location"); loc != "/job/2" {
		t.Errorf("Location = %q, want /job/2", loc)
	}
	wantJSON(t, do(env.h, http.MethodGet, "/job/2?fields=queue,status,input,priority", ""), http.StatusOK,
		`{"queue":"then","status":"queued","input":{"step":2},"priority":4}`)
}

// TestRetryRoute: POST /job/{id}/retry counts against retries and answers
// the new status.
func TestRetryRoute(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{"retries":2}`)
	env.seedJob(t, "q", `{}`)
	wantText(t, do(env.h, http.MethodPost, "/job/1/retry", ""), http.StatusConflict, "Cannot change status from queued to queued")
	env.take(t, "q")
	wantJSON(t, do(env.h, http.MethodPost, "/job/1/retry", ""), http.StatusOK, `{"status":"queued","retries_attempted":1}`)
	env.take(t, "q")
	r := newRequest(http.MethodPost, "/job/1/retry", `{"delay":"1m"}`)
	wantJSON(t, serve(env.h, r), http.StatusOK, `{"status":"scheduled","retries_attempted":2}`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/1?fields=run_at", ""), http.StatusOK, `{"run_at":"2024-03-01T10:01:00.123456Z"}`)
	wantText(t, do(env.h, http.MethodPost, "/job/99/retry", ""), http.StatusNotFound, "Job with ID 99 does not exist")
}
