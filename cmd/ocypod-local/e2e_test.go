package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// testServer is a run() in a goroutine, reached over real HTTP.
type testServer struct {
	base   string
	logs   *syncBuffer
	cancel context.CancelFunc
	done   chan error

	once sync.Once
	err  error

	// arrived counts the requests that reached the server, by method and
	// path; wake is closed and replaced at each one.
	mu      sync.Mutex
	arrived map[string]int
	wake    chan struct{}

	// store and rdb are the server's store and Redis client.
	store *redisstore.Store
	rdb   redis.UniversalClient
}

// start runs the server with the configuration file text (and getenv over
// env) until the test ends, and waits until it listens.
func start(t *testing.T, file string, env map[string]string) *testServer {
	t.Helper()
	path := writeFile(t, file)
	ctx, cancel := context.WithCancel(t.Context())
	s := &testServer{logs: &syncBuffer{}, cancel: cancel, done: make(chan error, 1),
		arrived: map[string]int{}, wake: make(chan struct{})}
	addr := make(chan string, 1)
	h := hooks{listening: func(a string) { addr <- a }, request: s.arrive,
		opened: func(st *redisstore.Store, rdb redis.UniversalClient) { s.store, s.rdb = st, rdb }}
	go func() {
		s.done <- runWith(ctx, []string{path}, envOf(env), io.Discard, s.logs, h)
	}()
	select {
	case a := <-addr:
		s.base = "http://" + a
	case err := <-s.done:
		cancel()
		t.Fatalf("run returned before listening: %v\n%s", err, s.logs)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatalf("server did not start\n%s", s.logs)
	}
	t.Cleanup(func() { _ = s.stop(t) })
	return s
}

// stop cancels run's context and returns its result.
func (s *testServer) stop(t *testing.T) error {
	t.Helper()
	s.once.Do(func() {
		s.cancel()
		select {
		case s.err = <-s.done:
		case <-time.After(20 * time.Second):
			s.err = fmt.Errorf("run did not return after cancel")
		}
	})
	return s.err
}

// arrive records that r reached the server.
func (s *testServer) arrive(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.arrived[r.Method+" "+r.URL.Path]++
	close(s.wake)
	s.wake = make(chan struct{})
}

// inFlight sends a request without a body in the background and returns
// once the server has it, with the channel that delivers its status code
// (0 if it failed).
func (s *testServer) inFlight(t *testing.T, method, path string) <-chan int {
	t.Helper()
	key := method + " " + path
	s.mu.Lock()
	before := s.arrived[key]
	s.mu.Unlock()
	got := make(chan int, 1)
	go func() {
		code, _ := s.doErr(method, path, "")
		got <- code
	}()
	timeout := time.After(20 * time.Second)
	for {
		s.mu.Lock()
		n, wake := s.arrived[key], s.wake
		s.mu.Unlock()
		if n > before {
			return got
		}
		select {
		case <-wake:
		case <-timeout:
			t.Fatalf("%s never reached the server\n%s", key, s.logs)
		}
	}
}

var client = &http.Client{Timeout: 10 * time.Second}

// doErr sends a request (a JSON body if body is not empty) and returns the
// status code and body; code 0 means the request failed.
func (s *testServer) doErr(method, path, body string) (int, string) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		return 0, err.Error()
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(b)
}

func (s *testServer) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	code, got := s.doErr(method, path, body)
	if code == 0 {
		t.Fatalf("%s %s: %s", method, path, got)
	}
	return code, got
}

// want checks one request's status and, unless wantBody is "*", its body.
func (s *testServer) want(t *testing.T, method, path, body string, wantCode int, wantBody string) string {
	t.Helper()
	code, got := s.do(t, method, path, body)
	if code != wantCode || wantBody != "*" && got != wantBody {
		t.Fatalf("%s %s %s = %d %q, want %d %q\nlogs:\n%s", method, path, body, code, got, wantCode, wantBody, s.logs)
	}
	return got
}

