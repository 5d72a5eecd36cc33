package redisstore_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// Benchmarks run against the package's private redis-server (unix socket),
// one namespace each: they measure a script's round trip plus its work.

type benchStore struct {
	s     *redisstore.Store
	clock *redistest.Clock
	ctx   context.Context
}

func newBench(b *testing.B, opts redisstore.Options) *benchStore {
	b.Helper()
	c := redistest.NewClock(t0)
	opts.Namespace, opts.Now = redistest.Namespace(b), c.Now
	s, err := redisstore.New(redistest.Shared(b).Client(), opts)
	if err != nil {
		b.Fatal(err)
	}
	bs := &benchStore{s: s, clock: c, ctx: context.Background()}
	if _, err := s.PutQueue(bs.ctx, "q", settings(60, 30, 60, 0)); err != nil {
		b.Fatal(err)
	}
	return bs
}

// seed creates n jobs and, if take, starts them; it returns their ids.
func (bs *benchStore) seed(b *testing.B, n int, take bool) []uint64 {
	b.Helper()
	ids := make([]uint64, n)
	for i := range ids {
		c, err := bs.s.CreateJob(bs.ctx, "q", ocypod.JobSpec{Input: json.RawMessage(`{"n":1}`), Tags: []string{"bench"}})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = c.ID
		if take {
			if _, err := bs.s.NextJob(bs.ctx, "q"); err != nil {
				b.Fatal(err)
			}
		}
	}
	return ids
}

func BenchmarkCreateJob(b *testing.B) {
	bs := newBench(b, redisstore.Options{})
	spec := ocypod.JobSpec{Input: json.RawMessage(`{"n":1}`), Tags: []string{"a", "b"}}
	for b.Loop() {
		if _, err := bs.s.CreateJob(bs.ctx, "q", spec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNextJob(b *testing.B) {
	bs := newBench(b, redisstore.Options{})
	bs.seed(b, b.N, false)
	b.ResetTimer()
	for range b.N {
		if j, err := bs.s.NextJob(bs.ctx, "q"); err != nil || j == nil {
			b.Fatal(j, err)
		}
	}
}

func BenchmarkNextJobEmpty(b *testing.B) {
	bs := newBench(b, redisstore.Options{})
	for b.Loop() {
		if _, err := bs.s.NextJob(bs.ctx, "q"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHeartbeat(b *testing.B) {
	bs := newBench(b, redisstore.Options{})
	id := bs.seed(b, 1, true)[0]
	for b.Loop() {
		if err := bs.s.Heartbeat(bs.ctx, id, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkComplete(b *testing.B) {
	bs := newBench(b, redisstore.Options{})
	ids := bs.seed(b, b.N, true)
	st := ocypod.StatusCompleted
	b.ResetTimer()
	for i := range b.N {
		if _, _, err := bs.s.UpdateJob(bs.ctx, ids[i], ocypod.JobUpdate{Status: &st}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetJob(b *testing.B) {
	bs := newBench(b, redisstore.Options{})
	id := bs.seed(b, 1, true)[0]
	for b.Loop() {
		if _, err := bs.s.GetJob(bs.ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSweepTimeouts reports the cost per timed-out job, in batches of
// the default 100.
func BenchmarkSweepTimeouts(b *testing.B) {
	bs := newBench(b, redisstore.Options{InlineSweep: -1})
	bs.seed(b, b.N, true)
	bs.clock.Advance(time.Hour)
	b.ResetTimer()
	for n := 0; n < b.N; {
		r, err := bs.s.SweepTimeouts(bs.ctx)
		if err != nil || len(r.TimedOut) == 0 {
			b.Fatal(r, err)
		}
		n += len(r.TimedOut)
	}
}

func BenchmarkSweepExpiry(b *testing.B) {
	bs := newBench(b, redisstore.Options{InlineSweep: -1})
	ids := bs.seed(b, b.N, true)
	st := ocypod.StatusCompleted
	for _, id := range ids {
		if _, _, err := bs.s.UpdateJob(bs.ctx, id, ocypod.JobUpdate{Status: &st}, nil); err != nil {
			b.Fatal(err)
		}
	}
	bs.clock.Advance(time.Hour)
	b.ResetTimer()
	for n := 0; n < b.N; {
		r, err := bs.s.SweepExpiry(bs.ctx)
		if err != nil || len(r.Expired) == 0 {
			b.Fatal(r, err)
		}
		n += len(r.Expired)
	}
}

func BenchmarkInfo(b *testing.B) {
	bs := newBench(b, redisstore.Options{})
	bs.seed(b, 100, false)
	for b.Loop() {
		if _, err := bs.s.Info(bs.ctx); err != nil {
			b.Fatal(err)
		}
	}
}
