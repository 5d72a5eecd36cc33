package redisstore_test

import (
	"encoding/json"
	"strconv"
	"sync"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestConcurrentDrain has 50 workers drain 2,000 jobs from one queue while a
// sweeper runs: every job is delivered exactly once, with its own input.
func TestConcurrentDrain(t *testing.T) {
	t.Parallel()
	const workers, jobs = 50, 2000
	h := newHarness(t, redistest.Shared(t).Client(), 1, redisstore.Options{})
	h.putQueue("q", settings(300, 0, 300, 0))
	want := map[uint64]string{}
	for i := range jobs {
		in := strconv.Itoa(i)
		want[h.create("q", ocypod.JobSpec{Input: json.RawMessage(in)})] = in
	}
	var (
		mu        sync.Mutex
		delivered = map[uint64]int{}
		wg        sync.WaitGroup
		stop      = make(chan struct{})
	)
	ctx := t.Context()
	swept := make(chan struct{})
	go func() { // a sweeper racing the workers; nothing is due
		defer close(swept)
		for {
			select {
			case <-stop:
				return
			default:
				if _, err := h.s.SweepTimeouts(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	for range workers {
		wg.Go(func() {
			for {
				j, err := h.s.NextJob(ctx, "q")
				if err != nil {
					t.Error(err)
					return
				}
				if j == nil {
					return
				}
				if string(j.Input) != want[j.ID] {
					t.Errorf("job %d input = %s, want %s", j.ID, j.Input, want[j.ID])
				}
				mu.Lock()
				delivered[j.ID]++
				mu.Unlock()
				if _, _, err := h.s.UpdateJob(ctx, j.ID, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted)}, nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-swept // no sweep in flight when the test ends (and its context is cancelled)
	if len(delivered) != jobs {
		t.Fatalf("%d jobs delivered, want %d", len(delivered), jobs)
	}
	for id, n := range delivered {
		if n != 1 {
			t.Errorf("job %d delivered %d times", id, n)
		}
	}
	if s := h.info().Statistics; s.Completed != jobs {
		t.Errorf("completed = %d, want %d", s.Completed, jobs)
	}
}
