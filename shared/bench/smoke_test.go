package bench_test

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestSmoke runs every benchmark body once with tiny sizes, so that `make
// test` keeps them working. It measures nothing and asserts no timing.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("smoke run of the benchmarks (private redis-server, Lambda builds)")
	}
	t.Run("round trips store", func(t *testing.T) { roundTripsStore(smokeRun(t, 3)) })
	t.Run("round trips http", func(t *testing.T) { roundTripsHTTP(smokeRun(t, 1)) })
	t.Run("peers", func(t *testing.T) { peerComparison(smokeRun(t, 1), smokePeerSizes) })
	t.Run("auto pipeline", func(t *testing.T) { autoPipeComparison(smokeRun(t, 1), smokeAutoPipeSizes) })
	t.Run("script mode", func(t *testing.T) { scriptMode(smokeRun(t, 1), smokeScriptModeSizes) })
	t.Run("store throughput", func(t *testing.T) { storeThroughput(smokeRun(t, 8), 4) })
	t.Run("http throughput", func(t *testing.T) { httpThroughput(smokeRun(t, 8), 4) })
	t.Run("sweep scaling", func(t *testing.T) {
		sweepScaling(smokeRun(t, 2), newSweepEnv(t, 20, 10, true), newSweepEnv(t, 200, 10, true))
	})
	t.Run("batch take", func(t *testing.T) {
		batchTake(smokeRun(t, 1), smokeBatchSizes, false)
		batchTake(smokeRun(t, 1), smokeBatchSizes, true)
	})
	t.Run("long-poll", func(t *testing.T) {
		longPoll(smokeRun(t, 1), smokeLongPollSizes, false)
		longPoll(smokeRun(t, 1), smokeLongPollSizes, true)
	})
	t.Run("push", func(t *testing.T) { pushBench(smokeRun(t, 1), smokePushSizes) })
	t.Run("cost", costSmoke)
	t.Run("lambda", func(t *testing.T) {
		if _, err := exec.LookPath("make"); err != nil {
			t.Skip("make is not installed")
		}
		// The host arch, as the end-to-end test builds: no cross-compiled
		// standard library to build in a cold cache.
		lambdaSizes(smokeRun(t, 1), false, runtime.GOARCH)
		lambdaColdStarts(smokeRun(t, 1), false, 1)
	})
}

// TestCounter checks what the Counter calls a round trip: a command, a
// pipeline, an EVALSHA retried as EVAL, a new connection's HELLO.
func TestCounter(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, redisstore.Options{})
	step := func(what string, want int64, fn func() error) {
		t.Helper()
		before := e.counter.Snapshot()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		d := e.counter.Snapshot().Sub(before)
		if d.RoundTrips != want {
			t.Errorf("%s: %d round trips (%s), want %d", what, d.RoundTrips, d.CommandList(), want)
		}
	}
	step("first command on a new connection (HELLO, then PING)", 2, func() error { return e.rdb.Ping(ctx).Err() })
	step("one command", 1, func() error { return e.rdb.Set(ctx, e.prefix+"k", "v", 0).Err() })
	pipeline := func() error {
		_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, e.prefix+"n", "1", 0)
			p.Incr(ctx, e.prefix+"n")
			p.Get(ctx, e.prefix+"n")
			return nil
		})
		return err
	}
	// go-redis keeps a separate pool for pipelines.
	step("a first pipeline of three (its pool dials: HELLO)", 2, pipeline)
	step("a pipeline of three", 1, pipeline)
	script := fmt.Sprintf("return %q", t.Name()+time.Now().String()) // never loaded before
	step("a new script: EVALSHA, NOSCRIPT, EVAL", 2, func() error {
		return redis.NewScript(script).Run(ctx, e.rdb, []string{e.prefix + "k"}).Err()
	})
	step("the same script again: EVALSHA", 1, func() error {
		return redis.NewScript(script).Run(ctx, e.rdb, []string{e.prefix + "k"}).Err()
	})
	d := e.counter.Snapshot()
	if d.Dials != 2 || d.CommandCount() < 9 {
		t.Errorf("dials %d, commands %s", d.Dials, d.CommandList())
	}
}

