package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/ocyless/ocyless/shared/redisstore"
)

// Summary positions of the throughput lines.
const (
	posStore1  = 30
	posStore50 = 31
	posHTTP    = 40
	posHTTPCPU = 41
)

// chunks is how many slices the measured operations and the floor are cut
// into, alternating, so that both see the same background load of a shared
// machine.
const chunks = 10

// interleave runs the measured work and the floor in alternating slices:
// measure(k) does k measured operations, floor(k) k floor operations (with
// floorPer floor operations per measured one). The benchmark timer runs
// only during the measured slices. It returns what each side took, and the
// lowest and highest ratio of the measured rate to the floor's rate (per
// floorPer operations) over the slices.
func interleave(r *run, n, floorPer int, measure, floor func(k int) error) (m, f side, lo, hi float64) {
	ctx := context.Background()
	rdb := redisServer(r.tb).Client()
	cpu := func() time.Duration {
		d, err := redisCPU(ctx, rdb)
		if err != nil {
			r.tb.Fatal(err)
		}
		return d
	}
	r.resetTimer()
	r.stopTimer()
	done := 0
	for c := range chunks {
		k := (n*(c+1))/chunks - done
		if k == 0 {
			continue
		}
		done += k
		c0 := cpu()
		r.startTimer()
		t0 := time.Now()
		if err := measure(k); err != nil {
			r.tb.Fatal(err)
		}
		tm := time.Since(t0)
		r.stopTimer()
		c1 := cpu()
		t0 = time.Now()
		if err := floor(k * floorPer); err != nil {
			r.tb.Fatal(err)
		}
		tf := time.Since(t0)
		c2 := cpu()
		m.wall, m.redisCPU = m.wall+tm, m.redisCPU+c1-c0
		f.wall, f.redisCPU = f.wall+tf, f.redisCPU+c2-c1
		ratio := tf.Seconds() / tm.Seconds() // (k/tm) / (k*floorPer/tf / floorPer)
		if lo == 0 || ratio < lo {
			lo = ratio
		}
		hi = max(hi, ratio)
	}
	r.startTimer()
	return m, f, lo, hi
}

// side is what one side of interleave took: wall time, and the CPU time
// redis-server used meanwhile (the INFO calls that read it included).
type side struct {
	wall, redisCPU time.Duration
}

// redisShare is the share of one core redis-server used during s.
func (s side) redisShare() float64 { return s.redisCPU.Seconds() / s.wall.Seconds() }

// storeThroughput runs r.n lifecycles on workers goroutines through one
// store (one client, the product's settings), interleaved with 3 * r.n
// EVALSHA of a trivial script on the same client at the same concurrency.
func storeThroughput(r *run, workers int) {
	ctx := context.Background()
	e := newEnv(r.tb, redisstore.Options{})
	if _, err := e.store.PutQueue(ctx, "tp", benchQueue); err != nil {
		r.tb.Fatal(err)
	}
	loadFloor(r.tb, e.rdb)
	life := func(k int) error { return parallel(workers, k, func() error { return lifecycle(ctx, e.store, "tp") }) }
	floor := func(k int) error { return parallel(workers, k, func() error { return floorCall(ctx, e.rdb) }) }
	// Warm up: dial the pool, load the scripts.
	if err := life(2 * workers); err != nil {
		r.tb.Fatal(err)
	}
	if err := floor(6 * workers); err != nil {
		r.tb.Fatal(err)
	}
	tm, tf, lo, hi := interleave(r, r.n, 3, life, floor)
	lps := float64(r.n) / tm.wall.Seconds()
	fps := float64(3*r.n) / tf.wall.Seconds()
	ratio := lps / (fps / 3)
	r.metric(lps, "lifecycles/s")
	r.metric(fps, "floor-evalsha/s")
	r.metric(ratio, "x(floor/3)")
	r.metric(float64(tm.redisCPU.Microseconds())/float64(r.n), "redis-cpu-us/lifecycle")
	r.metric(float64(tf.redisCPU.Microseconds())/float64(3*r.n), "redis-cpu-us/floor-call")
	r.metric(tm.redisShare(), "redis-cores(lifecycle)")
	r.metric(tf.redisShare(), "redis-cores(floor)")
	if !r.final() {
		return
	}
	pos := posStore50
	if workers != 50 {
		pos = posStore1
	}
	rep.goal(pos, goalLine{
		Item:     fmt.Sprintf("3. Diagnostic: store lifecycles/s, %d worker(s), each worker creating, taking and completing in turn, next to a trivial EVALSHA on the same client", workers),
		Measured: fmt.Sprintf("%.0f lifecycles/s", lps),
		Floor:    fmt.Sprintf("%.0f trivial EVALSHA/s (/3 = %.0f)", fps, fps/3),
		Ratio:    fmt.Sprintf("%.2f x (floor/3); slices %.2f-%.2f", ratio, lo, hi),
		Goal:     "none (diagnostic)",
		Verdict:  info,
	})
	whereTimeGoes(fmt.Sprintf("store, %d worker(s)", workers), "lifecycle", r.n, tm, "trivial EVALSHA", 3*r.n, tf, 0)
}

