package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// Summary positions of the long-poll lines, one per scenario.
const posLongPoll = 80

// longPollSizes are the sizes of one long-poll measurement.
type longPollSizes struct {
	wakes int           // samples of a create waking a waiting take
	dues  int           // samples of a job scheduled before the take waits
	lates int           // most samples of a job scheduled while the take waits
	late  time.Duration // no late sample starts after this much time on them (the first always does)
	wait  time.Duration // every take's wait
	// A scheduled job's delay is uniform in [delay, delay+spread), so that
	// samples do not lock to the phase of a timer, as back-to-back samples
	// otherwise may.
	delay, spread time.Duration
}

var (
	benchLongPollSizes = longPollSizes{wakes: 500, dues: 200, lates: 50, late: 5 * time.Second, wait: 10 * time.Second, delay: 25 * time.Millisecond, spread: 100 * time.Millisecond}
	smokeLongPollSizes = longPollSizes{wakes: 2, dues: 1, lates: 1, wait: 200 * time.Millisecond, delay: 25 * time.Millisecond, spread: 10 * time.Millisecond}
)

// poller is one queue, through the store or over HTTP.
type poller interface {
	// create creates a job, scheduled delay from now when delay > 0.
	create(ctx context.Context, delay time.Duration) (uint64, error)
	// take takes one job, waiting up to wait; 0 when none came.
	take(ctx context.Context, wait time.Duration) (uint64, error)
	runAt(ctx context.Context, id uint64) (time.Time, error)
	complete(ctx context.Context, id uint64) error
}

type storePoller struct {
	s     *redisstore.Store
	queue string
}

func (p storePoller) create(ctx context.Context, delay time.Duration) (uint64, error) {
	spec := lifecycleSpec
	if delay > 0 {
		d := ocypod.FromStd(delay)
		spec.Delay = &d
	}
	c, err := p.s.CreateJob(ctx, p.queue, spec)
	return c.ID, err
}

func (p storePoller) take(ctx context.Context, wait time.Duration) (uint64, error) {
	jobs, err := p.s.Take(ctx, ocypod.TakeRequest{Queues: []string{p.queue}, Wait: wait})
	if err != nil || len(jobs) == 0 {
		return 0, err
	}
	return jobs[0].ID, nil
}

func (p storePoller) runAt(ctx context.Context, id uint64) (time.Time, error) {
	j, err := p.s.GetJob(ctx, id)
	if err != nil {
		return time.Time{}, err
	}
	if j.RunAt == nil {
		return time.Time{}, fmt.Errorf("job %d has no run_at", id)
	}
	return *j.RunAt, nil
}

func (p storePoller) complete(ctx context.Context, id uint64) error {
	_, _, err := p.s.UpdateJob(ctx, id, completedUpdate, nil)
	return err
}

type httpPoller struct {
	c           *http.Client
	base, queue string
}

