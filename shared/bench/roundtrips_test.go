package bench_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	"github.com/ocyless/ocyless/shared/bench"
	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// Summary positions of the round-trip lines.
const (
	posTripsLifecycleStore = 10
	posTripsLifecycleHTTP  = 11
	posTripsPerRequest     = 12
)

var completed = ocypod.StatusCompleted

// lifecycleSpec is the job every lifecycle creates: a small input.
var lifecycleSpec = ocypod.JobSpec{Input: []byte(`{"n":1}`)}

// lifecycle creates a job in queue, takes the next job and completes it:
// what a producer plus a worker do for one job, three store calls.
func lifecycle(ctx context.Context, s *redisstore.Store, queue string) error {
	if _, err := s.CreateJob(ctx, queue, lifecycleSpec); err != nil {
		return err
	}
	next, err := s.NextJob(ctx, queue)
	if err != nil {
		return err
	}
	if next == nil {
		return fmt.Errorf("queue %s: no job to take", queue)
	}
	_, _, err = s.UpdateJob(ctx, next.ID, ocypod.JobUpdate{Status: &completed}, nil)
	return err
}

// benchQueue is the settings of the queues the lifecycles use: ended jobs
// stay an hour (no sweep runs meanwhile).
var benchQueue = ocypod.QueueSettings{Timeout: ocypod.Seconds(600), ExpiresAfter: ocypod.Seconds(3600)}

// roundTripsStore counts the round trips of r.n lifecycles through the
// store, per call and per lifecycle, after one warm-up lifecycle (which
// dials and loads the scripts). It checks the count against the server's
// INFO commandstats.
func roundTripsStore(r *run) {
	ctx := context.Background()
	e := newEnv(r.tb, redisstore.Options{})
	if _, err := e.store.PutQueue(ctx, "rt", benchQueue); err != nil {
		r.tb.Fatal(err)
	}
	if err := lifecycle(ctx, e.store, "rt"); err != nil {
		r.tb.Fatal(err)
	}
	statsBefore, err := commandStats(ctx, e.rdb)
	if err != nil {
		r.tb.Fatal(err)
	}
	var per [3]bench.Snapshot // create, next, complete
	total := e.counter.Snapshot()
	r.resetTimer()
	for range r.n {
		s0 := e.counter.Snapshot()
		c, err := e.store.CreateJob(ctx, "rt", lifecycleSpec)
		id := c.ID
		s1 := e.counter.Snapshot()
		if err != nil {
			r.tb.Fatal(err)
		}
		next, err := e.store.NextJob(ctx, "rt")
		s2 := e.counter.Snapshot()
		if err != nil || next == nil || next.ID != id {
			r.tb.Fatalf("next job = %+v, %v; want job %d", next, err, id)
		}
		_, _, err = e.store.UpdateJob(ctx, id, ocypod.JobUpdate{Status: &completed}, nil)
		s3 := e.counter.Snapshot()
		if err != nil {
			r.tb.Fatal(err)
		}
		per[0] = addSnap(per[0], s1.Sub(s0))
		per[1] = addSnap(per[1], s2.Sub(s1))
		per[2] = addSnap(per[2], s3.Sub(s2))
	}
	r.stopTimer()
	d := e.counter.Snapshot().Sub(total)
	statsAfter, err := commandStats(ctx, e.rdb)
	if err != nil {
		r.tb.Fatal(err)
	}
	// The server's script calls (INFO is not one) must equal the scripts the
	// client sent.
	server := scriptCalls(statsAfter).Calls - scriptCalls(statsBefore).Calls
	client := d.Commands["evalsha"] + d.Commands["eval"]
	if server != client {
		r.tb.Errorf("redis-server ran %d scripts, the client counted %d", server, client)
	}
	trips := float64(d.RoundTrips) / float64(r.n)
	r.metric(trips, "roundtrips/lifecycle")
	if !r.final() {
		return
	}
	rep.goal(posTripsLifecycleStore, goalLine{
		Item:     "1. Redis round trips per job lifecycle (store: create, take, complete)",
		Measured: fmt.Sprintf("%.2f (%d lifecycles)", trips, r.n),
		Goal:     "3",
		Verdict:  verdictOf(d.RoundTrips == int64(3*r.n)),
	})
	hdr := []string{"store call", "round trips per call", "commands per call", "checked against INFO commandstats"}
	for i, name := range []string{"CreateJob", "NextJob", "UpdateJob (completed)"} {
		rep.row("tripsStore", "Round trips per store call (steady state)", hdr, name, name,
			fmt.Sprintf("%.2f", float64(per[i].RoundTrips)/float64(r.n)),
			perCall(per[i], r.n),
			fmt.Sprintf("server ran %d scripts for %d sent", server, client))
	}
}

