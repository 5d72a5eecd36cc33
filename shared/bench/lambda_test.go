package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// Summary positions of the Lambda lines.
const (
	posLambdaSize = 60
	posColdStart  = 61
)

// Goals of the Lambda lines.
const (
	sizeGoal      = 1.10 // every bootstrap / the floor bootstrap: at most
	coldStartGoal = 25 * time.Millisecond
	coldStartRuns = 5
)

// repoRoot is the module root (this test runs in shared/bench).
var repoRoot = filepath.Join("..", "..")

// lambdaFunc is one Lambda function of the Makefile's LAMBDA_FUNCTIONS.
type lambdaFunc struct {
	id, dir string // CreateJobFunction, functions/create-job
}

// event is the sample event of f in events/, as `make invoke-<id>` sends it.
func (f lambdaFunc) event() string {
	base := filepath.Base(f.dir)
	if strings.HasPrefix(f.dir, "sweeper/") {
		base = "sweep-" + base
	}
	return filepath.Join(repoRoot, "events", base+".json")
}

// lambdaFuncs lists the functions with `make lambda-list`.
func lambdaFuncs(tb testing.TB) []lambdaFunc {
	tb.Helper()
	out, err := exec.Command("make", "-s", "--no-print-directory", "-C", repoRoot, "lambda-list").Output()
	if err != nil {
		tb.Fatalf("make lambda-list: %v", err)
	}
	var fs []lambdaFunc
	for _, line := range strings.Fields(string(out)) {
		id, dir, ok := strings.Cut(line, ":")
		if !ok {
			tb.Fatalf("make lambda-list line %q", line)
		}
		fs = append(fs, lambdaFunc{id, dir})
	}
	if len(fs) == 0 {
		tb.Fatal("make lambda-list listed no function")
	}
	return fs
}

// buildLambdas builds fs for arch into dir/<id>/bootstrap with the
// Makefile's build-<id> targets, two at a time, exactly as `sam build` and
// `make build` run them.
func buildLambdas(tb testing.TB, fs []lambdaFunc, arch, dir string) time.Duration {
	tb.Helper()
	// lambda-out-<id> is `make build`'s per-function target: build-<id>
	// with ARTIFACTS_DIR=$(LAMBDA_OUT)/<id>; -j2 runs two at a time.
	args := []string{"-s", "--no-print-directory", "-C", repoRoot, "-j2"}
	for _, f := range fs {
		args = append(args, "lambda-out-"+f.id)
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	args = append(args, "LAMBDA_OUT="+absDir, "GOARCH_LAMBDA="+arch)
	start := time.Now()
	cmd := exec.Command("make", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return time.Since(start)
}

// lambdaSizes builds every bootstrap for arch (all of them, or the first
// one in the smoke test) and reports their sizes.
func lambdaSizes(r *run, all bool, arch string) {
	fs := lambdaFuncs(r.tb)
	if !all {
		fs = fs[:1]
	}
	dir := r.tb.TempDir()
	took := buildLambdas(r.tb, fs, arch, dir)
	largest, total := int64(0), int64(0)
	largestID := ""
	sizes := map[string]int64{}
	for _, f := range fs {
		fi, err := os.Stat(filepath.Join(dir, f.id, "bootstrap"))
		if err != nil {
			r.tb.Fatal(err)
		}
		sizes[f.id] = fi.Size()
		total += fi.Size()
		if fi.Size() > largest {
			largest, largestID = fi.Size(), f.id
		}
	}
	floor := buildFloor(r.tb, fs[0], arch, filepath.Join(dir, "floor"))
	ratio := float64(largest) / float64(floor)
	r.metric(float64(largest), "max-bytes")
	r.metric(float64(floor), "floor-bytes")
	r.metric(ratio, "x-floor")
	r.metric(0, "ns/op")
	if !r.final() {
		return
	}
	rep.goal(posLambdaSize, goalLine{
		Item: fmt.Sprintf("6. Lambda bootstrap size, %s, largest of %d (%s; built by make build-<LogicalId> in %v) / the floor bootstrap (%s, same flags, same run)",
			arch, len(fs), largestID, took.Round(time.Second), floorPkg),
		Measured: fmt.Sprintf("%s (%d bytes)", mb(largest), largest),
		Floor:    fmt.Sprintf("%s (%d bytes)", mb(floor), floor),
		Ratio:    fmt.Sprintf("%.3f x floor", ratio),
		Goal:     fmt.Sprintf("every one <= %.2f x floor", sizeGoal),
		Verdict:  verdictOf(ratio <= sizeGoal),
	})
	for _, f := range fs {
		cells := lambdaCells(f, sizes[f.id], nil)
		cells[2] += fmt.Sprintf(" (%.3f x floor)", float64(sizes[f.id])/float64(floor))
		rep.row("lambda", lambdaTitle, lambdaHeader, f.id, cells...)
	}
	rep.row("lambda", lambdaTitle, lambdaHeader, "~floor", "floor: aws-lambda-go + api-proxy (HTTP API v2) + go-redis, one script", floorPkg, mb(floor), "-", "-", "-")
}

const lambdaTitle = "Lambda functions: bootstrap size (arm64) and cold start (host arch, fake Runtime API)"

// floorPkg is the floor bootstrap's package: the product's stack and
// nothing else (see its doc comment).
const floorPkg = "shared/bench/testdata/lambdafloor"

// buildFloor builds the floor bootstrap into dir with exactly the command
// the Makefile runs for f (read with make -n), the package swapped, and
// returns its size.
func buildFloor(tb testing.TB, f lambdaFunc, arch, dir string) int64 {
	tb.Helper()
	out, err := exec.Command("make", "-n", "-s", "--no-print-directory", "-C", repoRoot, "build-"+f.id,
		"ARTIFACTS_DIR="+dir, "GOARCH_LAMBDA="+arch).Output()
	if err != nil {
		tb.Fatalf("make -n build-%s: %v", f.id, err)
	}
	var build string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(line, " go build ") && strings.HasSuffix(line, " ./"+f.dir) {
			build = strings.TrimSuffix(line, "./"+f.dir) + "./" + floorPkg
		}
	}
	if build == "" {
		tb.Fatalf("make -n build-%s printed no go build of ./%s:\n%s", f.id, f.dir, out)
	}
	cmd := exec.Command("sh", "-c", build)
	cmd.Dir = repoRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s: %v\n%s", build, err, b)
	}
	fi, err := os.Stat(filepath.Join(dir, "bootstrap"))
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}

