package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// wakeBound is how soon a waiting take must answer after the event that
// lets it take a job (a millisecond or two when the machine is idle):
// generous, since it only tells a wake-up from the end of the wait (the
// takes below wait 8 s), on a loaded machine too.
const wakeBound = 3 * time.Second

// longPollWait is the wait of the takes below.
const longPollWait = 8 * time.Second

// parkedTake is a long-polling take running in the background.
type parkedTake struct {
	got chan takeResult
}

type takeResult struct {
	jobs []ocypod.NextJob
	err  error
	at   time.Time
}

// parkTake starts req on s and returns once it waits between two attempts
// (its first found nothing), s's wake subscription being up before.
func parkTake(t *testing.T, s *redisstore.Store, req ocypod.TakeRequest) *parkedTake {
	t.Helper()
	redisstore.Subscribed(t, s)
	parked := make(chan struct{}, 64)
	redisstore.OnPark(s, func() {
		select {
		case parked <- struct{}{}:
		default:
		}
	})
	p := &parkedTake{got: make(chan takeResult, 1)}
	go func() {
		jobs, err := s.Take(t.Context(), req)
		p.got <- takeResult{jobs, err, time.Now()}
	}()
	select {
	case <-parked:
	case r := <-p.got:
		t.Fatalf("take %+v answered at once: %+v, %v", req, r.jobs, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the take never started waiting")
	}
	return p
}

// answer waits for the take's answer and checks that it came within
// wakeBound of since and holds job want.
func (p *parkedTake) answer(t *testing.T, what string, since time.Time, want uint64) {
	t.Helper()
	r := <-p.got
	if r.err != nil {
		t.Fatalf("%s: take failed: %v", what, r.err)
	}
	if len(r.jobs) != 1 || r.jobs[0].ID != want {
		t.Fatalf("%s: take = %+v, want job %d", what, r.jobs, want)
	}
	t.Logf("%s: answered after %v", what, r.at.Sub(since))
	if el := r.at.Sub(since); el > wakeBound {
		t.Fatalf("%s: the waiting take answered %v later, not woken (bound %v)", what, el, wakeBound)
	}
}

// longPollCases: a waiting take answers within moments of the event that
// lets it take a job, on every backend (miniredis included), whatever the
// partitions its queues span and whichever process causes the event.
var longPollCases = []conformanceCase{
	{"long-poll over partitions wakes on a create in another process", redisstore.Options{}, func(t *testing.T, h *harness) {
		h.putQueue("a", ocypod.DefaultQueueSettings())
		h.putQueue("q", ocypod.DefaultQueueSettings())
		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Shards: u64(uint64(h.P))}); err != nil {
			t.Fatal(err)
		}
		// Another process on the same Redis and namespace.
		other, err := redisstore.New(h.rdb, redisstore.Options{Namespace: h.ns, Partitions: h.P, Now: h.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		for _, queues := range [][]string{{"q"}, {"a", "q"}} {
			p := parkTake(t, h.s, ocypod.TakeRequest{Queues: queues, Wait: longPollWait})
			since := time.Now()
			c, err := other.CreateJob(h.ctx, "q", ocypod.JobSpec{})
			if err != nil {
				t.Fatal(err)
			}
			p.answer(t, "create", since, c.ID)
		}
	}},
	{"long-poll wakes when a concurrency slot frees", redisstore.Options{}, func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Concurrency: u64(1)}); err != nil {
			t.Fatal(err)
		}
		first := h.create("q", ocypod.JobSpec{})
		second := h.create("q", ocypod.JobSpec{})
		h.take("q", first)
		p := parkTake(t, h.s, ocypod.TakeRequest{Queues: []string{"q"}, Wait: longPollWait})
		since := time.Now()
		h.setStatus(first, ocypod.StatusCompleted)
		p.answer(t, "slot freed", since, second)
	}},
	{"long-poll wakes when its queue resumes", redisstore.Options{}, func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		paused := true
		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Paused: &paused}); err != nil {
			t.Fatal(err)
		}
		id := h.create("q", ocypod.JobSpec{})
		p := parkTake(t, h.s, ocypod.TakeRequest{Queues: []string{"q"}, Wait: longPollWait})
		since := time.Now()
		paused = false
		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Paused: &paused}); err != nil {
			t.Fatal(err)
		}
		p.answer(t, "resume", since, id)
	}},
	{"long-poll wakes when a rate limit token returns", redisstore.Options{}, func(t *testing.T, h *harness) {
		h.putQueue("q", ocypod.DefaultQueueSettings())
		if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{RateLimit: &ocypod.RateLimit{PerSecond: 5, Burst: 1}}); err != nil {
			t.Fatal(err)
		}
		first := h.create("q", ocypod.JobSpec{})
		second := h.create("q", ocypod.JobSpec{})
		h.take("q", first)
		// The bucket is empty on the store's clock: the take waits for
		// the next token, due 200 ms later on that clock.
		p := parkTake(t, h.s, ocypod.TakeRequest{Queues: []string{"q"}, Wait: longPollWait})
		since := time.Now()
		h.clock.Advance(200 * time.Millisecond)
		p.answer(t, "token", since, second)
	}},
}

