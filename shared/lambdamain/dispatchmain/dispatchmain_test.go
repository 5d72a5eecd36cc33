package dispatchmain_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/lambdamain/dispatchmain"
	"github.com/ocyless/ocyless/shared/metrics/emf/emftest"
	"github.com/ocyless/ocyless/shared/ocypod"
)

func TestBudget(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		deadline time.Time
		want     time.Duration
	}{
		{time.Time{}, time.Second},
		{now.Add(60 * time.Second), 55 * time.Second},
		{now.Add(3 * time.Second), 0},
		{now.Add(-time.Second), 0},
	} {
		if got := dispatchmain.Budget(now, tt.deadline, 5*time.Second, time.Second); got != tt.want {
			t.Errorf("Budget(deadline %v) = %v, want %v", tt.deadline, got, tt.want)
		}
	}
}

// fakeDispatcher answers its passes from a list, and moves a clock by
// step at each pass.
type fakeDispatcher struct {
	mu      sync.Mutex
	taken   []int
	err     error
	now     time.Time
	step    time.Duration
	passes  int
	budgets []time.Duration
}

func (f *fakeDispatcher) DispatchOnce(_ context.Context, budget time.Duration) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.passes++
	f.budgets = append(f.budgets, budget)
	f.now = f.now.Add(f.step)
	if f.err != nil {
		return 0, f.err
	}
	if len(f.taken) == 0 {
		return 0, nil
	}
	n := f.taken[0]
	f.taken = f.taken[1:]
	return n, nil
}

func (f *fakeDispatcher) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }

// TestRunLingers: passes go on at once while they find jobs, then until
// Linger has passed since the last that found some; every pass gets what
// is left of the budget; one metrics line per run.
func TestRunLingers(t *testing.T) {
	t.Parallel()
	f := &fakeDispatcher{taken: []int{3, 2}, now: time.Now(), step: 100 * time.Millisecond}
	var out bytes.Buffer
	h := &dispatchmain.Handler{Dispatcher: f, Linger: 250 * time.Millisecond, Poll: time.Millisecond, Margin: 5 * time.Second,
		Now: f.Now, Metrics: &out, KeyNamespace: "ns"}
	ctx, cancel := context.WithDeadline(t.Context(), f.Now().Add(65*time.Second))
	defer cancel()
	s, err := h.Run(ctx, []byte(`{"source":"ocyless.wake","queue":"q"}`))
	if err != nil {
		t.Fatal(err)
	}
	// Work at +100 and +200 ms; empty passes at +300, +400, +500: the
	// last is 300 ms after the last work.
	if s.Taken != 5 || s.Passes != 5 || f.passes != 5 {
		t.Errorf("summary %+v after %d passes, want 5 jobs in 5 passes", s, f.passes)
	}
	if s.BudgetMS != 60000 || f.budgets[0] != 60*time.Second || f.budgets[1] != 60*time.Second-100*time.Millisecond {
		t.Errorf("budget %d ms, passes' budgets %v, want 60 s less what passed", s.BudgetMS, f.budgets)
	}
	if _, _, err := emftest.Parse(out.Bytes()); err != nil || bytes.Count(out.Bytes(), []byte("\n")) != 1 {
		t.Errorf("metrics %q: %v, want one EMF line", out.String(), err)
	}

	// The schedule's tick does not linger: it stops at its first empty pass.
	f.taken, f.passes = []int{1}, 0
	s, err = h.Run(ctx, []byte(`{"source":"ocyless.schedule"}`))
	if err != nil || s.Taken != 1 || f.passes != 2 {
		t.Errorf("tick = %+v, %v after %d passes, want 1 job in 2 passes", s, err, f.passes)
	}
}