// addSnap adds the counts of d to s.
func addSnap(s, d bench.Snapshot) bench.Snapshot {
	if s.Commands == nil {
		s.Commands = map[string]int64{}
	}
	s.RoundTrips += d.RoundTrips
	s.Dials += d.Dials
	for k, v := range d.Commands {
		s.Commands[k] += v
	}
	return s
}

// perCall is s's commands divided by n, e.g. "evalsha x1".
func perCall(s bench.Snapshot, n int) string {
	if len(s.Commands) == 0 {
		return "-"
	}
	var parts []string
	for _, part := range strings.Split(s.CommandList(), ", ") {
		name, count, _ := strings.Cut(part, " x")
		c, _ := strconv.ParseFloat(count, 64)
		parts = append(parts, fmt.Sprintf("%s x%g", name, c/float64(n)))
	}
	return strings.Join(parts, ", ")
}

// routeStep is one request of the per-route walk.
type routeStep struct {
	route        string // httpapi route name
	method, path string // {q} is the queue, {id} the job (in the body too)
	body         string
	want         int
}

// routeSteps visit every route of httpapi's table once, in an order where
// each succeeds.
var routeSteps = []routeStep{
	{"put-queue", "PUT", "/queue/{q}", `{"timeout":"10m","expires_after":"1h","retries":1}`, 201},
	{"patch-queue", "PATCH", "/queue/{q}", `{"paused":false}`, 204},
	{"get-queue", "GET", "/queue/{q}", "", 200},
	{"list-queues", "GET", "/queue", "", 200},
	{"create-job", "POST", "/queue/{q}/job", `{"input":{"n":1},"tags":["{q}-tag"]}`, 201},
	{"create-jobs", "POST", "/queue/{q}/jobs", `[{"input":{"n":2}},{"input":{"n":3}}]`, 201},
	{"queue-size", "GET", "/queue/{q}/size", "", 200},
	{"queue-job-ids", "GET", "/queue/{q}/job_ids", "", 200},
	{"list-queue-jobs", "GET", "/queue/{q}/jobs", "", 200},
	{"list-jobs", "GET", "/jobs?status=queued", "", 200},
	{"tag-jobs", "GET", "/tag/{q}-tag", "", 200},
	{"put-schedule", "PUT", "/queue/{q}/schedules/s", `{"every":"1h","job":{}}`, 201},
	{"get-schedule", "GET", "/queue/{q}/schedules/s", "", 200},
	{"list-schedules", "GET", "/queue/{q}/schedules", "", 200},
	{"delete-schedule", "DELETE", "/queue/{q}/schedules/s", "", 204},
	{"next-job", "GET", "/queue/{q}/job?worker={q}-w", "", 200},
	{"heartbeat", "PUT", "/job/{id}/heartbeat", "", 204},
	{"heartbeat-jobs", "POST", "/jobs/heartbeat", `[{"id":{id},"attempt":1}]`, 200},
	{"set-job-output", "PUT", "/job/{id}/output", `{"progress":1}`, 204},
	{"get-job-output", "GET", "/job/{id}/output", "", 200},
	{"job-status", "GET", "/job/{id}/status", "", 200},
	{"get-job", "GET", "/job/{id}", "", 200},
	{"workers", "GET", "/workers", "", 200},
	{"worker", "GET", "/workers/{q}-w", "", 200},
	{"retry-job", "POST", "/job/{id}/retry", "", 200},
	{"take-jobs", "GET", "/job?queues={q}&count=3", "", 200},
	{"update-jobs", "PATCH", "/jobs", `[{"id":{id},"tracked":true}]`, 200},
	{"update-job", "PATCH", "/job/{id}", `{"status":"completed"}`, 204},
	{"queue-stats", "GET", "/queue/{q}/stats", "", 200},
	{"failures", "GET", "/failures", "", 200},
	{"failure-jobs", "GET", "/failures/{q}-g", "", 200},
	{"retry-failures", "POST", "/failures/{q}-g/retry", "", 200},
	{"delete-job", "DELETE", "/job/{id}", "", 204},
	{"delete-queue", "DELETE", "/queue/{q}", "", 204},
	{"health", "GET", "/health", "", 200},
	{"info", "GET", "/info", "", 200},
	{"version", "GET", "/info/version", "", 200},
	{"openapi", "GET", "/openapi.json", "", 200},
	{"dashboard", "GET", "/ui", "", 200},
}

