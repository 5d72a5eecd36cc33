package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// fullJob is job 1 on queue q (default settings) right after creation with
// the given tags, input and retry_delays JSON.
func fullJob(tags, input, delays string) string {
	return `{"id":1,"queue":"q","status":"queued","tags":` + tags + `,"created_at":"2024-03-01T10:00:00.123456Z",` +
		`"started_at":null,"ended_at":null,"last_heartbeat":null,"input":` + input + `,"output":null,"timeout":"5m",` +
		`"heartbeat_timeout":"0s","expires_after":"5m","retries":0,"retries_attempted":0,"retry_delays":` + delays + `,"ended":false}`
}

func TestGetJobShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, spec, want string
	}{
		{"defaults", `{}`, fullJob("null", "null", "null")},
		{"nulls are absent", `{"input":null,"tags":null,"retry_delays":null}`, fullJob("null", "null", "null")},
		{"empty tags stay []", `{"tags":[]}`, fullJob("[]", "null", "null")},
		{"tags kept as given", `{"tags":["b","a","b","✓ ok","a/b"]}`, fullJob(`["b","a","b","✓ ok","a/b"]`, "null", "null")},
		{"empty delays are none", `{"retry_delays":[]}`, fullJob("null", "null", "null")},
		{"delays", `{"retry_delays":["1m","90s","1500ms"]}`, fullJob("null", "null", `["1m","1m 30s","1s"]`)},
		{"input wire.Canonical", `{"input":{"z":{"y":1,"x":[true,null]},"a":"\u00e9\n\"","big":123456789012345678901234567890,"f":1.0e2}}`,
			fullJob("null", `{"a":"é\n\"","big":123456789012345678901234567890,"f":1.0e2,"z":{"x":[true,null],"y":1}}`, "null")},
		{"input scalar", `{"input":"hello"}`, fullJob("null", `"hello"`, "null")},
		{"input unicode", `{"input":["😀","\ud83d\ude00","\u2028","<>&"]}`, fullJob("null", "[\"😀\",\"😀\",\"\u2028\",\"<>&\"]", "null")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t, Options{})
			env.seedQueue(t, "q", `{}`)
			env.seedJob(t, "q", tt.spec)
			wantJSON(t, do(env.h, http.MethodGet, "/job/1", ""), http.StatusOK, tt.want)
		})
	}
}

