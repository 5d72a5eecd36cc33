package metrics

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
	"github.com/ocyless/ocyless/shared/sweep"
)

func TestMain(m *testing.M) { redistest.Main(m) }

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// get sends one request to h over real HTTP.
func get(t *testing.T, h http.Handler, method string) (*http.Response, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// TestScrape builds a known state in a real store and reads it back from
// the exposition: job counts per queue and status, the counters, the age
// of the oldest overdue job, and the recorded sweeps.
func TestScrape(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := redistest.NewClock(t0)
	store, err := redisstore.New(redistest.Shared(t).Client(), redisstore.Options{Namespace: redistest.Namespace(t), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	settings := ocypod.QueueSettings{Timeout: ocypod.Seconds(60), ExpiresAfter: ocypod.Seconds(3600)}
	for _, q := range []string{"mail", "sms"} {
		_, err := store.PutQueue(ctx, q, settings)
		must(err)
	}
	create := func(q string, spec ocypod.JobSpec) {
		t.Helper()
		_, err := store.CreateJob(ctx, q, spec)
		must(err)
	}
	setStatus := func(id uint64, st ocypod.Status) {
		t.Helper()
		_, _, err := store.UpdateJob(ctx, id, ocypod.JobUpdate{Status: &st}, nil)
		must(err)
	}
	take := func(q string) uint64 {
		t.Helper()
		j, err := store.NextJob(ctx, q)
		must(err)
		if j == nil {
			t.Fatalf("queue %s is empty", q)
		}
		return j.ID
	}
	// mail: one completed, one running (due to time out 61 s after it
	// started: a timeout counts once its whole second has passed), one
	// queued, one scheduled an hour ahead; sms: one cancelled.
	create("mail", ocypod.JobSpec{})
	setStatus(take("mail"), ocypod.StatusCompleted)
	create("mail", ocypod.JobSpec{})
	take("mail")
	create("mail", ocypod.JobSpec{})
	later := t0.Add(time.Hour)
	create("mail", ocypod.JobSpec{RunAt: &later})
	create("sms", ocypod.JobSpec{})
	setStatus(take("sms"), ocypod.StatusCancelled)
	clock.Advance(91 * time.Second) // the running job is 30 s overdue

	rec := NewSweeps()
	rec.Observe(sweep.Timeouts, 30*time.Millisecond, sweep.Totals{Batches: 1, TimedOut: 2}, nil)
	rec.Observe(sweep.Timeouts, 2*time.Second, sweep.Totals{}, errors.New("redis down"))
	rec.Observe(sweep.Schedules, time.Millisecond/2, sweep.Totals{Other: 3}, nil)

	resp, body := get(t, NewHandler(store, rec, 2*time.Second, nil), http.MethodGet)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != ContentType {
		t.Fatalf("GET = %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	e, err := parseExposition(body)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	for family := range e.types {
		if e.help[family] == "" {
			t.Errorf("%s has no HELP text", family)
		}
	}
	want := map[string]map[ocypod.Status]float64{
		"mail": {ocypod.StatusQueued: 1, ocypod.StatusRunning: 1, ocypod.StatusCompleted: 1, ocypod.StatusScheduled: 1},
		"sms":  {ocypod.StatusCancelled: 1},
	}
	for q, counts := range want {
		for _, st := range ocypod.AllStatuses {
			got, ok := e.value(QueueJobs, `queue="`+q+`"`, `status="`+string(st)+`"`)
			if !ok || got != counts[st] {
				t.Errorf("%s{queue=%s,status=%s} = %v (present %v), want %v", QueueJobs, q, st, got, ok, counts[st])
			}
		}
	}
	for name, w := range map[string]float64{
		"ocyless_jobs_created_total": 5, "ocyless_jobs_completed_total": 1, "ocyless_jobs_cancelled_total": 1,
		"ocyless_jobs_failed_total": 0, "ocyless_jobs_retried_total": 0, "ocyless_jobs_timed_out_total": 0,
		OldestDue: 30, DeadLettersSkipped: 0,
		SweepJobs + `{sweep="timeouts"}`: 2, SweepErrors + `{sweep="timeouts"}`: 1,
		SweepJobs + `{sweep="schedules"}`: 3, SweepErrors + `{sweep="schedules"}`: 0,
		SweepJobs + `{sweep="expiry"}`:             0,
		SweepDuration + `_count{sweep="timeouts"}`: 2, SweepDuration + `_sum{sweep="timeouts"}`: 2.03,
		SweepDuration + `_bucket{le="0.05",sweep="timeouts"}`: 1, SweepDuration + `_bucket{le="2.5",sweep="timeouts"}`: 2,
		SweepDuration + `_bucket{le="0.001",sweep="schedules"}`: 1,
		SweepDuration + `_count{sweep="retries"}`:               0,
		// Per queue: today's counts, and the queued job's 91 s.
		`ocyless_queue_created_total{queue="mail"}`: 4, `ocyless_queue_completed_total{queue="mail"}`: 1,
		`ocyless_queue_failed_total{queue="mail"}`: 0, `ocyless_queue_timed_out_total{queue="mail"}`: 0,
		QueueOldestQueued + `{queue="mail"}`:       91,
		`ocyless_queue_created_total{queue="sms"}`: 1, `ocyless_queue_completed_total{queue="sms"}`: 0,
		QueueOldestQueued + `{queue="sms"}`: 0,
	} {
		if !strings.Contains(name, "{") {
			name += "{}"
		}
		if got, ok := e.samples[name]; !ok || got != w {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, w)
		}
	}
	for family, typ := range map[string]string{QueueJobs: "gauge", OldestDue: "gauge", SweepDuration: "histogram",
		SweepJobs: "counter", SweepErrors: "counter", "ocyless_jobs_created_total": "counter",
		"ocyless_queue_created_total": "counter", "ocyless_queue_timed_out_total": "counter", QueueOldestQueued: "gauge"} {
		if e.types[family] != typ {
			t.Errorf("TYPE %s = %q, want %s", family, e.types[family], typ)
		}
	}

	// HEAD: the same headers, no body; other methods: 405.
	if resp, body := get(t, NewHandler(store, rec, 2*time.Second, nil), http.MethodHead); resp.StatusCode != http.StatusOK || body != "" {
		t.Errorf("HEAD = %d %q, want 200 without a body", resp.StatusCode, body)
	}
	if resp, _ := get(t, NewHandler(store, rec, 2*time.Second, nil), http.MethodPost); resp.StatusCode != http.StatusMethodNotAllowed ||
		resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST = %d Allow %q, want 405 GET, HEAD", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// TestScrapeSkippedDeadLetters: jobs failed for good whose dead letter
// queue was deleted are counted, over four partitions.
func TestScrapeSkippedDeadLetters(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := redisstore.New(redistest.Shared(t).Client(), redisstore.Options{Namespace: redistest.Namespace(t), Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"work", "dead"} {
		_, err := store.PutQueue(ctx, q, ocypod.DefaultQueueSettings())
		must(err)
	}
	dl := "dead"
	must(store.PatchQueue(ctx, "work", ocypod.QueuePatch{DeadLetterQueue: &dl}))
	must(store.DeleteQueue(ctx, dl))
	failed := ocypod.StatusFailed
	for range 2 {
		_, err := store.CreateJob(ctx, "work", ocypod.JobSpec{})
		must(err)
		j, err := store.NextJob(ctx, "work")
		must(err)
		_, _, err = store.UpdateJob(ctx, j.ID, ocypod.JobUpdate{Status: &failed}, nil)
		must(err)
	}
	resp, body := get(t, NewHandler(store, nil, 2*time.Second, nil), http.MethodGet)
	e, err := parseExposition(body)
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("GET = %d, %v\n%s", resp.StatusCode, err, body)
	}
	if got := e.samples[DeadLettersSkipped+"{}"]; got != 2 || e.types[DeadLettersSkipped] != "counter" {
		t.Fatalf("%s = %v (%s), want counter 2\n%s", DeadLettersSkipped, got, e.types[DeadLettersSkipped], body)
	}
}

// TestScrapeRedisDown: with Redis hung or gone, a scrape answers 503 with
// the API's text, no metrics, within the Redis timeout plus a margin.
func TestScrapeRedisDown(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	// Long enough for the first call, which loads the scripts, on a busy
	// machine.
	const timeout = time.Second
	client, err := redisstore.NewClient(redisstore.ClientOptions{URL: srv.URL(), DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	store, err := redisstore.New(client, redisstore.Options{Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(store, NewSweeps(), timeout, nil)
	if resp, body := get(t, h, http.MethodGet); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET with Redis up = %d %s", resp.StatusCode, body)
	}

	check := func(what, wantBody string) {
		t.Helper()
		start := time.Now()
		resp, body := get(t, h, http.MethodGet)
		took := time.Since(start)
		if resp.StatusCode != http.StatusServiceUnavailable || body != wantBody {
			t.Errorf("%s: GET = %d %q, want 503 %q", what, resp.StatusCode, body, wantBody)
		}
		if took > timeout+2*time.Second {
			t.Errorf("%s: the 503 took %v, want about the %v Redis timeout", what, took, timeout)
		}
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	check("hung Redis", "Failed to connect to Redis: timed out")
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	check("stopped Redis", "Failed to connect to Redis: connection failed")
}

// TestLabelValue: any queue name gives a series name that the exposition
// library and the text format's grammar accept.
func TestLabelValue(t *testing.T) {
	t.Parallel()
	for _, q := range []string{"plain", `quo"te`, `back\slash`, "new\nline", `\"`, "ünï"} {
		series := QueueJobs + `{queue="` + labelValue(q) + `"}`
		if err := vm.ValidateMetric(series); err != nil {
			t.Errorf("%q: %v", q, err)
		}
		e, err := parseExposition("# TYPE " + QueueJobs + " gauge\n" + series + " 1\n")
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		if _, ok := e.value(QueueJobs, `queue="`+labelValue(q)+`"`); !ok {
			t.Errorf("%q: series not found in %v", q, e.samples)
		}
	}
}

// TestScrapeQueueSeriesBounded: a queue without jobs gives no series, and
// at most MaxQueueSeries queues (those holding the most jobs) give theirs;
// QueuesOmitted counts the others. Not parallel: its thousand-odd writes
// would slow the timing checks of the other tests.
func TestScrapeQueueSeriesBounded(t *testing.T) {
	ctx := t.Context()
	store, err := redisstore.New(redistest.Shared(t).Client(), redisstore.Options{Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	put := func(q string, jobs int) {
		t.Helper()
		if _, err := store.PutQueue(ctx, q, ocypod.DefaultQueueSettings()); err != nil {
			t.Fatal(err)
		}
		for range jobs {
			if _, err := store.CreateJob(ctx, q, ocypod.JobSpec{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	const empty, extra = 300, 3
	for i := range empty {
		put(fmt.Sprint("empty", i), 0)
	}
	for i := range MaxQueueSeries + extra {
		put(fmt.Sprint("one", i), 1)
	}
	put("busy", 5)
	resp, body := get(t, NewHandler(store, nil, 10*time.Second, nil), http.MethodGet)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET = %d %s", resp.StatusCode, body)
	}
	e, err := parseExposition(body)
	if err != nil {
		t.Fatal(err)
	}
	for family, per := range map[string]int{QueueJobs: 8, QueuePrefix + "created_total": 1, QueuePrefix + "failed_total": 1,
		QueuePrefix + "timed_out_total": 1, QueuePrefix + "completed_total": 1, QueueOldestQueued: 1} {
		series, empty := 0, 0
		for name := range e.samples {
			if strings.HasPrefix(name, family+"{") {
				series++
				if strings.Contains(name, `queue="empty`) {
					empty++
				}
			}
		}
		if want := per * MaxQueueSeries; series != want {
			t.Errorf("%d %s series, want %d", series, family, want)
		}
		if empty > 0 {
			t.Errorf("empty queues have %d %s series", empty, family)
		}
	}
	if got, ok := e.value(QueuePrefix+"created_total", `queue="busy"`); !ok || got != 5 {
		t.Errorf("busy queue's created = %v (present %v), want 5", got, ok)
	}
	if got, ok := e.value(QueueJobs, `queue="busy"`, `status="queued"`); !ok || got != 5 {
		t.Errorf("busy queue's queued = %v (present %v), want 5", got, ok)
	}
	if got := e.samples[QueuesOmitted+"{}"]; got != extra+1 {
		t.Errorf("%s = %v, want %d", QueuesOmitted, got, extra+1)
	}
}
