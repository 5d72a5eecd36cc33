package push

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a Reporter that keeps every outcome.
type recorder struct {
	mu     sync.Mutex
	outs   []Outcome
	err    error
	ctxErr []error
}

func (r *recorder) Report(ctx context.Context, outs []Outcome) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outs = append(r.outs, outs...)
	r.ctxErr = append(r.ctxErr, ctx.Err())
	return r.err
}

func (r *recorder) byJob() map[uint64][]Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[uint64][]Outcome{}
	for _, o := range r.outs {
		m[o.JobID] = append(m[o.JobID], o)
	}
	return m
}

// TestEngineNeverTwoDeliveriesAtOnce: a job in a delivery cannot start in
// another, a queue's deliveries stay within its concurrency, and every
// job's outcome is reported exactly once.
func TestEngineNeverTwoDeliveriesAtOnce(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan uint64, 16)
	srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
		var j struct{ ID uint64 }
		json.Unmarshal([]byte(r.Header.Get("Ocyless-Job-Id")), &j.ID)
		arrived <- j.ID
		<-release
		io.WriteString(w, `"done"`)
	})
	rec := &recorder{}
	e := NewEngine(newDeliverer(t, Options{}), rec)
	target := testTarget(srv.URL, 1)
	target.Concurrency = 2
	start := func(id uint64) error {
		return e.Start(context.Background(), Delivery{Target: target, Jobs: []Job{job(id, `1`)}, Timeout: 10 * time.Second})
	}
	if err := start(1); err != nil {
		t.Fatal(err)
	}
	if err := start(1); !errors.Is(err, ErrInFlight) {
		t.Fatalf("job 1 again: %v", err)
	}
	if err := start(2); err != nil {
		t.Fatal(err)
	}
	if err := start(3); !errors.Is(err, ErrBusy) {
		t.Fatalf("third delivery with concurrency 2: %v", err)
	}
	if n := e.Free("q", 2); n != 0 {
		t.Fatalf("free %d", n)
	}
	// Another queue has its own slots.
	other := Job{ID: 4, Attempt: 1, Queue: "other", Input: []byte(`1`)}
	if err := e.Start(context.Background(), Delivery{Target: target, Jobs: []Job{other}, Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	got := map[uint64]bool{}
	for range 3 {
		got[<-arrived] = true
	}
	if !got[1] || !got[2] || !got[4] {
		t.Fatalf("arrived %v", got)
	}
	close(release)
	e.Wait()
	m := rec.byJob()
	for _, id := range []uint64{1, 2, 4} {
		if len(m[id]) != 1 || m[id][0].Result != Completed || string(m[id][0].Output) != `"done"` {
			t.Fatalf("job %d: %+v", id, m[id])
		}
	}
	if len(m[3]) != 0 {
		t.Fatalf("job 3 was delivered: %+v", m[3])
	}
	// Once reported, a job may be delivered again (its next attempt).
	if err := start(1); err != nil {
		t.Fatal(err)
	}
	<-arrived
	e.Wait()
	if n := e.Free("q", 2); n != 2 {
		t.Fatalf("free %d after all ended", n)
	}
}

// TestEngineReportsAfterCancel: a delivery cut short by the server's
// shutdown still reports its outcome, with a live context.
func TestEngineReportsAfterCancel(t *testing.T) {
	reached := make(chan struct{})
	release := make(chan struct{})
	srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) { close(reached); <-release })
	defer close(release)
	rec := &recorder{err: errors.New("redis down")}
	log, buf := captureLog()
	e := NewEngine(newDeliverer(t, Options{Logger: log}), rec)
	ctx, cancel := context.WithCancel(context.Background())
	if err := e.Start(ctx, Delivery{Target: testTarget(srv.URL, 1), Jobs: []Job{job(5, `1`)}, Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	<-reached
	cancel()
	e.Wait()
	m := rec.byJob()
	if len(m[5]) != 1 || m[5][0].Result != Failed || rec.ctxErr[0] != nil {
		t.Fatalf("%+v ctx %v", m[5], rec.ctxErr)
	}
	if !strings.Contains(buf.String(), "outcomes not recorded") || !strings.Contains(buf.String(), "redis down") {
		t.Fatalf("log %s", buf.String())
	}
}