func TestGetJobOverrides(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{"timeout":"1h","heartbeat_timeout":"30s","expires_after":"0s","retries":2,"retry_delays":["5s"]}`)
	env.seedJob(t, "q", `{}`)
	env.seedJob(t, "q", `{"timeout":"2h 30m","heartbeat_timeout":"0s","expires_after":"2w","retries":0,"retry_delays":["1s","2s"]}`)
	env.seedJob(t, "q", `{"retry_delays":[]}`)
	const fields = "?fields=timeout,heartbeat_timeout,expires_after,retries,retry_delays"
	wantJSON(t, do(env.h, http.MethodGet, "/job/1"+fields, ""), http.StatusOK,
		`{"timeout":"1h","heartbeat_timeout":"30s","expires_after":"0s","retries":2,"retry_delays":["5s"]}`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/2"+fields, ""), http.StatusOK,
		`{"timeout":"2h 30m","heartbeat_timeout":"0s","expires_after":"14days","retries":0,"retry_delays":["1s","2s"]}`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/3"+fields, ""), http.StatusOK,
		`{"timeout":"1h","heartbeat_timeout":"30s","expires_after":"0s","retries":2,"retry_delays":null}`)
}

func TestGetJobFields(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	env.seedJob(t, "q", `{"tags":[],"input":{"k":1}}`)
	reversed := slices.Clone(jobFieldNames())
	slices.Reverse(reversed)
	tests := map[string]string{
		"ended":                     `{"ended":false}`,
		"id,id":                     `{"id":1}`, // each field once (Ocypod repeated it)
		"status,queue":              `{"status":"queued","queue":"q"}`,
		"tags,output,input":         `{"tags":[],"output":null,"input":{"k":1}}`,
		"started_at,last_heartbeat": `{"started_at":null,"last_heartbeat":null}`,
		strings.Join(reversed, ","): `{"ended":false,"retry_delays":null,"retries_attempted":0,"retries":0,"expires_after":"5m",` +
			`"heartbeat_timeout":"0s","timeout":"5m","output":null,"input":{"k":1},"last_heartbeat":null,"ended_at":null,` +
			`"started_at":null,"created_at":"2024-03-01T10:00:00.123456Z","tags":[],"status":"queued","queue":"q","id":1}`,
		"id%2Cstatus":   `{"id":1,"status":"queued"}`,
		"id,status&x=1": `{"id":1,"status":"queued"}`,
	}
	for q, want := range tests {
		wantJSON(t, do(env.h, http.MethodGet, "/job/1?fields="+q, ""), http.StatusOK, want)
	}
	wantJSON(t, do(env.h, http.MethodGet, "/job/1?other=1&fields=id", ""), http.StatusOK, `{"id":1}`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/0001?fields=id", ""), http.StatusOK, `{"id":1}`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/+1?fields=id", ""), http.StatusOK, `{"id":1}`)
}

func jobFieldNames() []string {
	return []string{"id", "queue", "status", "tags", "created_at", "started_at", "ended_at", "last_heartbeat", "input", "output",
		"timeout", "heartbeat_timeout", "expires_after", "retries", "retries_attempted", "retry_delays", "ended"}
}

func TestMissingJob(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	const missing = "Job with ID 99 does not exist"
	wantText(t, do(env.h, http.MethodGet, "/job/99", ""), http.StatusNotFound, missing)
	wantText(t, do(env.h, http.MethodGet, "/job/99?fields=ended", ""), http.StatusNotFound, missing)
	wantText(t, do(env.h, http.MethodGet, "/job/99/status", ""), http.StatusNotFound, missing)
	wantText(t, do(env.h, http.MethodGet, "/job/99/output", ""), http.StatusNotFound, missing)
	wantText(t, do(env.h, http.MethodPut, "/job/99/output", `{"a":1}`), http.StatusNotFound, missing)
	wantText(t, do(env.h, http.MethodPut, "/job/99/heartbeat", ""), http.StatusNotFound, missing)
	wantText(t, do(env.h, http.MethodPatch, "/job/99", `{"status":"cancelled"}`), http.StatusNotFound, missing)
	wantText(t, do(env.h, http.MethodPatch, "/job/99", `{"output":1}`), http.StatusNotFound, missing)
	// Upstream answered 204 here; an empty PATCH is checked too.
	wantText(t, do(env.h, http.MethodPatch, "/job/99", `{}`), http.StatusNotFound, missing)
	wantText(t, do(env.h, http.MethodPatch, "/job/99", `{"status":null,"output":null,"retries":1}`), http.StatusNotFound, missing)
	wantText(t, do(env.h, http.MethodGet, "/job/18446744073709551615", ""), http.StatusNotFound, "Job with ID 18446744073709551615 does not exist")
	// Upstream's bare 404.
	wantEmpty(t, do(env.h, http.MethodDelete, "/job/99", ""), http.StatusNotFound)
	if keys := env.snapshot(t); len(keys) != 0 {
		t.Errorf("keys after refused requests: %v", keys)
	}
}

func TestJobConflicts(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	env.seedJob(t, "q", `{}`) // 1: stays queued
	wantText(t, do(env.h, http.MethodPut, "/job/1/heartbeat", ""), http.StatusConflict, "Cannot heartbeat job 1, job is not running")
	wantText(t, do(env.h, http.MethodPut, "/job/1/output", `{}`), http.StatusConflict, "Can only set output for running jobs")
	wantText(t, do(env.h, http.MethodPatch, "/job/1", `{"output":{}}`), http.StatusConflict, "Can only set output for running jobs")
	for _, to := range []string{"queued", "running", "completed", "failed", "timed_out"} {
		wantText(t, do(env.h, http.MethodPatch, "/job/1", `{"status":"`+to+`"}`), http.StatusConflict,
			"Cannot change status from queued to "+to)
	}
	// Output plus a status change on a job that is not running.
	wantText(t, do(env.h, http.MethodPatch, "/job/1", `{"status":"cancelled","output":1}`), http.StatusConflict,
		"Can only set output for running jobs")
	before := env.snapshot(t)

	env.seedJob(t, "q", `{}`) // 2
	env.take(t, "q")          // takes 1 (FIFO)
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/1", `{"status":"timed_out"}`), http.StatusNoContent)
	wantText(t, do(env.h, http.MethodPatch, "/job/1", `{"status":"cancelled"}`), http.StatusConflict,
		"Cannot change status from timed_out to cancelled")
	wantText(t, do(env.h, http.MethodPut, "/job/1/heartbeat", ""), http.StatusConflict, "Cannot heartbeat job 1, job is not running")
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/2", `{"status":"cancelled"}`), http.StatusNoContent)
	wantText(t, do(env.h, http.MethodPatch, "/job/2", `{"status":"completed"}`), http.StatusConflict,
		"Cannot change status from cancelled to completed")
	if len(before) == 0 {
		t.Error("snapshot of a namespace with a queue and a job is empty: the key pattern is wrong")
	}
}

func TestJobTransitionsAndEvents(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{"retries":1}`)
	for range 4 {
		env.seedJob(t, "q", `{}`)
	}
	for range 4 {
		env.take(t, "q")
	}
	for _, p := range []struct{ id, body string }{
		{"1", `{"status":"completed"}`},
		{"2", `{"status":"failed","output":{"error":"boom"}}`},
		{"3", `{"status":"timed_out"}`},
		{"4", `{"status":"cancelled"}`},
		{"2", `{"status":"queued"}`},
		{"3", `{"status":"queued"}`},
		{"4", `{"status":"queued"}`},
		{"2", `{"status":"cancelled"}`},
	} {
		wantEmpty(t, do(env.h, http.MethodPatch, "/job/"+p.id, p.body), http.StatusNoContent)
	}
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q/job_ids", ""), http.StatusOK,
		`{"queued":[3,4],"running":[],"failed":[],"completed":[1],"cancelled":[2],"timed_out":[]}`)
	wantJSON(t, do(env.h, http.MethodGet, "/job/3?fields=status,output,started_at,ended_at,retries_attempted,ended", ""), http.StatusOK,
		`{"status":"queued","output":null,"started_at":null,"ended_at":null,"retries_attempted":0,"ended":false}`)
	var events []string
	for _, l := range env.logs.lines() {
		if !strings.Contains(l, "job created") && !strings.Contains(l, "job started") {
			events = append(events, l)
		}
	}
	want := []string{
		"INFO job completed job_id=1", "INFO job failed job_id=2", "INFO job timed out job_id=3", "INFO job cancelled job_id=4",
		"INFO job requeued job_id=2", "INFO job requeued job_id=3", "INFO job requeued job_id=4", "INFO job cancelled job_id=2",
	}
	if !slices.Equal(events, want) {
		t.Errorf("events = %q, want %q", events, want)
	}

	// A requeue whose queue was deleted.
	env.seedJob(t, "q", `{}`)                   // 5
	env.must(t, "GET", "/queue/q/job", "", 200) // takes 3
	env.must(t, "PATCH", "/job/3", `{"status":"failed"}`, 204)
	env.must(t, "DELETE", "/queue/q", "", 204)
	wantText(t, do(env.h, http.MethodPatch, "/job/3", `{"status":"queued"}`), http.StatusNotFound, "Queue 'q' does not exist")
}

