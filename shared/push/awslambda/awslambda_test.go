package awslambda_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/ocyless/ocyless/shared/push"
	"github.com/ocyless/ocyless/shared/push/awslambda"
)

// functionEnv makes the test binary the Lambda function itself: the
// Runtime Interface Emulator starts it with this variable set, and
// TestMain then serves the Runtime API with aws-lambda-go instead of
// running tests.
const functionEnv = "OCYLESS_PUSH_TEST_FUNCTION"

func TestMain(m *testing.M) {
	if os.Getenv(functionEnv) == "1" {
		lambda.Start(testFunction)
		return
	}
	os.Exit(m.Run())
}

// testFunction is the worker function: it echoes a job, fails one whose
// input has "fail", hangs on "hang", answers a plain string for "say" and
// a big string for "big". A batch event (an array) answers the failures
// document for the items with "fail".
func testFunction(ctx context.Context, event json.RawMessage) (any, error) {
	type item struct {
		ID      uint64         `json:"id"`
		Attempt int            `json:"attempt"`
		Queue   string         `json:"queue"`
		Input   map[string]any `json:"input"`
	}
	if strings.HasPrefix(strings.TrimSpace(string(event)), "[") {
		var items []item
		if err := json.Unmarshal(event, &items); err != nil {
			return nil, err
		}
		failures := []map[string]any{}
		for _, it := range items {
			if msg, ok := it.Input["fail"].(string); ok {
				failures = append(failures, map[string]any{"id": it.ID, "error": msg})
			}
		}
		return map[string]any{"failures": failures}, nil
	}
	var it item
	if err := json.Unmarshal(event, &it); err != nil {
		return nil, err
	}
	switch {
	case it.Input["fail"] != nil:
		return nil, fmt.Errorf("%v", it.Input["fail"])
	case it.Input["hang"] != nil:
		<-ctx.Done()
		return nil, ctx.Err()
	case it.Input["say"] != nil:
		return it.Input["say"], nil
	case it.Input["big"] != nil:
		return strings.Repeat("x", int(it.Input["big"].(float64))), nil
	}
	return map[string]any{"echo": it.Input, "id": it.ID, "attempt": it.Attempt, "queue": it.Queue}, nil
}

// emulator is a running aws-lambda-rie serving the test binary as its
// function, the way a container image with the RIE runs a function.
type emulator struct {
	endpoint string // the SDK's BaseEndpoint
	out      *logBuffer
}

// startEmulator builds github.com/aws/aws-lambda-runtime-interface-emulator's
// cmd/aws-lambda-rie (pinned by go.mod's tool line) and starts it on free
// loopback ports with this test binary as the function's bootstrap.
func startEmulator(t *testing.T) *emulator {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the Lambda Runtime Interface Emulator is not built or run")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "aws-lambda-rie")
	build := exec.Command("go", "build", "-o", bin, "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the Runtime Interface Emulator: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	apiAddr, rieAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "--runtime-api-address", apiAddr, "--runtime-interface-emulator-address", rieAddr, self)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), functionEnv+"=1", "AWS_LAMBDA_FUNCTION_TIMEOUT=5", "LOG_LEVEL=warn")
	e := &emulator{endpoint: "http://" + rieAddr, out: &logBuffer{}}
	cmd.Stdout, cmd.Stderr = e.out, e.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("emulator output:\n%s", e.out.String())
		}
	})
	// Ready when its HTTP server accepts connections.
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", rieAddr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the emulator exited: %v\n%s", err, e.out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the emulator does not listen on %s:\n%s", rieAddr, e.out.String())
		}
	}
	return e
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func lambdaDeliverer(t *testing.T, endpoint string, now func() time.Time) *push.Deliverer {
	t.Helper()
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "not-a-real-key", "")}
	return newDeliverer(t, push.Options{Lambda: awslambda.New(cfg, endpoint), Now: now})
}

