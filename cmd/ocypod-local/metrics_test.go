package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/metrics"
	"github.com/ocyless/ocyless/shared/redistest"
	"github.com/ocyless/ocyless/shared/sweep"
)

// sample returns the value of series (exactly as exposed, labels
// included) in a scrape, and whether it is there.
func sample(body, series string) (float64, bool) {
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// scrape is GET /metrics, which must answer 200 in the exposition format.
func (s *testServer) scrape(t *testing.T) string {
	t.Helper()
	code, body, h := s.send(t, "GET", "/metrics", "", nil)
	if code != http.StatusOK || h.Get("Content-Type") != metrics.ContentType {
		t.Fatalf("GET /metrics = %d %s\n%s\nlogs:\n%s", code, h.Get("Content-Type"), body, s.logs)
	}
	return body
}

// TestMetricsEndpoint: /metrics on the running local server shows a job
// that its own timeout sweep timed out, in the queue's gauges, the
// all-time counters and the sweep's figures, on both Redis backends.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	for name, env := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := start(t, e2eFile, env)
			s.want(t, "PUT", "/queue/mx", `{}`, 201, "")
			s.want(t, "POST", "/queue/mx/job", `{}`, 201, "*")
			id := s.want(t, "POST", "/queue/mx/job", `{"timeout":"1s"}`, 201, "*")
			s.want(t, "GET", "/queue/mx/job", "", 200, "*")
			s.want(t, "GET", "/queue/mx/job", "", 200, `{"id":`+id+`,"input":null}`)

			// The sweep's script ends before its pass is recorded: wait for
			// both.
			timedOut := `ocyless_queue_jobs{queue="mx",status="timed_out"}`
			swept := `ocyless_sweep_jobs_total{sweep="timeouts"}`
			deadline := time.Now().Add(10 * time.Second)
			var body string
			for {
				body = s.scrape(t)
				v, _ := sample(body, timedOut)
				n, _ := sample(body, swept)
				if v == 1 && n >= 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no timed-out job, or no sweep that timed it out, in the metrics after 10s:\n%s\nlogs:\n%s", body, s.logs)
				}
				time.Sleep(50 * time.Millisecond)
			}
			for series, want := range map[string]float64{
				`ocyless_queue_jobs{queue="mx",status="running"}`: 1,
				`ocyless_queue_jobs{queue="mx",status="queued"}`:  0,
				"ocyless_jobs_created_total":                      2,
				"ocyless_jobs_timed_out_total":                    1,
			} {
				if got, ok := sample(body, series); !ok || got != want {
					t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
				}
			}
			if _, ok := sample(body, `ocyless_queue_jobs{queue="empty",status="queued"}`); ok {
				t.Error("a queue without jobs has series")
			}
			for _, k := range sweep.Kinds {
				if got, ok := sample(body, `ocyless_sweep_duration_seconds_count{sweep="`+string(k)+`"}`); !ok || got < 1 {
					t.Errorf("%s sweep passes recorded = %v (present %v), want at least the first", k, got, ok)
				}
			}
			if _, ok := sample(body, "ocyless_oldest_due_seconds"); !ok {
				t.Errorf("no ocyless_oldest_due_seconds in\n%s", body)
			}
		})
	}
}

// TestMetricsGuarded: /metrics sits behind the Host and Origin checks like
// every route.
func TestMetricsGuarded(t *testing.T) {
	t.Parallel()
	s := start(t, "[server]\nport = 0\n", nil)
	s.wantForbidden(t, "GET", "/metrics", "", map[string]string{"Host": "evil.example"}, `Host "evil.example" is not allowed`)
	s.wantForbidden(t, "GET", "/metrics", "", map[string]string{"Origin": "https://evil.example"}, "evil.example")
	s.wantForbidden(t, "GET", "/metrics", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, "cross-site")
	if code, _, h := s.send(t, "POST", "/metrics", "", nil); code != http.StatusMethodNotAllowed || h.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /metrics = %d Allow %q, want 405 GET, HEAD", code, h.Get("Allow"))
	}
	s.want(t, "GET", "/metrics/", "", 404, "*")
}

// TestMetricsRedisDown: with its Redis stopped, the local server answers a
// scrape with 503 within the Redis timeout plus a margin.
func TestMetricsRedisDown(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	s := start(t, "[server]\nport = 0\n[redis]\nurl = \"${REDIS_URL}\"\ntimeout = \"1s\"\n",
		map[string]string{"REDIS_URL": srv.URL()})
	s.scrape(t)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	code, body, _ := s.send(t, "GET", "/metrics", "", nil)
	took := time.Since(begin)
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if code != http.StatusServiceUnavailable || body != "Failed to connect to Redis: timed out" {
		t.Errorf("GET /metrics with Redis hung = %d %q, want 503 Failed to connect to Redis: timed out", code, body)
	}
	if took > time.Second+2*time.Second {
		t.Errorf("the 503 took %v, want about the 1s Redis timeout", took)
	}
	if !strings.Contains(s.logs.String(), "metrics scrape failed") {
		t.Errorf("the failed scrape is not logged:\n%s", s.logs)
	}
}
