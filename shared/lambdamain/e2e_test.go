package lambdamain_test

import (
	"encoding/json"
	"fmt"
	"net/http"
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
	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/metrics/emf"
	"github.com/ocyless/ocyless/shared/redistest"
)

// e2e holds the end-to-end test's shared state: the built bootstraps, the
// Redis server, and one running process per function (warm, reused).
type e2e struct {
	t     *testing.T
	root  string
	bins  map[string]string // function dir name (create-job, timeouts) -> binary
	env   []string
	mu    sync.Mutex
	procs map[string]*deploytest.Process
}

// buildBootstraps builds every function for the host: one through its
// Makefile target, exactly as sam build would run it, the others in one go
// build with the same flags (much faster than a build per function).
func buildBootstraps(t *testing.T, repoRoot string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	start := time.Now()
	viaMake := filepath.Join(dir, "CreateJobFunction")
	cmd := exec.Command("make", "-s", "-C", repoRoot, "build-CreateJobFunction",
		"ARTIFACTS_DIR="+viaMake, "GOARCH_LAMBDA="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build-CreateJobFunction: %v\n%s", err, out)
	}
	all := filepath.Join(dir, "all") + string(filepath.Separator)
	cmd = exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-buildvcs=false",
		"-ldflags=-s -w -buildid=", "-o", all, "./functions/...", "./sweeper/...")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bins := map[string]string{"create-job": filepath.Join(viaMake, "bootstrap")}
	entries, err := os.ReadDir(all)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := bins[e.Name()]; !ok {
			bins[e.Name()] = filepath.Join(all, e.Name())
		}
	}
	var sizes []string
	for name, bin := range bins {
		if fi, err := os.Stat(bin); err == nil {
			sizes = append(sizes, fmt.Sprintf("%s=%.2fMB", name, float64(fi.Size())/1e6))
		}
	}
	t.Logf("built %d bootstraps in %v: %s", len(bins), time.Since(start).Round(time.Millisecond), strings.Join(sizes, " "))
	return bins
}

// proc returns the running process of a function, starting it on first use.
func (e *e2e) proc(name string) *deploytest.Process {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.procs[name]; ok {
		return p
	}
	bin, ok := e.bins[name]
	if !ok {
		e.t.Fatalf("no bootstrap for %s", name)
	}
	p := deploytest.Start(e.t, name, bin, e.env)
	e.procs[name] = p
	return p
}

