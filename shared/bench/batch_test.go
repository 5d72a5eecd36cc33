package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ocyless/ocyless/shared/bench"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// Summary positions of the batch take lines.
const (
	posBatchStore = 70
	posBatchHTTP  = 71
)

// batchSizes are the sizes of one batch take comparison.
type batchSizes struct {
	jobs    int // queued jobs each side drains per round
	rounds  int
	workers int // concurrent workers of each side
}

var (
	benchBatchSizes = batchSizes{jobs: 5000, rounds: 4, workers: 10}
	smokeBatchSizes = batchSizes{jobs: 6, rounds: 1, workers: 2}
)

// batchCount is the batch side's take count: the largest a take allows.
const batchCount = ocypod.MaxTakeCount

// taker is how a worker takes and completes jobs: through the store or
// over HTTP.
type taker interface {
	// take takes up to count jobs of the queue; none when it is empty.
	take(ctx context.Context, count int) ([]uint64, error)
	// complete completes job id and, with next > 0, takes up to next jobs
	// in the same call (PATCH ?take=).
	complete(ctx context.Context, id uint64, next int) ([]uint64, error)
}

type storeTaker struct {
	s     *redisstore.Store
	queue string
}

func (t storeTaker) take(ctx context.Context, count int) ([]uint64, error) {
	jobs, err := t.s.Take(ctx, ocypod.TakeRequest{Queues: []string{t.queue}, Count: count})
	return nextIDs(jobs), err
}

func (t storeTaker) complete(ctx context.Context, id uint64, next int) ([]uint64, error) {
	var take *ocypod.TakeRequest
	if next > 0 {
		take = &ocypod.TakeRequest{Queues: []string{t.queue}, Count: next}
	}
	_, jobs, err := t.s.UpdateJob(ctx, id, completedUpdate, take)
	return nextIDs(jobs), err
}