func mb(n int64) string { return fmt.Sprintf("%.2f MB = %.2f MiB", float64(n)/1e6, float64(n)/(1<<20)) }

var lambdaHeader = []string{"function", "package", "bootstrap arm64", "cold start: init done (median)", "first event answered (median)", "answer"}

// coldResults are the cold start figures of each function, for the table
// rows the size benchmark fills too.
var coldResults = struct {
	sync.Mutex
	m map[string]coldStart
}{m: map[string]coldStart{}}

func lambdaCells(f lambdaFunc, size int64, cs *coldStart) []string {
	sz := "-"
	if size > 0 {
		sz = mb(size)
	}
	if cs == nil {
		coldResults.Lock()
		if c, ok := coldResults.m[f.id]; ok {
			cs = &c
		}
		coldResults.Unlock()
	}
	if cs == nil {
		return []string{f.id, f.dir, sz, "-", "-", "-"}
	}
	return []string{f.id, f.dir, sz, ms(cs.init), ms(cs.answer), cs.status}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1e3) }

// coldStart is the median of several cold starts of one function.
type coldStart struct {
	init, answer time.Duration // from process start to the first GET next, to the answer
	status       string        // what the first run answered
}

// lambdaColdStarts builds every bootstrap for the host arch (all, or the
// first one in the smoke test) and times runs cold starts of each against a
// fake Runtime API, with its sample event and a real Redis.
func lambdaColdStarts(r *run, all bool, runs int) {
	fs := lambdaFuncs(r.tb)
	if !all {
		fs = fs[:1]
	}
	dir := r.tb.TempDir()
	took := buildLambdas(r.tb, fs, runtime.GOARCH, dir)
	srv := redisServer(r.tb)
	var answers []time.Duration
	worst, worstID := time.Duration(0), ""
	for _, f := range fs {
		payload, err := os.ReadFile(f.event())
		if err != nil {
			r.tb.Fatal(err)
		}
		var inits, times []time.Duration
		status := ""
		for range runs {
			ns := prepareLambdaNamespace(r)
			env := []string{
				"AWS_LAMBDA_FUNCTION_NAME=ocyless-" + f.id, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128",
				"AWS_LAMBDA_FUNCTION_VERSION=$LATEST", "AWS_REGION=eu-west-1",
				"OCYPOD_REDIS_URL=" + srv.URL(), "OCYPOD_KEY_NAMESPACE=" + ns,
			}
			res := coldStartOnce(r, filepath.Join(dir, f.id, "bootstrap"), env, payload)
			inits, times = append(inits, res.init), append(times, res.answer)
			if status == "" {
				status = res.status
			}
		}
		cs := coldStart{init: median(inits), answer: median(times), status: status}
		answers = append(answers, cs.answer)
		if cs.answer > worst {
			worst, worstID = cs.answer, f.id
		}
		coldResults.Lock()
		coldResults.m[f.id] = cs
		coldResults.Unlock()
	}
	r.metric(float64(worst.Microseconds())/1e3, "worst-median-ms")
	r.metric(float64(median(answers).Microseconds())/1e3, "median-of-medians-ms")
	r.metric(0, "ns/op")
	if !r.final() {
		return
	}
	rep.goal(posColdStart, goalLine{
		Item: fmt.Sprintf("6. Lambda cold start, %s: process start to first answered event, median of %d runs, worst of %d functions (%s; median of all: %s; built in %v)",
			runtime.GOARCH, runs, len(fs), worstID, ms(median(answers)), took.Round(time.Second)),
		Measured: ms(worst),
		Goal:     "<= 25 ms",
		Verdict:  verdictOf(worst <= coldStartGoal),
	})
	for _, f := range fs {
		rep.row("lambda", lambdaTitle, lambdaHeader, f.id, lambdaCellsKeepSize(f)...)
	}
}

