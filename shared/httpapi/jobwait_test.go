package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// waitBound is how soon a waiting request must answer after the event
// that ends its wait (milliseconds on an idle machine): generous, since it
// only tells a wake-up from the end of the 8 s waits below.
const waitBound = 3 * time.Second

// twoProcesses is one namespace served by two APIs over two stores, as two
// processes (or Lambda functions) serve it.
type twoProcesses struct {
	a, b     http.Handler
	storeA   *redisstore.Store
	snapshot func(tb testing.TB) map[string]string
}

func newTwoProcesses(t *testing.T) *twoProcesses {
	t.Helper()
	rdb := redistest.Shared(t).Client()
	ns := redistest.Namespace(t)
	clock := redistest.NewClock(t0)
	open := func() (*redisstore.Store, http.Handler) {
		s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		return s, New(s, Options{Now: clock.Now, Logger: slog.New(slog.DiscardHandler)}).Handler()
	}
	p := &twoProcesses{}
	p.storeA, p.a = open()
	_, p.b = open()
	p.snapshot = func(tb testing.TB) map[string]string {
		return redistest.Snapshot(tb, rdb, "{"+ns+"}:*", "{"+ns+":*")
	}
	return p
}

// answered is a request's answer and when it came.
type answered struct {
	w  *httptest.ResponseRecorder
	at time.Time
}

// start sends r to p's first API in the background and returns once the
// request waits in the store (its waiter joined the hub), or has answered.
func (p *twoProcesses) start(t *testing.T, r *http.Request) chan answered {
	t.Helper()
	got := make(chan answered, 1)
	go func() {
		w := serve(p.a, r)
		got <- answered{w, time.Now()}
	}()
	// Polling the store's own count of waiters, with a deadline: the
	// request runs in another goroutine and has no hook of its own.
	deadline := time.Now().Add(10 * time.Second)
	for p.storeA.LongPolls() == 0 && len(got) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the request never started waiting")
		}
		time.Sleep(time.Millisecond)
	}
	return got
}

// answerWithin waits for an answer and checks it came within waitBound of since.
func answerWithin(t *testing.T, what string, got chan answered, since time.Time) *httptest.ResponseRecorder {
	t.Helper()
	a := <-got
	if el := a.at.Sub(since); el > waitBound {
		t.Fatalf("%s: answered %v later, not woken (bound %v): %d %s", what, el, waitBound, a.w.Code, a.w.Body)
	}
	return a.w
}

// TestGetJobWait: GET /job/{id}?wait= answers when the job ends for good in
// another process, with the fields asked for; a failure that will be
// retried does not end it, the final one does; a job deleted meanwhile is
// 404, a missing one 404 at once; a cancelled request leaves no waiter.
func TestGetJobWait(t *testing.T) {
	t.Parallel()
	p := newTwoProcesses(t)
	wantEmpty(t, do(p.b, "PUT", "/queue/q", `{}`), http.StatusCreated)
	wantJSON(t, do(p.b, "POST", "/queue/q/job", `{"input":1}`), http.StatusCreated, "1")
	wantJSON(t, do(p.b, "GET", "/queue/q/job", ""), http.StatusOK, `{"id":1,"input":1}`)

	got := p.start(t, newRequest("GET", "/job/1?wait=8s&fields=id,status,output,ended", ""))
	since := time.Now()
	wantEmpty(t, do(p.b, "PATCH", "/job/1", `{"status":"completed","output":{"r":2}}`), http.StatusNoContent)
	wantJSON(t, answerWithin(t, "completion", got, since), http.StatusOK, `{"id":1,"status":"completed","output":{"r":2},"ended":true}`)

	// A failure with a retry left is no ending; the last one is.
	wantJSON(t, do(p.b, "POST", "/queue/q/job", `{"retries":1,"retry_delays":[]}`), http.StatusCreated, "2")
	wantJSON(t, do(p.b, "GET", "/queue/q/job", ""), http.StatusOK, `{"id":2,"input":null}`)
	got = p.start(t, newRequest("GET", "/job/2?wait=8s&fields=status,retries_attempted,ended", ""))
	wantEmpty(t, do(p.b, "PATCH", "/job/2", `{"status":"failed"}`), http.StatusNoContent)
	wantJSON(t, do(p.b, "GET", "/queue/q/job", ""), http.StatusOK, `{"id":2,"input":null}`)
	if len(got) > 0 {
		a := <-got
		t.Fatalf("the wait answered a failure that will be retried: %d %s", a.w.Code, a.w.Body)
	}
	since = time.Now()
	wantEmpty(t, do(p.b, "PATCH", "/job/2", `{"status":"failed"}`), http.StatusNoContent)
	wantJSON(t, answerWithin(t, "final failure", got, since), http.StatusOK, `{"status":"failed","retries_attempted":1,"ended":true}`)

	// Deleted meanwhile: 404; missing: 404 at once.
	wantJSON(t, do(p.b, "POST", "/queue/q/job", `{}`), http.StatusCreated, "3")
	got = p.start(t, newRequest("GET", "/job/3?wait=8s", ""))
	since = time.Now()
	wantEmpty(t, do(p.b, "DELETE", "/job/3", ""), http.StatusNoContent)
	wantText(t, answerWithin(t, "delete", got, since), http.StatusNotFound, "Job with ID 3 does not exist")
	since = time.Now()
	wantText(t, do(p.a, "GET", "/job/3?wait=8s", ""), http.StatusNotFound, "Job with ID 3 does not exist")
	if el := time.Since(since); el > waitBound {
		t.Fatalf("a wait on a missing job answered after %v", el)
	}

	// An ended job answers at once.
	since = time.Now()
	wantJSON(t, do(p.a, "GET", "/job/1?wait=20s&fields=status", ""), http.StatusOK, `{"status":"completed"}`)
	if el := time.Since(since); el > waitBound {
		t.Fatalf("a wait on an ended job answered after %v", el)
	}

	// The caller gives up: the request ends and its waiter leaves.
	wantJSON(t, do(p.b, "POST", "/queue/q/job", `{}`), http.StatusCreated, "4")
	ctx, cancel := context.WithCancel(t.Context())
	got = p.start(t, newRequest("GET", "/job/4?wait=20s", "").WithContext(ctx))
	since = time.Now()
	cancel()
	answerWithin(t, "cancelled", got, since)
	if n := p.storeA.LongPolls(); n != 0 {
		t.Fatalf("%d waiters left after the request was cancelled", n)
	}
}

