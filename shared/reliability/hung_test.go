package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// hungTimeout is the Redis timeout of the tests where Redis hangs.
const hungTimeout = time.Second

// hungMargin is how much later than hungTimeout a 503 may come: HTTP and
// scheduling on a loaded machine. Well below hungTimeout, so a request
// that waits for a pooled connection and then for its own read (twice the
// timeout) fails the test.
const hungMargin = 700 * time.Millisecond

// syncBuffer is a log sink for concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// hungAPI serves the API over a private redis-server with hungTimeout as
// the Redis timeout and the client's default pool; the log goes to logs.
func hungAPI(t *testing.T) (*redistest.Server, *httptest.Server, *syncBuffer, *redis.Client) {
	t.Helper()
	srv := startServer(t, redistest.Options{})
	rdb, err := redisstore.NewClient(redisstore.ClientOptions{URL: srv.URL(),
		DialTimeout: hungTimeout, ReadTimeout: hungTimeout, WriteTimeout: hungTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	// Each call on a connection of its own, as a Lambda function sends
	// them: these tests hold a given number of calls in flight on a hung
	// Redis. (Pipelined calls share connections; what a hung Redis does to
	// them is tested with the pipeline, in redisstore.)
	st, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t), AutoPipeline: -1})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h := httpapi.New(st, httpapi.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}).Handler()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = srv.Resume() }) // before Close, which kills it either way
	return srv, ts, logs, rdb.(*redis.Client)
}

// waitHealthy polls /health until Redis answers again.
func waitHealthy(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := do(t, "GET", url+"/health", "")
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health after Redis resumed = %d %s", code, body)
		}
		time.Sleep(20 * time.Millisecond) // a real process catching up; no clock to inject
	}
}

