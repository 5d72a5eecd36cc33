package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// callbackOf is the sealed callback to url for the given statuses.
func callbackOf(t *testing.T, url string, on ...ocypod.Status) ocypod.Sealed {
	t.Helper()
	b, err := push.Callback{URL: url, On: on, Secret: push.SecretFrom([]byte(secret))}.MarshalStored()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCallbacks: one signed POST of the job (without its input) per ending
// for good, none for a failure that will be retried, retried after a
// failed try; a callback recorded while no dispatcher ran (a crash between
// the ending and the POST) is sent once one runs, and only once.
func TestCallbacks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, redisstore.Options{})
	var mu sync.Mutex
	fails := map[string]int{"fail-once": 1}
	tg := newTarget(t, func(w http.ResponseWriter, a arrival) {
		var j struct {
			Queue string `json:"queue"`
		}
		_ = json.Unmarshal(a.body, &j)
		mu.Lock()
		defer mu.Unlock()
		if fails[j.Queue] > 0 {
			fails[j.Queue]--
			http.Error(w, "not now", http.StatusInternalServerError)
		}
	})
	mk := func(q string, retries uint64) {
		if _, err := e.store.PutQueue(e.ctx, q, ocypod.QueueSettings{Timeout: ocypod.Seconds(60), ExpiresAfter: ocypod.Seconds(3600), Retries: retries}); err != nil {
			t.Fatal(err)
		}
	}
	mk("cbs", 1)
	mk("fail-once", 0)
	on := []ocypod.Status{ocypod.StatusCompleted, ocypod.StatusFailed}
	create := func(q string) uint64 {
		c, err := e.store.CreateJob(e.ctx, q, ocypod.JobSpec{Input: json.RawMessage(`{"secret_input":1}`), Callback: callbackOf(t, tg.URL, on...)})
		if err != nil {
			t.Fatal(err)
		}
		if jobs, err := e.store.Take(e.ctx, ocypod.TakeRequest{Queues: []string{q}}); err != nil || len(jobs) != 1 {
			t.Fatalf("take = %v, %v", jobs, err)
		}
		return c.ID
	}
	set := func(id uint64, st ocypod.Status) {
		if _, _, err := e.store.UpdateJob(e.ctx, id, ocypod.JobUpdate{Status: &st}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Ended before any dispatcher runs: the callback waits in the store.
	early := create("cbs")
	set(early, ocypod.StatusCompleted)
	e.d.Start()
	a := tg.next(t)
	if a.id != strconv.FormatUint(early, 10) {
		t.Fatalf("first callback for job %q, want %d", a.id, early)
	}
	if err := push.Verify([]byte(secret), a.signature, a.body, time.Now(), time.Minute); err != nil {
		t.Errorf("callback signature: %v", err)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(a.body, &body); err != nil {
		t.Fatal(err)
	}
	if _, ok := body["input"]; ok || string(body["status"]) != `"completed"` || body["attempt"] == nil {
		t.Errorf("callback body = %s, want the job without its input", a.body)
	}

	// A failure that will be retried is not an ending; failing for good is.
	retried := create("cbs")
	set(retried, ocypod.StatusFailed)
	flaky := create("fail-once")
	set(flaky, ocypod.StatusCompleted)
	if a := tg.next(t); a.id != strconv.FormatUint(flaky, 10) {
		t.Fatalf("callback for job %s, want %d (the retried failure has none)", a.id, flaky)
	}
	if a := tg.next(t); a.id != strconv.FormatUint(flaky, 10) {
		t.Fatalf("callback for job %s, want %d tried again after its 500", a.id, flaky)
	}
	if jobs, err := e.store.Take(e.ctx, ocypod.TakeRequest{Queues: []string{"cbs"}}); err != nil || len(jobs) != 1 || jobs[0].ID != retried {
		t.Fatalf("retake = %v, %v", jobs, err)
	}
	set(retried, ocypod.StatusFailed)
	if a := tg.next(t); a.id != strconv.FormatUint(retried, 10) {
		t.Fatalf("callback for job %s, want %d failed for good", a.id, retried)
	}

	// Close waits for the round under way; a new dispatcher sends nothing
	// again: a fresh job's callback is the next to arrive.
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := e.d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if j := e.job(flaky); j.CallbackView == nil || j.CallbackView.Attempts != 2 || j.CallbackView.DeliveredAt == nil {
		t.Errorf("flaky job's callback view = %+v, want delivered after 2 tries", j.CallbackView)
	}
	again := New(e.store, Options{Deliverer: e.d.o.Deliverer, Refresh: time.Hour, Wait: time.Hour,
		NotPush: func(err error) bool { return errors.Is(err, redisstore.ErrNotPush) }})
	defer func() { _ = again.Close(context.Background()) }()
	again.Start()
	last := create("cbs")
	set(last, ocypod.StatusCompleted)
	if a := tg.next(t); a.id != strconv.FormatUint(last, 10) {
		t.Errorf("after a restart, callback for job %s, want only %d's (every other was sent once)", a.id, last)
	}
}
