package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestQuickstart runs Ocypod's quickstart over real HTTP: create a queue,
// post a job, take it, heartbeat, write progress, complete it, then read its
// status, output and metadata.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	srv := httptest.NewServer(env.h)
	defer srv.Close()

	type step struct {
		method, path, body string
		status             int
		want               string            // exact body
		header             map[string]string // expected headers ("" = absent)
		advance            time.Duration     // clock step before the request
	}
	const (
		created = "2024-03-01T10:00:00.123456Z"
		started = "2024-03-01T10:00:01.123456Z"
		beat    = "2024-03-01T10:00:03.123456Z"
		ended   = "2024-03-01T10:00:04.123456Z"
	)
	steps := []step{
		{method: "GET", path: "/health", status: 200, want: `{"status":"healthy"}`},
		{method: "GET", path: "/info/version", status: 200, want: `"0.8.0"`},
		{method: "GET", path: "/queue", status: 200, want: `[]`},
		{method: "PUT", path: "/queue/demo", body: `{"timeout":"10m","heartbeat_timeout":"1m","expires_after":"1d","retries":3}`,
			status: 201, header: map[string]string{"Location": "/queue/demo", "Content-Type": ""}},
		{method: "PUT", path: "/queue/demo", body: `{"timeout":"10m","heartbeat_timeout":"1m","expires_after":"1d","retries":3}`,
			status: 204, header: map[string]string{"Location": "/queue/demo"}},
		{method: "GET", path: "/queue/demo", status: 200,
			want: `{"timeout":"10m","heartbeat_timeout":"1m","expires_after":"1day","retries":3,"retry_delays":[]}`},
		{method: "GET", path: "/queue", status: 200, want: `["demo"]`},
		{method: "POST", path: "/queue/demo/job", body: `{"input":{"url":"https://example.com/a?b=1","n":[1,2.50]},"tags":["crawl"]}`,
			status: 201, want: `1`, header: map[string]string{"Location": "/job/1", "Content-Type": "application/json"}},
		{method: "GET", path: "/queue/demo/size", status: 200, want: `1`},
		{method: "GET", path: "/job/1/status", status: 200, want: `"queued"`},
		{method: "GET", path: "/job/1", status: 200, want: `{"id":1,"queue":"demo","status":"queued","tags":["crawl"],` +
			`"created_at":"` + created + `","started_at":null,"ended_at":null,"last_heartbeat":null,` +
			`"input":{"n":[1,2.50],"url":"https://example.com/a?b=1"},"output":null,"timeout":"10m","heartbeat_timeout":"1m",` +
			`"expires_after":"1day","retries":3,"retries_attempted":0,"retry_delays":null,"ended":false}`},
		{method: "GET", path: "/queue/demo/job", status: 200, advance: time.Second,
			want: `{"id":1,"input":{"n":[1,2.50],"url":"https://example.com/a?b=1"}}`},
		{method: "GET", path: "/queue/demo/size", status: 200, want: `0`},
		{method: "GET", path: "/queue/demo/job", status: 204, want: ``},
		{method: "PUT", path: "/job/1/heartbeat", status: 204, advance: 2 * time.Second},
		{method: "PUT", path: "/job/1/output", body: `{"progress":50}`, status: 204},
		{method: "GET", path: "/job/1/output", status: 200, want: `{"progress":50}`},
		{method: "GET", path: "/job/1/status", status: 200, want: `"running"`},
		{method: "PATCH", path: "/job/1", body: `{"status":"completed","output":{"progress":100,"result":"ok"}}`, status: 204, advance: time.Second},
		{method: "GET", path: "/job/1/status", status: 200, want: `"completed"`},
		{method: "GET", path: "/job/1/output", status: 200, want: `{"progress":100,"result":"ok"}`},
		{method: "GET", path: "/job/1", status: 200, want: `{"id":1,"queue":"demo","status":"completed","tags":["crawl"],` +
			`"created_at":"` + created + `","started_at":"` + started + `","ended_at":"` + ended + `","last_heartbeat":"` + beat + `",` +
			`"input":{"n":[1,2.50],"url":"https://example.com/a?b=1"},"output":{"progress":100,"result":"ok"},"timeout":"10m",` +
			`"heartbeat_timeout":"1m","expires_after":"1day","retries":3,"retries_attempted":0,"retry_delays":null,"ended":true}`},
		{method: "GET", path: "/job/1?fields=status,ended,started_at", status: 200,
			want: `{"status":"completed","ended":true,"started_at":"` + started + `"}`},
		{method: "GET", path: "/tag/crawl", status: 200, want: `[1]`},
		{method: "GET", path: "/queue/demo/job_ids", status: 200,
			want: `{"queued":[],"running":[],"failed":[],"completed":[1],"cancelled":[],"timed_out":[]}`},
		{method: "GET", path: "/info", status: 200, want: `{"queues":{"demo":{"queued":0,"running":0,"failed":0,"completed":1,` +
			`"cancelled":0,"timed_out":0}},"statistics":{"total_jobs_created":1,"total_jobs_completed":1,"total_jobs_retried":0,` +
			`"total_jobs_failed":0,"total_jobs_timed_out":0,"total_jobs_cancelled":0}}`},
		{method: "DELETE", path: "/job/1", status: 204},
		{method: "GET", path: "/job/1", status: 404, want: `Job with ID 1 does not exist`},
		{method: "DELETE", path: "/queue/demo", status: 204},
		{method: "GET", path: "/queue", status: 200, want: `[]`},
	}
	for _, s := range steps {
		env.clock.Advance(s.advance)
		req, err := http.NewRequest(s.method, srv.URL+s.path, strings.NewReader(s.body))
		if err != nil {
			t.Fatal(err)
		}
		if s.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", s.method, s.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != s.status || string(body) != s.want {
			t.Fatalf("%s %s = %d %s, want %d %s", s.method, s.path, resp.StatusCode, body, s.status, s.want)
		}
		wantType := ""
		switch {
		case s.status >= 400:
			wantType = textType
		case s.want != "":
			wantType = jsonType
		}
		if got := resp.Header.Get("Content-Type"); got != wantType {
			t.Errorf("%s %s: Content-Type = %q, want %q", s.method, s.path, got, wantType)
		}
		for k, v := range s.header {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s %s: %s = %q, want %q", s.method, s.path, k, got, v)
			}
		}
	}

	want := []string{
		"INFO job created job_id=1 queue=demo",
		"INFO job started job_id=1 queue=demo",
		"INFO job completed job_id=1",
	}
	if got := env.logs.lines(); !slices.Equal(got, want) {
		t.Errorf("logs = %q, want %q", got, want)
	}
}
