package bench_test

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// posScriptMode is the first of the script mode's summary lines (one per
// lifecycle shape).
const posScriptMode = 110

// scriptModeSizes: the peer comparison's lifecycle shape (50 workers), more
// rounds.
var (
	benchScriptModeSizes = peerSizes{jobs: 20000, workers: 50, rounds: 5}
	smokeScriptModeSizes = peerSizes{jobs: 40, workers: 4, rounds: 2}
)

// scriptShape is one way of running lifecycles through the store.
type scriptShape struct {
	name string
	run  func(ctx context.Context, srv *redistest.Server, sz peerSizes, opts redisstore.Options) (phaseResult, error)
}

var scriptShapes = []scriptShape{
	{"create, take, complete (3 calls, each worker in turn)", threeCallLifecycles},
	{"create, then complete-and-take (PATCH ?take=; 2 calls)", func(ctx context.Context, srv *redistest.Server, sz peerSizes, opts redisstore.Options) (phaseResult, error) {
		phases, err := ourLifecycles(ctx, srv, sz, false, opts)
		return addPhases(phases...), err
	}},
}

// threeCallLifecycles runs sz.jobs lifecycles (CreateJob, NextJob,
// UpdateJob completed, each worker in turn) on sz.workers goroutines
// through a store with opts on the product's client, after a warm-up of as
// many lifecycles as workers on a queue of its own, between two INFO
// readings.
func threeCallLifecycles(ctx context.Context, srv *redistest.Server, sz peerSizes, opts redisstore.Options) (phaseResult, error) {
	rdb, err := redisstore.NewClient(redisstore.ClientOptions{URL: srv.URL(), DialTimeout: benchRedisTimeout, ReadTimeout: benchRedisTimeout, WriteTimeout: benchRedisTimeout})
	if err != nil {
		return phaseResult{}, err
	}
	defer rdb.Close()
	store, err := redisstore.New(rdb, opts)
	if err != nil {
		return phaseResult{}, err
	}
	for _, q := range []string{"warm", "bench"} {
		if _, err := store.PutQueue(ctx, q, benchQueue); err != nil {
			return phaseResult{}, err
		}
	}
	if err := parallel(sz.workers, sz.workers, func() error { return lifecycle(ctx, store, "warm") }); err != nil {
		return phaseResult{}, err
	}
	return measurePhase(ctx, srv.Client(), func() error {
		return parallel(sz.workers, sz.jobs, func() error { return lifecycle(ctx, store, "bench") })
	})
}

