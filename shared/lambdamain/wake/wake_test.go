package wake_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/ocyless/ocyless/shared/lambdamain/wake"
)

// invoke is one request the fake Lambda API received.
type invoke struct {
	Path, Type string
	Body       []byte
	Auth       string // the Authorization header
	SigErr     string // why its signature does not check out; "" when it does
}

// fakeLambda is the Lambda API's Invoke as the SDK reaches it at a base
// endpoint: it records each call and answers status (202 for an async
// invoke), after release is closed when hold is set.
type fakeLambda struct {
	*httptest.Server
	mu      sync.Mutex
	calls   []invoke
	got     chan struct{}
	status  int
	release chan struct{}
}

func newFakeLambda(t *testing.T, status int, hold bool) *fakeLambda {
	f := &fakeLambda{status: status, got: make(chan struct{}, 100)}
	if hold {
		f.release = make(chan struct{})
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		sigErr := ""
		if err := checkSignature(r, body); err != nil {
			sigErr = err.Error()
		}
		f.calls = append(f.calls, invoke{r.URL.Path, r.Header.Get("X-Amz-Invocation-Type"), body, r.Header.Get("Authorization"), sigErr})
		f.mu.Unlock()
		f.got <- struct{}{}
		if f.release != nil {
			<-f.release
		}
		w.WriteHeader(f.status)
	}))
	t.Cleanup(func() {
		if f.release != nil {
			select {
			case <-f.release:
			default:
				close(f.release)
			}
		}
		f.Close()
	})
	return f
}

// checkSignature signs again, with awsEnv's credentials, the request r as
// it arrived (the headers its Authorization names, its date and body) and
// compares the two Authorization headers, as the Lambda API does.
func checkSignature(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	_, signed, ok := strings.Cut(auth, "SignedHeaders=")
	if !ok || !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") {
		return fmt.Errorf("Authorization %q is no SigV4 signature of AKIDEXAMPLE", auth)
	}
	signed, _, _ = strings.Cut(signed, ",")
	date, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("X-Amz-Date: %v", err)
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, h := range strings.Split(signed, ";") {
		switch h {
		case "host", "content-length":
		default:
			again.Header.Set(h, r.Header.Get(h))
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "s3cr3t", SessionToken: "tok"}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "lambda", "eu-west-1", date); err != nil {
		return err
	}
	if got := again.Header.Get("Authorization"); got != auth {
		return fmt.Errorf("Authorization %q, want %q", auth, got)
	}
	for _, h := range []string{"host", "x-amz-date", "x-amz-invocation-type", "x-amz-security-token"} {
		if !slices.Contains(strings.Split(signed, ";"), h) {
			return fmt.Errorf("%s is not signed (SignedHeaders=%s)", h, signed)
		}
	}
	return nil
}

func (f *fakeLambda) Calls() []invoke {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]invoke(nil), f.calls...)
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func awsEnv(endpoint string) map[string]string {
	return map[string]string{wake.EnvDispatcher: "stack-PushDispatcherFunction-X", wake.EnvEndpoint: endpoint,
		"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cr3t", "AWS_SESSION_TOKEN": "tok"}
}

// waitCalls waits for n calls to reach f.
func waitCalls(t *testing.T, f *fakeLambda, n int) {
	t.Helper()
	for range n {
		select {
		case <-f.got:
		case <-time.After(10 * time.Second):
			t.Fatalf("the fake Lambda API got %d invokes, want %d", len(f.Calls()), n)
		}
	}
}

// TestWakeInvokesAsync: a wake is an asynchronous invoke (Event) of the
// named function with a small payload, signed (SigV4, service lambda) and
// sent to the endpoint of the SDKs' own variable.
func TestWakeInvokesAsync(t *testing.T) {
	t.Parallel()
	f := newFakeLambda(t, http.StatusAccepted, false)
	w, err := wake.FromEnv(env(awsEnv(f.URL)), nil)
	if err != nil || w == nil {
		t.Fatalf("FromEnv = %v, %v", w, err)
	}
	w.Wake("emails")
	waitCalls(t, f, 1)
	c := f.Calls()[0]
	if c.Type != "Event" || c.Path != "/2015-03-31/functions/stack-PushDispatcherFunction-X/invocations" {
		t.Errorf("invoke = %s with X-Amz-Invocation-Type %q, want an Event invoke of the dispatcher", c.Path, c.Type)
	}
	var ev map[string]string
	if err := json.Unmarshal(c.Body, &ev); err != nil || ev["queue"] != "emails" || ev["source"] != wake.Source {
		t.Errorf("payload %s (%v), want source %s and queue emails", c.Body, err, wake.Source)
	}
	if c.SigErr != "" || !strings.Contains(c.Auth, "/eu-west-1/lambda/aws4_request") {
		t.Errorf("signature: %s (Authorization %q), want a valid SigV4 signature for lambda in eu-west-1", c.SigErr, c.Auth)
	}
}

