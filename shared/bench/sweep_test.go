package bench_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
	"github.com/ocyless/ocyless/shared/sweep"
)

// Summary positions of the sweep lines.
const (
	posSweepTimeouts = 50
	posSweepExpiry   = 51
)

// dueJobs is how many jobs each round of the sweep benchmark makes due.
const dueJobs = 1000

// sweepEnv is a namespace seeded with n background jobs that are not due:
// n/2 running (timeout one day) and n/2 ended (expiring in one day). Each
// round adds due jobs and sweeps them.
type sweepEnv struct {
	e        *env
	clock    *redistest.Clock
	seed     *seeder
	n, due   int
	t0       time.Time
	round    int
	seedTime time.Duration
}

var (
	sweepEnvsMu sync.Mutex
	sweepEnvs   = map[int]*sweepEnv{}
)

// cachedSweepEnv returns the seeded namespace for n (the framework calls a
// benchmark several times; the seed is made once).
func cachedSweepEnv(tb testing.TB, n int) *sweepEnv {
	sweepEnvsMu.Lock()
	defer sweepEnvsMu.Unlock()
	if s, ok := sweepEnvs[n]; ok {
		return s
	}
	s := newSweepEnv(tb, n, dueJobs, false)
	sweepEnvs[n] = s
	return s
}

