package deploytest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// modulePath identifies the repository's go.mod.
const modulePath = "github.com/ocyless/ocyless"

// RepoRoot returns the repository root: the nearest directory above the
// working directory whose go.mod declares this module.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(data), []byte("module "+modulePath+"\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatalf("no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}

// Function is one Lambda function of the Makefile's LAMBDA_FUNCTIONS.
type Function struct {
	ID  string // CreateJobFunction
	Dir string // functions/create-job
}

// EventFile is the function's sample event relative to the repository root,
// as `make invoke-<LogicalId>` sends it: events/<dir name>.json for a
// route, events/sweep-<kind>.json for a sweeper.
func (f Function) EventFile() string {
	base := filepath.Base(f.Dir)
	if strings.HasPrefix(f.Dir, "sweeper/") {
		base = "sweep-" + base
	}
	return filepath.Join("events", base+".json")
}

// Functions lists every function with `make lambda-list`, in the
// Makefile's order.
func Functions(tb testing.TB) []Function {
	tb.Helper()
	out, err := exec.Command("make", "-s", "--no-print-directory", "-C", RepoRoot(tb), "lambda-list").Output()
	if err != nil {
		tb.Fatalf("make lambda-list: %v", err)
	}
	var fs []Function
	for _, line := range strings.Fields(string(out)) {
		id, dir, ok := strings.Cut(line, ":")
		if !ok {
			tb.Fatalf("make lambda-list line %q", line)
		}
		fs = append(fs, Function{id, dir})
	}
	if len(fs) == 0 {
		tb.Fatal("make lambda-list listed no function")
	}
	return fs
}

// Build builds fs for arch into dir/<LogicalId>/bootstrap with the
// Makefile's per-function targets, two at a time, exactly as `sam build`
// and `make build` run them. It returns how long that took.
func Build(tb testing.TB, fs []Function, arch, dir string) time.Duration {
	tb.Helper()
	absDir, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	// lambda-out-<id> is `make build`'s per-function target: build-<id>
	// with ARTIFACTS_DIR=$(LAMBDA_OUT)/<id>.
	args := []string{"-s", "--no-print-directory", "-C", RepoRoot(tb), "-j2"}
	for _, f := range fs {
		args = append(args, "lambda-out-"+f.ID)
	}
	args = append(args, "LAMBDA_OUT="+absDir, "GOARCH_LAMBDA="+arch)
	start := time.Now()
	if out, err := exec.Command("make", args...).CombinedOutput(); err != nil {
		tb.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return time.Since(start)
}

// ColdStart is one cold start of a bootstrap.
type ColdStart struct {
	Init   time.Duration // process start to its first request for an event
	Answer time.Duration // process start to its answer
	Result Result        // the answer
}

// RunCold starts bin with env under a new Runtime, hands it payload as its
// first and only event, waits for the answer (at most timeout) and kills
// the process. An init failure or a missing answer is an error.
func RunCold(tb testing.TB, bin string, env []string, payload []byte, timeout time.Duration) (ColdStart, error) {
	tb.Helper()
	p := Start(tb, filepath.Base(filepath.Dir(bin)), bin, env)
	defer p.Stop()
	res, err := p.Invoke(tb.Context(), payload, timeout)
	if err != nil {
		select {
		case ie := <-p.rt.InitErrors():
			return ColdStart{}, fmt.Errorf("%s failed at init: %s", bin, ie.Body)
		default:
		}
		return ColdStart{}, fmt.Errorf("%s: %w", bin, err)
	}
	return ColdStart{Init: p.InitDuration(), Answer: res.At.Sub(p.started), Result: res}, nil
}