// TestClientEndpoint: without an endpoint variable the Lambda API is the
// region's; an ARN is one escaped path segment, signed as sent.
func TestClientEndpoint(t *testing.T) {
	t.Parallel()
	cfg, endpoint, err := wake.AWSConfig(env(awsEnv("")))
	if err != nil {
		t.Fatal(err)
	}
	if c := wake.NewClient(cfg, endpoint); c.Endpoint != "https://lambda.eu-west-1.amazonaws.com" {
		t.Errorf("Endpoint = %q, want the region's", c.Endpoint)
	}
	f := newFakeLambda(t, http.StatusAccepted, false)
	arn := "arn:aws:lambda:eu-west-1:123456789012:function:stack-PushDispatcherFunction-X"
	if err := wake.NewClient(cfg, f.URL+"/").InvokeAsync(context.Background(), arn, []byte(`{}`)); err != nil {
		t.Fatalf("InvokeAsync = %v", err)
	}
	waitCalls(t, f, 1)
	if c := f.Calls()[0]; c.Path != "/2015-03-31/functions/"+arn+"/invocations" || c.Type != "Event" || c.SigErr != "" {
		t.Errorf("invoke = %s %q, signature: %s", c.Path, c.Type, c.SigErr)
	}
}

// TestClientRefused: an answer other than 202 is an error that names the
// status and keeps no secret.
func TestClientRefused(t *testing.T) {
	t.Parallel()
	f := newFakeLambda(t, http.StatusForbidden, false)
	cfg, endpoint, err := wake.AWSConfig(env(awsEnv(f.URL)))
	if err != nil {
		t.Fatal(err)
	}
	err = wake.NewClient(cfg, endpoint).InvokeAsync(context.Background(), "d", []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("InvokeAsync = %v, want a 403 error without the secret", err)
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	if w, err := wake.FromEnv(env(map[string]string{"AWS_REGION": "eu-west-1"}), nil); w != nil || err != nil {
		t.Errorf("without %s: %v, %v, want nil, nil", wake.EnvDispatcher, w, err)
	}
	e := awsEnv("")
	delete(e, "AWS_REGION")
	if _, err := wake.FromEnv(env(e), nil); err == nil || !strings.Contains(err.Error(), "AWS_REGION") {
		t.Errorf("without a region: %v", err)
	}
	e = awsEnv("")
	delete(e, "AWS_SECRET_ACCESS_KEY")
	if _, err := wake.FromEnv(env(e), nil); err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("without credentials: %v", err)
	}
}

// manualClock is a clock tests move.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestWakeCoalesces: a burst of wakes makes one invoke while it is in
// flight and within Interval of it; the next one after the interval
// invokes again.
func TestWakeCoalesces(t *testing.T) {
	t.Parallel()
	f := newFakeLambda(t, http.StatusAccepted, true)
	cfg, endpoint, err := wake.AWSConfig(env(awsEnv(f.URL)))
	if err != nil {
		t.Fatal(err)
	}
	clock := &manualClock{t: time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)}
	w := wake.New(wake.Options{Client: newClient(cfg, endpoint), Function: "d", Interval: time.Second,
		Flush: time.Minute, Now: clock.Now})
	for range 50 {
		w.Wake("q") // in flight: coalesced
	}
	waitCalls(t, f, 1)
	close(f.release)
	w.Flush(t.Context())
	// Let the invoke finish: it is no longer in flight once Wake after the
	// interval starts a new one.
	clock.Advance(500 * time.Millisecond)
	waitIdle(t, w, clock)
	if n := len(f.Calls()); n != 1 {
		t.Fatalf("%d invokes within the interval, want 1", n)
	}
	clock.Advance(time.Second)
	w.Wake("q")
	waitCalls(t, f, 1)
	if n := len(f.Calls()); n != 2 {
		t.Errorf("%d invokes after the interval, want 2", n)
	}
}