// TestRunStops: no pass without budget; a store error fails the run
// (redacted) after its metrics line.
func TestRunStops(t *testing.T) {
	t.Parallel()
	f := &fakeDispatcher{now: time.Now(), step: time.Millisecond}
	h := &dispatchmain.Handler{Dispatcher: f, Linger: time.Second, Poll: time.Millisecond, Margin: 5 * time.Second, Now: f.Now}
	ctx, cancel := context.WithDeadline(t.Context(), f.Now().Add(4*time.Second))
	defer cancel()
	if s, err := h.Run(ctx, nil); err != nil || f.passes != 0 || s.BudgetMS != 0 {
		t.Errorf("run inside the margin = %+v, %v after %d passes, want no pass", s, err, f.passes)
	}
	f.err = errors.New("redis://:hunter2@cache:6379 unreachable")
	var out bytes.Buffer
	h.Metrics = &out
	ctx2, cancel2 := context.WithDeadline(t.Context(), f.Now().Add(60*time.Second))
	defer cancel2()
	_, err := h.Run(ctx2, nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") || f.passes != 1 {
		t.Errorf("run with a failing store = %v after %d passes, want a redacted error after one", err, f.passes)
	}
	if out.Len() == 0 {
		t.Error("a failed run wrote no metrics line")
	}
}

// fakeStore answers UpdateJobs with one refusal per refuse entry.
type fakeStore struct {
	refuse map[uint64]bool
}

func (fakeStore) PushQueues(context.Context) (map[string]ocypod.QueueSettings, error) {
	return nil, nil
}
func (fakeStore) Take(context.Context, ocypod.TakeRequest) ([]ocypod.NextJob, error) {
	return nil, nil
}
func (s fakeStore) UpdateJobs(_ context.Context, items []ocypod.BatchUpdate, _ *ocypod.TakeRequest) ([]ocypod.BatchOutcome, []ocypod.NextJob, error) {
	out := make([]ocypod.BatchOutcome, len(items))
	for i, it := range items {
		if s.refuse[it.ID] {
			out[i].Err = ocypod.Invalid("no")
		}
	}
	return out, nil, nil
}

func TestCounts(t *testing.T) {
	t.Parallel()
	c := &dispatchmain.Counts{Store: fakeStore{refuse: map[uint64]bool{2: true}}}
	st := func(s ocypod.Status) *ocypod.Status { return &s }
	_, _, err := c.UpdateJobs(t.Context(), []ocypod.BatchUpdate{
		{ID: 1, Update: ocypod.JobUpdate{Status: st(ocypod.StatusCompleted)}},
		{ID: 2, Update: ocypod.JobUpdate{Status: st(ocypod.StatusCompleted)}}, // refused: not counted
		{ID: 3, Update: ocypod.JobUpdate{Status: st(ocypod.StatusFailed)}},
		{ID: 4, Update: ocypod.JobUpdate{Status: st(ocypod.StatusTimedOut)}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Snapshot(); got != (dispatchmain.Tally{Completed: 1, Failed: 1, TimedOut: 1}) {
		t.Errorf("tally %+v, want one of each", got)
	}
}

// TestRunSendsCallbacks: each pass sends the due callbacks after its
// deliveries, within what is left of the budget; callbacks sent count as
// work (the run goes on while there are some) and in the summary.
func TestRunSendsCallbacks(t *testing.T) {
	t.Parallel()
	f := &fakeDispatcher{now: time.Now(), step: time.Millisecond}
	batches := []int{2, 1}
	var deadlines []bool
	h := &dispatchmain.Handler{Dispatcher: f, Poll: time.Millisecond, Margin: 5 * time.Second, Now: f.Now,
		Callbacks: func(ctx context.Context) int {
			_, ok := ctx.Deadline()
			deadlines = append(deadlines, ok)
			if len(batches) == 0 {
				return 0
			}
			n := batches[0]
			batches = batches[1:]
			return n
		}}
	ctx, cancel := context.WithDeadline(t.Context(), f.Now().Add(60*time.Second))
	defer cancel()
	s, err := h.Run(ctx, []byte(`{"source":"ocyless.schedule"}`))
	if err != nil || s.Callbacks != 3 || s.Passes != 3 || len(deadlines) != 3 || !deadlines[0] {
		t.Errorf("tick = %+v, %v, callbacks called %d times (deadlines %v), want 3 callbacks over 3 passes, each call bounded",
			s, err, len(deadlines), deadlines)
	}
}
