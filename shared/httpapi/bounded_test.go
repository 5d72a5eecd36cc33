package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// TestBoundedAnswers: on the real store, a take with count and a listing
// page of large inputs answer at most ocypod.MaxAnswerBytes of body (every
// field shown), a take leaves queued the jobs it did not answer, and the
// pages list every job once.
func TestBoundedAnswers(t *testing.T) {
	env := newEnv(t, Options{MaxBodySize: 2 << 20})
	env.seedQueue(t, "q", `{}`)
	const n = 24
	for i := range n {
		// Characters the JSON writer could expand, were it to escape them.
		env.seedJob(t, "q", fmt.Sprintf(`{"input": "%d%s", "tags": ["t"]}`, i, strings.Repeat(`<&>é`, 256<<10/5)))
	}
	answered := 0
	for round := 0; answered < n; round++ {
		w := do(env.h, http.MethodGet, "/queue/q/job?count=30", "")
		if w.Code != http.StatusOK || round > n {
			t.Fatalf("take round %d = %d, %d of %d answered", round, w.Code, answered, n)
		}
		if w.Body.Len() > ocypod.MaxAnswerBytes {
			t.Fatalf("a take answered %d bytes, over %d", w.Body.Len(), ocypod.MaxAnswerBytes)
		}
		var jobs []json.RawMessage
		mustUnmarshal(t, w.Body.Bytes(), &jobs)
		answered += len(jobs)
		var running []uint64
		mustUnmarshal(t, []byte(env.must(t, http.MethodGet, "/queue/q/job_ids", "", http.StatusOK)), &struct {
			Running *[]uint64 `json:"running"`
		}{&running})
		if len(running) != answered {
			t.Fatalf("%d jobs running, %d answered", len(running), answered)
		}
	}
	seen := map[uint64]bool{}
	const fields = "id,queue,status,tags,created_at,started_at,ended_at,last_heartbeat,input,output,timeout,heartbeat_timeout,expires_after,retries,retries_attempted,retry_delays,ended,priority,run_at,key,depends_on,dependents,retry_backoff,timeout_retries,tracked,attempt,worker,error,history"
	target := "/jobs?limit=1000&fields=" + fields
	for pages := 0; ; pages++ {
		w := do(env.h, http.MethodGet, target, "")
		if w.Code != http.StatusOK || pages > n {
			t.Fatalf("page %d = %d %.200s", pages, w.Code, w.Body)
		}
		if w.Body.Len() > ocypod.MaxAnswerBytes {
			t.Fatalf("a page answered %d bytes, over %d", w.Body.Len(), ocypod.MaxAnswerBytes)
		}
		var page struct {
			Jobs []struct {
				ID uint64 `json:"id"`
			} `json:"jobs"`
			NextCursor *string `json:"next_cursor"`
		}
		mustUnmarshal(t, w.Body.Bytes(), &page)
		for _, j := range page.Jobs {
			if seen[j.ID] {
				t.Fatalf("job %d listed twice", j.ID)
			}
			seen[j.ID] = true
		}
		if page.NextCursor == nil {
			break
		}
		target = "/jobs?limit=1000&fields=" + fields + "&cursor=" + url.QueryEscape(*page.NextCursor)
	}
	if len(seen) != n {
		t.Fatalf("listed %d jobs, want %d", len(seen), n)
	}
}