// waitIdle waits until w has no invoke in flight: a wake within the
// interval then still starts nothing (checked by the caller's count).
// Polling with a deadline: the SDK's call ends on its own goroutine.
func waitIdle(t *testing.T, w *wake.Waker, clock *manualClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for w.InFlight() {
		if time.Now().After(deadline) {
			t.Fatal("the invoke is still in flight after 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.Wake("q") // within the interval: nothing
}

// TestWakeWhileAnswerPending: an invoke written but not answered (the
// instance frozen since, say) does not hold back the next wake after the
// interval.
func TestWakeWhileAnswerPending(t *testing.T) {
	t.Parallel()
	f := newFakeLambda(t, http.StatusAccepted, true) // answers only at cleanup
	cfg, endpoint, err := wake.AWSConfig(env(awsEnv(f.URL)))
	if err != nil {
		t.Fatal(err)
	}
	clock := &manualClock{t: time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)}
	w := wake.New(wake.Options{Client: newClient(cfg, endpoint), Function: "d", Interval: time.Second,
		Flush: time.Minute, Now: clock.Now})
	w.Wake("q")
	w.Flush(t.Context())
	waitCalls(t, f, 1)
	clock.Advance(10 * time.Second)
	w.Wake("q")
	waitCalls(t, f, 1)
	if !w.InFlight() {
		t.Error("the first invoke was answered: the fake should hold it")
	}
}

// TestFlushWaitsForTheRequestOnly: a request that woke the dispatcher
// waits until the invoke is written, not for the Lambda API's answer.
func TestFlushWaitsForTheRequestOnly(t *testing.T) {
	t.Parallel()
	f := newFakeLambda(t, http.StatusAccepted, true) // never answers until cleanup
	cfg, endpoint, err := wake.AWSConfig(env(awsEnv(f.URL)))
	if err != nil {
		t.Fatal(err)
	}
	w := wake.New(wake.Options{Client: newClient(cfg, endpoint), Function: "d", Flush: time.Minute})
	h := w.Middleware(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.Wake("q")
		rw.WriteHeader(http.StatusOK)
	}))
	done := make(chan struct{})
	go func() {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/queue/q/job", nil))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the request waited for the Lambda API's answer")
	}
	// It ended with the invoke sent and still waiting for its answer.
	if !w.InFlight() {
		t.Error("the invoke is over before the Lambda API answered: it failed")
	}
	waitCalls(t, f, 1)
}

// blockedInvoker never sends its request: it blocks until released.
type blockedInvoker struct{ release chan struct{} }

func (b blockedInvoker) InvokeAsync(ctx context.Context, _ string, _ []byte) error {
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return errors.New("not sent")
}

// TestOnlyTheWakingRequestWaits: a request that started no invoke does not
// wait for another's, still unsent (a Lambda API that cannot be reached).
func TestOnlyTheWakingRequestWaits(t *testing.T) {
	t.Parallel()
	b := blockedInvoker{release: make(chan struct{})}
	defer close(b.release)
	w := wake.New(wake.Options{Client: b, Function: "d", Flush: time.Minute})
	w.Wake("q") // unsent until released
	h := w.Middleware(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(http.StatusOK) }))
	done := make(chan struct{})
	go func() {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/queue/q", nil))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a request that woke nothing waited for another's invoke")
	}
}

// TestWakeFailureIsLogged: an invoke the Lambda API refuses (or that
// cannot connect) is logged and nothing else.
func TestWakeFailureIsLogged(t *testing.T) {
	t.Parallel()
	f := newFakeLambda(t, http.StatusInternalServerError, false)
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	cfg, endpoint, err := wake.AWSConfig(env(awsEnv(f.URL)))
	if err != nil {
		t.Fatal(err)
	}
	w := wake.New(wake.Options{Client: newClient(cfg, endpoint), Function: "d", Log: log})
	w.Wake("q")
	waitCalls(t, f, 1)
	deadline := time.Now().Add(10 * time.Second)
	for w.InFlight() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "dispatcher was not woken") || strings.Contains(logs.String(), "s3cr3t") {
		t.Errorf("log = %q, want the failure (and no secret)", logs.String())
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