func (p httpPoller) create(ctx context.Context, delay time.Duration) (uint64, error) {
	body := `{"input":{"n":1}}`
	if delay > 0 {
		body = `{"input":{"n":1},"delay":"` + ocypod.FromStd(delay).String() + `"}`
	}
	b, err := do(ctx, p.c, "POST", p.base+"/queue/"+p.queue+"/job", body, http.StatusCreated)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

func (p httpPoller) take(ctx context.Context, wait time.Duration) (uint64, error) {
	url := p.base + "/queue/" + p.queue + "/job?wait=" + strings.ReplaceAll(ocypod.FromStd(wait).String(), " ", "")
	status, b, err := send(ctx, p.c, "GET", url, "")
	switch {
	case err != nil:
		return 0, err
	case status == http.StatusNoContent:
		return 0, nil
	case status != http.StatusOK:
		return 0, fmt.Errorf("GET %s = %d %q", url, status, b)
	}
	var next struct{ ID uint64 }
	if err := json.Unmarshal(b, &next); err != nil {
		return 0, fmt.Errorf("GET %s: %q: %w", url, b, err)
	}
	return next.ID, nil
}

func (p httpPoller) runAt(ctx context.Context, id uint64) (time.Time, error) {
	b, err := do(ctx, p.c, "GET", p.base+"/job/"+strconv.FormatUint(id, 10)+"?fields=run_at", "", http.StatusOK)
	if err != nil {
		return time.Time{}, err
	}
	var j struct {
		RunAt time.Time `json:"run_at"`
	}
	if err := json.Unmarshal(b, &j); err != nil || j.RunAt.IsZero() {
		return time.Time{}, fmt.Errorf("job %d: run_at from %q: %v", id, b, err)
	}
	return j.RunAt, nil
}

func (p httpPoller) complete(ctx context.Context, id uint64) error {
	_, err := do(ctx, p.c, "PATCH", p.base+"/job/"+strconv.FormatUint(id, 10), `{"status":"completed"}`, http.StatusNoContent)
	return err
}

// taken is a waiting take's outcome and when the taker had it.
type taken struct {
	id  uint64
	at  time.Time
	err error
}

// startTake starts a take that waits up to wait on another goroutine.
func startTake(p poller, wait time.Duration) <-chan taken {
	ch := make(chan taken, 1)
	go func() {
		id, err := p.take(context.Background(), wait)
		ch <- taken{id, time.Now(), err}
	}()
	return ch
}

// awaitWaiting waits until the take marks its queue as waited on (the
// "<queue> w" field of the queues hash, key, changes from before) or
// answers; it reports whether it waits first. A wake-up that comes between
// the mark and the take's pause in the store's hub is not lost, so the
// mark is the take's readiness.
func awaitWaiting(tb testing.TB, rdb redis.UniversalClient, key, field, before string, ch <-chan taken) (taken, bool) {
	tb.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	pause := 50 * time.Microsecond
	for {
		select {
		case t := <-ch:
			return t, false
		default:
		}
		v, err := rdb.HGet(ctx, key, field).Result()
		if err != nil && err != redis.Nil {
			tb.Fatal(err)
		}
		if v != before {
			return taken{}, true
		}
		if time.Now().After(deadline) {
			tb.Fatal("the take never marked its queue as waited on")
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Millisecond)
	}
}

// Long-poll scenarios.
const (
	scWake = iota // a create wakes a take waiting on an empty queue
	scDue         // a job scheduled before the take waits falls due
	scLate        // a job scheduled while the take waits falls due
	scenarios
)

// latencies are one level's samples of each scenario; wake also has them
// from the create's answer.
type latencies struct {
	samples        [scenarios][]time.Duration
	wakeFromAnswer []time.Duration
	discarded      int // due samples whose take answered before it waited
}

// sample runs one sample of scenario sc on p (queue q of namespace
// prefix) and returns the take's latency (and, for a wake, the latency
// from the create's answer).
func sample(r *run, p poller, prefix, q string, sc int, sz longPollSizes, rnd *rand.Rand) (lat, fromAnswer time.Duration, blocked bool) {
	ctx := context.Background()
	delay := sz.delay + time.Duration(rnd.Int64N(int64(sz.spread)+1))
	rdb := redisServer(r.tb).Client()
	key, field := prefix+"q", q+" w"
	before, err := rdb.HGet(ctx, key, field).Result()
	if err != nil && err != redis.Nil {
		r.tb.Fatal(err)
	}
	var id uint64
	if sc == scDue {
		if id, err = p.create(ctx, delay); err != nil {
			r.tb.Fatal(err)
		}
	}
	ch := startTake(p, sz.wait)
	got, blocked := awaitWaiting(r.tb, rdb, key, field, before, ch)
	if !blocked && sc != scDue {
		r.tb.Fatalf("the take on an empty queue answered %+v before it waited", got)
	}
	var t0, t1 time.Time
	if sc != scDue {
		if sc == scWake {
			delay = 0
		}
		t0 = time.Now()
		if id, err = p.create(ctx, delay); err != nil {
			r.tb.Fatal(err)
		}
		t1 = time.Now()
	}
	if blocked {
		got = <-ch
	}
	if got.err != nil || got.id != id {
		r.tb.Fatalf("the waiting take got job %d (%v), want job %d", got.id, got.err, id)
	}
	switch sc {
	case scWake:
		lat, fromAnswer = got.at.Sub(t0), got.at.Sub(t1)
	default:
		due, err := p.runAt(ctx, id)
		if err != nil {
			r.tb.Fatal(err)
		}
		lat = got.at.Sub(due)
	}
	if err := p.complete(ctx, id); err != nil {
		r.tb.Fatal(err)
	}
	return lat, fromAnswer, blocked
}

// longPoll measures, through the store or over HTTP (the local server in a
// child process), how long a waiting take takes to answer: after a create,
// after the due time of a job scheduled before it waits, and of one
// scheduled while it waits. Samples run one at a time, each scenario on a
// queue of its own, after one warm-up sample.
func longPoll(r *run, sz longPollSizes, overHTTP bool) {
	ctx := context.Background()
	e := newEnv(r.tb, redisstore.Options{})
	mk := func(q string) poller { return storePoller{e.store, q} }
	level := "store"
	if overHTTP {
		local := startLocalServer(r.tb, e.url, e.ns)
		client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
		defer client.CloseIdleConnections()
		mk = func(q string) poller { return httpPoller{client, local.url, q} }
		level = "HTTP"
	}
	var lat latencies
	rnd := rand.New(rand.NewPCG(1, 2))
	r.resetTimer()
	for sc := range scenarios {
		q := "lp" + strconv.Itoa(sc)
		if _, err := e.store.PutQueue(ctx, q, benchQueue); err != nil {
			r.tb.Fatal(err)
		}
		p := mk(q)
		n := [scenarios]int{sz.wakes, sz.dues, sz.lates}[sc]
		if sc == scWake { // warm up: connections, scripts
			sample(r, p, e.prefix, q, sc, sz, rnd)
		}
		start := time.Now()
		for len(lat.samples[sc]) < n && (len(lat.samples[sc]) == 0 || sc != scLate || time.Since(start) < sz.late) {
			l, fromAnswer, blocked := sample(r, p, e.prefix, q, sc, sz, rnd)
			if !blocked {
				if lat.discarded++; lat.discarded > n {
					r.tb.Fatalf("%d samples of a job due in %v or more: the take answered before it waited", lat.discarded, sz.delay)
				}
				continue
			}
			lat.samples[sc] = append(lat.samples[sc], l)
			if sc == scWake {
				lat.wakeFromAnswer = append(lat.wakeFromAnswer, fromAnswer)
			}
		}
	}
	r.stopTimer()
	for sc, unit := range []string{"wake", "due", "late"} {
		r.metric(float64(percentile(lat.samples[sc], 50).Microseconds()), unit+"-p50-us")
		r.metric(float64(percentile(lat.samples[sc], 99).Microseconds()), unit+"-p99-us")
	}
	r.metric(0, "ns/op")
	if !r.final() {
		return
	}
	reportLongPoll(sz, level, &lat)
}

// percentile is the nearest-rank p-th percentile of d (0 when empty).
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	k := (p*len(s) + 99) / 100
	return s[max(k, 1)-1]
}