func lambdaTarget(name string, batch int) *push.Target {
	return &push.Target{Lambda: name, Batch: batch, Concurrency: 1, Secret: push.SecretFrom([]byte(testSecret))}
}

// TestLambdaEmulator invokes a real Lambda runtime (the Runtime Interface
// Emulator running an aws-lambda-go function) through aws-sdk-go-v2. The
// emulator serves one function under the name "function".
func TestLambdaEmulator(t *testing.T) {
	e := startEmulator(t)
	d := lambdaDeliverer(t, e.endpoint, nil)
	deliver := func(target *push.Target, timeout time.Duration, jobs ...push.Job) []push.Outcome {
		return d.Deliver(context.Background(), push.Delivery{Target: target, Jobs: jobs, Timeout: timeout})
	}

	o := deliver(lambdaTarget("function", 1), 30*time.Second, push.Job{ID: 11, Attempt: 2, Queue: "lq", Input: []byte(`{"x": [1, "two"]}`)})[0]
	if o.Result != push.Completed || o.Error != nil {
		t.Fatalf("echo: %v %+v", o.Result, o.Error)
	}
	var got, want any
	json.Unmarshal(o.Output, &got)
	json.Unmarshal([]byte(`{"echo": {"x": [1, "two"]}, "id": 11, "attempt": 2, "queue": "lq"}`), &want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the function saw %s", o.Output)
	}

	o = deliver(lambdaTarget("function", 1), 30*time.Second, job(12, `{"say": "hello"}`))[0]
	if o.Result != push.Completed || string(o.Output) != `"hello"` {
		t.Fatalf("say: %v %s %+v", o.Result, o.Output, o.Error)
	}

	outs := deliver(lambdaTarget("function", 10), 30*time.Second, job(21, `{}`), job(22, `{"fail": "no thumbnail"}`), job(23, `null`))
	if outs[0].Result != push.Completed || outs[1].Result != push.Failed || outs[1].Error.Message != "no thumbnail" || outs[2].Result != push.Completed {
		t.Fatalf("batch: %+v", outs)
	}

	o = deliver(lambdaTarget("function", 1), 30*time.Second, job(13, `{"big": 1100000}`))[0]
	if o.Result != push.Failed || o.Error.Group != "push_http_200" || !strings.Contains(o.Error.Message, "larger than 1048576 bytes") {
		t.Fatalf("big: %v %+v", o.Result, o.Error)
	}

	// The emulator knows one function; any other name is the Invoke API's 404.
	o = deliver(lambdaTarget("no-such-function", 1), 30*time.Second, job(14, `{}`))[0]
	if o.Result != push.Failed || o.Error.Group != "push_http_404" {
		t.Fatalf("unknown function: %v %+v", o.Result, o.Error)
	}

	// Last: a function that hangs outlives the delivery's timeout.
	start := time.Now()
	o = deliver(lambdaTarget("function", 1), 500*time.Millisecond, job(15, `{"hang": true}`))[0]
	if o.Result != push.TimedOut || o.Error.Group != push.GroupTimeout {
		t.Fatalf("hang: %v %+v", o.Result, o.Error)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Fatalf("the timeout took %v", took)
	}
}

// TestLambdaEmulatorUnreachable: an emulator that is not there is
// push_unreachable, not a hang.
func TestLambdaEmulatorUnreachable(t *testing.T) {
	d := lambdaDeliverer(t, "http://"+freeAddr(t), nil)
	o := d.Deliver(context.Background(), push.Delivery{Target: lambdaTarget("function", 1), Jobs: []push.Job{job(1, `{}`)}, Timeout: 5 * time.Second})[0]
	if o.Result != push.Failed || o.Error.Group != push.GroupUnreachable || !strings.Contains(o.Error.Message, "connection refused") {
		t.Fatalf("%v %+v", o.Result, o.Error)
	}
}

