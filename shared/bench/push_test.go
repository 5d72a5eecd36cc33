package bench_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/ocyless/ocyless/shared/redisstore"
)

// Summary position of the push delivery line.
const posPush = 100

// pushSizes are the sizes of one push delivery comparison.
type pushSizes struct {
	jobs   int // jobs each side ends per round
	rounds int
	// workers is the push queue's concurrency and the pulling side's
	// number of workers.
	workers int
}

var (
	benchPushSizes = pushSizes{jobs: 3000, rounds: 4, workers: 50}
	smokePushSizes = pushSizes{jobs: 6, rounds: 1, workers: 2}
)

// pushGoal: push lifecycles/s / pull lifecycles/s, at least (issue 21).
const pushGoal = 0.5

// pushTarget is the push side's worker: an HTTP endpoint in this process
// that answers every delivery 200 with no body at once, and says when it
// has had the number of deliveries it expects.
type pushTarget struct {
	srv *httptest.Server

	mu      sync.Mutex
	got     int64
	want    int64
	reached chan struct{}
}

func newPushTarget() *pushTarget {
	t := &pushTarget{}
	t.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
		t.mu.Lock()
		t.got++
		if t.got == t.want && t.reached != nil {
			close(t.reached)
		}
		t.mu.Unlock()
	}))
	return t
}

// expect resets the count and returns a channel closed once n more
// deliveries have been answered.
func (t *pushTarget) expect(n int) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.got, t.want, t.reached = 0, int64(n), make(chan struct{})
	return t.reached
}

func (t *pushTarget) count() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.got
}