// TestPipelinedSeed checks that the sweep benchmark's seed, the store's
// calls from many goroutines with automatic pipelining, leaves exactly what
// the same calls leave one at a time without it (every key, type and value
// of two namespaces, same clock), and that it does pipeline.
func TestPipelinedSeed(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 1, 2, 3, 4, 5, 678901000, time.UTC)
	clk := redistest.NewClock(time.Time{})
	clk.Set(now)
	piped, calls := newEnv(t, redisstore.Options{Now: clk.Now}), newEnv(t, redisstore.Options{Now: clk.Now, AutoPipeline: -1})
	for _, e := range []*env{piped, calls} {
		for _, q := range []string{"run", "done"} {
			if _, err := e.store.PutQueue(ctx, q, ocypod.QueueSettings{Timeout: ocypod.Seconds(60), ExpiresAfter: ocypod.Seconds(90), Retries: 2}); err != nil {
				t.Fatal(err)
			}
		}
	}
	const running, ended = 60, 40
	s := newSeeder(t, piped, redisstore.Options{Now: clk.Now})
	defer s.close()
	if err := s.jobs(ctx, "run", running, false); err != nil {
		t.Fatal(err)
	}
	if err := s.jobs(ctx, "done", ended, true); err != nil {
		t.Fatal(err)
	}
	sent := s.counter.Snapshot()
	if sent.CommandCount() < 2*running+3*ended || sent.RoundTrips >= sent.CommandCount() {
		t.Errorf("seeding sent %d commands in %d round trips: want at least %d commands, fewer round trips than commands",
			sent.CommandCount(), sent.RoundTrips, 2*running+3*ended)
	}
	// The same queues in the same order as the seed above, so the ids match.
	for _, qn := range []struct {
		q string
		n int
	}{{"run", running}, {"done", ended}} {
		q, n := qn.q, qn.n
		for range n {
			if _, err := calls.store.CreateJob(ctx, q, ocypod.JobSpec{}); err != nil {
				t.Fatal(err)
			}
		}
		for range n {
			next, err := calls.store.NextJob(ctx, q)
			if err != nil || next == nil {
				t.Fatal(next, err)
			}
			if q == "done" {
				if _, _, err := calls.store.UpdateJob(ctx, next.ID, ocypod.JobUpdate{Status: &completed}, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	a, b := dumpNamespace(t, piped), dumpNamespace(t, calls)
	if !slices.Equal(a, b) {
		t.Errorf("pipelined seed and plain store calls differ:\npiped: %s\ncalls: %s", strings.Join(a, "\n       "), strings.Join(b, "\n       "))
	}
	if n := countJobs(t, piped); n != running+ended {
		t.Errorf("the pipelined seed holds %d jobs, want %d", n, running+ended)
	}
}

// countJobs counts the jobs of e's namespace: the fields of its
// partitions' job hashes.
func countJobs(t *testing.T, e *env) int {
	t.Helper()
	ctx := context.Background()
	keys, err := e.rdb.Keys(ctx, "{"+e.ns+"*}:j").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range keys {
		n += int(e.rdb.HLen(ctx, k).Val())
	}
	return n
}

// dumpNamespace lists every key of e's namespace with its type and value,
// the prefix left out, sorted.
func dumpNamespace(t *testing.T, e *env) []string {
	t.Helper()
	ctx := context.Background()
	keys, err := e.rdb.Keys(ctx, e.prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		typ, err := e.rdb.Type(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		var val any
		switch typ {
		case "string":
			val, err = e.rdb.Get(ctx, k).Result()
		case "hash":
			var m map[string]string
			m, err = e.rdb.HGetAll(ctx, k).Result()
			val = fmt.Sprint(m) // fmt sorts map keys
		case "zset":
			val, err = e.rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "set":
			var m []string
			m, err = e.rdb.SMembers(ctx, k).Result()
			slices.Sort(m)
			val = m
		default:
			t.Fatalf("key %s has type %s", k, typ)
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s %v", strings.TrimPrefix(k, e.prefix), typ, val))
	}
	slices.Sort(out)
	return out
}
