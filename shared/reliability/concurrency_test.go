package reliability

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
	"github.com/ocyless/ocyless/shared/sweep"
)

// Plans for what the workers do with a job, chosen by its input.
const (
	planComplete = "complete" // done on first delivery
	planFail     = "fail"     // fails on every delivery: retried twice, then ends failed
	planAbandon  = "abandon"  // the first worker crashes; completed after the timeout and retry
)

const (
	soakTimeout    = 120 * time.Second // queue timeout, in clock time
	soakRetryDelay = 5 * time.Second
	soakRetries    = 2
)

// jobLog records what the workers saw of one job.
type jobLog struct {
	plan       string
	deliveries int
	completes  int
	fails      int
	holder     int       // worker holding the job now, -1 when none
	heldSince  time.Time // clock just before the holder's take
}

func newStore(t *testing.T, url, ns string, clk *redistest.Clock) *redisstore.Store {
	t.Helper()
	rdb, err := redisstore.NewClient(redisstore.ClientOptions{URL: url, PoolSize: 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	st, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestTwoStoresFiftyWorkers runs 50 workers against two store instances on
// one Redis while both instances run every sweep twice over (overlapping
// runs of the same sweep). Workers complete, fail and abandon jobs. Every job
// must end exactly as its plan says, no job may be held by two workers unless
// the first one's lease had expired, and /info's counters must match what the
// workers did.
func TestTwoStoresFiftyWorkers(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	ns := redistest.Namespace(t)
	clk := newClock()
	stores := []*redisstore.Store{newStore(t, srv.URL(), ns, clk), newStore(t, srv.URL(), ns, clk)}
	ctx := t.Context()

	settings := ocypod.DefaultQueueSettings()
	settings.Timeout = ocypod.FromStd(soakTimeout)
	settings.Retries = soakRetries
	settings.RetryDelays = []ocypod.Duration{ocypod.FromStd(soakRetryDelay)}
	settings.ExpiresAfter = ocypod.Seconds(0) // keep ended jobs for inspection
	if _, err := stores[0].PutQueue(ctx, "soak", settings); err != nil {
		t.Fatal(err)
	}

	const nJobs, nWorkers = 600, 50
	plans := []string{planComplete, planFail, planAbandon}
	var mu sync.Mutex
	jobs := map[uint64]*jobLog{}
	for i := range nJobs {
		plan := plans[i%len(plans)]
		input, _ := json.Marshal(map[string]string{"plan": plan})
		c, err := stores[i%2].CreateJob(ctx, "soak", ocypod.JobSpec{Input: input})
		id := c.ID
		if err != nil {
			t.Fatal(err)
		}
		jobs[id] = &jobLog{plan: plan, holder: -1}
	}

	var finished atomic.Int64 // jobs that reached their final state
	stop := make(chan struct{})
	var bg sync.WaitGroup
	// The clock: 1s of job time every 10ms of real time.
	bg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				clk.Advance(time.Second)
			}
		}
	})
	// Every sweep, twice per store, so runs of the same sweep overlap.
	var sweepErrs atomic.Int64
	for _, st := range stores {
		for _, kind := range sweep.Kinds {
			for range 2 {
				bg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := sweep.Once(ctx, st, kind, nil); err != nil {
							sweepErrs.Add(1)
							t.Errorf("sweep %s: %v", kind, err)
							return
						}
						time.Sleep(time.Millisecond) // pace the loop; correctness does not depend on it
					}
				})
			}
		}
	}

	var violations []string
	report := func(format string, args ...any) {
		mu.Lock()
		violations = append(violations, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	var workers sync.WaitGroup
	deadline := time.Now().Add(90 * time.Second)
	for w := range nWorkers {
		st := stores[w%2]
		workers.Go(func() {
			for finished.Load() < nJobs && time.Now().Before(deadline) {
				before := clk.Now()
				next, err := st.NextJob(ctx, "soak")
				if err != nil {
					report("worker %d: next job: %v", w, err)
					return
				}
				if next == nil {
					time.Sleep(time.Millisecond)
					continue
				}
				mu.Lock()
				jl := jobs[next.ID]
				if jl == nil {
					mu.Unlock()
					report("worker %d got unknown job %d", w, next.ID)
					continue
				}
				if jl.holder >= 0 && clk.Now().Sub(jl.heldSince) < soakTimeout+time.Second {
					report("job %d given to worker %d while worker %d held it since %v (now %v)", next.ID, w, jl.holder, jl.heldSince, clk.Now())
				}
				jl.deliveries++
				jl.holder, jl.heldSince = w, before
				plan, delivery := jl.plan, jl.deliveries
				mu.Unlock()

				switch {
				case plan == planAbandon && delivery == 1:
					continue // crash: never touch the job again
				case plan == planFail:
					_, _, err = st.UpdateJob(ctx, next.ID, ocypod.JobUpdate{Status: ptr(ocypod.StatusFailed)}, nil)
				default:
					if err = st.Heartbeat(ctx, next.ID, nil); err == nil {
						_, _, err = st.UpdateJob(ctx, next.ID, ocypod.JobUpdate{Status: ptr(ocypod.StatusCompleted), Output: json.RawMessage(`{"done":true}`)}, nil)
					}
				}
				if err != nil {
					report("worker %d: job %d (%s, delivery %d): %v", w, next.ID, plan, delivery, err)
					continue
				}
				mu.Lock()
				jl.holder = -1
				if plan == planFail {
					jl.fails++
					if jl.fails == soakRetries+1 {
						finished.Add(1)
					}
				} else {
					jl.completes++
					finished.Add(1)
				}
				mu.Unlock()
			}
		})
	}
	workers.Wait()
	close(stop)
	bg.Wait()
	if finished.Load() != nJobs {
		t.Fatalf("%d of %d jobs finished before the deadline", finished.Load(), nJobs)
	}
	for _, v := range violations {
		t.Error(v)
	}

	// Every job ended as planned, once.
	var want ocypod.Statistics
	want.Created = nJobs
	counts := ocypod.QueueCounts{}
	for id, jl := range jobs {
		job, err := stores[0].GetJob(ctx, id)
		if err != nil {
			t.Fatalf("job %d: %v", id, err)
		}
		switch jl.plan {
		case planComplete:
			check(t, id, job, ocypod.StatusCompleted, 0, jl.deliveries == 1 && jl.completes == 1)
			want.Completed++
			counts.Completed++
		case planAbandon:
			check(t, id, job, ocypod.StatusCompleted, 1, jl.deliveries == 2 && jl.completes == 1)
			want.Completed++
			want.TimedOut++
			want.Retried++
			counts.Completed++
		case planFail:
			check(t, id, job, ocypod.StatusFailed, soakRetries, jl.deliveries == soakRetries+1 && jl.fails == soakRetries+1)
			if !job.Ended() {
				t.Errorf("job %d: failed with retries exhausted but ended=false", id)
			}
			want.Failed += soakRetries + 1
			want.Retried += soakRetries
			counts.Failed++
		}
	}
	info, err := stores[1].Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Statistics != want {
		t.Errorf("statistics = %+v, want %+v", info.Statistics, want)
	}
	if got := info.Queues["soak"]; got != counts {
		t.Errorf("queue counts = %+v, want %+v", got, counts)
	}
}

func check(t *testing.T, id uint64, job *ocypod.Job, status ocypod.Status, attempted uint64, seenOK bool) {
	t.Helper()
	if job.Status != status || job.RetriesAttempted != attempted || !seenOK {
		t.Errorf("job %d: status %s, retries_attempted %d, worker log ok=%v; want %s, %d, true",
			id, job.Status, job.RetriesAttempted, seenOK, status, attempted)
	}
}

func ptr[T any](v T) *T { return &v }