// httpThroughput runs r.n lifecycles over real HTTP on loopback through
// the local server (cmd/ocypod-local in a child process) with clients
// keep-alive clients, interleaved with r.n lifecycles through the store in
// this process with as many workers, on the same redis-server. It also
// reads the server process's own CPU time around each HTTP slice.
func httpThroughput(r *run, clients int) {
	ctx := context.Background()
	api := newEnv(r.tb, redisstore.Options{}) // the server's namespace, seen from here
	if _, err := api.store.PutQueue(ctx, "tp", benchQueue); err != nil {
		r.tb.Fatal(err)
	}
	local := startLocalServer(r.tb, api.url, api.ns)
	e := newEnv(r.tb, redisstore.Options{})
	if _, err := e.store.PutQueue(ctx, "tp", benchQueue); err != nil {
		r.tb.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: 2 * clients, MaxIdleConnsPerHost: 2 * clients, DisableCompression: true,
	}}
	defer client.CloseIdleConnections()

	var serverCPU time.Duration
	serverCPUNow := func() time.Duration {
		d, err := local.cpu()
		if err != nil {
			r.tb.Fatal(err)
		}
		return d
	}
	httpLife := func(k int) error {
		c0 := serverCPUNow()
		err := parallel(clients, k, func() error { return httpLifecycle(ctx, client, local.url, "tp") })
		serverCPU += serverCPUNow() - c0
		return err
	}
	storeLife := func(k int) error { return parallel(clients, k, func() error { return lifecycle(ctx, e.store, "tp") }) }
	// Warm up: open the connections, load the scripts.
	if err := httpLife(2 * clients); err != nil {
		r.tb.Fatal(err)
	}
	if err := storeLife(2 * clients); err != nil {
		r.tb.Fatal(err)
	}
	serverCPU = 0
	tm, tf, lo, hi := interleave(r, r.n, 1, httpLife, storeLife)
	lps := float64(r.n) / tm.wall.Seconds()
	sps := float64(r.n) / tf.wall.Seconds()
	ratio := lps / sps
	perReq := float64(serverCPU.Nanoseconds()) / float64(3*r.n) / 1e3
	r.metric(lps, "http-lifecycles/s")
	r.metric(sps, "store-lifecycles/s")
	r.metric(ratio, "x-store")
	r.metric(perReq, "server-cpu-us/request")
	r.metric(float64(tm.redisCPU.Microseconds())/float64(r.n), "redis-cpu-us/http-lifecycle")
	if !r.final() {
		return
	}
	whereTimeGoes(fmt.Sprintf("HTTP, %d clients", clients), "lifecycle over HTTP", r.n, tm, "store lifecycle", r.n, tf, perReq)
	rep.goal(posHTTP, goalLine{
		Item:     fmt.Sprintf("4. HTTP: job lifecycles/s through the local server (ocypod-local, child process, default info logging; %d keep-alive clients) / the store's in this process (%d workers)", clients, clients),
		Measured: fmt.Sprintf("%.0f lifecycles/s", lps),
		Floor:    fmt.Sprintf("store %.0f lifecycles/s", sps),
		Ratio:    fmt.Sprintf("%.2f x store; slices %.2f-%.2f", ratio, lo, hi),
		Goal:     fmt.Sprintf(">= %.1f x store", httpRatioGoal),
		Verdict:  verdictOf(ratio >= httpRatioGoal),
	})
	rep.goal(posHTTPCPU, goalLine{
		Item:     fmt.Sprintf("4. HTTP: the local server process's own CPU per request (utime + stime of /proc/<pid>/stat over the HTTP slices, %d requests)", 3*r.n),
		Measured: fmt.Sprintf("%.1f µs", perReq),
		Goal:     fmt.Sprintf("<= %.0f µs", httpCPUGoal.Seconds()*1e6),
		Verdict:  verdictOf(perReq <= httpCPUGoal.Seconds()*1e6),
	})
}