// TestLongPollCancelled: a waiting take whose caller gives up answers at
// once and leaves the store's hub.
func TestLongPollCancelled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, redistest.Shared(t).Client(), 1, redisstore.Options{})
	h.putQueue("q", ocypod.DefaultQueueSettings())
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan time.Time, 1)
	parked := make(chan struct{}, 1)
	redisstore.OnPark(h.s, func() {
		select {
		case parked <- struct{}{}:
		default:
		}
	})
	go func() {
		_, _ = h.s.Take(ctx, ocypod.TakeRequest{Queues: []string{"q"}, Wait: longPollWait})
		done <- time.Now()
	}()
	<-parked
	since := time.Now()
	cancel()
	if el := (<-done).Sub(since); el > wakeBound {
		t.Fatalf("a cancelled take answered %v later", el)
	}
	if n, _ := redisstore.LongPolls(h.s); n != 0 {
		t.Fatalf("%d takes still waiting after the only one was cancelled", n)
	}
}

// parkTakes starts n takes of req on s and returns once every one waits;
// each one's error goes to the returned channel when it answers.
func parkTakes(t *testing.T, ctx context.Context, s *redisstore.Store, n int, req ocypod.TakeRequest) chan error {
	t.Helper()
	redisstore.Subscribed(t, s)
	parked := make(chan struct{}, 1)
	redisstore.OnPark(s, func() {
		select {
		case parked <- struct{}{}:
		default:
		}
	})
	done := make(chan error, n)
	for range n {
		go func() {
			_, err := s.Take(ctx, req)
			done <- err
		}()
	}
	deadline := time.After(20 * time.Second)
	for {
		if _, p := redisstore.LongPolls(s); p == int64(n) {
			return done
		}
		select {
		case <-parked:
		case err := <-done:
			t.Fatalf("a take answered at once: %v", err)
		case <-deadline:
			_, p := redisstore.LongPolls(s)
			t.Fatalf("only %d of %d takes started waiting", p, n)
		}
	}
}