// apiResponse is the payload 2.0 response, or the 1.0 one.
type apiResponse struct {
	StatusCode        int                 `json:"statusCode"`
	StatusDescription string              `json:"statusDescription"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	Body              string              `json:"body"`
}

// call invokes a function with payload and decodes its response.
func (e *e2e) call(name string, payload []byte) apiResponse {
	e.t.Helper()
	res, err := e.proc(name).Invoke(e.t.Context(), payload, 10*time.Second)
	if err != nil {
		e.t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		e.t.Fatalf("%s: invocation error %s: %s", name, res.ErrorType, res.Body)
	}
	var resp apiResponse
	if err := json.Unmarshal(res.Body, &resp); err != nil {
		e.t.Fatalf("%s: response %q: %v", name, res.Body, err)
	}
	return resp
}

// request builds an HTTP API payload 2.0 event for route name from its
// sample in events/: path values (sent decoded, as API Gateway does, in
// both rawPath and pathParameters), an optional JSON body and query.
func (e *e2e) request(name string, params map[string]string, body, query string) []byte {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, "events", name+".json"))
	if err != nil {
		e.t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(data, &ev); err != nil {
		e.t.Fatal(err)
	}
	var route httpapi.Route
	for _, r := range httpapi.Routes() {
		if r.Name == name {
			route = r
		}
	}
	path := route.Pattern
	pp := map[string]any{}
	for k, v := range params {
		path = strings.Replace(path, "{"+k+"}", v, 1)
		pp[k] = v
	}
	ev["rawPath"] = path
	ev["pathParameters"] = pp
	obj := func(m map[string]any, k string) map[string]any { return m[k].(map[string]any) }
	obj(obj(ev, "requestContext"), "http")["path"] = path
	ev["rawQueryString"] = query
	delete(ev, "queryStringParameters")
	headers := obj(ev, "headers")
	delete(headers, "content-length")
	if body != "" {
		ev["body"] = body
		headers["content-type"] = "application/json"
	} else {
		delete(ev, "body")
		delete(headers, "content-type")
	}
	out, err := json.Marshal(ev)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// expect checks a response's status and, unless wantBody is "-", its body.
func expect(t *testing.T, what string, resp apiResponse, wantStatus int, wantBody string) {
	t.Helper()
	if resp.StatusCode != wantStatus || (wantBody != "-" && resp.Body != wantBody) {
		t.Fatalf("%s = %d %q, want %d %q", what, resp.StatusCode, resp.Body, wantStatus, wantBody)
	}
}

// TestEndToEnd builds every bootstrap, runs them against a fake Lambda
// Runtime API and a real redis-server, and drives Ocypod's quickstart
// across the function binaries, a timeout sweep, a REST (1.0) event and
// every sample event.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test: builds and runs every bootstrap")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the bootstraps are linux binaries")
	}
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	root := deploytest.RepoRoot(t)
	e := &e2e{
		t:     t,
		root:  root,
		bins:  buildBootstraps(t, root),
		procs: map[string]*deploytest.Process{},
		env: []string{
			"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256",
			"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
			"AWS_LAMBDA_LOG_FORMAT=JSON",
			"AWS_LAMBDA_LOG_LEVEL=DEBUG",
			"AWS_REGION=eu-west-1",
			"OCYPOD_REDIS_URL=" + srv.URL(),
			"OCYPOD_KEY_NAMESPACE=" + redistest.Namespace(t),
			"OCYPOD_SWEEP_BUDGET=5s",
		},
	}

	// The quickstart: a queue, a job, a worker taking it, heartbeat,
	// progress, completion, and reading it all back.
	expect(t, "PUT /queue/demo", e.call("put-queue", e.request("put-queue", map[string]string{"name": "demo"},
		`{"timeout":"10m","heartbeat_timeout":"1m","expires_after":"1h"}`, "")), http.StatusCreated, "")
	created := e.call("create-job", e.request("create-job", map[string]string{"name": "demo"},
		`{"input":{"image":"cat.png"},"tags":["nightly batch"]}`, ""))
	expect(t, "POST /queue/demo/job", created, http.StatusCreated, "-")
	id := created.Body
	if created.Headers["Location"] != "/job/"+id {
		t.Errorf("Location = %q, want /job/%s", created.Headers["Location"], id)
	}
	job := map[string]string{"id": id}
	next := e.call("next-job", e.request("next-job", map[string]string{"name": "demo"}, "", ""))
	expect(t, "GET /queue/demo/job", next, http.StatusOK, `{"id":`+id+`,"input":{"image":"cat.png"}}`)
	if ct := next.Headers["Content-Type"]; !strings.HasPrefix(ct, "application/json") {
		t.Errorf("next-job Content-Type = %q", ct)
	}
	expect(t, "PUT heartbeat", e.call("heartbeat", e.request("heartbeat", job, "", "")), http.StatusNoContent, "")
	expect(t, "PUT output", e.call("set-job-output", e.request("set-job-output", job, `{"progress":50}`, "")), http.StatusNoContent, "")
	expect(t, "GET output", e.call("get-job-output", e.request("get-job-output", job, "", "")), http.StatusOK, `{"progress":50}`)
	expect(t, "GET status", e.call("job-status", e.request("job-status", job, "", "")), http.StatusOK, `"running"`)
	expect(t, "PATCH complete", e.call("update-job", e.request("update-job", job,
		`{"status":"completed","output":{"progress":100,"result":"ok"}}`, "")), http.StatusNoContent, "")
	expect(t, "GET status", e.call("job-status", e.request("job-status", job, "", "")), http.StatusOK, `"completed"`)
	expect(t, "GET output", e.call("get-job-output", e.request("get-job-output", job, "", "")), http.StatusOK, `{"progress":100,"result":"ok"}`)
	expect(t, "GET job", e.call("get-job", e.request("get-job", job, "", "fields=id,queue,status,tags")), http.StatusOK,
		`{"id":`+id+`,"queue":"demo","status":"completed","tags":["nightly batch"]}`)
	// A tag with a space arrives percent-decoded in rawPath.
	expect(t, "GET /tag/nightly batch", e.call("tag-jobs", e.request("tag-jobs", map[string]string{"name": "nightly batch"}, "", "")),
		http.StatusOK, "["+id+"]")

	// REST API (payload 1.0) event to the same binary.
	rest := fmt.Sprintf(`{"resource":"/job/{id}/status","path":"/job/%s/status","httpMethod":"GET",
		"headers":{"Accept":"application/json"},"multiValueHeaders":{"Accept":["application/json"]},
		"pathParameters":{"id":%q},"requestContext":{"resourcePath":"/job/{id}/status","httpMethod":"GET",
		"path":"/prod/job/%s/status","stage":"prod","identity":{"sourceIp":"203.0.113.7"}},"body":null,"isBase64Encoded":false}`, id, id, id)
	r1 := e.call("job-status", []byte(rest))
	expect(t, "REST GET status", r1, http.StatusOK, `"completed"`)
	if len(r1.MultiValueHeaders) == 0 {
		t.Errorf("REST response has no multiValueHeaders: %+v", r1)
	}

	// The internal load balancer's event to the same binaries: the path and
	// query as the client encoded them, multi-value headers.
	alb := fmt.Sprintf(`{"requestContext":{"elb":{"targetGroupArn":"arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/ocyless-tag-jobs/0123456789abcdef"}},
		"httpMethod":"GET","path":"/tag/nightly%%20batch","multiValueQueryStringParameters":{},
		"multiValueHeaders":{"accept":["application/json"],"host":["internal-ocyless-alb-1.eu-west-1.elb.amazonaws.com"]},"body":"","isBase64Encoded":false}`)
	ra := e.call("tag-jobs", []byte(alb))
	expect(t, "ALB GET /tag/nightly%20batch", ra, http.StatusOK, "["+id+"]")
	if ra.StatusDescription != "200 OK" || len(ra.MultiValueHeaders) == 0 {
		t.Errorf("ALB response %+v, want a status description and multi-value headers", ra)
	}
	ra = e.call("get-job", []byte(strings.Replace(strings.Replace(alb, "/tag/nightly%20batch", "/job/"+id, 1),
		`"multiValueQueryStringParameters":{}`, `"multiValueQueryStringParameters":{"fields":["id%2Cstatus"]}`, 1)))
	expect(t, "ALB GET /job?fields=id%2Cstatus", ra, http.StatusOK, `{"id":`+id+`,"status":"completed"}`)

	// A job with a 1 s timeout, taken by a worker, is timed out by one
	// sweeper invocation: it waits (within its budget) until the job is due.
	short := e.call("create-job", e.request("create-job", map[string]string{"name": "demo"}, `{"timeout":"1s"}`, ""))
	expect(t, "POST short job", short, http.StatusCreated, "-")
	expect(t, "GET next", e.call("next-job", e.request("next-job", map[string]string{"name": "demo"}, "", "")), http.StatusOK, `{"id":`+short.Body+`,"input":null}`)
	sample, err := os.ReadFile(filepath.Join(root, "events", "sweep-timeouts.json"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := e.proc("timeouts").Invoke(t.Context(), sample, 60*time.Second)
	if err != nil || res.IsError {
		t.Fatalf("sweep-timeouts: %v %s", err, res.Body)
	}
	var summary map[string]any
	if err := json.Unmarshal(res.Body, &summary); err != nil || summary["sweep"] != "timeouts" || summary["timed_out"] != 1.0 {
		t.Fatalf("sweep-timeouts summary = %s (%v), want 1 job timed out", res.Body, err)
	}
	t.Logf("sweep-timeouts took %v: %s", time.Since(start).Round(time.Millisecond), res.Body)
	// The invocation wrote its CloudWatch metrics to stdout, as one EMF line.
	// It is written just before the answer, and the process's output is
	// read by a goroutine of its own: poll it, with a deadline, until it
	// arrives (a real process).
	var emfLines []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		emfLines = emfLines[:0]
		for line := range strings.SplitSeq(e.proc("timeouts").Output(), "\n") {
			if strings.Contains(line, `"_aws"`) {
				emfLines = append(emfLines, line)
			}
		}
		if len(emfLines) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(emfLines) != 1 {
		t.Fatalf("sweep-timeouts wrote %d EMF lines, want 1:\n%s", len(emfLines), e.proc("timeouts").Output())
	}
	f := parseEMF(t, []byte(emfLines[0]+"\n"))
	if f.values[emf.SweptJobs] != 1 || f.values[emf.SweepDurationSeconds] <= 0 || f.dims[emf.SweptJobs][emf.DimSweep] != "timeouts" {
		t.Errorf("EMF line %s: want 1 job swept by timeouts in a positive duration", emfLines[0])
	}
	if age, ok := f.values[emf.OldestDueJobAgeSeconds]; !ok || age < 0 || f.dims[emf.OldestDueJobAgeSeconds][emf.DimKeyNamespace] == "" {
		t.Errorf("EMF line %s: want OldestDueJobAgeSeconds with its KeyNamespace", emfLines[0])
	}
	expect(t, "GET short status", e.call("job-status", e.request("job-status", map[string]string{"id": short.Body}, "", "")),
		http.StatusOK, `"timed_out"`)

	// Warm reuse: each process served every one of its invocations.
	for name, want := range map[string]int64{"job-status": 4, "create-job": 2, "next-job": 2, "get-job-output": 2} {
		p := e.proc(name)
		if got := p.Runtime().Served(); got != want || !p.Running() {
			t.Errorf("%s: one process served %d invocations (running %v), want %d", name, got, p.Running(), want)
		}
	}

	var inits []string
	for name, p := range e.procs {
		inits = append(inits, fmt.Sprintf("%s=%v", name, p.InitDuration().Round(100*time.Microsecond)))
	}
	t.Logf("init (exec to first GET /next): %s", strings.Join(inits, " "))

	// Every sample event, as sam local invoke would send it.
	t.Run("sample events", func(t *testing.T) {
		for name := range e.bins {
			event := name + ".json"
			timeout := 10 * time.Second
			if _, err := os.Stat(filepath.Join(root, "functions", name)); err != nil {
				event, timeout = "sweep-"+name+".json", 60*time.Second
			}
			payload, err := os.ReadFile(filepath.Join(root, "events", event))
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.proc(name).Invoke(t.Context(), payload, timeout)
			if err != nil || res.IsError {
				t.Errorf("%s with events/%s: %v %s", name, event, err, res.Body)
				continue
			}
			var resp apiResponse
			if err := json.Unmarshal(res.Body, &resp); err != nil || resp.StatusCode >= 500 {
				t.Errorf("%s with events/%s: %s", name, event, res.Body)
			}
			if strings.HasPrefix(event, "sweep-") {
				continue
			}
			// The same request as the internal load balancer sends it.
			payload, err = os.ReadFile(filepath.Join(root, "events", "alb", event))
			if err != nil {
				t.Fatal(err)
			}
			res, err = e.proc(name).Invoke(t.Context(), payload, timeout)
			if err != nil || res.IsError {
				t.Errorf("%s with events/alb/%s: %v %s", name, event, err, res.Body)
				continue
			}
			var alb apiResponse
			if err := json.Unmarshal(res.Body, &alb); err != nil || alb.StatusCode >= 500 || alb.StatusDescription == "" {
				t.Errorf("%s with events/alb/%s: %s", name, event, res.Body)
			}
		}
	})

	t.Run("init failure", func(t *testing.T) {
		env := append(append([]string(nil), e.env...), "OCYPOD_REDIS_URL=redis://ocy:hunter2@localhost:notaport")
		p := deploytest.Start(t, "health-broken", e.bins["health"], env)
		select {
		case ie := <-p.Runtime().InitErrors():
			if strings.Contains(string(ie.Body), "hunter2") || ie.ErrorType != "Runtime.InitError" {
				t.Errorf("init error %s %s: want Runtime.InitError without the password", ie.ErrorType, ie.Body)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no init error reported")
		}
		select {
		case <-p.Exited():
			if p.Err() == nil {
				t.Error("the process exited with status 0, want 1")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the process did not exit")
		}
		if strings.Contains(p.Output(), "hunter2") {
			t.Errorf("the password reached the log:\n%s", p.Output())
		}
	})

	// A function that never touches Redis answers with the environment the
	// template gives it: a placeholder URL, no VPC, no Redis; it does not
	// even try to reach Redis at init.
	t.Run("no Redis", func(t *testing.T) {
		prefixes := map[string]string{"version": `"0.8.0"`, "openapi": `{"openapi":"3.1.`, "dashboard": "<!doctype html>"}
		for _, rt := range httpapi.Routes() {
			name := rt.Name
			if httpapi.NeedsStore(name) {
				continue
			}
			wantPrefix, ok := prefixes[name]
			if !ok {
				t.Fatalf("route %s needs no store: give this test the start of its answer", name)
			}
			p := deploytest.Start(t, name+"-no-redis", e.bins[name], []string{
				"AWS_REGION=eu-west-1", "OCYPOD_REDIS_URL=" + deploygen.NoRedisURL, "OCYPOD_REDIS_IAM_USER="})
			payload, err := os.ReadFile(filepath.Join(root, "events", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Invoke(t.Context(), payload, 10*time.Second)
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %s", name, err, res.Body)
			}
			var resp apiResponse
			if err := json.Unmarshal(res.Body, &resp); err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Body, wantPrefix) {
				t.Errorf("%s without Redis = %.200s, want 200 %s...", name, res.Body, wantPrefix)
			}
			if strings.Contains(p.Output(), "Redis not reachable") {
				t.Errorf("%s tried to reach Redis at init:\n%s", name, p.Output())
			}
		}
	})
}