// Goals of the HTTP lines.
const (
	httpRatioGoal = 0.6
	httpCPUGoal   = 40 * time.Microsecond
)

// httpLifecycle creates a job, takes one and completes it over HTTP.
func httpLifecycle(ctx context.Context, c *http.Client, base, queue string) error {
	if _, err := do(ctx, c, "POST", base+"/queue/"+queue+"/job", `{"input":{"n":1}}`, http.StatusCreated); err != nil {
		return err
	}
	body, err := do(ctx, c, "GET", base+"/queue/"+queue+"/job", "", http.StatusOK)
	if err != nil {
		return err
	}
	var next struct{ ID uint64 }
	if err := json.Unmarshal(body, &next); err != nil {
		return fmt.Errorf("next job %q: %w", body, err)
	}
	_, err = do(ctx, c, "PATCH", base+"/job/"+strconv.FormatUint(next.ID, 10), `{"status":"completed"}`, http.StatusNoContent)
	return err
}

// do sends one request and checks its status; it returns the body.
func do(ctx context.Context, c *http.Client, method, url, body string, want int) ([]byte, error) {
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s = %d %q, want %d", method, url, resp.StatusCode, b, want)
	}
	return b, nil
}

// whereTimeGoes adds a row to the table that shows, for a throughput
// measurement and its floor, the redis-server CPU time per operation and how
// busy redis-server was (1 core = the single-threaded server saturated),
// and, over HTTP, the server process's CPU per request.
func whereTimeGoes(name, op string, n int, m side, floorOp string, fn int, f side, serverPerReq float64) {
	per := func(s side, k int) string {
		return fmt.Sprintf("%.1f µs", float64(s.redisCPU.Nanoseconds())/float64(k)/1e3)
	}
	wall := func(s side, k int) string {
		return fmt.Sprintf("%.1f µs", float64(s.wall.Nanoseconds())/float64(k)/1e3)
	}
	server := "-"
	if serverPerReq > 0 {
		server = fmt.Sprintf("%.1f µs", serverPerReq)
	}
	rep.row("cpu", "Where the time goes: redis-server CPU per operation (INFO cpu) and redis-server busy share, measured side and floor side", []string{
		"measurement", "operation", "wall per op", "redis CPU per op", "redis busy", "HTTP server CPU per request", "floor operation", "wall per op", "redis CPU per op", "redis busy",
	}, name, name, op, wall(m, n), per(m, n), fmt.Sprintf("%.2f cores", m.redisShare()), server,
		floorOp, wall(f, fn), per(f, fn), fmt.Sprintf("%.2f cores", f.redisShare()))
}