func TestJobOutputAndDelete(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.seedQueue(t, "q", `{}`)
	env.seedJob(t, "q", `{"tags":["x","y"]}`)
	env.take(t, "q")
	wantJSON(t, do(env.h, http.MethodGet, "/job/1/output", ""), http.StatusOK, `null`)
	for _, c := range []struct{ body, want string }{
		{`null`, `null`},
		{`0`, `0`},
		{` [1, "two", {"b":2,"a":1}]`, `[1,"two",{"a":1,"b":2}]`},
		{`"\u00e9"`, `"é"`},
		{`{"a":1,"a":2}`, `{"a":2}`},
	} {
		wantEmpty(t, do(env.h, http.MethodPut, "/job/1/output", c.body), http.StatusNoContent)
		wantJSON(t, do(env.h, http.MethodGet, "/job/1/output", ""), http.StatusOK, c.want)
	}
	// PATCH cannot set null: null is "absent", so the output stays.
	wantEmpty(t, do(env.h, http.MethodPatch, "/job/1", `{"output":null}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/job/1/output", ""), http.StatusOK, `{"a":2}`)

	wantJSON(t, do(env.h, http.MethodGet, "/tag/x", ""), http.StatusOK, `[1]`)
	wantEmpty(t, do(env.h, http.MethodDelete, "/job/1", ""), http.StatusNoContent)
	wantEmpty(t, do(env.h, http.MethodDelete, "/job/1", ""), http.StatusNotFound)
	wantJSON(t, do(env.h, http.MethodGet, "/tag/x", ""), http.StatusOK, `[]`)
}
