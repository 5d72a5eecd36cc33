package lambdamain_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/lambdamain"
	"github.com/ocyless/ocyless/shared/metrics/emf"
	"github.com/ocyless/ocyless/shared/metrics/emf/emftest"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
	"github.com/ocyless/ocyless/shared/sweep"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// steppingClock moves on by step at every reading, so a duration measured
// with it is known exactly.
type steppingClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

// emfFigures is one parsed metrics line: each metric's value and
// dimensions, and the root members.
type emfFigures struct {
	values map[string]float64
	dims   map[string]map[string]string
	root   map[string]any
}

// parseEMF checks that out holds exactly one line, a valid EMF document,
// and returns its figures.
func parseEMF(t *testing.T, out []byte) emfFigures {
	t.Helper()
	if n := bytes.Count(out, []byte("\n")); n != 1 || !bytes.HasSuffix(out, []byte("\n")) {
		t.Fatalf("want one metrics line, got %d:\n%s", n, out)
	}
	ms, root, err := emftest.Parse(out)
	if err != nil {
		t.Fatalf("invalid EMF: %v\n%s", err, out)
	}
	f := emfFigures{values: map[string]float64{}, dims: map[string]map[string]string{}, root: root}
	for _, m := range ms {
		if _, dup := f.values[m.Name]; dup || m.Namespace != emf.Namespace || len(m.Values) != 1 {
			t.Fatalf("metric %+v: want one value in namespace %s, once\n%s", m, emf.Namespace, out)
		}
		f.values[m.Name], f.dims[m.Name] = m.Values[0], m.Dimensions
	}
	return f
}