// pushBench compares, on one local server (cmd/ocypod-local in a child
// process, its dispatcher in-process as it always runs), n jobs delivered
// by a push queue with concurrency workers to a target that answers at
// once, with n jobs taken and completed over HTTP by workers keep-alive
// clients (count=1 takes, a PATCH each). Each round fills a fresh queue
// per side (not measured), the two sides back to back, the first
// alternating. The push side is timed from the PATCH that sets the
// queue's push setting to the last job recorded completed; the queue's
// push setting is removed after (not measured).
func pushBench(r *run, sz pushSizes) {
	ctx := context.Background()
	api := newEnv(r.tb, redisstore.Options{}) // the server's namespace, seen from here
	local := startLocalServer(r.tb, api.url, api.ns)
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: 2 * sz.workers, MaxIdleConnsPerHost: 2 * sz.workers, DisableCompression: true,
	}}
	defer client.CloseIdleConnections()
	target := newPushTarget()
	defer target.srv.Close()

	pull := &takeSide{name: "pull", count: 1, fill: api.store, queue: "pull", server: local,
		taker: httpTaker{client, local.url, "pull"}}
	if _, err := api.store.PutQueue(ctx, pull.queue, benchQueue); err != nil {
		r.tb.Fatal(err)
	}
	var pushRounds []takeFigures
	queues := 0
	pushRound := func(n int) takeFigures {
		queues++
		q := fmt.Sprintf("push%d", queues)
		if _, err := api.store.PutQueue(ctx, q, benchQueue); err != nil {
			r.tb.Fatal(err)
		}
		fillQueue(r, api.store, q, n)
		reached := target.expect(n)
		setting := fmt.Sprintf(`{"push": {"url": %q, "batch": 1, "concurrency": %d, "secret": "bench-secret-0123456789abcdef"}}`,
			target.srv.URL+"/jobs", sz.workers)
		f := measureDrain(r, "push", n, nil, local, func() (int64, error) {
			if _, err := do(ctx, client, "PATCH", local.url+"/queue/"+q, setting, http.StatusNoContent); err != nil {
				return 0, err
			}
			select {
			case <-reached:
			case <-time.After(time.Minute):
				return target.count(), fmt.Errorf("push: %d of %d jobs delivered within a minute", target.count(), n)
			}
			// The last answers are recorded a moment after they are sent.
			for {
				ids, err := api.store.QueueJobIDs(ctx, q)
				if err != nil {
					return 0, err
				}
				if len(ids.Completed) == n {
					return int64(n), nil
				}
				if len(ids.Failed)+len(ids.TimedOut) > 0 {
					return int64(len(ids.Completed)), fmt.Errorf("push: %d jobs failed, %d timed out", len(ids.Failed), len(ids.TimedOut))
				}
				time.Sleep(time.Millisecond)
			}
		})
		if _, err := do(ctx, client, "PATCH", local.url+"/queue/"+q, `{"push": null}`, http.StatusNoContent); err != nil {
			r.tb.Fatal(err)
		}
		if got := target.count(); got != int64(n) {
			r.tb.Fatalf("push: the target answered %d deliveries for %d jobs", got, n)
		}
		return f
	}
	sides := []func(n int){
		func(n int) { pushRounds = append(pushRounds, pushRound(n)) },
		func(n int) { pull.runRound(r, n, sz.workers) },
	}
	// Warm up: connections, scripts, the Go runtime of both processes.
	for _, side := range sides {
		side(min(sz.jobs, 2*sz.workers))
	}
	pushRounds, pull.rounds = nil, nil
	r.resetTimer()
	for round := range sz.rounds {
		for i := range 2 {
			sides[(i+round)%2](sz.jobs)
		}
	}
	r.stopTimer()
	var p takeFigures
	for _, f := range pushRounds {
		p = p.add(f)
	}
	q := pull.total()
	ratio := jobsPerSec(p) / jobsPerSec(q)
	r.metric(jobsPerSec(p), "lifecycles/s(push)")
	r.metric(jobsPerSec(q), "lifecycles/s(pull)")
	r.metric(ratio, "x-pull")
	r.metric(0, "ns/op")
	if !r.final() {
		return
	}
	lo, hi := 0.0, 0.0
	for k := range min(len(pushRounds), len(pull.rounds)) {
		x := jobsPerSec(pushRounds[k]) / jobsPerSec(pull.rounds[k])
		if k == 0 || x < lo {
			lo = x
		}
		hi = max(hi, x)
	}
	us := func(d time.Duration, f takeFigures) string {
		return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/float64(f.jobs)/1e3)
	}
	per := func(f takeFigures, v int64) string { return fmt.Sprintf("%.2f", float64(v)/float64(f.jobs)) }
	shape := fmt.Sprintf("%d jobs per side and round, %d rounds", sz.jobs, sz.rounds)
	rep.goal(posPush, goalLine{
		Item: fmt.Sprintf("10. Push delivery: job lifecycles/s of a push queue (concurrency %d, batch 1) delivering to a target in this process that answers 200 at once, "+
			"timed from setting push to the last job recorded / %d workers taking (count=1) and completing over HTTP; one local server (child process, its dispatcher in-process); %s",
			sz.workers, sz.workers, shape),
		Measured: fmt.Sprintf("%.0f lifecycles/s; server CPU %s, redis CPU %s per job", jobsPerSec(p), us(p.serverCPU, p), us(p.redisCPU, p)),
		Floor:    fmt.Sprintf("pull: %.0f lifecycles/s; server CPU %s, redis CPU %s per job", jobsPerSec(q), us(q.serverCPU, q), us(q.redisCPU, q)),
		Ratio:    fmt.Sprintf("%.2f x pull; rounds %.2f-%.2f", ratio, lo, hi),
		Goal:     fmt.Sprintf(">= %.1f x pull", pushGoal),
		Verdict:  verdictOf(ratio >= pushGoal),
	})
	for _, side := range []struct {
		name string
		f    takeFigures
	}{{"push (concurrency " + fmt.Sprint(sz.workers) + ")", p}, {"pull (" + fmt.Sprint(sz.workers) + " HTTP workers)", q}} {
		rep.row("push", "Push delivery next to pulling workers on the same local server ("+shape+")",
			[]string{"side", "lifecycles/s", "HTTP server CPU per job", "redis CPU per job", "Redis commands per job (scripts' included)", "scripts per job"},
			side.name, side.name, fmt.Sprintf("%.0f", jobsPerSec(side.f)), us(side.f.serverCPU, side.f), us(side.f.redisCPU, side.f),
			per(side.f, side.f.calls), per(side.f, side.f.scripts))
	}
}