// waitFor polls GET path until its body is want (or, for want "404", the
// status is 404), for at most limit.
func (s *testServer) waitFor(t *testing.T, path, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		code, got := s.do(t, "GET", path, "")
		if want == "404" && code == 404 || code == 200 && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s = %d %q after %s, want %s\nlogs:\n%s", path, code, got, limit, want, s.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// e2eFile is the configuration of the end-to-end tests: any free port,
// quick sweeps, a configured queue, and a short next_job_delay.
const e2eFile = `
[server]
host = "127.0.0.1"
port = 0
timeout_check_interval = "100ms"
retry_check_interval = "100ms"
expiry_check_interval = "100ms"
next_job_delay = "300ms"
shutdown_timeout = "5s"
log_level = "debug"

[redis]
url = "${REDIS_URL=}"
key_namespace = "${NS=}"

[queue.configured]
timeout = "2m"
retries = 2
retry_delays = ["1s", "5s"]

[queue.empty]
`

// backends are the two Redis setups: the embedded miniredis (no URL) and a
// real redis-server with a namespace of the test's own.
func backends(t *testing.T) map[string]map[string]string {
	return map[string]map[string]string{
		"miniredis":    {},
		"redis-server": {"REDIS_URL": redistest.Shared(t).URL(), "NS": redistest.Namespace(t)},
	}
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	for name, env := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := start(t, e2eFile, env)
			if !strings.Contains(s.logs.String(), "Starting queue server at: "+strings.TrimPrefix(s.base, "http://")) {
				t.Errorf("no 'Starting queue server at' line in the logs:\n%s", s.logs)
			}
			if name == "miniredis" && !strings.Contains(s.logs.String(), "in memory only") {
				t.Errorf("no warning that the data is in memory only:\n%s", s.logs)
			}
			s.want(t, "GET", "/queue/configured", "", 200,
				`{"timeout":"2m","heartbeat_timeout":"0s","expires_after":"5m","retries":2,"retry_delays":["1s","5s"]}`)
			t.Run("group", func(t *testing.T) {
				t.Run("quickstart", func(t *testing.T) { t.Parallel(); quickstart(t, s) })
				t.Run("timeout", func(t *testing.T) { t.Parallel(); timeout(t, s) })
				t.Run("retry", func(t *testing.T) { t.Parallel(); retry(t, s) })
				t.Run("expiry", func(t *testing.T) { t.Parallel(); expiry(t, s) })
			})
			gracefulShutdown(t, s)
		})
	}
}

// quickstart is Ocypod's README walk-through.
func quickstart(t *testing.T, s *testServer) {
	s.want(t, "GET", "/health", "", 200, `{"status":"healthy"}`)
	s.want(t, "GET", "/info/version", "", 200, `"0.8.0"`)
	s.want(t, "PUT", "/queue/demo", `{"timeout":"10m","heartbeat_timeout":"1m","expires_after":"5m","retries":3}`, 201, "")
	s.want(t, "GET", "/queue/demo", "", 200,
		`{"timeout":"10m","heartbeat_timeout":"1m","expires_after":"5m","retries":3,"retry_delays":[]}`)
	id := s.want(t, "POST", "/queue/demo/job", `{"input":{"key2":"value","key1":[1,2,3]},"tags":["quick"]}`, 201, "*")
	s.want(t, "GET", "/queue/demo/size", "", 200, "1")
	s.want(t, "GET", "/job/"+id+"/status", "", 200, `"queued"`)
	s.want(t, "GET", "/queue/demo/job", "", 200, `{"id":`+id+`,"input":{"key1":[1,2,3],"key2":"value"}}`)
	s.want(t, "GET", "/job/"+id+"/status", "", 200, `"running"`)
	s.want(t, "PUT", "/job/"+id+"/heartbeat", "", 204, "")
	s.want(t, "PUT", "/job/"+id+"/output", `{"result":"ok","progress":100}`, 204, "")
	s.want(t, "PATCH", "/job/"+id, `{"status":"completed"}`, 204, "")
	s.want(t, "GET", "/job/"+id+"/status", "", 200, `"completed"`)
	s.want(t, "GET", "/job/"+id+"/output", "", 200, `{"progress":100,"result":"ok"}`)
	s.want(t, "GET", "/job/"+id+"?fields=id,queue,status,tags,ended", "", 200,
		`{"id":`+id+`,"queue":"demo","status":"completed","tags":["quick"],"ended":true}`)
	s.want(t, "GET", "/tag/quick", "", 200, "["+id+"]")
	// The queue is empty now: next_job_delay, then 204.
	begin := time.Now()
	s.want(t, "GET", "/queue/demo/job", "", 204, "")
	if d := time.Since(begin); d < 250*time.Millisecond {
		t.Errorf("empty queue answered after %s, want next_job_delay 300ms", d)
	}
	s.want(t, "PATCH", "/job/"+id, `{"status":"queued"}`, 409, "Cannot change status from completed to queued")
}

// timeout: a running job without heartbeats past its 1s timeout is failed
// as timed_out by the timeout sweep.
func timeout(t *testing.T, s *testServer) {
	s.want(t, "PUT", "/queue/to", `{}`, 201, "")
	id := s.want(t, "POST", "/queue/to/job", `{"timeout":"1s"}`, 201, "*")
	s.want(t, "GET", "/queue/to/job", "", 200, `{"id":`+id+`,"input":null}`)
	s.waitFor(t, "/job/"+id+"/status", `"timed_out"`, 10*time.Second)
	s.want(t, "PUT", "/job/"+id+"/heartbeat", "", 409, "Cannot heartbeat job "+id+", job is not running")
}

