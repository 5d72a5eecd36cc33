package redisstore_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestUpdateTakeRacingQueueDelete: a completion with a take from a queue
// of another partition, racing the deletion of that queue, answers the
// completion's truth: applied and no job (the queue went first or in
// between), or refused with nothing applied (404 before the change); never
// a 404 for a completion that was applied. On a plain server and on a
// cluster of three primaries, with four partitions.
func TestUpdateTakeRacingQueueDelete(t *testing.T) {
	t.Parallel()
	for _, b := range []struct {
		name string
		rdb  func(testing.TB) redis.UniversalClient
	}{
		{"redis-P4", func(tb testing.TB) redis.UniversalClient { return redistest.Shared(tb).Client() }},
		{"cluster3-P4", func(tb testing.TB) redis.UniversalClient { return redistest.SharedCluster3(tb).Client() }},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, b.rdb(t), 4, redisstore.Options{})
			h.putQueue("src", settings(600, 0, 600, 0))
			const rounds = 150
			applied404, before, after := 0, 0, 0
			for i := range rounds {
				tq := h.queueApart(fmt.Sprintf("take%d-", i), "src")
				h.putQueue(tq, settings(600, 0, 600, 0))
				if i%2 == 0 {
					h.shardTo(tq) // takes over several partitions
				}
				h.create(tq, ocypod.JobSpec{})
				id := h.create("src", ocypod.JobSpec{})
				h.take("src", id)
				var wg sync.WaitGroup
				var uerr, derr error
				var taken []ocypod.NextJob
				start := make(chan struct{})
				wg.Go(func() {
					<-start
					_, taken, uerr = h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted)},
						&ocypod.TakeRequest{Queues: []string{tq}, Count: 1})
				})
				wg.Go(func() {
					<-start
					derr = h.s.DeleteQueue(h.ctx, tq)
				})
				close(start)
				wg.Wait()
				if derr != nil {
					t.Fatalf("round %d: DeleteQueue = %v", i, derr)
				}
				st, err := h.s.JobStatus(h.ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case uerr == nil && st == ocypod.StatusCompleted:
					if len(taken) == 0 {
						after++
					}
				case ocypod.ErrorKind(uerr) == ocypod.KindNotFound && st == ocypod.StatusRunning:
					before++ // refused before the change: nothing applied
					h.complete(id)
				case ocypod.ErrorKind(uerr) == ocypod.KindNotFound:
					applied404++
				default:
					t.Fatalf("round %d: UpdateJob = %v with the job %s", i, uerr, st)
				}
			}
			t.Logf("%d rounds: %d refused before the change, %d applied with no job taken, %d answered 404 although applied",
				rounds, before, after, applied404)
			if applied404 > 0 {
				t.Fatalf("%d of %d completions answered 404 although they were applied", applied404, rounds)
			}
		})
	}
}
