package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// TestRepeatedFieldsCountOnce: a field named many times in ?fields= is
// answered once, so no answer is larger than the whole job (Ocypod
// repeated it: ?fields=input,input,... amplified a large input).
func TestRepeatedFieldsCountOnce(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	big := strings.Repeat("x", 4000)
	env.seedJob(t, "q", `{"input":"`+big+`"}`)
	whole := env.must(t, http.MethodGet, "/job/1", "", http.StatusOK)
	many := strings.TrimSuffix(strings.Repeat("input,", 2000), ",")
	wantJSON(t, do(env.h, http.MethodGet, "/job/1?fields="+many, ""), http.StatusOK, `{"input":"`+big+`"}`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/1?fields=id,input,id,input,status,id", ""), http.StatusOK,
		`{"id":1,"input":"`+big+`","status":"queued"}`)
	all := strings.Join(append(jobFieldNames(), jobFieldNames()...), ",")
	if got := env.must(t, http.MethodGet, "/job/1?fields="+all, "", http.StatusOK); got != whole {
		t.Errorf("every field twice = %d bytes, want the whole job once (%d bytes)", len(got), len(whole))
	}
	// The same in listings.
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/jobs?fields="+many, ""), http.StatusOK,
		`{"jobs":[{"input":"`+big+`"}],"next_cursor":null}`)
	wantJSON(t, do(env.h, http.MethodGet, "/jobs?fields=id,id&status=queued,queued", ""), http.StatusOK,
		`{"jobs":[{"id":1}],"next_cursor":null}`)
}

// TestRepeatedListValuesCountOnce: a queue named many times in ?queues=
// is taken from as if named once: 1000 names of two queues are two
// queues, within the limit of 100.
func TestRepeatedListValuesCountOnce(t *testing.T) {
	t.Parallel()
	queues := strings.TrimSuffix(strings.Repeat("a,b,", 500), ",")
	env := newEnv(t, Options{})
	env.seedQueue(t, "a", `{}`)
	env.seedQueue(t, "b", `{}`)
	env.seedJob(t, "b", `{}`)
	wantJSON(t, do(env.h, http.MethodGet, "/job?count=2&queues="+queues, ""), http.StatusOK,
		`[{"id":1,"input":null,"attempt":1,"queue":"b"}]`)

	var seen [][]string
	store := &fakeStore{TakeFunc: func(_ context.Context, req ocypod.TakeRequest) ([]ocypod.NextJob, error) {
		seen = append(seen, req.Queues)
		return nil, nil
	}}
	h := New(store, Options{}).Handler()
	wantEmpty(t, do(h, http.MethodGet, "/job?queues="+queues, ""), http.StatusNoContent)
	if len(seen) != 1 || strings.Join(seen[0], ",") != "a,b" {
		t.Errorf("store asked for queues %q, want [a b]", seen)
	}
}

// TestTagsCapped: every path that sets tags refuses more than
// ocypod.MaxTags (64) with the same 400, and accepts 64.
func TestTagsCapped(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	tags := func(n int) string { return `["` + strings.TrimSuffix(strings.Repeat(`t","`, n), `","`) + `"]` }
	const tooMany = "Invalid tags: at most 64 tags per job"
	before := env.snapshot(t)
	wantText(t, do(env.h, http.MethodPost, "/queue/q/job", `{"tags":`+tags(65)+`}`), http.StatusBadRequest, tooMany)
	wantText(t, do(env.h, http.MethodPost, "/queue/q/jobs", `[{},{"tags":`+tags(65)+`}]`), http.StatusBadRequest, "Invalid jobs[1]: "+tooMany)
	wantText(t, do(env.h, http.MethodPut, "/queue/q/schedules/s", `{"every":"1m","job":{"tags":`+tags(65)+`}}`), http.StatusBadRequest,
		"Invalid job: "+tooMany)
	if after := env.snapshot(t); !equalSnapshots(before, after) {
		t.Error("refused creates changed Redis")
	}
	env.seedJob(t, "q", `{"tags":`+tags(64)+`}`) // 1
	env.seedJob(t, "q", `{}`)                    // 2
	env.take(t, "q")
	before = env.snapshot(t)
	wantText(t, do(env.h, http.MethodPatch, "/job/2", `{"tags":`+tags(65)+`}`), http.StatusBadRequest, tooMany)
	wantText(t, do(env.h, http.MethodPatch, "/job/1", `{"status":"completed","next":{"queue":"q","tags":`+tags(65)+`}}`),
		http.StatusBadRequest, "Invalid next: "+tooMany)
	if after := env.snapshot(t); !equalSnapshots(before, after) {
		t.Error("refused updates changed Redis")
	}
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/2", `{"tags":`+tags(64)+`}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/job/2?fields=tags", ""), http.StatusOK, `{"tags":`+tags(64)+`}`)
}
