// Package bench measures ocyless end to end against private redis-servers:
// Redis round trips per API request and per job lifecycle, the store next
// to BullMQ and bee-queue on the same redis-server, HTTP throughput of the
// local server next to the store's, the cost of a sweep as the number of
// stored jobs grows, the size and cold start of every Lambda bootstrap,
// count=100 takes next to count=1 takes, how soon a long-poll answers, and
// push delivery next to pulling workers.
// Every goal is a ratio to a peer or a floor measured in the same run, or
// an absolute bound on behaviour. `make bench` runs it once and rewrites
// the figures in docs/benchmarks.md; docs/benchmarks.md explains each line
// and its goal.
//
// The benchmarks live in the _test.go files, in the order they run:
//
//   - BenchmarkRoundTrips counts round trips at the socket (Counter) for the
//     store's operations, a job lifecycle (create, take, complete) and every
//     route through httpapi's handler. Goal: 1 per request, 3 per lifecycle.
//   - BenchmarkPeers (peers_test.go, peers_report_test.go) runs the same
//     jobs through the store and through BullMQ and bee-queue, which node
//     runs from peers/peer.mjs with the versions pinned in
//     peers/package-lock.json (installed with npm into the user's cache
//     directory, never into the repository), on one private redis-server:
//     redis-server CPU and commands per lifecycle, lifecycles/s, bytes per
//     queued job. Goals: ours / BullMQ's <= 0.8 (CPU), >= 1.0 (rate), <= 1.0
//     (bytes). Without node the peer lines say "not measured: node not
//     found".
//   - BenchmarkStoreThroughput runs lifecycles with 1 and 50 workers next
//     to EVALSHA of a trivial script at the same concurrency, interleaved: a
//     diagnostic of where redis-server's time goes, with no goal.
//   - BenchmarkHTTPThroughput runs lifecycles over real HTTP with 50
//     keep-alive clients through cmd/ocypod-local, built and started as a
//     child process with its default settings, interleaved with lifecycles
//     through the store in this process. Goals: HTTP lifecycles/s >= 0.6 x
//     the store's; the server process's own CPU (/proc/<pid>/stat) <= 40 µs
//     per request.
//   - BenchmarkSweepScaling times the timeout and expiry sweeps of 1,000 due
//     jobs among 10^3 and among 10^6 stored jobs (half running, half ended).
//     The jobs are made by the store's public methods from many goroutines,
//     which the store's automatic pipelining sends together (seed_test.go;
//     TestPipelinedSeed checks it leaves what plain calls leave). Goal: cost
//     per due job at 10^6 <= 2 x at 10^3.
//   - BenchmarkLambda builds every bootstrap with the Makefile's
//     build-<LogicalId> targets and a floor bootstrap
//     (testdata/lambdafloor: aws-lambda-go, aws-lambda-go-api-proxy and
//     go-redis running one script) with the same command: arm64 for the
//     sizes (goal: every one <= 1.10 x the floor), the host arch for the
//     time from process start to the first answered event against a fake
//     Lambda Runtime API (median of several runs; goal <= 25 ms).
//   - BenchmarkBatchTake (batch_test.go) drains freshly filled queues with
//     count=100 takes and with count=1 takes, through the store and over
//     HTTP through cmd/ocypod-local in a child process, the two sides of a
//     pair back to back in every round, first alternating: jobs/s, the ratio
//     batch / single with its spread over the rounds, redis-server CPU and
//     commands per job. Each job is completed by a call of its own, and in
//     a second pair the last completion of a batch takes the next one
//     (PATCH ?take=). No goal.
//   - BenchmarkLongPoll (longpoll_test.go) times a take waiting on an empty
//     queue, through the store and over HTTP: from the start of a create
//     to the take's answer, and from the run_at of a job scheduled before,
//     and of one scheduled while, the take waits. The take is known to wait
//     once redis-server counts one more blocked client (INFO clients).
//     p50 and p99; no goal.
//   - BenchmarkPush (push_test.go) runs, on one local server (cmd/ocypod-local
//     in a child process, its push dispatcher in-process), jobs delivered by
//     a push queue with concurrency 50 to a target in this process that
//     answers 200 at once (timed from the PATCH that sets push to the last
//     job recorded completed), next to the same number of jobs taken
//     (count=1) and completed over HTTP by 50 keep-alive clients; fresh
//     queues each round, the two sides back to back, the first alternating.
//     Goal: push lifecycles/s >= 0.5 x pull's.
//   - BenchmarkAutoPipeline (autopipe_test.go) runs the peer comparison's
//     lifecycles (20,000 jobs, 50 workers, 5 rounds whose order rotates)
//     through the store with automatic pipelining on (the default) and off
//     (redisstore.Options.AutoPipeline -1), and through BullMQ when node is
//     installed: redis-server CPU per lifecycle, lifecycles/s, and the
//     ratios on / off and each / BullMQ, printed on stderr. No goal; not
//     part of the generated summary.
//   - BenchmarkScriptMode (scriptmode_test.go) runs the store's lifecycles
//     (20,000 jobs, 50 workers, 5 rounds, the first side alternating) with
//     its scripts as a Redis Functions library (FCALL, redisstore.Options
//     Scripts "functions", what the default "auto" picks on Redis 7+) and
//     with EVALSHA ("eval"), in two shapes: create, take, complete as three
//     calls, and create then complete-and-take (PATCH ?take=). It checks
//     from INFO commandstats that each side ran its own script command.
//     redis-server CPU per lifecycle, lifecycles/s, the ratios FCALL /
//     EVALSHA with their range over the rounds. No goal: it decides whether
//     Functions stay the default.
//
// TestCost (cost_test.go; make cost, not make bench) drives job lifecycles
// of each client mode (3 requests, complete-and-take, batches of 10 and
// 100) through httpapi's handler and through the warm bootstraps behind
// each front (HTTP API and ALB events), and prices each deployment choice
// with the table of cost_prices_test.go: docs/cost.md. It runs only with
// -cost; TestSmoke runs it with tiny sizes.
//
// TestMain prints a summary table of every goal (measured, floor, ratio,
// met) after the benchmarks and, with -doc=path, rewrites the generated
// part of that Markdown file. TestSmoke runs every benchmark body once with
// tiny sizes, so `make test` keeps the code working without timing
// anything (the peers too when node is installed); it is skipped under
// -short. Ratios are never asserted.
//
// Counter is the one piece meant for use outside this package's tests: a
// go-redis hook that counts round trips and commands.
package bench
