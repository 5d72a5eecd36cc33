package sweep

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/redisstore"
)

// fakeStore replays scripted results for the timeouts sweep and counts calls.
type fakeStore struct {
	results []redisstore.SweepResult
	err     error
	calls   int
}

func (f *fakeStore) next() (redisstore.SweepResult, error) {
	f.calls++
	if f.err != nil {
		return redisstore.SweepResult{}, f.err
	}
	if len(f.results) == 0 {
		return redisstore.SweepResult{}, nil
	}
	r := f.results[0]
	f.results = f.results[1:]
	return r, nil
}

func (f *fakeStore) SweepTimeouts(context.Context) (redisstore.SweepResult, error) { return f.next() }
func (f *fakeStore) SweepRetries(context.Context) (redisstore.SweepResult, error)  { return f.next() }
func (f *fakeStore) SweepExpiry(context.Context) (redisstore.SweepResult, error)   { return f.next() }
func (f *fakeStore) SweepSchedules(context.Context) (redisstore.SweepResult, error) {
	return f.next()
}
func (f *fakeStore) SweepOutbox(context.Context) (redisstore.SweepResult, error) { return f.next() }

// fakeClock advances only when the runner sleeps.
type fakeClock struct {
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

func TestOnceDrainsBatches(t *testing.T) {
	t.Parallel()
	st := &fakeStore{results: []redisstore.SweepResult{
		{TimedOut: []uint64{1, 2}, More: true},
		{TimedOut: []uint64{3}, NextDue: time.Unix(100, 0)},
	}}
	tot, err := Once(t.Context(), st, Timeouts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tot.TimedOut != 3 || tot.Batches != 2 || st.calls != 2 {
		t.Fatalf("Once = %+v after %d calls, want 3 timed out in 2 batches", tot, st.calls)
	}
}

func TestRunWaitsForNextDueWithinBudget(t *testing.T) {
	t.Parallel()
	start := time.Unix(1000, 0)
	clk := &fakeClock{now: start}
	st := &fakeStore{results: []redisstore.SweepResult{
		{NextDue: start.Add(2 * time.Second)},
		{TimedOut: []uint64{7}, NextDue: start.Add(12 * time.Second)},
		{NextDue: start.Add(12 * time.Second)},
		{NextDue: start.Add(12 * time.Second)},
		{TimedOut: []uint64{8}, NextDue: start.Add(time.Hour)},
	}}
	r := Runner{Store: st, Now: clk.Now, Sleep: clk.Sleep, MaxWait: 5 * time.Second}
	tot, err := r.Run(t.Context(), Timeouts, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if tot.TimedOut != 2 || st.calls != 5 {
		t.Fatalf("TimedOut = %d after %d calls, want 2 after 5", tot.TimedOut, st.calls)
	}
	// 2s to the first due job, then MaxWait steps up to the next one at 12s,
	// then no wait for a job due past the budget.
	want := []time.Duration{2 * time.Second, 5 * time.Second, 5 * time.Second}
	if !slices.Equal(clk.sleeps, want) {
		t.Fatalf("sleeps = %v, want %v", clk.sleeps, want)
	}
}

func TestRunReturnsAtOnceWhenIdle(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{now: time.Unix(1000, 0)}
	st := &fakeStore{}
	r := Runner{Store: st, Now: clk.Now, Sleep: clk.Sleep}
	if _, err := r.Run(t.Context(), Expiry, time.Minute); err != nil {
		t.Fatal(err)
	}
	if st.calls != 1 || len(clk.sleeps) != 0 {
		t.Fatalf("idle run made %d calls and slept %v, want 1 call and no sleep", st.calls, clk.sleeps)
	}
}

func TestRunStopsWhenNextDueIsBeyondBudget(t *testing.T) {
	t.Parallel()
	start := time.Unix(1000, 0)
	clk := &fakeClock{now: start}
	st := &fakeStore{results: []redisstore.SweepResult{{NextDue: start.Add(time.Hour)}}}
	r := Runner{Store: st, Now: clk.Now, Sleep: clk.Sleep, MaxWait: time.Minute}
	if _, err := r.Run(t.Context(), Retries, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if len(clk.sleeps) != 0 {
		t.Fatalf("slept %v although nothing is due within the budget", clk.sleeps)
	}
}

func TestRunReportsStoreErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	st := &fakeStore{err: boom}
	_, err := Once(t.Context(), st, Retries, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("Once error = %v, want %v", err, boom)
	}
}

func TestParseKind(t *testing.T) {
	t.Parallel()
	for _, k := range Kinds {
		if got, err := ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := ParseKind("nope"); err == nil {
		t.Error("ParseKind(nope) succeeded")
	}
	if _, err := Once(t.Context(), &fakeStore{}, Kind("nope"), nil); err == nil {
		t.Error("Once with an unknown kind succeeded")
	}
}
