package bench_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/bench"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// server is the private redis-server of this test binary, started on first
// use and stopped by TestMain.
var server struct {
	once sync.Once
	srv  *redistest.Server
	err  error
}

// redisServer returns the private server, starting it on first use.
func redisServer(tb testing.TB) *redistest.Server {
	tb.Helper()
	server.once.Do(func() { server.srv, server.err = redistest.StartServer(redistest.Options{}) })
	if server.err != nil {
		tb.Fatalf("starting a private redis-server: %v", server.err)
	}
	return server.srv
}

// extraServers are servers started for one measurement (the sweep
// benchmark's dedicated ones); TestMain stops them.
var extraServers struct {
	sync.Mutex
	list []*redistest.Server
}

// startExtraServer starts another private redis-server, stopped at exit.
func startExtraServer(tb testing.TB) *redistest.Server {
	tb.Helper()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		tb.Fatalf("starting a private redis-server: %v", err)
	}
	extraServers.Lock()
	extraServers.list = append(extraServers.list, srv)
	extraServers.Unlock()
	return srv
}

func stopServers() {
	extraServers.Lock()
	defer extraServers.Unlock()
	for _, srv := range append(extraServers.list, server.srv) {
		if srv == nil {
			continue
		}
		if err := srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: stopping redis-server:", err)
		}
	}
}

var namespaces atomic.Int64

// env is one measurement's Redis client (as the product builds it, with a
// round-trip counter) and store on a namespace of its own.
type env struct {
	tb      testing.TB
	rdb     redis.UniversalClient
	counter *bench.Counter
	store   *redisstore.Store
	ns      string
	prefix  string // "{ns}:", the start of every key of the namespace
	url     string // the server's
}

// newEnv returns a fresh env; opts.Namespace is set here. The client is
// closed when tb ends.
func newEnv(tb testing.TB, opts redisstore.Options) *env {
	tb.Helper()
	e := openEnv(tb, nil, opts)
	tb.Cleanup(func() { _ = e.rdb.Close() })
	return e
}

// benchRedisTimeout bounds each Redis call of the benchmarks' stores.
const benchRedisTimeout = 10 * time.Second

// openEnv is newEnv without closing the client when tb ends; srv is the
// server to use, nil for the shared one.
func openEnv(tb testing.TB, srv *redistest.Server, opts redisstore.Options) *env {
	tb.Helper()
	if srv == nil {
		srv = redisServer(tb)
	}
	// Generous timeouts: a loaded machine (make test runs packages side by
	// side) can take seconds over a first call's dial and script loads.
	rdb, err := redisstore.NewClient(redisstore.ClientOptions{URL: srv.URL(),
		DialTimeout: benchRedisTimeout, ReadTimeout: benchRedisTimeout, WriteTimeout: benchRedisTimeout})
	if err != nil {
		tb.Fatal(err)
	}
	counter := &bench.Counter{}
	rdb.AddHook(counter)
	opts.Namespace = "bench" + strconv.FormatInt(namespaces.Add(1), 10)
	store, err := redisstore.New(rdb, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return &env{tb: tb, rdb: rdb, counter: counter, store: store, ns: opts.Namespace, prefix: "{" + opts.Namespace + "}:", url: srv.URL()}
}

// floorScript is the floor's trivial script.
var floorScript = redis.NewScript("return 1")

// floorCall runs the trivial script once with EVALSHA (loaded beforehand).
func floorCall(ctx context.Context, rdb redis.Scripter) error {
	return floorScript.EvalSha(ctx, rdb, nil).Err()
}

// loadFloor loads the trivial script so that floorCall never sees NOSCRIPT.
func loadFloor(tb testing.TB, rdb redis.Scripter) {
	tb.Helper()
	if err := floorScript.Load(context.Background(), rdb).Err(); err != nil {
		tb.Fatal(err)
	}
}

// parallel runs fn n times on min(workers, n) goroutines and returns the
// first error.
func parallel(workers, n int, fn func() error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := fn(); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// run is one execution of a benchmark body: n operations, under a
// *testing.B (timer control, metrics) or, in the smoke test, under a
// *testing.T with tiny sizes.
type run struct {
	tb testing.TB
	b  *testing.B // nil in the smoke test
	n  int
}

func benchRun(b *testing.B) *run { return &run{tb: b, b: b, n: b.N} }

func smokeRun(t *testing.T, n int) *run { return &run{tb: t, n: n} }

func (r *run) stopTimer() {
	if r.b != nil {
		r.b.StopTimer()
	}
}

func (r *run) startTimer() {
	if r.b != nil {
		r.b.StartTimer()
	}
}

func (r *run) resetTimer() {
	if r.b != nil {
		r.b.ResetTimer()
	}
}

// metric reports a custom benchmark metric (ignored in the smoke test).
func (r *run) metric(v float64, unit string) {
	if r.b != nil {
		r.b.ReportMetric(v, unit)
	}
}

// final reports whether this is a real benchmark run whose figures belong in
// the summary: the framework calls a benchmark several times with growing
// b.N, and every call overwrites the previous one's entry, so the summary
// keeps the last (largest) one.
func (r *run) final() bool { return r.b != nil }

// cmdStat is one command's line of INFO commandstats.
type cmdStat struct {
	Calls int64 // calls (including those made from scripts)
	Usec  int64 // total server CPU time in microseconds
}

// commandStats returns INFO commandstats (server side, every client) by
// lower-case command name, e.g. "evalsha".
func commandStats(ctx context.Context, rdb redis.UniversalClient) (map[string]cmdStat, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	return parseCommandStats(info)
}

// parseCommandStats reads the commandstats section of an INFO reply.
func parseCommandStats(info string) (map[string]cmdStat, error) {
	out := map[string]cmdStat{}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "cmdstat_")
		if !ok {
			continue
		}
		name, fields, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		var st cmdStat
		var err error
		for _, kv := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(kv, "=")
			var dst *int64
			switch k {
			case "calls":
				dst = &st.Calls
			case "usec":
				dst = &st.Usec
			default:
				continue
			}
			if *dst, err = strconv.ParseInt(v, 10, 64); err != nil {
				return nil, fmt.Errorf("commandstats line %q: %w", line, err)
			}
		}
		out[strings.ToLower(name)] = st
	}
	if len(out) == 0 {
		return nil, errors.New("INFO commandstats is empty")
	}
	return out, nil
}

// scriptCalls is the EVAL and EVALSHA calls and their server CPU time in
// stats.
func scriptCalls(stats map[string]cmdStat) cmdStat {
	a, b := stats["evalsha"], stats["eval"]
	return cmdStat{Calls: a.Calls + b.Calls, Usec: a.Usec + b.Usec}
}

// redisCPU is the CPU time redis-server has used so far (INFO cpu:
// used_cpu_user + used_cpu_sys).
func redisCPU(ctx context.Context, rdb redis.UniversalClient) (time.Duration, error) {
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (k != "used_cpu_user" && k != "used_cpu_sys") {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu line %q: %w", line, err)
		}
		total += f
	}
	return time.Duration(total * float64(time.Second)), nil
}