func nextIDs(jobs []ocypod.NextJob) []uint64 {
	ids := make([]uint64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

type httpTaker struct {
	c           *http.Client
	base, queue string
}

func (t httpTaker) take(ctx context.Context, count int) ([]uint64, error) {
	return t.takeAnswer(ctx, "GET", fmt.Sprintf("%s/queue/%s/job?count=%d", t.base, t.queue, count), "")
}

func (t httpTaker) complete(ctx context.Context, id uint64, next int) ([]uint64, error) {
	url := t.base + "/job/" + strconv.FormatUint(id, 10)
	if next == 0 {
		_, err := do(ctx, t.c, "PATCH", url, `{"status":"completed"}`, http.StatusNoContent)
		return nil, err
	}
	return t.takeAnswer(ctx, "PATCH", fmt.Sprintf("%s?take=%s&count=%d", url, t.queue, next), `{"status":"completed"}`)
}

// takeAnswer sends a request that takes jobs with count: 200 with an array
// of take objects, or 204 for none.
func (t httpTaker) takeAnswer(ctx context.Context, method, url, body string) ([]uint64, error) {
	status, b, err := send(ctx, t.c, method, url, body)
	switch {
	case err != nil:
		return nil, err
	case status == http.StatusNoContent:
		return nil, nil
	case status != http.StatusOK:
		return nil, fmt.Errorf("%s %s = %d %q, want 200 or 204", method, url, status, b)
	}
	var got []struct{ ID uint64 }
	if err := json.Unmarshal(b, &got); err != nil {
		return nil, fmt.Errorf("%s %s: %q: %w", method, url, b, err)
	}
	ids := make([]uint64, len(got))
	for i, j := range got {
		ids[i] = j.ID
	}
	return ids, nil
}

// drain runs workers workers until the queue has no job left to take and
// returns how many jobs they completed. Each worker takes up to count jobs
// and completes them one by one; chained, the last completion of a batch
// takes the next batch (PATCH ?take=), else the worker takes again.
func drain(ctx context.Context, t taker, count, workers int, chained bool) (int64, error) {
	var done atomic.Int64
	err := parallel(workers, workers, func() error {
		ids, err := t.take(ctx, count)
		for err == nil && len(ids) > 0 {
			var next []uint64
			for i, id := range ids {
				n := 0
				if chained && i == len(ids)-1 {
					n = count
				}
				got, err := t.complete(ctx, id, n)
				if err != nil {
					return err
				}
				if n > 0 {
					next = got
				}
			}
			done.Add(int64(len(ids)))
			if chained {
				ids = next
			} else {
				ids, err = t.take(ctx, count)
			}
		}
		return err
	})
	return done.Load(), err
}

// takeSide is one side of a batch take comparison and what it measured.
type takeSide struct {
	name    string
	count   int
	chained bool
	taker   taker
	fill    *redisstore.Store // fills the side's queue
	queue   string
	counter *bench.Counter // the taker's client (store sides), or nil
	server  *localServer   // the HTTP server (HTTP sides), or nil
	rounds  []takeFigures  // one per round
}

// takeFigures is what one side did in one round.
type takeFigures struct {
	jobs                 int64
	wall, redisCPU       time.Duration
	serverCPU            time.Duration // the HTTP server process's
	calls, scripts, trip int64         // Redis commands (INFO excluded), scripts, client round trips
}

func (f takeFigures) add(g takeFigures) takeFigures {
	return takeFigures{f.jobs + g.jobs, f.wall + g.wall, f.redisCPU + g.redisCPU, f.serverCPU + g.serverCPU,
		f.calls + g.calls, f.scripts + g.scripts, f.trip + g.trip}
}

func (s *takeSide) total() takeFigures {
	var t takeFigures
	for _, f := range s.rounds {
		t = t.add(f)
	}
	return t
}

// runRound fills the side's queue with n jobs (not measured), then drains
// it with workers workers, reading redis-server's INFO around the drain.
func (s *takeSide) runRound(r *run, n, workers int) {
	ctx := context.Background()
	fillQueue(r, s.fill, s.queue, n)
	f := measureDrain(r, s.name, n, s.counter, s.server, func() (int64, error) {
		return drain(ctx, s.taker, s.count, workers, s.chained)
	})
	s.rounds = append(s.rounds, f)
}

// fillQueue creates n jobs in queue, in batches.
func fillQueue(r *run, fill *redisstore.Store, queue string, n int) {
	ctx := context.Background()
	for done := 0; done < n; {
		k := min(n-done, ocypod.MaxBatch)
		specs := make([]ocypod.JobSpec, k)
		for i := range specs {
			specs[i] = lifecycleSpec
		}
		if _, err := fill.CreateJobs(ctx, queue, specs); err != nil {
			r.tb.Fatal(err)
		}
		done += k
	}
}

// measureDrain runs drain, which must end n jobs, reading redis-server's
// INFO, the counter (if any) and the server process's CPU (if any) around
// it.
func measureDrain(r *run, name string, n int, counter *bench.Counter, server *localServer, drain func() (int64, error)) takeFigures {
	ctx := context.Background()
	info := redisServer(r.tb).Client()
	before, err := snapServer(ctx, info)
	if err != nil {
		r.tb.Fatal(err)
	}
	var trips0 bench.Snapshot
	if counter != nil {
		trips0 = counter.Snapshot()
	}
	var cpu0 time.Duration
	if server != nil {
		if cpu0, err = server.cpu(); err != nil {
			r.tb.Fatal(err)
		}
	}
	t0 := time.Now()
	jobs, err := drain()
	wall := time.Since(t0)
	if err != nil {
		r.tb.Fatalf("%s: %v", name, err)
	}
	if jobs != int64(n) {
		r.tb.Fatalf("%s: completed %d jobs, want %d", name, jobs, n)
	}
	after, err := snapServer(ctx, info)
	if err != nil {
		r.tb.Fatal(err)
	}
	f := takeFigures{jobs: jobs, wall: wall, redisCPU: after.cpu - before.cpu}
	for name, st := range after.cmds {
		d := st.Calls - before.cmds[name].Calls
		switch name {
		case "info":
		case "evalsha", "eval", "fcall", "fcall_ro":
			f.scripts += d
			f.calls += d
		default:
			f.calls += d
		}
	}
	if counter != nil {
		f.trip = counter.Snapshot().Sub(trips0).RoundTrips
	}
	if server != nil {
		cpu1, err := server.cpu()
		if err != nil {
			r.tb.Fatal(err)
		}
		f.serverCPU = cpu1 - cpu0
	}
	return f
}

// batchTake compares count=100 takes with count=1 takes through the store
// (workers goroutines in this process) or over HTTP (as many keep-alive
// clients of the local server in a child process), with each completion a
// call of its own and with the last completion of a batch taking the next
// one. Every round drains a freshly filled queue per side, the two sides of
// a pair back to back, the first alternating from round to round.
func batchTake(r *run, sz batchSizes, overHTTP bool) {
	var pairs [][2]*takeSide
	if overHTTP {
		api := newEnv(r.tb, redisstore.Options{}) // the server's namespace, seen from here
		local := startLocalServer(r.tb, api.url, api.ns)
		client := &http.Client{Transport: &http.Transport{
			MaxIdleConns: 2 * sz.workers, MaxIdleConnsPerHost: 2 * sz.workers, DisableCompression: true,
		}}
		defer client.CloseIdleConnections()
		pairs = takePairs(r, api.store, func(q string) taker { return httpTaker{client, local.url, q} }, nil, local)
	} else {
		e := newEnv(r.tb, redisstore.Options{})
		pairs = takePairs(r, e.store, func(q string) taker { return storeTaker{e.store, q} }, e.counter, nil)
	}
	// Warm up: connections, scripts, the Go runtime of both processes.
	for _, p := range pairs {
		for _, s := range p {
			s.runRound(r, min(sz.jobs, 2*sz.workers), sz.workers)
			s.rounds = nil
		}
	}
	r.resetTimer()
	for round := range sz.rounds {
		for _, p := range pairs {
			for i := range 2 {
				p[(i+round)%2].runRound(r, sz.jobs, sz.workers)
			}
		}
	}
	r.stopTimer()
	level := "store"
	if overHTTP {
		level = "HTTP"
	}
	for _, p := range pairs {
		b, s := p[0].total(), p[1].total()
		unit := "each"
		if p[0].chained {
			unit = "chained"
		}
		r.metric(jobsPerSec(b), "jobs/s(count=100,"+unit+")")
		r.metric(jobsPerSec(s), "jobs/s(count=1,"+unit+")")
		r.metric(jobsPerSec(b)/jobsPerSec(s), "x-single("+unit+")")
	}
	r.metric(0, "ns/op")
	if !r.final() {
		return
	}
	reportBatch(sz, level, pairs)
}

// takePairs makes the sides, each on a queue of its own: count=100 and
// count=1, each completing job by job and chained.
func takePairs(r *run, fill *redisstore.Store, mk func(queue string) taker, c *bench.Counter, srv *localServer) [][2]*takeSide {
	var pairs [][2]*takeSide
	for _, chained := range []bool{false, true} {
		var p [2]*takeSide
		for i, count := range []int{batchCount, 1} {
			q := fmt.Sprintf("bt%d-%t", count, chained)
			if _, err := fill.PutQueue(context.Background(), q, benchQueue); err != nil {
				r.tb.Fatal(err)
			}
			name := "take, complete each"
			if chained {
				name = "complete and take (PATCH ?take=)"
			}
			p[i] = &takeSide{name: name, count: count, chained: chained, taker: mk(q), fill: fill, queue: q, counter: c, server: srv}
		}
		pairs = append(pairs, p)
	}
	return pairs
}

func jobsPerSec(f takeFigures) float64 { return float64(f.jobs) / f.wall.Seconds() }

// ratioSpread is the lowest and highest ratio of the batch side's jobs/s to
// the single side's over the rounds.
func ratioSpread(p [2]*takeSide) (lo, hi float64) {
	for k := range min(len(p[0].rounds), len(p[1].rounds)) {
		x := jobsPerSec(p[0].rounds[k]) / jobsPerSec(p[1].rounds[k])
		if k == 0 || x < lo {
			lo = x
		}
		hi = max(hi, x)
	}
	return lo, hi
}

// reportBatch writes the summary line of the job-by-job pair and a table
// row per side.
func reportBatch(sz batchSizes, level string, pairs [][2]*takeSide) {
	shape := fmt.Sprintf("%d workers, %d jobs per side and round, %d rounds", sz.workers, sz.jobs, sz.rounds)
	per := func(f takeFigures, v int64) string { return fmt.Sprintf("%.2f", float64(v)/float64(f.jobs)) }
	us := func(d time.Duration, f takeFigures) string {
		return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/float64(f.jobs)/1e3)
	}
	for _, p := range pairs {
		b, s := p[0].total(), p[1].total()
		lo, hi := ratioSpread(p)
		ratio := jobsPerSec(b) / jobsPerSec(s)
		if !p[0].chained {
			pos, via := posBatchStore, "through the store ("+strconv.Itoa(sz.workers)+" goroutines)"
			if level == "HTTP" {
				pos, via = posBatchHTTP, "over HTTP through the local server (child process; "+strconv.Itoa(sz.workers)+" keep-alive clients)"
			}
			rep.goal(pos, goalLine{
				Item:     fmt.Sprintf("7. Batch take, %s: jobs/s taken and completed with count=%d takes / count=1 takes (each job completed by a call of its own; %s)", via, batchCount, shape),
				Measured: fmt.Sprintf("%.0f jobs/s; redis CPU %s per job", jobsPerSec(b), us(b.redisCPU, b)),
				Floor:    fmt.Sprintf("count=1: %.0f jobs/s; redis CPU %s per job", jobsPerSec(s), us(s.redisCPU, s)),
				Ratio:    fmt.Sprintf("%.2f x count=1; rounds %.2f-%.2f", ratio, lo, hi),
				Goal:     "none (reference)",
				Verdict:  info,
			})
		}
		for i, side := range p {
			f := side.total()
			ratioCell, trips, server := "-", "-", "-"
			if i == 0 {
				ratioCell = fmt.Sprintf("%.2f x (rounds %.2f-%.2f)", ratio, lo, hi)
			}
			if side.counter != nil {
				trips = per(f, f.trip)
			}
			if side.server != nil {
				server = us(f.serverCPU, f)
			}
			key := fmt.Sprintf("%s/%s/%d", level, side.name, side.count)
			rep.row("batchTake", "Batch take: jobs taken and completed with count=100 and count=1 takes, the two sides of a pair back to back in every round ("+shape+")",
				[]string{"through", "completion", "take count", "jobs/s", "batch / single", "redis CPU per job", "Redis commands per job (scripts' included)", "scripts per job", "round trips per job", "HTTP server CPU per job"},
				key, level, side.name, strconv.Itoa(side.count), fmt.Sprintf("%.0f", jobsPerSec(f)), ratioCell,
				us(f.redisCPU, f), per(f, f.calls), per(f, f.scripts), trips, server)
		}
	}
}

// send sends one request and returns its status and body.
func send(ctx context.Context, c *http.Client, method, url, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