// scriptMode compares the store's lifecycles with its scripts run as a
// Redis Functions library (FCALL; Options.Scripts "functions", what "auto",
// the default, picks on Redis 7+) and with EVALSHA (Options.Scripts
// "eval"), for each shape of scriptShapes, in rounds whose first side
// alternates, on one redis-server (FLUSHALL before each side). It checks
// from INFO commandstats that each side ran the scripts the way it asked,
// and reports redis-server CPU per lifecycle and lifecycles/s of each side
// and the ratios functions / eval (medians of the per-round ratios, with
// their range). No goal.
func scriptMode(r *run, sz peerSizes) {
	ctx := context.Background()
	srv := startExtraServer(r.tb)
	type pair struct{ fn, ev *peerFigures }
	pairs := make([]pair, len(scriptShapes))
	for i := range scriptShapes {
		pairs[i] = pair{&peerFigures{name: "FCALL", jobs: sz.jobs}, &peerFigures{name: "EVALSHA", jobs: sz.jobs}}
	}
	r.resetTimer()
	for round := range sz.rounds {
		for i, shape := range scriptShapes {
			sides := []struct {
				fig     *peerFigures
				mode    string
				want    string // the script command the side must send
				notWant []string
			}{
				{pairs[i].fn, "functions", "fcall", []string{"evalsha", "eval"}},
				// An EVAL is allowed: the first round's first complete-and-take
				// sends its script with EVAL after NOSCRIPT (the warm-up only
				// completes).
				{pairs[i].ev, "eval", "evalsha", []string{"fcall"}},
			}
			for j := range sides {
				s := sides[(j+round)%len(sides)]
				if err := srv.Client().FlushAll(ctx).Err(); err != nil {
					r.tb.Fatal(err)
				}
				p, err := shape.run(ctx, srv, sz, redisstore.Options{Scripts: s.mode})
				if err != nil {
					r.tb.Fatalf("%s, %s: %v", shape.name, s.fig.name, err)
				}
				if p.cmds[s.want] == 0 {
					r.tb.Fatalf("%s, %s: the server ran no %s (commands %v)", shape.name, s.fig.name, s.want, p.cmds)
				}
				for _, c := range s.notWant {
					if p.cmds[c] != 0 {
						r.tb.Fatalf("%s, %s: the server ran %d %s (commands %v)", shape.name, s.fig.name, p.cmds[c], c, p.cmds)
					}
				}
				s.fig.life = append(s.fig.life, p)
			}
		}
	}
	r.stopTimer()
	for i, p := range pairs {
		r.metric(ratioMedian(p.fn.cpuRounds(), p.ev.cpuRounds()), fmt.Sprintf("cpu-fcall/evalsha-shape%d", i+1))
		r.metric(ratioMedian(p.fn.rateRounds(), p.ev.rateRounds()), fmt.Sprintf("rate-fcall/evalsha-shape%d", i+1))
	}
	r.metric(0, "ns/op")
	if !r.final() {
		return
	}
	spread := func(a, b []float64) string {
		rs := ratios(a, b)
		return fmt.Sprintf("%.3f (rounds %.3f-%.3f)", medianF(rs), slices.Min(rs), slices.Max(rs))
	}
	shapeOf := fmt.Sprintf("%d lifecycles, %d workers, %d rounds, the first side alternating", sz.jobs, sz.workers, sz.rounds)
	fmt.Fprintf(os.Stderr, "bench: script mode, %s\n", shapeOf)
	for i, p := range pairs {
		fn, ev := p.fn, p.ev
		fmt.Fprintf(os.Stderr, "bench:   %s\n", scriptShapes[i].name)
		for _, f := range []*peerFigures{fn, ev} {
			fmt.Fprintf(os.Stderr, "bench:     %-8s redis CPU %6.1f µs/lifecycle, %7.0f lifecycles/s; rounds: CPU %s, rate %s\n",
				f.name, f.cpuPerLife(), f.lifePerSec(), fmtRounds(f.cpuRounds(), "%.1f"), fmtRounds(f.rateRounds(), "%.0f"))
		}
		cpu, rate := spread(fn.cpuRounds(), ev.cpuRounds()), spread(fn.rateRounds(), ev.rateRounds())
		fmt.Fprintf(os.Stderr, "bench:     FCALL / EVALSHA: CPU %s; lifecycles/s %s\n", cpu, rate)
		rep.goal(posScriptMode+i, goalLine{
			Item: fmt.Sprintf("11. Script mode: redis-server CPU per job lifecycle through the store, scripts run as a Redis Functions library (FCALL) / with EVALSHA; %s; %s",
				scriptShapes[i].name, shapeOf),
			Measured: fmt.Sprintf("FCALL %.1f µs, %.0f lifecycles/s", fn.cpuPerLife(), fn.lifePerSec()),
			Floor:    fmt.Sprintf("EVALSHA %.1f µs, %.0f lifecycles/s", ev.cpuPerLife(), ev.lifePerSec()),
			Ratio:    fmt.Sprintf("CPU %s; lifecycles/s %s", cpu, rate),
			Goal:     "none (reference: Functions stay the default only if they pay)",
			Verdict:  info,
		})
	}
}

// fmtRounds is xs, each with format, comma-separated.
func fmtRounds(xs []float64, format string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf(format, x)
	}
	return s
}