// TestLambdaInvokeAnswers covers the Invoke API answers the emulator does
// not produce, as Lambda sends them: a function error (200 with
// X-Amz-Function-Error; the emulator drops that header and answers a
// function error as a plain 200), and throttling with Retry-After.
func TestLambdaInvokeAnswers(t *testing.T) {
	clock := &fixedClock{t: time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)}
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		calls = append(calls, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(string(body), `"crash"`):
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			io.WriteString(w, `{"errorMessage": "index out of range [3] with length 3", "errorType": "runtime.Error", "stackTrace": []}`)
		case strings.Contains(string(body), `"plain"`):
			w.Header().Set("X-Amz-Function-Error", "Handled")
			io.WriteString(w, `"not a document"`)
		case strings.Contains(string(body), `"throttle"`):
			w.Header().Set("X-Amzn-ErrorType", "TooManyRequestsException")
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			io.WriteString(w, `{"Type": "User", "message": "Rate Exceeded.", "Reason": "ReservedFunctionConcurrentInvocationLimitExceeded"}`)
		case strings.Contains(string(body), `"denied"`):
			w.Header().Set("X-Amzn-ErrorType", "AccessDeniedException")
			w.WriteHeader(403)
			io.WriteString(w, `{"message": "not authorized to perform: lambda:InvokeFunction"}`)
		default:
			w.Header().Set("X-Amzn-ErrorType", "ServiceException")
			w.WriteHeader(500)
			io.WriteString(w, `{"message": "internal"}`)
		}
	}))
	t.Cleanup(srv.Close)
	d := lambdaDeliverer(t, srv.URL, clock.Now)
	cases := []struct {
		input, group, message string
		retryAt               time.Time
	}{
		{`{"crash": 1}`, push.GroupFunctionError, "runtime.Error: index out of range [3] with length 3", time.Time{}},
		{`{"plain": 1}`, push.GroupFunctionError, "function error (Handled)", time.Time{}},
		{`{"throttle": 1}`, "push_http_429", "Lambda Invoke: TooManyRequestsException: Rate Exceeded.", clock.t.Add(7 * time.Second)},
		{`{"denied": 1}`, "push_http_403", "Lambda Invoke: AccessDeniedException: not authorized to perform: lambda:InvokeFunction", time.Time{}},
		{`{}`, "push_http_500", "Lambda Invoke: ServiceException: internal", time.Time{}},
	}
	for _, c := range cases {
		calls = nil
		o := d.Deliver(context.Background(), push.Delivery{Target: lambdaTarget("arn:aws:lambda:us-east-1:123456789012:function:worker", 1), Jobs: []push.Job{job(1, c.input)}, Timeout: 5 * time.Second})[0]
		if o.Result != push.Failed || *o.Error != (push.Failure{Group: c.group, Message: c.message}) || !o.RetryAt.Equal(c.retryAt) {
			t.Errorf("%s: %v %+v retry at %v", c.input, o.Result, o.Error, o.RetryAt)
		}
		// Never retried by the SDK: one invocation per delivery.
		if len(calls) != 1 || !strings.HasSuffix(calls[0], "/invocations") {
			t.Errorf("%s: calls %v", c.input, calls)
		}
	}
}

const testSecret = "s3cr3t-K3y-th4t-must-n0t-leak"

func newDeliverer(t *testing.T, opts push.Options) *push.Deliverer {
	t.Helper()
	pol, err := push.NewPolicy(nil, push.Local)
	if err != nil {
		t.Fatal(err)
	}
	opts.Policy = pol
	opts.Logger = slog.New(slog.DiscardHandler)
	d := push.New(opts)
	t.Cleanup(d.Close)
	return d
}

func job(id uint64, input string) push.Job {
	return push.Job{ID: id, Attempt: 1, Queue: "q", Input: []byte(input)}
}

// fixedClock is a settable clock for Retry-After.
type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time { return c.t }

// logBuffer collects the emulator's output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
