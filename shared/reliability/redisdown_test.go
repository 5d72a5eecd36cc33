package reliability

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

const redisTimeout = 300 * time.Millisecond

// apiOn serves the whole API over a store on srv whose Redis calls time out
// after timeout (0: the client's defaults).
func apiOn(t *testing.T, srv *redistest.Server, timeout time.Duration) *httptest.Server {
	t.Helper()
	rdb, err := redisstore.NewClient(redisstore.ClientOptions{URL: srv.URL(), DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	st, err := redisstore.New(rdb, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(httpapi.New(st, httpapi.Options{}).Handler())
	t.Cleanup(ts.Close)
	return ts
}

func do(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	c := &http.Client{Timeout: 10 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func startServer(t *testing.T, opts redistest.Options) *redistest.Server {
	t.Helper()
	srv, err := redistest.StartServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestRedisDownAndBack: while Redis is unreachable every route answers 503
// with a message, quickly; /health says unhealthy; when Redis returns (with
// its AOF) service resumes without a restart and the acknowledged job is
// still there.
func TestRedisDownAndBack(t *testing.T) {
	t.Parallel()
	srv := startServer(t, redistest.Options{AppendOnly: true})
	// The data is written through a server with the client's ordinary
	// timeouts: on a loaded machine a healthy Redis may take longer than
	// the short timeout under test, and that is not what this test is about.
	setup := apiOn(t, srv, 0).URL
	if code, body := do(t, "PUT", setup+"/queue/q", `{}`); code != 201 {
		t.Fatalf("create queue: %d %s", code, body)
	}
	if code, body := do(t, "POST", setup+"/queue/q/job", `{"input":1}`); code != 201 || body != "1" {
		t.Fatalf("create job: %d %s", code, body)
	}
	u := apiOn(t, srv, redisTimeout).URL

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	requests := []struct{ method, path, body string }{
		{"GET", "/info", ""},
		{"GET", "/tag/x", ""},
		{"GET", "/job/1/status", ""},
		{"GET", "/job/1/output", ""},
		{"PUT", "/job/1/output", `{"a":1}`},
		{"PUT", "/job/1/heartbeat", ""},
		{"GET", "/job/1", ""},
		{"PATCH", "/job/1", `{"status":"cancelled"}`},
		{"DELETE", "/job/1", ""},
		{"GET", "/queue/q/job_ids", ""},
		{"GET", "/queue/q/job", ""},
		{"POST", "/queue/q/job", `{}`},
		{"GET", "/queue/q/size", ""},
		{"GET", "/queue/q", ""},
		{"PUT", "/queue/q", `{}`},
		{"DELETE", "/queue/q", ""},
		{"GET", "/queue", ""},
	}
	var wg sync.WaitGroup
	for _, r := range requests {
		wg.Go(func() {
			start := time.Now()
			code, body := do(t, r.method, u+r.path, r.body)
			took := time.Since(start)
			if code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "Failed to connect to Redis: ") {
				t.Errorf("%s %s with Redis down = %d %q, want 503 with a message", r.method, r.path, code, body)
			}
			if took > 5*redisTimeout+time.Second {
				t.Errorf("%s %s took %v with Redis down", r.method, r.path, took)
			}
		})
	}
	wg.Wait()
	code, body := do(t, "GET", u+"/health", "")
	var h struct{ Status, Error string }
	if err := json.Unmarshal([]byte(body), &h); code != 503 || err != nil || h.Status != "unhealthy" || h.Error == "" {
		t.Errorf("/health with Redis down = %d %s", code, body)
	}
	if code, body := do(t, "GET", u+"/info/version", ""); code != 200 || body != `"0.8.0"` {
		t.Errorf("/info/version = %d %s; it does not need Redis", code, body)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// Service resumes on the same server (and its short timeouts): poll
	// until both answer, since a loaded machine may time out a first try.
	var jobCode int
	var jobBody string
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body = do(t, "GET", u+"/health", "")
		if code == 200 {
			jobCode, jobBody = do(t, "GET", u+"/job/1?fields=id,queue,status,input", "")
			if jobCode != 503 {
				break
			}
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // polling a real process coming back; no clock to inject
	}
	if code != 200 || body != `{"status":"healthy"}` {
		t.Fatalf("/health after Redis returned = %d %s", code, body)
	}
	if jobCode != 200 || jobBody != `{"id":1,"queue":"q","status":"queued","input":1}` {
		t.Fatalf("job after restart = %d %s", jobCode, jobBody)
	}
}

// TestAOFKeepsAcknowledgedJobs: with appendonly + fsync always, every job
// whose creation was acknowledged survives a kill -9 of Redis.
func TestAOFKeepsAcknowledgedJobs(t *testing.T) {
	t.Parallel()
	srv := startServer(t, redistest.Options{AppendOnly: true})
	ctx := t.Context()
	newSt := func() *redisstore.Store {
		rdb, err := redisstore.NewClient(redisstore.ClientOptions{URL: srv.URL(), PoolSize: 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rdb.Close() })
		st, err := redisstore.New(rdb, redisstore.Options{Namespace: "aof"})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := newSt()
	if _, err := st.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var acked []uint64
	var wg sync.WaitGroup
	for w := range 20 {
		wg.Go(func() {
			for i := range 25 {
				c, err := st.CreateJob(ctx, "q", ocypod.JobSpec{Input: json.RawMessage(fmt.Sprintf(`{"w":%d,"i":%d}`, w, i))})
				id := c.ID
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := srv.Stop(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	st = newSt()
	for _, id := range acked {
		if s, err := st.JobStatus(ctx, id); err != nil || s != ocypod.StatusQueued {
			t.Fatalf("job %d after restart: %s, %v", id, s, err)
		}
	}
	if n, err := st.QueueSize(ctx, "q"); err != nil || n != uint64(len(acked)) {
		t.Fatalf("queue size after restart = %d, %v; want %d", n, err, len(acked))
	}
}