// latencyText formats a latency in milliseconds.
func latencyText(d time.Duration) string {
	v := float64(d.Nanoseconds()) / 1e6
	switch {
	case v < 10 && v > -10:
		return fmt.Sprintf("%.2f ms", v)
	case v < 1000:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

// longPollSeen keeps each level's latencies so that a summary line shows
// the store's and HTTP's together, whichever ran.
var longPollSeen = struct {
	sync.Mutex
	by map[string]*latencies
}{by: map[string]*latencies{}}

var scenarioText = [scenarios]struct{ item, from string }{
	{"a create wakes a take waiting on an empty queue", "the create call's start"},
	{"a job scheduled (delay) before the take waits falls due", "the job's run_at"},
	{"a job scheduled (delay) while the take waits falls due", "the job's run_at"},
}

func reportLongPoll(sz longPollSizes, level string, lat *latencies) {
	longPollSeen.Lock()
	defer longPollSeen.Unlock()
	longPollSeen.by[level] = lat
	for sc := range scenarios {
		var parts []string
		for _, lv := range []string{"store", "HTTP"} {
			if l := longPollSeen.by[lv]; l != nil {
				s := l.samples[sc]
				parts = append(parts, fmt.Sprintf("%s p50 %s, p99 %s (%d)", lv, latencyText(percentile(s, 50)), latencyText(percentile(s, 99)), len(s)))
			}
		}
		delay := ""
		if sc != scWake {
			delay = fmt.Sprintf("; delay %v-%v", sz.delay, sz.delay+sz.spread)
		}
		rep.goal(posLongPoll+sc, goalLine{
			Item: fmt.Sprintf("8. Long-poll: %s (wait=%v%s): from %s to the take's answer, through the store / over HTTP (local server, child process)",
				scenarioText[sc].item, sz.wait, delay, scenarioText[sc].from),
			Measured: strings.Join(parts, "; "),
			Goal:     "none (reference)",
			Verdict:  info,
		})
	}
	hdr := []string{"through", "scenario", "from", "samples", "p50", "p90", "p99", "max"}
	title := fmt.Sprintf("Long-poll: time to the waiting take's answer (wait=%v; scheduled jobs: delay uniform in %v-%v; samples one at a time, readiness from the queue's waited-on mark; scheduled while waiting: at most %d samples or %v)",
		sz.wait, sz.delay, sz.delay+sz.spread, sz.lates, sz.late)
	row := func(sc int, from string, s []time.Duration) {
		rep.row("longPoll", title, hdr, level+"/"+strconv.Itoa(sc)+"/"+from, level, scenarioText[sc].item, from,
			strconv.Itoa(len(s)), latencyText(percentile(s, 50)), latencyText(percentile(s, 90)), latencyText(percentile(s, 99)), latencyText(percentile(s, 100)))
	}
	for sc := range scenarios {
		row(sc, scenarioText[sc].from, lat.samples[sc])
		if sc == scWake {
			row(sc, "the create's answer", lat.wakeFromAnswer)
		}
	}
}