// TestLongPollsLeaveThePoolFree: more waiting takes than the client has
// pooled connections, over several partitions, hold none of them: the
// health check and other requests go on at once; when their callers give
// up, the takes answer at once and leave nothing behind.
func TestLongPollsLeaveThePoolFree(t *testing.T) {
	t.Parallel()
	const pool, waiters = 4, 24
	rdb := mustClient(t, redisstore.ClientOptions{URL: redistest.Shared(t).URL(), PoolSize: pool})
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t), Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"a", "q"} {
		if _, err := s.PutQueue(t.Context(), q, ocypod.DefaultQueueSettings()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PatchQueue(t.Context(), "q", ocypod.QueuePatch{Shards: u64(4)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := parkTakes(t, ctx, s, waiters, ocypod.TakeRequest{Queues: []string{"a", "q"}, Wait: longPollWait})

	start := time.Now()
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("health check with %d takes waiting: %v", waiters, err)
	}
	if _, err := s.CreateJob(t.Context(), "a", ocypod.JobSpec{}); err != nil {
		t.Fatalf("create with %d takes waiting: %v", waiters, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the woken take failed: %v", err)
	}
	if el := time.Since(start); el > wakeBound {
		t.Fatalf("health check, create and the take it woke took %v with %d takes waiting", el, waiters)
	}

	start = time.Now()
	cancel()
	for range waiters - 1 {
		<-done
	}
	if el := time.Since(start); el > wakeBound {
		t.Fatalf("cancelled takes answered within %v", el)
	}
	if n, _ := redisstore.LongPolls(s); n != 0 {
		t.Fatalf("%d takes still waiting after every caller gave up", n)
	}
	st := rdb.PoolStats()
	if st.TotalConns > pool || st.IdleConns != st.TotalConns {
		t.Fatalf("pool after the takes: %d connections, %d idle (pool %d)", st.TotalConns, st.IdleConns, pool)
	}
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("health check after the takes: %v", err)
	}
}

// TestLongPollCap: past Options.MaxLongPolls waiting takes, a take
// answers at once instead of waiting.
func TestLongPollCap(t *testing.T) {
	t.Parallel()
	s, err := redisstore.New(redistest.Shared(t).Client(), redisstore.Options{Namespace: redistest.Namespace(t), MaxLongPolls: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutQueue(t.Context(), "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	// Subscribed's own waiter is gone once it returns: 4 places are free.
	done := parkTakes(t, t.Context(), s, 4, ocypod.TakeRequest{Queues: []string{"q"}, Wait: longPollWait})
	start := time.Now()
	jobs, err := s.Take(t.Context(), ocypod.TakeRequest{Queues: []string{"q"}, Wait: longPollWait})
	if err != nil || len(jobs) != 0 || time.Since(start) > wakeBound {
		t.Fatalf("a fifth waiting take = %+v, %v after %v; want nothing at once", jobs, err, time.Since(start))
	}
	// The waiting ones are still served.
	if _, err := s.CreateJob(t.Context(), "q", ocypod.JobSpec{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || time.Since(start) > wakeBound {
		t.Fatalf("a waiting take woken by a create: %v after %v", err, time.Since(start))
	}
}

// TestLongPollLambdaPool: a function's pool of 2 connections serves a
// take waiting over a sharded queue on 4 partitions and over 3 queues of
// different partitions, woken by a create in another process.
func TestLongPollLambdaPool(t *testing.T) {
	t.Parallel()
	url, ns := redistest.Shared(t).URL(), redistest.Namespace(t)
	rdb := mustClient(t, redisstore.ClientOptions{URL: url, PoolSize: 2})
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	other, err := redisstore.New(redistest.Shared(t).Client(), redisstore.Options{Namespace: ns, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	queues := []string{"a", "b", "c", "q"}
	for _, q := range queues {
		if _, err := other.PutQueue(t.Context(), q, ocypod.DefaultQueueSettings()); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.PatchQueue(t.Context(), "q", ocypod.QueuePatch{Shards: u64(4)}); err != nil {
		t.Fatal(err)
	}
	for _, take := range [][]string{{"q"}, {"a", "b", "c"}} {
		p := parkTake(t, s, ocypod.TakeRequest{Queues: take, Wait: longPollWait})
		since := time.Now()
		c, err := other.CreateJob(t.Context(), take[len(take)-1], ocypod.JobSpec{})
		if err != nil {
			t.Fatal(err)
		}
		p.answer(t, "create into "+take[len(take)-1], since, c.ID)
	}
}

// TestLongPollCluster3: on a cluster of 3 primaries, a take waiting in one
// process over a queue sharded on 4 partitions (on different nodes) is
// woken by a create in another process, whichever node it lands on.
func TestLongPollCluster3(t *testing.T) {
	t.Parallel()
	a, b, _ := twoProcessesOnCluster3(t)
	for i := range 4 {
		p := parkTake(t, a, ocypod.TakeRequest{Queues: []string{"q"}, Wait: longPollWait})
		since := time.Now()
		j, err := b.CreateJob(t.Context(), "q", ocypod.JobSpec{})
		if err != nil {
			t.Fatal(err)
		}
		p.answer(t, fmt.Sprintf("create %d", i), since, j.ID)
	}
}

// TestLongPollSubscriptionLost: when the wake subscription's connection is
// killed, a waiting take still gets a job created meanwhile: the new
// subscription makes every waiter look again.
func TestLongPollSubscriptionLost(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	rdb := srv.Client()
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutQueue(t.Context(), "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	p := parkTake(t, s, ocypod.TakeRequest{Queues: []string{"q"}, Wait: longPollWait})
	since := time.Now()
	if err := rdb.Do(t.Context(), "client", "kill", "type", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	j, err := s.CreateJob(t.Context(), "q", ocypod.JobSpec{})
	if err != nil {
		t.Fatal(err)
	}
	p.answer(t, "create while the subscription was down", since, j.ID)
}

// TestLongPollRateLimitedWorkers: workers long-polling a queue limited to
// 5 jobs a second get about 5 a second, each take woken by the next token
// instead of sleeping out its wait.
func TestLongPollRateLimitedWorkers(t *testing.T) {
	t.Parallel()
	s, err := redisstore.New(redistest.Shared(t).Client(), redisstore.Options{Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := s.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	if err := s.PatchQueue(ctx, "q", ocypod.QueuePatch{RateLimit: &ocypod.RateLimit{PerSecond: 5, Burst: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateJobs(ctx, "q", make([]ocypod.JobSpec, 100)); err != nil {
		t.Fatal(err)
	}
	const workers, run = 3, 2 * time.Second
	end := time.Now().Add(run)
	got := make(chan int, workers)
	for range workers {
		go func() {
			n := 0
			for time.Until(end) > 0 {
				jobs, err := s.Take(ctx, ocypod.TakeRequest{Queues: []string{"q"}, Wait: time.Until(end)})
				if err != nil {
					t.Error(err)
					break
				}
				n += len(jobs)
			}
			got <- n
		}()
	}
	total := 0
	for range workers {
		total += <-got
	}
	// 1 at once and 5 a second after: 11 in 2 s (one more for a take
	// just past the end); at least 6 on a loaded machine. Takes that sleep
	// out their wait get 1, then one each at its end.
	if total < 6 || total > 12 {
		t.Fatalf("%d workers long-polling a 5/s queue took %d jobs in %v, want 6 to 12", workers, total, run)
	}
}

// twoProcessesOnCluster3 is two stores (two processes) on one namespace of
// a cluster of 3 primaries with 4 partitions, and a queue "q" spread over 4
// shards (so on different nodes), and the namespace.
func twoProcessesOnCluster3(t *testing.T) (a, b *redisstore.Store, ns string) {
	t.Helper()
	c := redistest.SharedCluster3(t)
	ns = redistest.Namespace(t)
	open := func() *redisstore.Store {
		rdb := mustClient(t, redisstore.ClientOptions{URL: c.URL(), ClusterMode: true, PoolSize: 2})
		s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Partitions: 4})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b = open(), open()
	if _, err := b.PutQueue(t.Context(), "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	if err := b.PatchQueue(t.Context(), "q", ocypod.QueuePatch{Shards: u64(4)}); err != nil {
		t.Fatal(err)
	}
	return a, b, ns
}
