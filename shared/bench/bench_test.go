package bench_test

import (
	"fmt"
	"testing"
)

// The benchmarks run in this order (the order of this file): counts first,
// then throughput, then the large sweep seeds, then the Lambda builds, then
// batch takes and long-poll latency.

// BenchmarkRoundTrips counts Redis round trips (at the socket) per store
// call, per job lifecycle and per request of every route.
func BenchmarkRoundTrips(b *testing.B) {
	b.Run("store-lifecycle", func(b *testing.B) { roundTripsStore(benchRun(b)) })
	b.Run("http-routes", func(b *testing.B) { roundTripsHTTP(benchRun(b)) })
}

// BenchmarkPeers compares the store with BullMQ and bee-queue (run by
// node) on one private redis-server: redis-server CPU and commands per job
// lifecycle, lifecycles/s, bytes per queued job. It runs once per run,
// whatever b.N.
func BenchmarkPeers(b *testing.B) { peerComparison(benchRun(b), benchPeerSizes) }

// BenchmarkStoreThroughput measures job lifecycles per second through the
// store next to the trivial-EVALSHA floor at the same concurrency.
func BenchmarkStoreThroughput(b *testing.B) {
	for _, w := range []int{1, 50} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) { storeThroughput(benchRun(b), w) })
	}
}

// BenchmarkHTTPThroughput measures requests per second of job lifecycles
// over loopback HTTP through httpapi's handler, next to a bare handler doing
// one EVALSHA per request.
func BenchmarkHTTPThroughput(b *testing.B) {
	b.Run("clients=50", func(b *testing.B) { httpThroughput(benchRun(b), 50) })
}

// BenchmarkSweepScaling times the timeout and expiry sweeps of 1,000 due
// jobs among 10^3 and among 10^6 stored jobs (half running, half ended),
// rounds alternating between the two sizes, each on a redis-server of its
// own.
func BenchmarkSweepScaling(b *testing.B) {
	small, large := cachedSweepEnv(b, sweepSizes[0]), cachedSweepEnv(b, sweepSizes[1])
	sweepScaling(benchRun(b), small, large)
}

// BenchmarkLambda builds every bootstrap with the Makefile's targets:
// arm64 for the sizes, the host arch for the cold starts against a fake
// Runtime API. Each is measured once per run, whatever b.N.
func BenchmarkLambda(b *testing.B) {
	b.Run("size-arm64", func(b *testing.B) { lambdaSizes(benchRun(b), true, "arm64") })
	b.Run("coldstart", func(b *testing.B) { lambdaColdStarts(benchRun(b), true, coldStartRuns) })
}

// BenchmarkBatchTake compares jobs/s taken and completed with count=100
// takes and with count=1 takes, through the store and over HTTP, in
// interleaved rounds on the same redis-server. It runs once per run,
// whatever b.N.
func BenchmarkBatchTake(b *testing.B) {
	b.Run("store", func(b *testing.B) { batchTake(benchRun(b), benchBatchSizes, false) })
	b.Run("http", func(b *testing.B) { batchTake(benchRun(b), benchBatchSizes, true) })
}

// BenchmarkLongPoll measures how long a take waiting on an empty queue
// takes to answer once a job is created or falls due, through the store
// and over HTTP. It runs once per run, whatever b.N.
func BenchmarkLongPoll(b *testing.B) {
	b.Run("store", func(b *testing.B) { longPoll(benchRun(b), benchLongPollSizes, false) })
	b.Run("http", func(b *testing.B) { longPoll(benchRun(b), benchLongPollSizes, true) })
}

// BenchmarkPush compares a push queue's deliveries to a target that
// answers at once with pulling workers over HTTP, on one local server. It
// runs once per run, whatever b.N.
func BenchmarkPush(b *testing.B) { pushBench(benchRun(b), benchPushSizes) }

// BenchmarkAutoPipeline compares the store's lifecycles (50 workers) with
// automatic pipelining on and off, and BullMQ's, on one redis-server:
// redis-server CPU per lifecycle and lifecycles/s. It runs once per run,
// whatever b.N; not part of docs/benchmarks.md's generated summary.
func BenchmarkAutoPipeline(b *testing.B) { autoPipeComparison(benchRun(b), benchAutoPipeSizes) }

// BenchmarkScriptMode compares the store's lifecycles (50 workers) with its
// scripts run as a Redis Functions library (FCALL) and with EVALSHA, on
// one redis-server: redis-server CPU per lifecycle and lifecycles/s. It
// runs once per run, whatever b.N.
func BenchmarkScriptMode(b *testing.B) { scriptMode(benchRun(b), benchScriptModeSizes) }
