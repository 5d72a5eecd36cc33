package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
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

	"github.com/ocyless/ocyless/shared/deploytest"
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
type lambdaFunc = deploytest.Function

// lambdaSizes builds every bootstrap for arch (all of them, or the first
// one in the smoke test) and reports their sizes.
func lambdaSizes(r *run, all bool, arch string) {
	fs := deploytest.Functions(r.tb)
	if !all {
		fs = fs[:1]
	}
	dir := r.tb.TempDir()
	took := deploytest.Build(r.tb, fs, arch, dir)
	largest, total := int64(0), int64(0)
	largestID := ""
	sizes := map[string]int64{}
	for _, f := range fs {
		fi, err := os.Stat(filepath.Join(dir, f.ID, "bootstrap"))
		if err != nil {
			r.tb.Fatal(err)
		}
		sizes[f.ID] = fi.Size()
		total += fi.Size()
		if fi.Size() > largest {
			largest, largestID = fi.Size(), f.ID
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
		cells := lambdaCells(f, sizes[f.ID], nil)
		cells[2] += fmt.Sprintf(" (%.3f x floor)", float64(sizes[f.ID])/float64(floor))
		rep.row("lambda", lambdaTitle, lambdaHeader, f.ID, cells...)
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
	out, err := exec.Command("make", "-n", "-s", "--no-print-directory", "-C", repoRoot, "build-"+f.ID,
		"ARTIFACTS_DIR="+dir, "GOARCH_LAMBDA="+arch).Output()
	if err != nil {
		tb.Fatalf("make -n build-%s: %v", f.ID, err)
	}
	var build string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(line, " go build ") && strings.HasSuffix(line, " ./"+f.Dir) {
			build = strings.TrimSuffix(line, "./"+f.Dir) + "./" + floorPkg
		}
	}
	if build == "" {
		tb.Fatalf("make -n build-%s printed no go build of ./%s:\n%s", f.ID, f.Dir, out)
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
		if c, ok := coldResults.m[f.ID]; ok {
			cs = &c
		}
		coldResults.Unlock()
	}
	if cs == nil {
		return []string{f.ID, f.Dir, sz, "-", "-", "-"}
	}
	return []string{f.ID, f.Dir, sz, ms(cs.init), ms(cs.answer), cs.status}
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
	fs := deploytest.Functions(r.tb)
	if !all {
		fs = fs[:1]
	}
	dir := r.tb.TempDir()
	took := deploytest.Build(r.tb, fs, runtime.GOARCH, dir)
	srv := redisServer(r.tb)
	var answers []time.Duration
	worst, worstID := time.Duration(0), ""
	for _, f := range fs {
		payload, err := os.ReadFile(filepath.Join(repoRoot, f.EventFile()))
		if err != nil {
			r.tb.Fatal(err)
		}
		var inits, times []time.Duration
		status := ""
		for range runs {
			ns := prepareLambdaNamespace(r)
			env := []string{
				"AWS_LAMBDA_FUNCTION_NAME=ocyless-" + f.ID, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128",
				"AWS_LAMBDA_FUNCTION_VERSION=$LATEST", "AWS_REGION=eu-west-1",
				"OCYPOD_REDIS_URL=" + srv.URL(), "OCYPOD_KEY_NAMESPACE=" + ns,
			}
			res := coldStartOnce(r, filepath.Join(dir, f.ID, "bootstrap"), env, payload)
			inits, times = append(inits, res.init), append(times, res.answer)
			if status == "" {
				status = res.status
			}
		}
		cs := coldStart{init: median(inits), answer: median(times), status: status}
		answers = append(answers, cs.answer)
		if cs.answer > worst {
			worst, worstID = cs.answer, f.ID
		}
		coldResults.Lock()
		coldResults.m[f.ID] = cs
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
		rep.row("lambda", lambdaTitle, lambdaHeader, f.ID, lambdaCellsKeepSize(f)...)
	}
}

// lambdaCellsKeepSize is f's row with the size already reported, if any.
func lambdaCellsKeepSize(f lambdaFunc) []string {
	rep.mu.Lock()
	size := "-"
	if t := rep.tables["lambda"]; t != nil {
		if row, ok := t.rows[f.ID]; ok {
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

// coldStartOnce starts bin under a fake Lambda Runtime API holding one
// event (deploytest.RunCold) and returns the time from starting the process
// to its first GET .../invocation/next (init done) and to its answer.
func coldStartOnce(r *run, bin string, env []string, payload []byte) coldStart {
	cs, err := deploytest.RunCold(r.tb, bin, append(env, "PATH=/usr/bin:/bin"), payload, 30*time.Second)
	if err != nil {
		r.tb.Fatal(err)
	}
	if cs.Result.IsError {
		r.tb.Fatalf("%s answered with an error: %s", bin, cs.Result.Body)
	}
	return coldStart{init: cs.Init, answer: cs.Answer, status: answerStatus(cs.Result.Body)}
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
