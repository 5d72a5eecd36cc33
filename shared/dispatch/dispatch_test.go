package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// bound is how long a test waits for something that should happen at
// once: generous, for a loaded machine.
const bound = 15 * time.Second

const secret = "0123456789abcdef0123"

// arrival is one request a target received.
type arrival struct {
	id, attempt string
	body        []byte
	signature   string
}

// target is an httptest server that records what arrives and answers
// with handle.
type target struct {
	*httptest.Server
	arrivals chan arrival
}

func newTarget(t *testing.T, handle func(w http.ResponseWriter, a arrival)) *target {
	t.Helper()
	tg := &target{arrivals: make(chan arrival, 1000)}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a := arrival{id: r.Header.Get("Ocyless-Job-Id"), attempt: r.Header.Get("Ocyless-Attempt"), body: body,
			signature: r.Header.Get(push.SignatureHeader)}
		tg.arrivals <- a
		handle(w, a)
	}))
	t.Cleanup(tg.Close)
	return tg
}

// next waits for the next arrival.
func (tg *target) next(t *testing.T) arrival {
	t.Helper()
	select {
	case a := <-tg.arrivals:
		return a
	case <-time.After(bound):
		t.Fatalf("nothing arrived at the target within %s", bound)
		return arrival{}
	}
}

type env struct {
	t     *testing.T
	ctx   context.Context
	store *redisstore.Store
	d     *Dispatcher
}

// newEnv is a store in a namespace of its own and a dispatcher on it,
// whose queue listing happens only when a queue changes (Refresh an hour)
// and whose takes wait an hour: a job is delivered promptly only if its
// create woke the take.
func newEnv(t *testing.T, so redisstore.Options) *env {
	t.Helper()
	so.Namespace = redistest.Namespace(t)
	store, err := redisstore.New(redistest.Shared(t).Client(), so)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := push.NewPolicy(nil, push.Local)
	if err != nil {
		t.Fatal(err)
	}
	dl := push.New(push.Options{Policy: pol})
	d := New(store, Options{Deliverer: dl, Refresh: time.Hour, Wait: time.Hour,
		NotPush: func(err error) bool { return errors.Is(err, redisstore.ErrNotPush) }})
	store.OnQueueChange(d.Changed)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		if err := d.Close(ctx); err != nil {
			t.Errorf("Close = %v", err)
		}
		dl.Close()
	})
	return &env{t: t, ctx: t.Context(), store: store, d: d}
}

