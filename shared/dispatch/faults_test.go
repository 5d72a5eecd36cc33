package dispatch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestBadTargets: a target that hangs, resets the connection, answers
// 10 MB or invalid JSON fails (or times out) the attempt with the right
// group, and meanwhile another push queue is served.
func TestBadTargets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{})
	release := make(chan struct{})
	defer close(release)
	hang := newTarget(t, func(w http.ResponseWriter, _ arrival) { <-release })
	reset := newTarget(t, func(w http.ResponseWriter, _ arrival) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = c.Close()
		}
	})
	huge := newTarget(t, func(w http.ResponseWriter, _ arrival) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `"`+strings.Repeat("x", 10<<20)+`"`)
	})
	badJSON := newTarget(t, func(w http.ResponseWriter, _ arrival) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"unterminated": `)
	})
	text := newTarget(t, func(w http.ResponseWriter, _ arrival) { _, _ = io.WriteString(w, "plain words") })
	good := newTarget(t, ok(`1`))

	e.pushQueue("hang", ocypod.DefaultQueueSettings(), push.Target{URL: hang.URL, Timeout: ocypod.Seconds(1), Concurrency: 1})
	e.pushQueue("reset", ocypod.DefaultQueueSettings(), push.Target{URL: reset.URL})
	e.pushQueue("huge", ocypod.DefaultQueueSettings(), push.Target{URL: huge.URL})
	e.pushQueue("bad", ocypod.DefaultQueueSettings(), push.Target{URL: badJSON.URL})
	e.pushQueue("text", ocypod.DefaultQueueSettings(), push.Target{URL: text.URL})
	e.pushQueue("good", ocypod.DefaultQueueSettings(), push.Target{URL: good.URL})
	e.d.Start()

	hung := e.create("hang", `1`)
	hang.next(t)
	// The hanging delivery holds its queue's one slot; other queues go on.
	for range 3 {
		id := e.create("good", `1`)
		good.next(t)
		if j := e.ended(id); j.Status != ocypod.StatusCompleted {
			t.Errorf("good job = %s while another queue's target hangs", j.Status)
		}
	}
	cases := []struct {
		queue, group string
		status       ocypod.Status
	}{
		{"reset", push.GroupUnreachable, ocypod.StatusFailed},
		{"huge", "push_http_200", ocypod.StatusFailed},
		{"bad", "push_http_200", ocypod.StatusFailed},
	}
	for _, c := range cases {
		id := e.create(c.queue, `1`)
		if j := e.ended(id); j.Status != c.status || j.Error == nil || j.Error.Group != c.group {
			t.Errorf("%s: job = %s %+v, want %s in %s", c.queue, j.Status, j.Error, c.status, c.group)
		}
	}
	if j := e.ended(hung); j.Status != ocypod.StatusTimedOut || j.Error == nil || j.Error.Group != push.GroupTimeout {
		t.Errorf("hang: job = %s %+v, want timed_out in %s", j.Status, j.Error, push.GroupTimeout)
	}
	id := e.create("text", `1`)
	if j := e.ended(id); j.Status != ocypod.StatusCompleted || string(j.Output) != `"plain words"` {
		t.Errorf("text: job = %s output %s, want completed with the answer as a JSON string", j.Status, j.Output)
	}
}

// TestAttemptFencing: an outcome is recorded for its attempt only: a job
// cancelled while it was being delivered stays cancelled.
func TestAttemptFencing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{})
	release := make(chan struct{})
	tg := newTarget(t, func(w http.ResponseWriter, _ arrival) {
		<-release
		_, _ = io.WriteString(w, `"late"`)
	})
	e.pushQueue("f", ocypod.DefaultQueueSettings(), push.Target{URL: tg.URL})
	e.d.Start()
	id := e.create("f", `1`)
	tg.next(t)
	cancelled := ocypod.StatusCancelled
	if _, _, err := e.store.UpdateJob(e.ctx, id, ocypod.JobUpdate{Status: &cancelled}, nil); err != nil {
		t.Fatal(err)
	}
	close(release)
	// Close waits until the delivery's outcome is handled.
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := e.d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if j := e.job(id); j.Status != ocypod.StatusCancelled || j.Output != nil {
		t.Errorf("job = %s output %s, want cancelled without output", j.Status, j.Output)
	}
}

// TestNoDoubleDelivery: two dispatchers (two processes) on one store
// deliver every job once, never one job twice at once.
func TestNoDoubleDelivery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{})
	other := New(e.store, Options{Deliverer: e.d.o.Deliverer, Refresh: time.Hour, Wait: time.Hour,
		NotPush: func(err error) bool { return errors.Is(err, redisstore.ErrNotPush) }})
	e.store.OnQueueChange(other.Changed)
	t.Cleanup(func() { _ = other.Close(context.Background()) })
	var mu sync.Mutex
	seen := map[string]int{}
	inFlight := map[string]bool{}
	tg := newTarget(t, func(w http.ResponseWriter, a arrival) {
		mu.Lock()
		seen[a.id]++
		if inFlight[a.id] {
			t.Errorf("job %s delivered twice at once", a.id)
		}
		inFlight[a.id] = true
		mu.Unlock()
		time.Sleep(time.Millisecond) // a target that takes a moment
		mu.Lock()
		delete(inFlight, a.id)
		mu.Unlock()
	})
	e.pushQueue("n", ocypod.DefaultQueueSettings(), push.Target{URL: tg.URL, Concurrency: 4})
	e.d.Start()
	other.Start()
	const n = 60
	ids := make([]uint64, 0, n)
	for i := range n {
		ids = append(ids, e.create("n", strconv.Itoa(i)))
	}
	for _, id := range ids {
		if j := e.ended(id); j.Status != ocypod.StatusCompleted || j.Attempt != 1 {
			t.Errorf("job %d = %s after %d attempts, want completed at the first", id, j.Status, j.Attempt)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range ids {
		if c := seen[strconv.FormatUint(id, 10)]; c != 1 {
			t.Errorf("job %d delivered %d times, want once", id, c)
		}
	}
}

// TestCloseWaitsForDeliveries: Close lets a delivery in flight finish and
// records it; a take is no longer made.
func TestCloseWaitsForDeliveries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{})
	release := make(chan struct{})
	tg := newTarget(t, func(w http.ResponseWriter, _ arrival) {
		<-release
		_, _ = io.WriteString(w, `"finished"`)
	})
	e.pushQueue("c", ocypod.DefaultQueueSettings(), push.Target{URL: tg.URL})
	e.d.Start()
	id := e.create("c", `1`)
	tg.next(t)
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		closed <- e.d.Close(ctx)
	}()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a delivery was in flight", err)
	case <-time.After(50 * time.Millisecond): // Close is given a moment to (wrongly) return
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatalf("Close = %v", err)
	}
	if j := e.job(id); j.Status != ocypod.StatusCompleted || string(j.Output) != `"finished"` {
		t.Errorf("job = %s output %s, want completed by the delivery Close waited for", j.Status, j.Output)
	}
	after := e.create("c", `2`)
	if j := e.job(after); j.Status != ocypod.StatusQueued {
		t.Errorf("a job created after Close = %s, want queued (no take after Close)", j.Status)
	}
}

// TestDispatchOnce: one bounded pass delivers what is due and returns
// once it is recorded.
func TestDispatchOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{})
	tg := newTarget(t, ok(`{"ok":true}`))
	e.pushQueue("o1", ocypod.DefaultQueueSettings(), push.Target{URL: tg.URL, Batch: 2, Concurrency: 2})
	e.pushQueue("o2", ocypod.DefaultQueueSettings(), push.Target{URL: tg.URL})
	var ids []uint64
	for i := range 5 {
		ids = append(ids, e.create("o1", strconv.Itoa(i)))
	}
	ids = append(ids, e.create("o2", `9`))
	n, err := e.d.DispatchOnce(e.ctx, bound)
	if err != nil || n != 5 {
		t.Fatalf("DispatchOnce = %d, %v, want 5 jobs (4 of o1: concurrency 2 × batch 2, 1 of o2)", n, err)
	}
	completed := 0
	for _, id := range ids {
		if e.job(id).Status == ocypod.StatusCompleted {
			completed++
		}
	}
	if completed != 5 {
		t.Errorf("%d jobs completed after the pass, want 5", completed)
	}
}

// TestConcurrencyBound: a push queue never has more deliveries in flight
// than its push concurrency.
func TestConcurrencyBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{})
	var mu sync.Mutex
	cur, most := 0, 0
	tg := newTarget(t, func(w http.ResponseWriter, _ arrival) {
		mu.Lock()
		cur++
		most = max(most, cur)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond) // a target that takes a moment, so deliveries overlap
		mu.Lock()
		cur--
		mu.Unlock()
	})
	e.pushQueue("c3", ocypod.DefaultQueueSettings(), push.Target{URL: tg.URL, Concurrency: 3})
	var ids []uint64
	for i := range 40 {
		ids = append(ids, e.create("c3", strconv.Itoa(i)))
	}
	e.d.Start()
	for _, id := range ids {
		if j := e.ended(id); j.Status != ocypod.StatusCompleted {
			t.Fatalf("job %d = %s", id, j.Status)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if most > 3 {
		t.Errorf("%d deliveries in flight at once, want at most the push concurrency 3", most)
	}
}

// TestKilledMidDelivery: a job whose dispatcher died while delivering it
// stays running until its timeout (at least the delivery's and a margin),
// is then timed out and delivered again by the queue's retry policy, as
// attempt 2.
func TestKilledMidDelivery(t *testing.T) {
	t.Parallel()
	clock := redistest.NewClock(time.Now())
	e := newEnv(t, redisstore.Options{Now: clock.Now})
	tg := newTarget(t, ok(`"second"`))
	qs := ocypod.DefaultQueueSettings()
	qs.Retries = 1
	qs.Timeout = ocypod.Seconds(2) // below the delivery's: raised to it
	e.pushQueue("k", qs, push.Target{URL: tg.URL, Timeout: ocypod.Seconds(10)})
	id := e.create("k", `1`)
	// The dead process: it took the job for delivery and never reported.
	jobs, err := e.store.Take(e.ctx, ocypod.TakeRequest{Queues: []string{"k"}, Worker: Worker, Push: true, PushTimeout: 10*time.Second + Margin})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("take = %v, %v", jobs, err)
	}
	e.d.Start()
	clock.Advance(10 * time.Second)
	if _, err := e.store.SweepTimeouts(e.ctx); err != nil {
		t.Fatal(err)
	}
	if j := e.job(id); j.Status != ocypod.StatusRunning {
		t.Fatalf("job = %s within its delivery timeout and margin, want running", j.Status)
	}
	select {
	case a := <-tg.arrivals:
		t.Fatalf("job delivered (attempt %s) while its first delivery may still be under way", a.attempt)
	default:
	}
	clock.Advance(Margin + 2*time.Second)
	if _, err := e.store.SweepTimeouts(e.ctx); err != nil {
		t.Fatal(err)
	}
	if a := tg.next(t); a.attempt != "2" {
		t.Errorf("redelivery attempt %q, want 2", a.attempt)
	}
	if j := e.ended(id); j.Status != ocypod.StatusCompleted || string(j.Output) != `"second"` || j.Attempt != 2 {
		t.Errorf("job = %s output %s attempt %d, want completed by the second delivery", j.Status, j.Output, j.Attempt)
	}
}
