package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPatchQueue: PATCH merges settings (204, 404 for a missing queue or
// dead letter queue);
// GET shows the extension settings only when they differ from their
// defaults; PUT replaces them all.
func TestPatchQueue(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	const ocypodDefaults = `{"timeout":"5m","heartbeat_timeout":"0s","expires_after":"5m","retries":0,"retry_delays":[]}`
	wantText(t, do(env.h, http.MethodPatch, "/queue/q", `{"paused":true}`), http.StatusNotFound, "Queue 'q' does not exist")
	env.seedQueue(t, "q", `{}`)
	wantEmpty(t, do(env.h, http.MethodPatch, "/queue/q", `{}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q", ""), http.StatusOK, ocypodDefaults)
	// A dead letter queue must exist; the refused PATCH changes nothing.
	wantText(t, do(env.h, http.MethodPatch, "/queue/q", `{"retries":2,"dead_letter_queue":"dlq"}`),
		http.StatusNotFound, "Queue 'dlq' does not exist")
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q", ""), http.StatusOK, ocypodDefaults)
	env.seedQueue(t, "dlq", `{}`)

	wantEmpty(t, do(env.h, http.MethodPatch, "/queue/q", `{"retries":2,"paused":true,"concurrency":3,`+
		`"rate_limit":{"per_second":2.5,"burst":4},"retry_backoff":{"min":"10s","max":"1h"},"timeout_retries":1,"dead_letter_queue":"dlq"}`),
		http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q", ""), http.StatusOK,
		`{"timeout":"5m","heartbeat_timeout":"0s","expires_after":"5m","retries":2,"retry_delays":[],"paused":true,"concurrency":3,`+
			`"rate_limit":{"per_second":2.5,"burst":4},"retry_backoff":{"min":"10s","max":"1h","factor":2.0,"jitter":true},`+
			`"timeout_retries":1,"dead_letter_queue":"dlq"}`)
	// A paused queue gives nothing.
	env.seedJob(t, "q", `{}`)
	wantEmpty(t, do(env.h, http.MethodGet, "/queue/q/job", ""), http.StatusNoContent)

	// null clears an optional setting; retry_delays replaces the backoff.
	wantEmpty(t, do(env.h, http.MethodPatch, "/queue/q", `{"paused":false,"concurrency":0,"rate_limit":null,"timeout_retries":null,`+
		`"dead_letter_queue":null,"retry_delays":["5s"]}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q", ""), http.StatusOK,
		`{"timeout":"5m","heartbeat_timeout":"0s","expires_after":"5m","retries":2,"retry_delays":["5s"]}`)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job", ""), http.StatusOK, `{"id":1,"input":null}`)

	// PUT replaces every setting: those it does not name return to their
	// defaults, the extension's included.
	wantEmpty(t, do(env.h, http.MethodPatch, "/queue/q", `{"concurrency":7,"paused":true}`), http.StatusNoContent)
	wantEmpty(t, do(env.h, http.MethodPut, "/queue/q", `{"timeout":"1m"}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q", ""), http.StatusOK,
		`{"timeout":"1m","heartbeat_timeout":"0s","expires_after":"5m","retries":0,"retry_delays":[]}`)
	// PUT takes every setting, on a new queue as on an existing one.
	for _, name := range []string{"q", "fresh"} {
		w := do(env.h, http.MethodPut, "/queue/"+name, `{"timeout":"2m","paused":true,"concurrency":3,`+
			`"rate_limit":{"per_second":1,"burst":2},"dead_letter_queue":"dlq"}`)
		if w.Code != http.StatusNoContent && w.Code != http.StatusCreated {
			t.Fatalf("PUT /queue/%s with extension settings = %d %q", name, w.Code, w.Body)
		}
		wantJSON(t, do(env.h, http.MethodGet, "/queue/"+name, ""), http.StatusOK,
			`{"timeout":"2m","heartbeat_timeout":"0s","expires_after":"5m","retries":0,"retry_delays":[],"paused":true,"concurrency":3,`+
				`"rate_limit":{"per_second":1.0,"burst":2},"dead_letter_queue":"dlq"}`)
	}
	// A refused PUT writes nothing: not the Ocypod settings of an existing
	// queue, and no new queue.
	before := env.snapshot(t)
	wantText(t, do(env.h, http.MethodPut, "/queue/q", `{"timeout":"9m","dead_letter_queue":"nope"}`),
		http.StatusNotFound, "Queue 'nope' does not exist")
	wantText(t, do(env.h, http.MethodPut, "/queue/new", `{"paused":true,"pasued":1}`), http.StatusBadRequest, "Unknown field: pasued")
	if after := env.snapshot(t); !equalSnapshots(before, after) {
		t.Error("a refused PUT changed Redis")
	}
}

// TestListing: GET /queue/{name}/jobs and GET /jobs filter and page, each
// job with the fields selection; paging neither skips nor repeats.
func TestListing(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "a", `{}`)
	env.seedQueue(t, "b", `{}`)
	for i := range 5 {
		env.seedJob(t, "a", `{"tags":["t`+itoa(i%2)+`"],"tracked":`+map[bool]string{true: "true", false: "false"}[i == 3]+`}`)
	}
	env.seedJob(t, "b", `{"key":"kb"}`) // 6
	wantJSON(t, do(env.h, http.MethodGet, "/queue/a/job?worker=w", ""), http.StatusOK, `{"id":1,"input":null,"attempt":1,"queue":"a"}`)

	wantJSON(t, do(env.h, http.MethodGet, "/queue/a/jobs?status=queued&fields=id,status,status", ""), http.StatusOK,
		`{"jobs":[{"id":2,"status":"queued"},{"id":3,"status":"queued"},{"id":4,"status":"queued"},{"id":5,"status":"queued"}],"next_cursor":null}`)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/a/jobs?status=running,running&fields=id,worker", ""), http.StatusOK,
		`{"jobs":[{"id":1,"worker":"w"}],"next_cursor":null}`)
	wantJSON(t, do(env.h, http.MethodGet, "/jobs?tag=t1&fields=id,tags", ""), http.StatusOK,
		`{"jobs":[{"id":2,"tags":["t1"]},{"id":4,"tags":["t1"]}],"next_cursor":null}`)
	wantJSON(t, do(env.h, http.MethodGet, "/jobs?tracked=true&fields=id,tracked", ""), http.StatusOK,
		`{"jobs":[{"id":4,"tracked":true}],"next_cursor":null}`)
	wantJSON(t, do(env.h, http.MethodGet, "/jobs?worker=w&fields=id", ""), http.StatusOK, `{"jobs":[{"id":1}],"next_cursor":null}`)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/b/jobs?key=kb&fields=id,key", ""), http.StatusOK,
		`{"jobs":[{"id":6,"key":"kb"}],"next_cursor":null}`)
	wantText(t, do(env.h, http.MethodGet, "/queue/nope/jobs", ""), http.StatusNotFound, "Queue 'nope' does not exist")

	// Default fields: Ocypod's 17 then the non-default extension fields.
	body := env.must(t, http.MethodGet, "/queue/b/jobs", "", http.StatusOK)
	if !strings.HasPrefix(body, `{"jobs":[{"id":6,"queue":"b","status":"queued","tags":null,`) ||
		!strings.HasSuffix(body, `"ended":false,"key":"kb"}],"next_cursor":null}`) {
		t.Errorf("GET /queue/b/jobs = %s", body)
	}

	// Pages of 2 over the 6 jobs: every id once.
	var ids []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 6 {
			t.Fatal("paging does not end")
		}
		q := "/jobs?limit=2&fields=id"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		w := do(env.h, http.MethodGet, q, "")
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", q, w.Code, w.Body)
		}
		var page struct {
			Jobs []struct {
				ID int `json:"id"`
			} `json:"jobs"`
			NextCursor *string `json:"next_cursor"`
		}
		mustUnmarshal(t, w.Body.Bytes(), &page)
		for _, j := range page.Jobs {
			ids = append(ids, itoa(j.ID))
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if strings.Join(sortedStrings(ids), ",") != "1,2,3,4,5,6" {
		t.Errorf("paged ids %v, want 1..6 once each", ids)
	}
	wantText(t, do(env.h, http.MethodGet, "/jobs?cursor=forged", ""), http.StatusBadRequest, "Invalid cursor: not a cursor of this server")
}

// TestFailures: jobs failed for good join their error's group; a group
// pages with each job's error; retry requeues them.
func TestFailures(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	env.seedQueue(t, "r", `{}`)
	for range 4 {
		env.seedJob(t, "q", `{}`)
		env.take(t, "q")
	}
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/1", `{"status":"failed","error":{"group":"io","message":"disk full"}}`), http.StatusNoContent)
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/2", `{"status":"failed","error":{"group":"io"}}`), http.StatusNoContent)
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/3", `{"status":"timed_out"}`), http.StatusNoContent)
	// An error without a group lists the job under its status.
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/4", `{"status":"failed","error":{"message":"no group"}}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/failures", ""), http.StatusOK, `{"failed":1,"io":2,"timed_out":1}`)
	wantJSON(t, do(env.h, http.MethodGet, "/failures/failed?fields=id,error", ""), http.StatusOK,
		`{"total":1,"jobs":[{"id":4,"error":{"group":"","message":"no group"}}],"next_cursor":null}`)
	first := env.must(t, http.MethodGet, "/failures/io?fields=id&limit=1", "", http.StatusOK)
	if !strings.HasPrefix(first, `{"total":2,"jobs":[{"id":1}],"next_cursor":"`) {
		t.Errorf("first page of io = %s, want job 1 and a cursor", first)
	}
	w := do(env.h, http.MethodGet, "/failures/io?fields=id,error", "")
	wantJSON(t, w, http.StatusOK, `{"total":2,"jobs":[{"id":1,"error":{"group":"io","message":"disk full"}},`+
		`{"id":2,"error":{"group":"io","message":""}}],"next_cursor":null}`)
	wantJSON(t, do(env.h, http.MethodGet, "/failures/timed_out?fields=id,status,error", ""), http.StatusOK,
		`{"total":1,"jobs":[{"id":3,"status":"timed_out","error":null}],"next_cursor":null}`)
	// Without fields, each job shows its error after its default fields.
	body := env.must(t, http.MethodGet, "/failures/timed_out", "", http.StatusOK)
	if !strings.HasSuffix(body, `"ended":true,"error":null}],"next_cursor":null}`) {
		t.Errorf("GET /failures/timed_out = %s, want each job with its error", body)
	}
	wantJSON(t, do(env.h, http.MethodGet, "/failures/unknown", ""), http.StatusOK, `{"total":0,"jobs":[],"next_cursor":null}`)
	wantText(t, do(env.h, http.MethodPost, "/failures/io/retry", `{"queue":"nope"}`), http.StatusNotFound, "Queue 'nope' does not exist")
	wantJSON(t, do(env.h, http.MethodPost, "/failures/io/retry?limit=1", `{"queue":"r"}`), http.StatusOK, `{"retried":1}`)
	wantJSON(t, do(env.h, http.MethodPost, "/failures/io/retry", ""), http.StatusOK, `{"retried":1}`)
	wantJSON(t, do(env.h, http.MethodGet, "/failures", ""), http.StatusOK, `{"failed":1,"timed_out":1}`)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/r/size", ""), http.StatusOK, `1`)
}

// TestStats: a day's counts and times; another day is empty.
func TestStats(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	env.seedJob(t, "q", `{}`)
	env.clock.Advance(2 * time.Second)
	env.take(t, "q")
	env.clock.Advance(90 * time.Second)
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/1", `{"status":"completed"}`), http.StatusNoContent)
	var st struct {
		Created, Completed, Failed, Retries int
		Wait, Run                           struct {
			Count     int
			Mean      float64
			Histogram []int
		}
	}
	for _, path := range []string{"/queue/q/stats", "/queue/q/stats?date=2024-03-01"} {
		w := do(env.h, http.MethodGet, path, "")
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, w.Code, w.Body)
		}
		mustUnmarshal(t, w.Body.Bytes(), &st)
		if st.Created != 1 || st.Completed != 1 || st.Wait.Count != 1 || st.Run.Count != 1 ||
			st.Wait.Mean != 2.5 || st.Run.Mean != 90 || len(st.Run.Histogram) != 172 || st.Run.Histogram[60] != 1 {
			t.Errorf("GET %s = %s", path, w.Body)
		}
		// Means are the midpoints of the histogram's buckets: a 2 s wait
		// counts as 2.5 s, a 90 s run (the 1–2 min bucket) as 90 s.
		if !strings.Contains(w.Body.String(), `"wait":{"count":1,"mean":2.5,"variance":0.0,"histogram":[0,0,1,`) {
			t.Errorf("GET %s = %s, want serde's floats", path, w.Body)
		}
	}
	mustUnmarshal(t, []byte(env.must(t, http.MethodGet, "/queue/q/stats?date=2024-02-29", "", http.StatusOK)), &st)
	if st.Created != 0 || st.Run.Count != 0 {
		t.Errorf("another day's stats = %+v, want none", st)
	}
	wantText(t, do(env.h, http.MethodGet, "/queue/nope/stats", ""), http.StatusNotFound, "Queue 'nope' does not exist")
}

// TestStatsByMinute: by=minute adds the last hour's counts, minute by
// minute, oldest first, the last being the minute under way.
func TestStatsByMinute(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	env.seedJob(t, "q", `{}`)
	env.seedJob(t, "q", `{}`)
	env.clock.Advance(2 * time.Minute)
	env.take(t, "q")
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/1", `{"status":"completed"}`), http.StatusNoContent)
	env.take(t, "q")
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/2", `{"status":"failed"}`), http.StatusNoContent)
	var st struct {
		Created int
		Minutes struct {
			Start                      time.Time
			Created, Completed, Failed []int
		}
	}
	body := env.must(t, http.MethodGet, "/queue/q/stats?by=minute", "", http.StatusOK)
	mustUnmarshal(t, []byte(body), &st)
	m := st.Minutes
	wantStart := env.clock.Now().UTC().Truncate(time.Minute).Add(-59 * time.Minute)
	if st.Created != 2 || !m.Start.Equal(wantStart) || len(m.Created) != 60 || len(m.Completed) != 60 || len(m.Failed) != 60 ||
		m.Created[57] != 2 || m.Completed[59] != 1 || m.Failed[59] != 1 {
		t.Fatalf("GET /queue/q/stats?by=minute = %s", body)
	}
	if !strings.Contains(body, `"minutes":{"start":"`) {
		t.Errorf("body = %s", body)
	}
	wantText(t, do(env.h, http.MethodGet, "/queue/q/stats?by=hour", ""), http.StatusBadRequest, "Invalid by: must be minute")
	wantText(t, do(env.h, http.MethodGet, "/queue/q/stats?by=minute&date=2024-03-01", ""), http.StatusBadRequest,
		"Invalid by: the last hour's minutes come with today's statistics, without date")
	wantText(t, do(env.h, http.MethodGet, "/queue/nope/stats?by=minute", ""), http.StatusNotFound, "Queue 'nope' does not exist")
}

// TestSchedules: PUT creates (201) or replaces (204) a schedule; GET, the
// list and DELETE read and remove it.
func TestSchedules(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	wantText(t, do(env.h, http.MethodPut, "/queue/q/schedules/s", `{"every":"1m","job":{}}`), http.StatusNotFound, "Queue 'q' does not exist")
	env.seedQueue(t, "q", `{}`)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/schedules", ""), http.StatusOK, `[]`)
	w := do(env.h, http.MethodPut, "/queue/q/schedules/nightly", `{"cron":"30 2 * * *","job":{"input":{"b":1,"a":2},"key":"n"}}`)
	wantEmpty(t, w, http.StatusCreated)
	if loc := w.Header().Get("Location"); loc != "/queue/q/schedules/nightly" {
		t.Errorf("Location = %q", loc)
	}
	wantEmpty(t, do(env.h, http.MethodPut, "/queue/q/schedules/often", `{"every":"90s","job":{}}`), http.StatusCreated)
	wantEmpty(t, do(env.h, http.MethodPut, "/queue/q/schedules/often", `{"every":"1h","job":{"priority":3}}`), http.StatusNoContent)
	nightly := `{"id":"nightly","queue":"q","cron":"30 2 * * *","job":{"input":{"a":2,"b":1},"key":"n"},"next_run":"2024-03-02T02:30:00Z"}`
	often := `{"id":"often","queue":"q","every":"1h","job":{"priority":3},"next_run":"2024-03-01T11:00:00Z"}`
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/schedules/nightly", ""), http.StatusOK, nightly)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/schedules", ""), http.StatusOK, "["+nightly+","+often+"]")
	wantEmpty(t, do(env.h, http.MethodDelete, "/queue/q/schedules/nightly", ""), http.StatusNoContent)
	wantText(t, do(env.h, http.MethodDelete, "/queue/q/schedules/nightly", ""), http.StatusNotFound,
		"Schedule 'nightly' of queue 'q' does not exist")
	wantText(t, do(env.h, http.MethodGet, "/queue/q/schedules/nightly", ""), http.StatusNotFound,
		"Schedule 'nightly' of queue 'q' does not exist")
}

// TestRetryUnknownGroupFirst: retrying a failure group that has no job,
// as the first request a fresh store serves (a new Lambda process), is
// {"retried":0}, like any other time.
func TestRetryUnknownGroupFirst(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	wantJSON(t, do(env.h, http.MethodPost, "/failures/none/retry", ""), http.StatusOK, `{"retried":0}`)
	wantJSON(t, do(env.h, http.MethodPost, "/failures/none/retry", ""), http.StatusOK, `{"retried":0}`)
}