// lambdaCellsKeepSize is f's row with the size already reported, if any.
func lambdaCellsKeepSize(f lambdaFunc) []string {
	rep.mu.Lock()
	size := "-"
	if t := rep.tables["lambda"]; t != nil {
		if row, ok := t.rows[f.id]; ok {
			size = row[2]
		}
	}
	rep.mu.Unlock()
	cells := lambdaCells(f, 0, nil)
	cells[2] = size
	return cells
}

// prepareLambdaNamespace makes the state the sample events expect in a new
// namespace: queue demo, job 1 running (tagged nightly), job 2 queued.
func prepareLambdaNamespace(r *run) string {
	ctx := context.Background()
	e := newEnv(r.tb, redisstore.Options{})
	if _, err := e.store.PutQueue(ctx, "demo", benchQueue); err != nil {
		r.tb.Fatal(err)
	}
	for range 2 {
		if _, err := e.store.CreateJob(ctx, "demo", ocypod.JobSpec{Input: []byte(`{"n":1}`), Tags: []string{"nightly"}}); err != nil {
			r.tb.Fatal(err)
		}
	}
	if next, err := e.store.NextJob(ctx, "demo"); err != nil || next == nil || next.ID != 1 {
		r.tb.Fatalf("next job = %+v, %v; want job 1", next, err)
	}
	return e.ns
}

// coldRun is one cold start.
type coldRun struct {
	init, answer time.Duration
	status       string
}

// coldStartOnce starts bin under a fake Lambda Runtime API holding one
// event, and returns the time from starting the process to its first GET
// .../invocation/next (init done) and to its answer; then it kills the
// process.
func coldStartOnce(r *run, bin string, env []string, payload []byte) coldRun {
	type answer struct {
		at     time.Time
		body   []byte
		failed bool
	}
	var (
		served   = make(chan time.Time, 1)
		answered = make(chan answer, 1)
		once     sync.Once
	)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, req *http.Request) {
		first := false
		once.Do(func() { first = true })
		if !first { // one event per process: wait until it is killed
			<-req.Context().Done()
			return
		}
		served <- time.Now()
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", "req-1")
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(30*time.Second).UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:eu-west-1:123456789012:function:ocyless-bench")
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-6740a8c0-5f3b2c1d4e5f6a7b8c9d0e1f;Sampled=0")
		h.Set("Content-Type", "application/json")
		_, _ = w.Write(payload)
	})
	respond := func(failed bool) http.HandlerFunc {
		return func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			answered <- answer{time.Now(), body, failed}
			w.WriteHeader(http.StatusAccepted)
		}
	}
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", respond(false))
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", respond(true))
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", respond(true))
	rt := httptest.NewServer(mux)
	defer rt.Close()

	cmd := exec.Command(bin)
	cmd.Env = append(env, "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(rt.URL, "http://"), "PATH=/usr/bin:/bin")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.tb.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	var res coldRun
	timeout := time.After(30 * time.Second)
	select {
	case at := <-served:
		res.init = at.Sub(start)
	case a := <-answered:
		r.tb.Fatalf("%s failed at init: %s", bin, a.body)
	case <-timeout:
		r.tb.Fatalf("%s never asked for an event", bin)
	}
	select {
	case a := <-answered:
		res.answer = a.at.Sub(start)
		if a.failed {
			r.tb.Fatalf("%s answered with an error: %s", bin, a.body)
		}
		res.status = answerStatus(a.body)
	case <-timeout:
		r.tb.Fatalf("%s never answered", bin)
	}
	return res
}

// answerStatus summarises a function's answer: an API Gateway response's
// status code, or a sweeper's summary.
func answerStatus(body []byte) string {
	var resp struct {
		StatusCode int    `json:"statusCode"`
		Sweep      string `json:"sweep"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return "unreadable"
	}
	if resp.Sweep != "" {
		return "sweep " + resp.Sweep + " done"
	}
	return "HTTP " + strconv.Itoa(resp.StatusCode)
}

// median of ds (which it sorts).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
