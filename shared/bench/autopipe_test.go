package bench_test

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/ocyless/ocyless/shared/redisstore"
)

// autoPipeSizes: the peer comparison's lifecycle shape (50 workers), without
// the memory phase.
var (
	benchAutoPipeSizes = peerSizes{jobs: 20000, workers: 50, rounds: 5}
	smokeAutoPipeSizes = peerSizes{jobs: 40, workers: 4, rounds: 1}
)

// autoPipeComparison runs the peer comparison's lifecycles through the
// store with automatic pipelining on (redisstore.Options.AutoPipeline's
// default) and off, and through BullMQ when node is installed, in rounds
// whose order rotates, on one redis-server (FLUSHALL before each side). It
// reports redis-server CPU per lifecycle and lifecycles/s of each side and
// the ratios on / off and each / BullMQ (medians of the per-round ratios,
// with their range). No goal.
func autoPipeComparison(r *run, sz peerSizes) {
	ctx := context.Background()
	srv := startExtraServer(r.tb)
	on := &peerFigures{name: "store, auto-pipelining on", jobs: sz.jobs}
	off := &peerFigures{name: "store, auto-pipelining off", jobs: sz.jobs}
	sides := []peerSide{
		{on, func(bool) ([]phaseResult, error) { return ourLifecycles(ctx, srv, sz, false, redisstore.Options{}) }},
		{off, func(bool) ([]phaseResult, error) {
			return ourLifecycles(ctx, srv, sz, false, redisstore.Options{AutoPipeline: -1})
		}},
	}
	var bull *peerFigures
	if dir, versions, err := peerInstall(ctx); err == nil {
		bull = &peerFigures{name: "BullMQ " + versions["bullmq"], jobs: sz.jobs}
		sides = append(sides, peerSide{bull, func(bool) ([]phaseResult, error) {
			return nodePeer(ctx, dir, srv, "bullmq", "lifecycle", sz.jobs, sz.workers)
		}})
	} else {
		r.tb.Log("BullMQ not measured: " + err.Error())
	}
	r.resetTimer()
	for round := range sz.rounds {
		for i := range sides {
			s := sides[(i+round)%len(sides)]
			if err := srv.Client().FlushAll(ctx).Err(); err != nil {
				r.tb.Fatal(err)
			}
			phases, err := s.run(false)
			if err != nil {
				r.tb.Fatalf("%s: %v", s.fig.name, err)
			}
			s.fig.life = append(s.fig.life, addPhases(phases...))
		}
	}
	r.stopTimer()
	r.metric(on.cpuPerLife(), "on-redis-cpu-us/lifecycle")
	r.metric(off.cpuPerLife(), "off-redis-cpu-us/lifecycle")
	r.metric(on.lifePerSec(), "on-lifecycles/s")
	r.metric(off.lifePerSec(), "off-lifecycles/s")
	r.metric(ratioMedian(on.cpuRounds(), off.cpuRounds()), "cpu-on/off")
	r.metric(ratioMedian(on.rateRounds(), off.rateRounds()), "rate-on/off")
	r.metric(0, "ns/op")
	if !r.final() {
		return
	}
	line := func(what string, a, b []float64) string {
		ratios := ratios(a, b)
		return fmt.Sprintf("%s %.2f (rounds %.2f-%.2f)", what, medianF(ratios), slices.Min(ratios), slices.Max(ratios))
	}
	fmt.Fprintf(os.Stderr, "bench: auto-pipelining, %d lifecycles x %d rounds, %d workers\n", sz.jobs, sz.rounds, sz.workers)
	for _, f := range []*peerFigures{on, off, bull} {
		if f != nil {
			fmt.Fprintf(os.Stderr, "bench:   %-28s redis CPU %6.1f µs/lifecycle, %7.0f lifecycles/s\n", f.name, f.cpuPerLife(), f.lifePerSec())
		}
	}
	fmt.Fprintf(os.Stderr, "bench:   on / off: %s; %s\n", line("CPU", on.cpuRounds(), off.cpuRounds()), line("lifecycles/s", on.rateRounds(), off.rateRounds()))
	if bull != nil {
		for _, f := range []*peerFigures{on, off} {
			fmt.Fprintf(os.Stderr, "bench:   %s / BullMQ: %s; %s\n", f.name, line("CPU", f.cpuRounds(), bull.cpuRounds()), line("lifecycles/s", f.rateRounds(), bull.rateRounds()))
		}
	}
}

// ratios is a[i] / b[i] for each round.
func ratios(a, b []float64) []float64 {
	out := make([]float64, min(len(a), len(b)))
	for i := range out {
		out[i] = a[i] / b[i]
	}
	return out
}

// ratioMedian is the median of the per-round ratios a / b.
func ratioMedian(a, b []float64) float64 { return medianF(ratios(a, b)) }