// TestSweepHandlerMetrics runs the sweepers on a real store and checks the
// EMF line of each run: the age of the oldest overdue work after the
// sweep, the sweep's duration and the jobs it changed.
func TestSweepHandlerMetrics(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	clock := redistest.NewClock(t0)
	ns := redistest.Namespace(t)
	store, err := redisstore.New(redistest.Shared(t).Client(), redisstore.Options{Namespace: ns, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutQueue(ctx, "q", ocypod.QueueSettings{Timeout: ocypod.Seconds(5), ExpiresAfter: ocypod.Seconds(3600)}); err != nil {
		t.Fatal(err)
	}
	// One job completed at t0 that expires 2 s later, one running since t0
	// that times out 6 s later (both are due once the whole second after
	// their 1 s expiry and 5 s timeout has passed).
	oneSecond := ocypod.Seconds(1)
	for _, spec := range []ocypod.JobSpec{{ExpiresAfter: &oneSecond}, {}} {
		if _, err := store.CreateJob(ctx, "q", spec); err != nil {
			t.Fatal(err)
		}
	}
	first, err := store.NextJob(ctx, "q")
	if err != nil || first == nil {
		t.Fatalf("NextJob = %v, %v", first, err)
	}
	completed := ocypod.StatusCompleted
	if _, _, err := store.UpdateJob(ctx, first.ID, ocypod.JobUpdate{Status: &completed}, nil); err != nil {
		t.Fatal(err)
	}
	if j, err := store.NextJob(ctx, "q"); err != nil || j == nil {
		t.Fatalf("NextJob = %v, %v", j, err)
	}
	clock.Advance(62 * time.Second) // expiry 60 s overdue, timeout 56 s

	tests := []struct {
		kind          sweep.Kind
		swept, oldest float64
		member        string // the Totals member that counts them
	}{
		{sweep.Retries, 0, 60, "retried"},
		{sweep.Timeouts, 1, 60, "timed_out"},
		{sweep.Expiry, 1, 0, "expired"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		h := &lambdamain.SweepHandler{
			Runner:  sweep.Runner{Store: store, Now: clock.Now},
			Kind:    tt.kind,
			Now:     (&steppingClock{now: t0, step: 250 * time.Millisecond}).Now,
			Metrics: &out, Due: store, KeyNamespace: ns, LogLevel: "WARN",
		}
		if _, err := h.Invoke(ctx, []byte(`{}`)); err != nil {
			t.Fatalf("%s: %v", tt.kind, err)
		}
		f := parseEMF(t, out.Bytes())
		want := map[string]float64{
			emf.OldestDueJobAgeSeconds: tt.oldest,
			emf.SweepDurationSeconds:   0.25, // two readings of the stepping clock
			emf.SweptJobs:              tt.swept,
		}
		for name, v := range want {
			if got, ok := f.values[name]; !ok || got != v {
				t.Errorf("%s: %s = %v (present %v), want %v\n%s", tt.kind, name, got, ok, v, out.String())
			}
		}
		if d := f.dims[emf.OldestDueJobAgeSeconds]; len(d) != 1 || d[emf.DimKeyNamespace] != ns {
			t.Errorf("%s: %s dimensions %v, want only KeyNamespace=%s", tt.kind, emf.OldestDueJobAgeSeconds, d, ns)
		}
		for _, name := range []string{emf.SweepDurationSeconds, emf.SweptJobs} {
			if d := f.dims[name]; len(d) != 2 || d[emf.DimKeyNamespace] != ns || d[emf.DimSweep] != string(tt.kind) {
				t.Errorf("%s: %s dimensions %v, want KeyNamespace=%s Sweep=%s", tt.kind, name, d, ns, tt.kind)
			}
		}
		if n, ok := f.root[tt.member].(json.Number); f.root["level"] != "WARN" || !ok || n.String() != strconv.Itoa(int(tt.swept)) {
			t.Errorf("%s: level %v, %s %v; want WARN and %v", tt.kind, f.root["level"], tt.member, f.root[tt.member], tt.swept)
		}
	}
}

// TestSweepHandlerMetricsRedisDown: a run that cannot reach Redis fails,
// and its line still reports the duration and counts, without an age it
// could not read.
func TestSweepHandlerMetricsRedisDown(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	const timeout = 300 * time.Millisecond
	client, err := redisstore.NewClient(redisstore.ClientOptions{URL: srv.URL(), DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	store, err := redisstore.New(client, redisstore.Options{Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	h := &lambdamain.SweepHandler{Runner: sweep.Runner{Store: store}, Kind: sweep.Timeouts, Metrics: &out, Due: store, KeyNamespace: "ocypod"}
	if _, err := h.Invoke(t.Context(), []byte(`{}`)); err == nil {
		t.Fatal("Invoke with Redis stopped = nil error")
	}
	f := parseEMF(t, out.Bytes())
	if _, ok := f.values[emf.OldestDueJobAgeSeconds]; ok {
		t.Errorf("the line reports an age it could not read:\n%s", out.String())
	}
	if _, ok := f.values[emf.SweepDurationSeconds]; !ok || f.values[emf.SweptJobs] != 0 || f.root["level"] != "INFO" {
		t.Errorf("want the duration, 0 jobs swept and level INFO:\n%s", out.String())
	}
}

// TestNewSweepHandlerMetrics: the Lambda handler writes its metrics to
// stdout under the namespace in use and the function's log level.
func TestNewSweepHandlerMetrics(t *testing.T) {
	t.Parallel()
	for ns, want := range map[string]string{"": redisstore.DefaultNamespace, "prod": "prod"} {
		h, err := lambdamain.NewSweepHandler(env(map[string]string{
			"OCYPOD_REDIS_URL": "redis://127.0.0.1:1", "OCYPOD_KEY_NAMESPACE": ns, "AWS_LAMBDA_LOG_LEVEL": "ERROR"}), sweep.Expiry, nil)
		if err != nil {
			t.Fatal(err)
		}
		if h.Metrics != os.Stdout || h.Due == nil || h.KeyNamespace != want || h.LogLevel != "ERROR" {
			t.Errorf("namespace %q: Metrics %v, Due %v, KeyNamespace %q, LogLevel %q; want stdout, the store, %q, ERROR",
				ns, h.Metrics, h.Due, h.KeyNamespace, h.LogLevel, want)
		}
	}
}
