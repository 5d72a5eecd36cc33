package lambdamain_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/internal/deploygen"
	"github.com/ocyless/ocyless/shared/deploytest"
	"github.com/ocyless/ocyless/shared/lambdamain"
	"github.com/ocyless/ocyless/shared/lambdamain/dispatchmain"
	"github.com/ocyless/ocyless/shared/lambdamain/wake"
	"github.com/ocyless/ocyless/shared/metrics/emf"
	"github.com/ocyless/ocyless/shared/redistest"
)

// recorder is an httptest server that records what reaches it.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
	got  chan recorded
}

type recorded struct {
	Path    string
	Header  http.Header
	Body    []byte
	Invoked string // X-Amz-Invocation-Type
}

func newRecorder(t *testing.T, answer func(body []byte) (int, string)) *recorder {
	r := &recorder{got: make(chan recorded, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		rec := recorded{Path: req.URL.Path, Header: req.Header.Clone(), Body: body, Invoked: req.Header.Get("X-Amz-Invocation-Type")}
		r.mu.Lock()
		r.reqs = append(r.reqs, rec)
		r.mu.Unlock()
		r.got <- rec
		status, text := answer(body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, text)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) next(t *testing.T, what string) recorded {
	t.Helper()
	select {
	case rec := <-r.got:
		return rec
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s arrived", what)
		return recorded{}
	}
}

// TestDispatcherEndToEnd builds the create, queue and dispatcher
// bootstraps and runs them against the fake Lambda Runtime API, a private
// redis-server, a fake Lambda API (the create's wake) and an HTTP push
// target on loopback (allowed by OCYPOD_PUSH_LOCAL): a create into a push
// queue wakes the dispatcher with an asynchronous invoke, the dispatcher
// run with that event delivers the job signed and records its output; the
// scheduled event delivers a job whose target fails and reports it in its
// metrics line; a create whose wake cannot reach the Lambda API still
// answers 201.
func TestDispatcherEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: builds and runs bootstraps")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the bootstraps are linux binaries")
	}
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	root := deploytest.RepoRoot(t)
	dir := t.TempDir() + string(filepath.Separator)
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-buildvcs=false", "-o", dir,
		"./functions/put-queue", "./functions/create-job", "./functions/job-status", "./functions/get-job-output", "./"+deploygen.DispatcherDir)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	e := &e2e{t: t, root: root, procs: map[string]*deploytest.Process{}, bins: map[string]string{}}
	for _, name := range []string{"put-queue", "create-job", "job-status", "get-job-output", deploygen.DispatcherDir} {
		e.bins[name] = filepath.Join(dir, name)
	}

	target := newRecorder(t, func(body []byte) (int, string) {
		if strings.Contains(string(body), `"fail"`) {
			return http.StatusInternalServerError, `{"error":"no"}`
		}
		return http.StatusOK, `{"done":true}`
	})
	lambdaAPI := newRecorder(t, func([]byte) (int, string) { return http.StatusAccepted, "" })
	e.env = []string{
		"AWS_LAMBDA_LOG_FORMAT=JSON", "AWS_LAMBDA_LOG_LEVEL=DEBUG", "AWS_REGION=eu-west-1",
		"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=s3cr3t", "AWS_SESSION_TOKEN=tok",
		"OCYPOD_REDIS_URL=" + srv.URL(), "OCYPOD_KEY_NAMESPACE=" + redistest.Namespace(t),
		lambdamain.EnvPushLocal + "=true", "OCYPOD_PUSH_ALLOWED_HOSTS=127.0.0.1",
		wake.EnvDispatcher + "=" + deploygen.DispatcherID, wake.EnvEndpoint + "=" + lambdaAPI.URL,
	}

	q := map[string]string{"name": "work"}
	expect(t, "PUT /queue/work", e.call("put-queue", e.request("put-queue", q,
		`{"push":{"url":"`+target.URL+`/jobs","secret":"0123456789abcdef0123"}}`, "")), http.StatusCreated, "")
	// The queue change woke the dispatcher too: an invoke per instance and
	// interval at most.
	lambdaAPI.next(t, "wake after the queue change")

	created := e.call("create-job", e.request("create-job", q, `{"input":{"n":1}}`, ""))
	expect(t, "POST /queue/work/job", created, http.StatusCreated, "-")
	woke := lambdaAPI.next(t, "wake after the create")
	if woke.Invoked != "Event" || woke.Path != "/2015-03-31/functions/"+deploygen.DispatcherID+"/invocations" {
		t.Fatalf("wake = %s %q, want an Event invoke of the dispatcher", woke.Path, woke.Invoked)
	}

	// The dispatcher gets the wake's payload, as Lambda would hand it.
	run := func(payload []byte) dispatchmain.Summary {
		t.Helper()
		res, err := e.proc(deploygen.DispatcherDir).Invoke(t.Context(), payload, 30*time.Second)
		if err != nil || res.IsError {
			t.Fatalf("dispatcher: %v %s", err, res.Body)
		}
		var s dispatchmain.Summary
		if err := json.Unmarshal(res.Body, &s); err != nil {
			t.Fatalf("dispatcher answer %s: %v", res.Body, err)
		}
		return s
	}
	s := run(woke.Body)
	if s.Taken != 1 || s.Completed != 1 || s.Failed != 0 {
		t.Errorf("dispatcher run after the wake = %+v, want 1 job taken and completed", s)
	}
	del := target.next(t, "delivery")
	if del.Header.Get("Ocyless-Job-Id") != created.Body || !strings.HasPrefix(del.Header.Get("Ocyless-Signature"), "t=") ||
		!strings.Contains(string(del.Body), `"input":{"n":1}`) {
		t.Errorf("delivery %s %v, want job %s signed with its input", del.Body, del.Header, created.Body)
	}
	job := map[string]string{"id": created.Body}
	expect(t, "GET status", e.call("job-status", e.request("job-status", job, "", "")), http.StatusOK, `"completed"`)
	expect(t, "GET output", e.call("get-job-output", e.request("get-job-output", job, "", "")), http.StatusOK, `{"done":true}`)

	// The scheduled event: a job whose target fails is delivered, failed,
	// and counted in the run's metrics line.
	failing := e.call("create-job", e.request("create-job", q, `{"input":{"fail":true}}`, ""))
	expect(t, "POST failing job", failing, http.StatusCreated, "-")
	sample, err := os.ReadFile(filepath.Join(root, deploygen.DispatcherEvent))
	if err != nil {
		t.Fatal(err)
	}
	if s := run(sample); s.Taken != 1 || s.Failed != 1 || s.Completed != 0 {
		t.Errorf("scheduled dispatcher run = %+v, want 1 job taken and failed", s)
	}
	target.next(t, "failing delivery")
	expect(t, "GET failing status", e.call("job-status", e.request("job-status", map[string]string{"id": failing.Body}, "", "")),
		http.StatusOK, `"failed"`)
	var lines []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		// Written just before the answer, read by a goroutine of its
		// own: poll, with a deadline (a real process).
		lines = lines[:0]
		for line := range strings.SplitSeq(e.proc(deploygen.DispatcherDir).Output(), "\n") {
			if strings.Contains(line, `"_aws"`) {
				lines = append(lines, line)
			}
		}
		if len(lines) == 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d EMF lines after two runs, want 2", len(lines))
	}
	f := parseEMF(t, []byte(lines[1]+"\n"))
	if f.values[emf.PushFailedJobs] != 1 || f.values[emf.PushDeliveredJobs] != 0 || f.dims[emf.PushFailedJobs][emf.DimKeyNamespace] == "" {
		t.Errorf("EMF line %s: want 1 failed job, none delivered, with its KeyNamespace", lines[1])
	}
	if strings.Contains(e.proc(deploygen.DispatcherDir).Output(), "0123456789abcdef0123") {
		t.Error("the push secret reached the dispatcher's log")
	}

	// A wake that cannot reach the Lambda API fails nothing.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	_ = ln.Close()
	bad := deploytest.Start(t, "create-job-no-lambda-api", e.bins["create-job"], append(append([]string(nil), e.env...), wake.EnvEndpoint+"="+closed))
	res, err := bad.Invoke(t.Context(), e.request("create-job", q, `{"input":{"n":2}}`, ""), 10*time.Second)
	if err != nil || res.IsError {
		t.Fatalf("create with the Lambda API down: %v %s", err, res.Body)
	}
	var resp apiResponse
	if err := json.Unmarshal(res.Body, &resp); err != nil || resp.StatusCode != http.StatusCreated {
		t.Errorf("create with the Lambda API down = %s, want 201", res.Body)
	}
}