// newSweepEnv seeds a namespace. With cleanup (the smoke test) it is on the
// shared server and its client is closed when tb ends. Otherwise it gets a
// redis-server of its own, so that the keyspace holds only its jobs, and
// lives as long as the process (the cached namespaces serve several
// benchmark calls).
func newSweepEnv(tb testing.TB, n, due int, cleanup bool) *sweepEnv {
	tb.Helper()
	ctx := context.Background()
	clk := redistest.NewClock(time.Time{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk.Set(t0)
	var e *env
	if cleanup {
		e = newEnv(tb, redisstore.Options{Now: clk.Now})
	} else {
		e = openEnv(tb, startExtraServer(tb), redisstore.Options{Now: clk.Now})
	}
	day := ocypod.Seconds(86400)
	for q, qs := range map[string]ocypod.QueueSettings{
		"bg-run":  {Timeout: day, ExpiresAfter: day},
		"bg-done": {Timeout: day, ExpiresAfter: day},
		// Due jobs time out after 1 s, are not retried and expire 1 s after.
		"due": {Timeout: ocypod.Seconds(1), ExpiresAfter: ocypod.Seconds(1)},
	} {
		if _, err := e.store.PutQueue(ctx, q, qs); err != nil {
			tb.Fatal(err)
		}
	}
	s := &sweepEnv{e: e, clock: clk, seed: newSeeder(tb, e, redisstore.Options{Now: clk.Now}), n: n, due: due, t0: t0}
	if cleanup {
		tb.Cleanup(s.seed.close)
	}
	start := time.Now()
	if err := s.seed.jobs(ctx, "bg-run", n/2, false); err != nil {
		tb.Fatal(err)
	}
	if err := s.seed.jobs(ctx, "bg-done", n-n/2, true); err != nil {
		tb.Fatal(err)
	}
	s.seedTime = time.Since(start)
	// The layout is the store's: its own counters see the seed.
	info, err := e.store.Info(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	got := map[string]uint64{}
	for name, q := range info.Queues {
		got[name+"/running"], got[name+"/completed"] = q.Running, q.Completed
	}
	if got["bg-run/running"] != uint64(n/2) || got["bg-done/completed"] != uint64(n-n/2) {
		tb.Fatalf("after seeding %d + %d jobs the store counts %v", n/2, n-n/2, got)
	}
	return s
}

// sweepRound makes s.due jobs due (created and taken at the round's time,
// timing out 1 s later), then times the timeout sweep of them and, once
// they have expired, the expiry sweep. It returns the wall time and the
// redis-server CPU time of each sweep.
func (s *sweepEnv) sweepRound(r *run) (timeouts, expiry side) {
	ctx := context.Background()
	s.round++
	tr := s.t0.Add(time.Duration(s.round) * 10 * time.Second)
	s.clock.Set(tr)
	if err := s.seed.jobs(ctx, "due", s.due, false); err != nil {
		r.tb.Fatal(err)
	}
	measure := func(at time.Time, kind sweep.Kind) side {
		s.clock.Set(at)
		c0, err := redisCPU(ctx, s.e.rdb)
		if err != nil {
			r.tb.Fatal(err)
		}
		r.startTimer()
		t0 := time.Now()
		tot, err := sweep.Once(ctx, s.e.store, kind, nil)
		wall := time.Since(t0)
		r.stopTimer()
		c1, cerr := redisCPU(ctx, s.e.rdb)
		if err != nil || cerr != nil {
			r.tb.Fatal(err, cerr)
		}
		if tot.Jobs() != s.due {
			r.tb.Fatalf("sweep %s at round %d handled %+v, want %d jobs", kind, s.round, tot, s.due)
		}
		return side{wall: wall, redisCPU: c1 - c0}
	}
	// Deadline: started + (1+1) s; expiry: ended + (1+1) s.
	timeouts = measure(tr.Add(3*time.Second), sweep.Timeouts)
	expiry = measure(tr.Add(6*time.Second), sweep.Expiry)
	return timeouts, expiry
}

// sweepScaling runs r.n rounds on each of the two seeded namespaces,
// alternating between them so that both see the same background load, and
// reports the cost per due job of each and their ratio.
func sweepScaling(r *run, small, large *sweepEnv) {
	r.resetTimer()
	r.stopTimer()
	var to, ex [2]side
	for range r.n {
		for i, s := range []*sweepEnv{small, large} {
			a, b := s.sweepRound(r)
			to[i].wall += a.wall
			to[i].redisCPU += a.redisCPU
			ex[i].wall += b.wall
			ex[i].redisCPU += b.redisCPU
		}
	}
	r.startTimer()
	perJob := func(d time.Duration, s *sweepEnv) float64 { return float64(d.Nanoseconds()) / float64(r.n*s.due) }
	for i, s := range []*sweepEnv{small, large} {
		r.metric(perJob(to[i].wall, s), fmt.Sprintf("timeouts-ns/due-job@%d", s.n))
		r.metric(perJob(ex[i].wall, s), fmt.Sprintf("expiry-ns/due-job@%d", s.n))
	}
	ratios := [2]float64{perJob(to[1].wall, large) / perJob(to[0].wall, small), perJob(ex[1].wall, large) / perJob(ex[0].wall, small)}
	r.metric(ratios[0], "timeouts-ratio")
	r.metric(ratios[1], "expiry-ratio")
	if !r.final() {
		return
	}
	hdr := []string{"jobs stored (not due)", "seeded in", "rounds", "timeout sweep per due job", "redis CPU", "expiry sweep per due job", "redis CPU"}
	for i, s := range []*sweepEnv{small, large} {
		rep.row("sweep", fmt.Sprintf("Sweep cost per due job (%d due per round, a fresh set each round, rounds alternating between the two sizes, each on a redis-server of its own; sweep.Once with the default batch of 100)", s.due), hdr,
			strconv.Itoa(s.n), fmt.Sprintf("%d = %d running + %d ended", s.n, s.n/2, s.n-s.n/2),
			fmt.Sprintf("%v (%.0f jobs/s)", s.seedTime.Round(time.Millisecond), float64(s.n)/s.seedTime.Seconds()),
			strconv.Itoa(r.n),
			fmt.Sprintf("%.1f µs", perJob(to[i].wall, s)/1e3), fmt.Sprintf("%.1f µs", perJob(to[i].redisCPU, s)/1e3),
			fmt.Sprintf("%.1f µs", perJob(ex[i].wall, s)/1e3), fmt.Sprintf("%.1f µs", perJob(ex[i].redisCPU, s)/1e3))
	}
	for i, kind := range []string{"timeouts", "expiry"} {
		w := [2]time.Duration{to[0].wall, to[1].wall}
		if i == 1 {
			w = [2]time.Duration{ex[0].wall, ex[1].wall}
		}
		rep.goal(posSweepTimeouts+i, goalLine{
			Item:     fmt.Sprintf("5. Sweep %s: cost per due job with %d vs %d jobs stored (half running, half ended; %d due)", kind, large.n, small.n, large.due),
			Measured: fmt.Sprintf("%.1f µs", perJob(w[1], large)/1e3),
			Floor:    fmt.Sprintf("%.1f µs with %d", perJob(w[0], small)/1e3, small.n),
			Ratio:    fmt.Sprintf("%.2f", ratios[i]),
			Goal:     "ratio <= 2",
			Verdict:  verdictOf(ratios[i] <= 2),
		})
	}
}

// sweepSizes are the numbers of stored jobs compared.
var sweepSizes = [2]int{1000, 1000000}
