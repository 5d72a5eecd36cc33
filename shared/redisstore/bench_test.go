package redisstore_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
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

// BenchmarkAutoPipelineCluster runs job lifecycles (create, take, complete:
// three calls) from 50 goroutines over six namespaces spread on the shared
// 3-primary cluster, with automatic pipelining on (the default) and off, in
// 4 rounds of 10,000 lifecycles each way, alternating (whatever b.N): the
// medians of redis-server CPU per lifecycle summed over the nodes (INFO
// cpu) and of lifecycles/s, and of the per-round ratios on / off. Run it
// alone:
//
//	go test -run '^$' -bench AutoPipelineCluster -benchtime 1x ./shared/redisstore/
func BenchmarkAutoPipelineCluster(b *testing.B) {
	const rounds, lifecycles, workers = 4, 10000, 50
	c := redistest.SharedCluster3(b)
	ctx := context.Background()
	run := func(ap int) (cpuUS, rate float64) {
		rdb, err := redisstore.NewClient(redisstore.ClientOptions{URL: c.URL(), ClusterMode: true})
		if err != nil {
			b.Fatal(err)
		}
		defer rdb.Close()
		var stores []*redisstore.Store
		for range 6 {
			s, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(b), AutoPipeline: ap})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
				b.Fatal(err)
			}
			stores = append(stores, s)
		}
		cpu0, t0 := clusterCPU(b, c), time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		done := ocypod.StatusCompleted
		for w := range workers {
			s := stores[w%len(stores)]
			wg.Go(func() {
				for next.Add(1) <= lifecycles {
					if _, err := s.CreateJob(ctx, "q", ocypod.JobSpec{}); err != nil {
						b.Error(err)
						return
					}
					j, err := s.NextJob(ctx, "q")
					if err != nil || j == nil {
						b.Error("take", err)
						return
					}
					if _, _, err := s.UpdateJob(ctx, j.ID, ocypod.JobUpdate{Status: &done}, nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		wall := time.Since(t0)
		return (clusterCPU(b, c) - cpu0) * 1e6 / lifecycles, lifecycles / wall.Seconds()
	}
	var onCPU, offCPU, onRate, offRate, cpuRatio, rateRatio []float64
	for round := range rounds {
		var r [2][2]float64
		for k := range 2 {
			side := (k + round) % 2 // 0 on, 1 off
			r[side][0], r[side][1] = run([]int{0, -1}[side])
		}
		onCPU, offCPU = append(onCPU, r[0][0]), append(offCPU, r[1][0])
		onRate, offRate = append(onRate, r[0][1]), append(offRate, r[1][1])
		cpuRatio, rateRatio = append(cpuRatio, r[0][0]/r[1][0]), append(rateRatio, r[0][1]/r[1][1])
	}
	median := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	b.Logf("CPU on / off per round %.2f; lifecycles/s on / off %.2f", cpuRatio, rateRatio)
	b.ReportMetric(median(onCPU), "on-redis-cpu-us/lifecycle")
	b.ReportMetric(median(offCPU), "off-redis-cpu-us/lifecycle")
	b.ReportMetric(median(onRate), "on-lifecycles/s")
	b.ReportMetric(median(offRate), "off-lifecycles/s")
	b.ReportMetric(median(cpuRatio), "cpu-on/off")
	b.ReportMetric(median(rateRatio), "rate-on/off")
	b.ReportMetric(0, "ns/op")
}

// clusterCPU is the CPU every node of c has used (INFO cpu, user + sys).
func clusterCPU(b *testing.B, c *redistest.Cluster) float64 {
	b.Helper()
	stats, err := c.Stats(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, st := range stats {
		total += st.CPUSys + st.CPUUser
	}
	return total
}