// TestCreateJobWait: POST /queue/{name}/job?wait= answers 200 with the
// result when the job ends within the wait (taken and completed by a
// worker of another process), else 202 with the id; Location on both. A
// bad wait, or fields without wait, is 400 and creates nothing.
func TestCreateJobWait(t *testing.T) {
	t.Parallel()
	p := newTwoProcesses(t)
	wantEmpty(t, do(p.b, "PUT", "/queue/q", `{}`), http.StatusCreated)
	wantEmpty(t, do(p.b, "PUT", "/queue/idle", `{}`), http.StatusCreated)

	// A worker of the other process, waiting for work.
	worker := make(chan struct{})
	go func() {
		defer close(worker)
		w := do(p.b, "GET", "/queue/q/job?wait=8s", "")
		if w.Code != http.StatusOK {
			t.Errorf("worker's take = %d %s", w.Code, w.Body)
			return
		}
		if w := do(p.b, "PATCH", "/job/1", `{"status":"completed","output":{"sum":3}}`); w.Code != http.StatusNoContent {
			t.Errorf("worker's completion = %d %s", w.Code, w.Body)
		}
	}()
	since := time.Now()
	w := do(p.a, "POST", "/queue/q/job?wait=8s", `{"input":[1,2]}`)
	<-worker
	if el := time.Since(since); el > waitBound {
		t.Fatalf("run and wait answered after %v", el)
	}
	wantJSON(t, w, http.StatusOK, `{"id":1,"status":"completed","output":{"sum":3},"error":null}`)
	if loc := w.Header().Get("Location"); loc != "/job/1" {
		t.Errorf("Location = %q", loc)
	}

	// Nobody takes from idle: 202 with the id once the wait is over.
	since = time.Now()
	w = do(p.a, "POST", "/queue/idle/job?wait=300ms&fields=id,status", `{}`)
	if el := time.Since(since); el < 300*time.Millisecond || el > waitBound {
		t.Errorf("a 300ms wait answered after %v", el)
	}
	wantJSON(t, w, http.StatusAccepted, "2")
	if loc := w.Header().Get("Location"); loc != "/job/2" {
		t.Errorf("Location = %q", loc)
	}
	// Ended (cancelled) within the wait: the fields asked for.
	got := p.start(t, newRequest("POST", "/queue/idle/job?wait=8s&fields=status,error", `{}`))
	since = time.Now()
	wantEmpty(t, do(p.b, "PATCH", "/job/3", `{"status":"cancelled"}`), http.StatusNoContent)
	wantJSON(t, answerWithin(t, "cancel", got, since), http.StatusOK, `{"status":"cancelled","error":null}`)

	before := p.snapshot(t)
	for _, rq := range []struct{ target, text string }{
		{"/queue/idle/job?wait=21s", "Invalid wait: must be at most 20s"},
		{"/queue/idle/job?wait=soon", ""},
		{"/queue/idle/job?fields=id", "Invalid fields: only with wait"},
		{"/queue/idle/job?wait=1s&fields=colour", ""},
		{"/queue/idle/job?wait=1s&pretty=1", "Unknown parameter: pretty"},
	} {
		w := do(p.a, "POST", rq.target, `{}`)
		if w.Code != http.StatusBadRequest || (rq.text != "" && w.Body.String() != rq.text) {
			t.Errorf("POST %s = %d %q, want 400 %q", rq.target, w.Code, w.Body, rq.text)
		}
	}
	if after := p.snapshot(t); !equalSnapshots(before, after) {
		t.Error("refused creates changed Redis")
	}
}
