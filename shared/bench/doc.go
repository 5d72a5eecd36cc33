// Package bench measures ocyless end to end against a private redis-server:
// Redis round trips per API request and per job lifecycle, store and HTTP
// throughput next to floors measured in the same run, the cost of a sweep
// as the number of stored jobs grows, and the size and cold start of every
// Lambda bootstrap. `make bench` runs it once and rewrites the figures in
// docs/benchmarks.md; docs/benchmarks.md explains each line and its goal.
//
// The benchmarks live in the _test.go files:
//
//   - BenchmarkRoundTrips counts round trips at the socket (Counter) for the
//     store's operations, a job lifecycle (create, take, complete) and every
//     route through httpapi's handler. Goal: 1 per request, 3 per lifecycle.
//   - BenchmarkStoreThroughput runs lifecycles with 1 and 50 workers, and in
//     the same benchmark, interleaved with them, EVALSHA of a trivial script
//     at the same concurrency (the floor). Goal at 50 workers: lifecycles/s
//     >= 0.8 x floor/3.
//   - BenchmarkHTTPThroughput runs lifecycles over real HTTP on loopback
//     through httpapi.New(...).Handler() with 50 clients, next to a bare
//     net/http handler doing one EVALSHA per request. Goal: requests/s >=
//     0.7 x the floor's.
//   - BenchmarkSweepScaling times the timeout and expiry sweeps of 1,000 due
//     jobs among 10^3 and among 10^6 stored jobs (half running, half ended),
//     seeded in bulk by one script that runs the store's own create_job,
//     next_job and update_job code in a loop (TestBulkSeedMatchesStore checks
//     that it leaves exactly what the store's calls leave). Goal: cost per
//     due job at 10^6 <= 2 x at 10^3.
//   - BenchmarkLambda builds every bootstrap with the Makefile's
//     build-<LogicalId> targets: arm64 for the sizes (goal <= 8 MB), the host
//     arch for the time from process start to the first answered event
//     against a fake Lambda Runtime API (median of several runs; goal <= 25
//     ms).
//
// TestMain prints a summary table of every goal (measured, floor, ratio,
// met) after the benchmarks and, with -doc=path, rewrites the generated
// part of that Markdown file. TestSmoke runs every benchmark body once with
// tiny sizes, so `make test` keeps the code working without timing
// anything; it is skipped under -short. Ratios are never asserted.
//
// Counter is the one piece meant for use outside this package's tests: a
// go-redis hook that counts round trips and commands.
package bench
