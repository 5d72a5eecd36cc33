package lambdamain_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/deploytest"
	"github.com/ocyless/ocyless/shared/lambdamain"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/sweep"
)

func TestSweepBudget(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		configured time.Duration
		deadline   time.Time
		want       time.Duration
	}{
		{"no deadline", 50 * time.Second, time.Time{}, 50 * time.Second},
		{"deadline far away", 50 * time.Second, now.Add(60 * time.Second), 50 * time.Second},
		{"deadline cuts the budget", 50 * time.Second, now.Add(30 * time.Second), 25 * time.Second},
		{"deadline inside the margin", 50 * time.Second, now.Add(3 * time.Second), 0},
		{"deadline passed", 50 * time.Second, now.Add(-time.Second), 0},
	}
	for _, tt := range tests {
		if got := lambdamain.SweepBudget(tt.configured, now, tt.deadline, 5*time.Second); got != tt.want {
			t.Errorf("%s: SweepBudget = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestClientOptions(t *testing.T) {
	t.Parallel()
	r := config.Redis{URL: "rediss://h:6379", ClusterMode: true, Timeout: time.Second}
	got := lambdamain.ClientOptions(r, 1)
	want := redisstore.ClientOptions{URL: r.URL, ClusterMode: true, PoolSize: 2,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second}
	if got.URL != want.URL || got.ClusterMode != want.ClusterMode || got.PoolSize != want.PoolSize ||
		got.DialTimeout != want.DialTimeout || got.ReadTimeout != want.ReadTimeout || got.WriteTimeout != want.WriteTimeout {
		t.Errorf("ClientOptions = %+v, want %+v", got, want)
	}
	if got := lambdamain.ClientOptions(r, 8).PoolSize; got != 16 {
		t.Errorf("pool with 8 concurrent invocations = %d, want 16", got)
	}
	r.PoolSize = 5
	if got := lambdamain.ClientOptions(r, 8).PoolSize; got != 5 {
		t.Errorf("configured pool = %d, want 5", got)
	}
	if got := lambdamain.ClientOptions(config.Default().Redis, 1).ReadTimeout; got != config.DefaultRedisTimeout {
		t.Errorf("default timeout = %v, want %v", got, config.DefaultRedisTimeout)
	}
}

// TestReportInitError posts to the fake Runtime API that the end-to-end
// tests run the bootstraps against.
func TestReportInitError(t *testing.T) {
	t.Parallel()
	rt := deploytest.NewRuntime(t)
	if err := lambdamain.ReportInitError(t.Context(), nil, rt.Addr(), "configuration: bad"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-rt.InitErrors():
		var body map[string]any
		if err := json.Unmarshal(got.Body, &body); err != nil {
			t.Fatalf("init error body %q: %v", got.Body, err)
		}
		if got.ErrorType != lambdamain.InitErrorType || body["errorMessage"] != "configuration: bad" || body["errorType"] != lambdamain.InitErrorType {
			t.Errorf("posted %s with error type %q", got.Body, got.ErrorType)
		}
	default:
		t.Fatal("ReportInitError returned, but no init error reached the Runtime API")
	}
	if err := lambdamain.ReportInitError(t.Context(), nil, "", "x"); err != nil {
		t.Errorf("without a Runtime API: %v, want nil", err)
	}
}

// fakeSweeps is a sweep.Store whose sweeps return canned results.
type fakeSweeps struct {
	mu       sync.Mutex
	calls    []string
	results  []redisstore.SweepResult // served in order, then empty
	failWith error
}

func (f *fakeSweeps) next(name string) (redisstore.SweepResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
	if f.failWith != nil {
		return redisstore.SweepResult{}, f.failWith
	}
	if len(f.results) == 0 {
		return redisstore.SweepResult{}, nil
	}
	r := f.results[0]
	f.results = f.results[1:]
	return r, nil
}

func (f *fakeSweeps) SweepTimeouts(context.Context) (redisstore.SweepResult, error) {
	return f.next("timeouts")
}
func (f *fakeSweeps) SweepRetries(context.Context) (redisstore.SweepResult, error) {
	return f.next("retries")
}
func (f *fakeSweeps) SweepExpiry(context.Context) (redisstore.SweepResult, error) {
	return f.next("expiry")
}
func (f *fakeSweeps) SweepSchedules(context.Context) (redisstore.SweepResult, error) {
	return f.next("schedules")
}
func (f *fakeSweeps) SweepOutbox(context.Context) (redisstore.SweepResult, error) {
	return f.next("outbox")
}

// TestSweepHandlerPayloads: whatever the schedule delivers, the handler
// runs its own sweep and returns a JSON summary of counts.
func TestSweepHandlerPayloads(t *testing.T) {
	t.Parallel()
	payloads := map[string]string{
		"explicit input": `{"sweep":"timeouts"}`,
		"empty object":   `{}`,
		// EventBridge Scheduler's default payload when no Input is set: detail is a string.
		"scheduler default": `{"version":"0","id":"8c1ab5c1-3e2f-4c0c-9a4b-0c9f4f0d3a11","detail-type":"Scheduled Event",` +
			`"source":"aws.scheduler","account":"123456789012","time":"2026-11-21T12:00:00Z","region":"eu-west-1",` +
			`"resources":["arn:aws:scheduler:eu-west-1:123456789012:schedule/default/sweep"],"detail":"{}"}`,
		"eventbridge rule": `{"version":"0","id":"x","detail-type":"Scheduled Event","source":"aws.events","detail":{}}`,
		"other sweep":      `{"sweep":"expiry"}`,
		"not an object":    `[1,2]`,
		"not JSON":         `tick`,
		"empty":            ``,
	}
	for name, payload := range payloads {
		store := &fakeSweeps{results: []redisstore.SweepResult{{TimedOut: []uint64{4, 5}}}}
		h := &lambdamain.SweepHandler{Runner: sweep.Runner{Store: store}, Kind: sweep.Timeouts, Budget: time.Second, Margin: time.Second}
		out, err := h.Invoke(t.Context(), []byte(payload))
		if err != nil {
			t.Errorf("%s: Invoke = %v", name, err)
			continue
		}
		var s map[string]any
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("%s: output %q: %v", name, out, err)
		}
		if s["sweep"] != "timeouts" || s["timed_out"] != 2.0 || s["batches"] != 1.0 {
			t.Errorf("%s: summary %s, want sweep timeouts, timed_out 2, batches 1", name, out)
		}
		if len(store.calls) != 1 || store.calls[0] != "timeouts" {
			t.Errorf("%s: store calls %q, want [timeouts]", name, store.calls)
		}
	}
}

// TestSweepHandlerDeadline: the budget shrinks to fit the invocation.
func TestSweepHandlerDeadline(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	h := &lambdamain.SweepHandler{
		Runner: sweep.Runner{Store: &fakeSweeps{}},
		Kind:   sweep.Expiry, Budget: 50 * time.Second, Margin: 5 * time.Second,
		Now: func() time.Time { return now },
	}
	ctx, cancel := context.WithDeadline(t.Context(), now.Add(20*time.Second))
	defer cancel()
	s, err := h.Run(ctx, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.BudgetMS != 15000 || s.Sweep != sweep.Expiry {
		t.Errorf("summary %+v, want budget 15000 ms for expiry", s)
	}
}

// TestSweepHandlerError: a failing sweep is an invocation error without
// secrets.
func TestSweepHandlerError(t *testing.T) {
	t.Parallel()
	store := &fakeSweeps{failWith: errors.New("dial rediss://user:hunter2@cache:6379: refused")}
	h := &lambdamain.SweepHandler{Runner: sweep.Runner{Store: store}, Kind: sweep.Retries, Budget: time.Second}
	_, err := h.Invoke(t.Context(), []byte(`{}`))
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "retries") {
		t.Errorf("Invoke = %v, want a redacted error naming the sweep", err)
	}
}