// walkRoutes sends every routeStep through h with queue q and returns the
// counter's difference for each step.
func walkRoutes(r *run, h http.Handler, c *bench.Counter, q string) []bench.Snapshot {
	out := make([]bench.Snapshot, len(routeSteps))
	id := ""
	for i, st := range routeSteps {
		path := strings.ReplaceAll(strings.ReplaceAll(st.path, "{q}", q), "{id}", id)
		body := strings.ReplaceAll(strings.ReplaceAll(st.body, "{q}", q), "{id}", id)
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req := httptest.NewRequest(st.method, path, rd)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		before := c.Snapshot()
		h.ServeHTTP(w, req)
		out[i] = c.Snapshot().Sub(before)
		if w.Code != st.want {
			r.tb.Fatalf("%s %s = %d %q, want %d", st.method, path, w.Code, w.Body, st.want)
		}
		if st.route == "create-job" {
			id = w.Body.String()
		}
	}
	return out
}

// roundTripsHTTP counts the round trips of every route through httpapi's
// handler: once cold (new client, scripts flushed from the server), then
// r.n times warm.
func roundTripsHTTP(r *run) {
	ctx := context.Background()
	names := map[string]bool{}
	for _, rt := range httpapi.Routes() {
		names[rt.Name] = true
	}
	for _, st := range routeSteps {
		delete(names, st.route)
	}
	if len(names) > 0 {
		r.tb.Fatalf("routes with no step in routeSteps: %v", names)
	}
	if err := redisServer(r.tb).Client().ScriptFlush(ctx).Err(); err != nil {
		r.tb.Fatal(err)
	}
	if err := redisServer(r.tb).Client().FunctionFlush(ctx).Err(); err != nil {
		r.tb.Fatal(err)
	}
	e := newEnv(r.tb, redisstore.Options{})
	h := httpapi.New(e.store, httpapi.Options{}).Handler()
	cold := walkRoutes(r, h, e.counter, "cold")
	warm := make([]bench.Snapshot, len(routeSteps))
	r.resetTimer()
	for i := range r.n {
		for j, d := range walkRoutes(r, h, e.counter, "q"+strconv.Itoa(i)) {
			warm[j] = addSnap(warm[j], d)
		}
	}
	r.stopTimer()
	maxTrips := 0.0
	lifecycleTrips := 0.0
	for i, st := range routeSteps {
		t := float64(warm[i].RoundTrips) / float64(r.n)
		maxTrips = max(maxTrips, t)
		if st.route == "create-job" || st.route == "next-job" || st.route == "update-job" {
			lifecycleTrips += t
		}
	}
	// One round trip per request is a property of the code, not a timing:
	// every run checks it (with one partition, as here).
	for i, st := range routeSteps {
		if t := float64(warm[i].RoundTrips) / float64(r.n); t > 1 {
			r.tb.Errorf("%s %s: %.2f Redis round trips (%s), want 1", st.method, st.path, t, perCall(warm[i], r.n))
		}
	}
	r.metric(maxTrips, "max-roundtrips/request")
	r.metric(lifecycleTrips, "roundtrips/lifecycle")
	if !r.final() {
		return
	}
	rep.goal(posTripsLifecycleHTTP, goalLine{
		Item:     "1. Redis round trips per job lifecycle (HTTP: POST job, GET next, PATCH completed)",
		Measured: fmt.Sprintf("%.2f", lifecycleTrips),
		Goal:     "3",
		Verdict:  verdictOf(lifecycleTrips == 3),
	})
	rep.goal(posTripsPerRequest, goalLine{
		Item:     fmt.Sprintf("1. Redis round trips per API request, worst of the %d routes", len(routeSteps)),
		Measured: fmt.Sprintf("%.2f", maxTrips),
		Goal:     "<= 1",
		Verdict:  verdictOf(maxTrips <= 1),
	})
	hdr := []string{"route", "request", "round trips (warm)", "commands (warm)", "round trips (cold)", "commands (cold)"}
	for i, st := range routeSteps {
		rep.row("tripsHTTP", fmt.Sprintf("Round trips per request, every route through httpapi's handler (warm: mean of %d walks; cold: new connection, scripts not loaded)", r.n),
			hdr, st.route, st.route, st.method+" "+st.path,
			fmt.Sprintf("%.2f", float64(warm[i].RoundTrips)/float64(r.n)), perCall(warm[i], r.n),
			strconv.FormatInt(cold[i].RoundTrips, 10), cold[i].CommandList())
	}
}