// pushQueue creates queue name delivering to url.
func (e *env) pushQueue(name string, qs ocypod.QueueSettings, tg push.Target) {
	e.t.Helper()
	if tg.Batch == 0 {
		tg.Batch = 1
	}
	if tg.Concurrency == 0 {
		tg.Concurrency = 10
	}
	tg.Secret = push.SecretFrom([]byte(secret))
	sealed, err := tg.MarshalStored()
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.store.PutQueue(e.ctx, name, qs); err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.PatchQueue(e.ctx, name, ocypod.QueuePatch{Push: sealed, PushSet: true}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) create(queue, input string) uint64 {
	e.t.Helper()
	c, err := e.store.CreateJob(e.ctx, queue, ocypod.JobSpec{Input: json.RawMessage(input)})
	if err != nil {
		e.t.Fatal(err)
	}
	return c.ID
}

func (e *env) job(id uint64) *ocypod.Job {
	e.t.Helper()
	j, err := e.store.GetJob(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// ended waits until job id has ended for good (WaitJob: woken by its end).
func (e *env) ended(id uint64) *ocypod.Job {
	e.t.Helper()
	j, err := e.store.WaitJob(e.ctx, id, bound, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if !j.Ended() {
		e.t.Fatalf("job %d did not end within %s: %s", id, bound, j.Status)
	}
	return j
}

func ok(body string) func(http.ResponseWriter, arrival) {
	return func(w http.ResponseWriter, _ arrival) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

// TestDeliveredOnCreate: a job created into a push queue whose runner
// waits is delivered at once, signed, woken by the create (the runner's
// take waits an hour and no listing runs); the 2xx answer is its output.
func TestDeliveredOnCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{})
	tg := newTarget(t, ok(`{"sum": 3, "a": 1}`))
	waiting := make(chan struct{}, 10)
	e.d.beforeTake = func(string) { waiting <- struct{}{} }
	e.pushQueue("p", ocypod.DefaultQueueSettings(), push.Target{URL: tg.URL + "/jobs"})
	e.d.Start()
	<-waiting // the runner is about to wait in its take
	id := e.create("p", `{"x": 1}`)
	a := tg.next(t)
	if a.id != strconv.FormatUint(id, 10) || a.attempt != "1" {
		t.Errorf("arrival headers id %q attempt %q, want %d and 1", a.id, a.attempt, id)
	}
	if want := `{"id":` + a.id + `,"attempt":1,"queue":"p","input":{"x":1}}`; string(a.body) != want {
		t.Errorf("body = %s, want %s", a.body, want)
	}
	if err := push.Verify([]byte(secret), a.signature, a.body, time.Now(), time.Minute); err != nil {
		t.Errorf("signature does not verify: %v", err)
	}
	j := e.ended(id)
	if j.Status != ocypod.StatusCompleted || string(j.Output) != `{"a":1,"sum":3}` || j.Worker != Worker {
		t.Errorf("job = %s output %s worker %q, want completed with the answer as output, by push", j.Status, j.Output, j.Worker)
	}
}

// TestPushQueueMadeLater: a queue that becomes a push queue in this
// process is served at once (OnQueueChange), and one that stops being one
// is left to takes again.
func TestPushQueueMadeLater(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{})
	e.d.Start()
	tg := newTarget(t, ok(``))
	id := e.create2(t, "late")
	e.pushQueue("late", ocypod.DefaultQueueSettings(), push.Target{URL: tg.URL})
	if a := tg.next(t); a.id != strconv.FormatUint(id, 10) {
		t.Errorf("arrival %q, want job %d", a.id, id)
	}
	if j := e.ended(id); j.Status != ocypod.StatusCompleted || j.Output != nil {
		t.Errorf("job = %s output %s, want completed without output (empty answer)", j.Status, j.Output)
	}
	if err := e.store.PatchQueue(e.ctx, "late", ocypod.QueuePatch{PushSet: true}); err != nil {
		t.Fatal(err)
	}
	id = e.create("late", `2`)
	jobs, err := e.store.Take(e.ctx, ocypod.TakeRequest{Queues: []string{"late"}, Wait: bound})
	if err != nil || len(jobs) != 1 || jobs[0].ID != id {
		t.Fatalf("take after push null = %+v, %v, want job %d", jobs, err, id)
	}
}

func (e *env) create2(t *testing.T, queue string) uint64 {
	t.Helper()
	if _, err := e.store.PutQueue(e.ctx, queue, ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	return e.create(queue, `1`)
}

// TestBatchPartialFailure: a batch answer's failures fail only their jobs.
func TestBatchPartialFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{})
	var ids []uint64
	tg := newTarget(t, func(w http.ResponseWriter, a arrival) {
		var items []struct{ ID uint64 }
		_ = json.Unmarshal(a.body, &items)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"failures":[{"id":`+strconv.FormatUint(items[1].ID, 10)+`,"error":{"group":"bad_row","message":"row 2"}}]}`)
	})
	if _, err := e.store.PutQueue(e.ctx, "b", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ids = append(ids, e.create("b", strconv.Itoa(i)))
	}
	e.pushQueue("b", ocypod.DefaultQueueSettings(), push.Target{URL: tg.URL, Batch: 3, Concurrency: 1})
	e.d.Start()
	a := tg.next(t)
	if a.id != "" || !strings.HasPrefix(string(a.body), `[{"id":`+strconv.FormatUint(ids[0], 10)) {
		t.Errorf("batch arrival: id header %q, body %s", a.id, a.body)
	}
	for i, id := range ids {
		j := e.ended(id)
		switch {
		case i == 1 && (j.Status != ocypod.StatusFailed || j.Error == nil || j.Error.Group != "bad_row"):
			t.Errorf("job %d = %s %+v, want failed in bad_row", id, j.Status, j.Error)
		case i != 1 && j.Status != ocypod.StatusCompleted:
			t.Errorf("job %d = %s, want completed", id, j.Status)
		}
	}
}

// TestRetryAfter: a failure answer's Retry-After sets the retry's due
// time, and the retry is delivered when due.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{})
	var mu sync.Mutex
	calls := 0
	tg := newTarget(t, func(w http.ResponseWriter, _ arrival) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "2")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `"done"`)
	})
	qs := ocypod.DefaultQueueSettings()
	qs.Retries = 1
	e.pushQueue("r", qs, push.Target{URL: tg.URL})
	e.d.Start()
	before := time.Now()
	id := e.create("r", `1`)
	tg.next(t)
	// The first attempt is recorded as failed, due 2s after the answer.
	var j *ocypod.Job
	for deadline := time.Now().Add(bound); time.Now().Before(deadline); {
		if j = e.job(id); j.Status == ocypod.StatusFailed && j.RetryDue != nil {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling the store: the failure is recorded by another goroutine
	}
	if j.Status != ocypod.StatusFailed || j.Error == nil || j.Error.Group != "push_http_503" || j.RetryDue == nil ||
		j.RetryDue.Before(before.Add(time.Second)) || j.RetryDue.After(time.Now().Add(3*time.Second)) {
		t.Fatalf("after a 503 with Retry-After: 2, job = %s error %+v retry due %v", j.Status, j.Error, j.RetryDue)
	}
	if a := tg.next(t); a.attempt != "2" {
		t.Errorf("retry arrival attempt %q, want 2", a.attempt)
	}
	if j := e.ended(id); j.Status != ocypod.StatusCompleted || string(j.Output) != `"done"` {
		t.Errorf("job = %s output %s, want completed", j.Status, j.Output)
	}
}

// TestSettingsChangeWhileWaiting: a job taken by a take that began before
// the queue's push setting changed goes to the new target.
func TestSettingsChangeWhileWaiting(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{})
	old := newTarget(t, ok(`"old"`))
	cur := newTarget(t, ok(`"new"`))
	waiting := make(chan struct{}, 10)
	e.d.beforeTake = func(string) { waiting <- struct{}{} }
	e.pushQueue("s", ocypod.DefaultQueueSettings(), push.Target{URL: old.URL})
	e.d.Start()
	<-waiting // the runner's take begins with the old target
	e.pushQueue("s", ocypod.DefaultQueueSettings(), push.Target{URL: cur.URL})
	// The change reaches the runner through its listing; wait until a
	// listing ran after it (the runner's settings are then the new ones).
	deadline := time.Now().Add(bound)
	for {
		e.d.mu.Lock()
		r := e.d.runners["s"]
		e.d.mu.Unlock()
		if r != nil && r.cfg.Load().target.URL == cur.URL {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the runner never saw the new target")
		}
		time.Sleep(5 * time.Millisecond) // the listing runs in the dispatcher's own goroutine
	}
	id := e.create("s", `1`)
	if j := e.ended(id); j.Status != ocypod.StatusCompleted || string(j.Output) != `"new"` {
		t.Errorf("job = %s output %s, want delivered to the new target", j.Status, j.Output)
	}
}

// TestLongPollsFull: when the process has its most long-polls waiting, a
// runner whose take cannot wait pauses instead of asking Redis again at
// once, and still delivers.
func TestLongPollsFull(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{MaxLongPolls: 1})
	tg := newTarget(t, ok(``))
	var mu sync.Mutex
	takes := map[string]int{}
	e.d.beforeTake = func(q string) {
		mu.Lock()
		takes[q]++
		mu.Unlock()
	}
	e.pushQueue("a", ocypod.DefaultQueueSettings(), push.Target{URL: tg.URL})
	e.pushQueue("b", ocypod.DefaultQueueSettings(), push.Target{URL: tg.URL})
	e.d.Start()
	for _, q := range []string{"a", "b"} {
		// Polled: a WaitJob would need a long-poll slot, and the one
		// there is may be taken by a runner.
		id := e.create(q, `1`)
		deadline := time.Now().Add(bound)
		for e.job(id).Status != ocypod.StatusCompleted {
			if time.Now().After(deadline) {
				t.Fatalf("job of %s = %s after %s", q, e.job(id).Status, bound)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	mu.Lock()
	before := takes["a"] + takes["b"]
	mu.Unlock()
	time.Sleep(300 * time.Millisecond) // the window in which takes are counted
	mu.Lock()
	n := takes["a"] + takes["b"] - before
	mu.Unlock()
	if n > 4 {
		t.Errorf("%d takes in 300ms with one long-poll allowed: a runner that cannot wait asks again at once", n)
	}
}
