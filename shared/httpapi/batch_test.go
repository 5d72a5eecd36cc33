package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// TestBatchUpdateItems: each item of PATCH /jobs gets the answer its own
// PATCH /job/{id} would, and the others are applied all the same.
func TestBatchUpdateItems(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	for range 4 {
		env.seedJob(t, "q", `{}`)
	}
	for range 3 {
		env.take(t, "q") // 1, 2, 3 running, attempt 1
	}
	single := do(env.h, "PATCH", "/job/2", `{"status":"done"}`).Body.String()
	w := do(env.h, "PATCH", "/jobs", `[
{"id":1,"attempt":1,"status":"completed","output":{"r":1}},
{"id":2,"attempt":2,"status":"completed"},
{"id":99,"status":"completed"},
{"id":4,"status":"completed"},
{"id":3,"status":"completed","next":{"queue":"q","input":"n"}},
{"id":2,"statuss":"failed"},
{"id":2,"attempt":"1","status":"failed"},
{"id":2,"attempt":-1,"status":"failed"},
{"id":2,"status":"failed","retry_in":"soon"},
{"id":2,"status":"completed","next":{"queue":"nope"}},
{"id":2,"status":"done"},
{"id":2,"attempt":null,"status":"failed","error":{"message":"x"}}
]`)
	body := w.Body.String()
	// The serde error's position is the batch body's; its sentence is the
	// single call's.
	variant, _, _ := strings.Cut(single, " at line")
	if i := strings.Index(body, `"error":"`+variant+` at line 12 column `); i < 0 {
		t.Errorf("item 10 of %s does not say %q", body, variant)
	} else {
		end := i + strings.Index(body[i:], "}")
		body = body[:i] + `"error":"…"` + body[end:]
	}
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("PATCH /jobs = %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if want := `[` +
		`{"id":1,"status":204},` +
		`{"id":2,"status":409,"error":"Job 2 attempt 2 is not current"},` +
		`{"id":99,"status":404,"error":"Job with ID 99 does not exist"},` +
		`{"id":4,"status":409,"error":"Cannot change status from queued to completed"},` +
		`{"id":3,"status":201,"next":5},` +
		`{"id":2,"status":400,"error":"Unknown field: statuss"},` +
		`{"id":2,"status":400,"error":"Invalid attempt: must be a non-negative integer"},` +
		`{"id":2,"status":400,"error":"Invalid attempt: must be a non-negative integer"},` +
		`{"id":2,"status":400,"error":"Invalid retry_in: expected number at 0"},` +
		`{"id":2,"status":404,"error":"Queue 'nope' does not exist"},` +
		`{"id":2,"status":400,"error":"…"},` +
		`{"id":2,"status":204}]`; body != want {
		t.Errorf("PATCH /jobs =\n%s\nwant\n%s", body, want)
	}
	for id, want := range map[string]string{"1": "completed", "2": "failed", "3": "completed", "4": "queued", "5": "queued"} {
		if got := env.must(t, "GET", "/job/"+id+"/status", "", 200); got != `"`+want+`"` {
			t.Errorf("job %s = %s, want %s", id, got, want)
		}
	}
	if got := env.must(t, "GET", "/job/1/output", "", 200); got != `{"r":1}` {
		t.Errorf("output of job 1 = %s", got)
	}

	// With take: every item refused, the take still happens.
	wantJSON(t, do(env.h, "PATCH", "/jobs?take=q&count=3&worker=w", `[{"id":99}]`), http.StatusOK,
		`{"results":[{"id":99,"status":404,"error":"Job with ID 99 does not exist"}],`+
			`"jobs":[{"id":4,"input":null,"attempt":1,"queue":"q"},{"id":5,"input":"n","attempt":1,"queue":"q"}]}`)
	// Applied first, then nothing left to take.
	wantJSON(t, do(env.h, "PATCH", "/jobs?take=q", `[{"id":4,"attempt":1,"status":"completed"},{"id":5,"attempt":1,"status":"completed"}]`),
		http.StatusOK, `{"results":[{"id":4,"status":204},{"id":5,"status":204}],"jobs":[]}`)

	// A missing take queue: 404 and nothing applied.
	env.seedJob(t, "q", `{}`) // 6
	env.take(t, "q")
	before := env.snapshot(t)
	wantText(t, do(env.h, "PATCH", "/jobs?take=nope", `[{"id":6,"status":"completed"}]`), http.StatusNotFound, "Queue 'nope' does not exist")
	if after := env.snapshot(t); !equalSnapshots(before, after) {
		t.Errorf("a batch with a missing take queue changed Redis:\nbefore %q\nafter  %q", before, after)
	}
}

func TestBatchHeartbeatItems(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	env.seedJob(t, "q", `{}`)
	env.seedJob(t, "q", `{}`)
	env.take(t, "q")
	wantJSON(t, do(env.h, "POST", "/jobs/heartbeat", `[{"id":1,"attempt":1},{"id":1,"attempt":2},{"id":2},{"id":99},{"id":1,"x":1},{"id":1,"attempt":1.5}]`),
		http.StatusOK, `[{"id":1,"status":204},`+
			`{"id":1,"status":409,"error":"Job 1 attempt 2 is not current"},`+
			`{"id":2,"status":409,"error":"Cannot heartbeat job 2, job is not running"},`+
			`{"id":99,"status":404,"error":"Job with ID 99 does not exist"},`+
			`{"id":1,"status":400,"error":"Unknown field: x"},`+
			`{"id":1,"status":400,"error":"Invalid attempt: must be a non-negative integer"}]`)
}

// TestBatchRedisFailing: Redis failing every item is the whole request's
// 503; failing some of them is those items' 503.
func TestBatchRedisFailing(t *testing.T) {
	t.Parallel()
	down := ocypod.UnavailableBecause("connection refused", nil)
	store := &fakeStore{
		UpdateJobsFunc: func(_ context.Context, items []ocypod.BatchUpdate, _ *ocypod.TakeRequest) ([]ocypod.BatchOutcome, []ocypod.NextJob, error) {
			out := make([]ocypod.BatchOutcome, len(items))
			out[1].Err = down
			return out, nil, nil
		},
		HeartbeatJobsFunc: func(context.Context, []ocypod.BatchUpdate) ([]ocypod.BatchOutcome, error) { return nil, down },
	}
	h := New(store, Options{}).Handler()
	wantJSON(t, do(h, "PATCH", "/jobs", `[{"id":1},{"id":2}]`), http.StatusOK,
		`[{"id":1,"status":204},{"id":2,"status":503,"error":"Failed to connect to Redis: connection refused"}]`)
	wantText(t, do(h, "POST", "/jobs/heartbeat", `[{"id":1}]`), http.StatusServiceUnavailable, "Failed to connect to Redis: connection refused")
}

// TestBatchTakeDrains: a batch's long-poll take answers at once once the
// server drains, with the batch applied.
func TestBatchTakeDrains(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	env.seedJob(t, "q", `{}`)
	env.take(t, "q")
	env.api.Drain()
	start := time.Now()
	wantJSON(t, do(env.h, "PATCH", "/jobs?take=q&wait=8s", `[{"id":1,"status":"completed"}]`), http.StatusOK,
		`{"results":[{"id":1,"status":204}],"jobs":[]}`)
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("a drained batch take answered after %v", el)
	}
}
