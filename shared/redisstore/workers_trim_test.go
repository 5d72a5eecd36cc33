package redisstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// workerTrimCases: the worker registry forgets workers not seen for
// Options.WorkerExpiry (an hour here), on the next takes and sweeps.
var workerTrimCases = []conformanceCase{
	{name: "expired workers leave the registry", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(0, 0, 0, 0))
		registry := func() int64 {
			var n int64
			for p := range h.P {
				n += h.rdb.ZCard(h.ctx, h.lay.Key(p, "wks")).Val()
			}
			return n
		}
		const old = 25
		for i := range old {
			id := h.create("q", ocypod.JobSpec{})
			jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"q"}, Worker: fmt.Sprint("w", i)})
			if err != nil || len(jobs) != 1 || jobs[0].ID != id {
				t.Fatalf("take by w%d = %v, %v", i, jobs, err)
			}
			h.complete(id)
		}
		if n := registry(); n != old {
			t.Fatalf("registry holds %d workers, want %d", n, old)
		}
		h.clock.Advance(2 * time.Hour)
		// A take by a new worker forgets a few; the expiry sweep the rest.
		id := h.create("q", ocypod.JobSpec{})
		if jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"q"}, Worker: "new"}); err != nil || len(jobs) != 1 || jobs[0].ID != id {
			t.Fatalf("take by new = %v, %v", jobs, err)
		}
		if n := registry(); h.P == 1 && n != old+1-10 {
			t.Fatalf("after one take the registry holds %d workers, want %d", n, old+1-10)
		}
		for range 10 {
			r := h.sweepExpiry()
			if !r.More {
				break
			}
		}
		if n := registry(); n != 1 {
			t.Fatalf("after the expiry sweep the registry holds %d workers, want 1", n)
		}
		ws, err := h.s.Workers(h.ctx)
		if err != nil || len(ws) != 1 || ws[0].Name != "new" {
			t.Fatalf("Workers = %+v, %v", ws, err)
		}
	}},
}