// TestHungRedisConcurrent: with Redis hung (SIGSTOP), 60 concurrent
// requests, three times the connection pool, all answer 503 within the
// Redis timeout plus a margin, with a fixed text that names no address;
// the cause is logged. When Redis continues, everything works again.
func TestHungRedisConcurrent(t *testing.T) {
	t.Parallel()
	srv, ts, logs, _ := hungAPI(t)
	u := ts.URL
	if code, body := do(t, "PUT", u+"/queue/q", `{}`); code != 201 {
		t.Fatalf("create queue: %d %s", code, body)
	}
	if code, body := do(t, "POST", u+"/queue/q/job", `{"input":0}`); code != 201 || body != "1" {
		t.Fatalf("create job: %d %s", code, body)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	requests := []struct{ method, path, body string }{
		{"POST", "/queue/q/job", `{"input":1}`},
		{"GET", "/queue/q/job", ""},
		{"GET", "/job/1", ""},
		{"GET", "/job/1/status", ""},
		{"PUT", "/job/1/heartbeat", ""},
		{"GET", "/queue/q/size", ""},
	}
	const n = 60
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for i := range n {
		r := requests[i%len(requests)]
		wg.Go(func() {
			start := time.Now()
			code, body := do(t, r.method, u+r.path, r.body)
			took := time.Since(start)
			mu.Lock()
			slowest = max(slowest, took)
			mu.Unlock()
			if code != http.StatusServiceUnavailable || body != "Failed to connect to Redis: timed out" {
				t.Errorf("%s %s with Redis hung = %d %q", r.method, r.path, code, body)
			}
			if took > hungTimeout+hungMargin {
				t.Errorf("%s %s answered after %v, want at most %v", r.method, r.path, took, hungTimeout+hungMargin)
			}
		})
	}
	wg.Wait()
	t.Logf("slowest 503 after %v", slowest)
	if l := logs.String(); !strings.Contains(l, "i/o timeout") && !strings.Contains(l, "deadline exceeded") {
		t.Errorf("the log does not name the cause:\n%s", l)
	}

	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	waitHealthy(t, u)
	if code, body := do(t, "GET", u+"/job/1/status", ""); code != 200 {
		t.Fatalf("job status after Redis resumed = %d %s", code, body)
	}
	if code, body := do(t, "POST", u+"/queue/q/job", `{"input":2}`); code != 201 {
		t.Fatalf("create job after Redis resumed = %d %s", code, body)
	}
	var wg2 sync.WaitGroup
	for range n {
		wg2.Go(func() {
			if code, body := do(t, "GET", u+"/queue/q/size", ""); code != 200 {
				t.Errorf("queue size after Redis resumed = %d %s", code, body)
			}
		})
	}
	wg2.Wait()
}

// TestUnavailableMayHaveHappened backs the README's delivery section: a
// create or a take that answered 503 because Redis hung after the command
// was sent is applied once Redis continues. Creates: their jobs exist.
// Take: the job it would have handed out is running, held by nobody, until
// its timeout.
func TestUnavailableMayHaveHappened(t *testing.T) {
	t.Parallel()
	srv, ts, _, rdb := hungAPI(t)
	u := ts.URL
	if code, body := do(t, "PUT", u+"/queue/q", `{"timeout":"10m"}`); code != 201 {
		t.Fatalf("create queue: %d %s", code, body)
	}
	if code, body := do(t, "POST", u+"/queue/q/job", `{"input":"before"}`); code != 201 || body != "1" {
		t.Fatalf("create job: %d %s", code, body)
	}
	// Redis must know both scripts (a NOSCRIPT reply would come too late),
	// and the pool must hold an open connection for each request: one that
	// has to dial first waits for the handshake's reply and never sends its
	// command. So 10 takes wait on a paused Redis until each holds a
	// connection of its own, then Redis continues and serves them.
	if code, body := do(t, "PUT", u+"/queue/empty", `{}`); code != 201 {
		t.Fatalf("create queue: %d %s", code, body)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	const conns = 10
	var warm sync.WaitGroup
	for range conns {
		warm.Go(func() {
			if code, body := do(t, "GET", u+"/queue/empty/job", ""); code != http.StatusNoContent {
				t.Errorf("take from an empty queue: %d %s", code, body)
			}
		})
	}
	for start := time.Now(); rdb.PoolStats().TotalConns < conns; {
		if time.Since(start) > hungTimeout/2 {
			t.Fatalf("the takes hold %d connections, want %d", rdb.PoolStats().TotalConns, conns)
		}
		time.Sleep(time.Millisecond) // until the takes hold their connections
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	warm.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	// One take, then creates, each on an open connection: they send their
	// script, then time out.
	if code, body := do(t, "GET", u+"/queue/q/job", ""); code != http.StatusServiceUnavailable {
		t.Fatalf("take with Redis hung = %d %s", code, body)
	}
	const creates = 8
	var wg sync.WaitGroup
	for i := range creates {
		wg.Go(func() {
			if code, body := do(t, "POST", u+"/queue/q/job", fmt.Sprintf(`{"input":%d}`, i)); code != http.StatusServiceUnavailable {
				t.Errorf("create %d with Redis hung = %d %s", i, code, body)
			}
		})
	}
	wg.Wait()
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	waitHealthy(t, u)

	if code, body := do(t, "GET", u+"/job/1/status", ""); code != 200 || body != `"running"` {
		t.Errorf("job 1 after a take that answered 503 = %d %s, want running", code, body)
	}
	code, body := do(t, "GET", u+"/queue/q/job_ids", "")
	var ids map[string][]uint64
	if err := json.Unmarshal([]byte(body), &ids); code != 200 || err != nil {
		t.Fatalf("job_ids = %d %s", code, body)
	}
	seen := map[string]bool{}
	for _, id := range ids["queued"] {
		code, body := do(t, "GET", fmt.Sprintf("%s/job/%d?fields=input", u, id), "")
		if code != 200 {
			t.Fatalf("job %d = %d %s", id, code, body)
		}
		seen[body] = true
	}
	applied := 0
	for i := range creates {
		if seen[fmt.Sprintf(`{"input":%d}`, i)] {
			applied++
		}
	}
	t.Logf("%d of %d creates that answered 503 were applied", applied, creates)
	if applied == 0 {
		t.Errorf("no create that answered 503 was applied (queued jobs %v); the README says they may be", ids["queued"])
	}
	if len(ids["queued"]) != applied {
		t.Errorf("queued jobs %v, want the %d applied creates only", ids["queued"], applied)
	}
}