// retry: a failed job with retries and a 1s retry delay is requeued by the
// retry sweep after the delay, not before.
func retry(t *testing.T, s *testServer) {
	s.want(t, "PUT", "/queue/re", `{}`, 201, "")
	id := s.want(t, "POST", "/queue/re/job", `{"retries":1,"retry_delays":["1s"]}`, 201, "*")
	s.want(t, "GET", "/queue/re/job", "", 200, `{"id":`+id+`,"input":null}`)
	s.want(t, "PATCH", "/job/"+id, `{"status":"failed"}`, 204, "")
	s.want(t, "GET", "/job/"+id+"?fields=status,retries_attempted,ended", "", 200,
		`{"status":"failed","retries_attempted":0,"ended":false}`)
	s.waitFor(t, "/job/"+id+"/status", `"queued"`, 10*time.Second)
	s.want(t, "GET", "/job/"+id+"?fields=status,retries_attempted", "", 200, `{"status":"queued","retries_attempted":1}`)
	s.want(t, "GET", "/queue/re/job", "", 200, `{"id":`+id+`,"input":null}`)
	s.want(t, "PATCH", "/job/"+id, `{"status":"failed"}`, 204, "")
	s.want(t, "GET", "/job/"+id+"?fields=ended", "", 200, `{"ended":true}`) // retries used up
}

// expiry: a completed job is deleted once its 1s expires_after has passed.
func expiry(t *testing.T, s *testServer) {
	s.want(t, "PUT", "/queue/ex", `{}`, 201, "")
	id := s.want(t, "POST", "/queue/ex/job", `{"expires_after":"1s","tags":["gone"]}`, 201, "*")
	s.want(t, "GET", "/queue/ex/job", "", 200, `{"id":`+id+`,"input":null}`)
	s.want(t, "PATCH", "/job/"+id, `{"status":"completed"}`, 204, "")
	s.want(t, "GET", "/job/"+id+"/status", "", 200, `"completed"`)
	s.waitFor(t, "/job/"+id+"/status", "404", 10*time.Second)
	s.want(t, "GET", "/tag/gone", "", 200, "[]")
}

// gracefulShutdown cancels run's context while a request is waiting out
// next_job_delay: the request completes, then run returns nil and the port
// is closed.
func gracefulShutdown(t *testing.T, s *testServer) {
	// A connection the client dialled but never used would hold Shutdown
	// for 5s (net/http's grace for new connections).
	client.CloseIdleConnections()
	got := s.inFlight(t, "GET", "/queue/empty/job")
	if err := s.stop(t); err != nil {
		t.Fatalf("run after cancel = %v, want nil\n%s", err, s.logs)
	}
	if code := <-got; code != 204 {
		t.Errorf("request in flight during shutdown = %d, want 204", code)
	}
	if code, _ := s.doErr("GET", "/health", ""); code != 0 {
		t.Errorf("server still answers after run returned")
	}
}

// TestQueuesFromConfig checks the [queue.*] start-up rules on a persistent
// Redis: missing queues are created, differing ones reset, equal ones left
// alone, and queues no longer configured kept.
func TestQueuesFromConfig(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REDIS_URL": redistest.Shared(t).URL(), "NS": redistest.Namespace(t)}
	file := "[server]\nport = 0\nlog_level = \"debug\"\n[redis]\nurl = \"${REDIS_URL}\"\nkey_namespace = \"${NS}\"\n"

	s := start(t, file+"[queue.a]\nretries = 1\n[queue.b]\n", env)
	s.want(t, "PUT", "/queue/b", `{"retries":5}`, 204, "")
	s.want(t, "PUT", "/queue/c", `{}`, 201, "")
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`"Queue created from configuration" queue=a`, `"Queue created from configuration" queue=b`} {
		if !strings.Contains(s.logs.String(), line) {
			t.Errorf("first start: no %s in\n%s", line, s.logs)
		}
	}

	s = start(t, file+"[queue.a]\nretries = 1\n[queue.b]\n", env)
	s.want(t, "GET", "/queue/b", "", 200, `{"timeout":"5m","heartbeat_timeout":"0s","expires_after":"5m","retries":0,"retry_delays":[]}`)
	s.want(t, "GET", "/queue", "", 200, `["a","b","c"]`)
	logs := s.logs.String()
	if !strings.Contains(logs, `"Queue updated from configuration" queue=b`) ||
		!strings.Contains(logs, `"Queue settings up to date" queue=a`) || strings.Contains(logs, "queue=c") {
		t.Errorf("second start: want b updated, a untouched, c ignored:\n%s", logs)
	}
	var names []string
	_, body := s.do(t, "GET", "/queue", "")
	if err := json.Unmarshal([]byte(body), &names); err != nil || len(names) != 3 {
		t.Errorf("GET /queue = %s", body)
	}
}
