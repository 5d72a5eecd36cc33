package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	ocy "github.com/ocyless/ocyless/client"
	"github.com/ocyless/ocyless/client/worker"
)

// TestClientEndToEnd drives the local server through the Go client and
// worker, on both Redis backends: a producer creates a batch of jobs, a
// worker with four slots runs them (completing, failing one for good, and
// keeping a long one alive with heartbeats while the timeout sweep runs
// every 100ms), then stops gracefully; the client reads the outcome back.
func TestClientEndToEnd(t *testing.T) {
	t.Parallel()
	for name, env := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := start(t, e2eFile, env)
			beats := &heartbeats{}
			c, err := ocy.New(s.base, ocy.WithTransport(beats))
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if err := c.Health(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.PutQueue(ctx, "work", ocy.QueueSpec{HeartbeatTimeout: new(time.Second), Retries: new(uint64(1))}); err != nil {
				t.Fatal(err)
			}
			specs := []ocy.JobSpec{{Input: "long"}, {Input: "bad"}}
			for i := range 20 {
				specs = append(specs, ocy.JobSpec{Input: i, Tags: []string{"e2e"}})
			}
			ids, err := c.CreateJobs(ctx, "work", specs)
			if err != nil || len(ids) != len(specs) {
				t.Fatalf("CreateJobs = %v, %v", ids, err)
			}
			long, bad := ids[0], ids[1]

			finished := make(chan error, len(specs))
			w, err := worker.New(c, func(ctx context.Context, job *worker.Job) (any, error) {
				var in any
				if err := job.Decode(&in); err != nil {
					return nil, err
				}
				switch in {
				case "bad":
					return nil, worker.Permanent(worker.WithGroup(errors.New("cannot double a word"), "validation"))
				case "long":
					// Outlive the 1s heartbeat_timeout several times over.
					if err := beats.await(ctx, job.ID, 7); err != nil {
						return nil, err
					}
					return "survived", nil
				}
				return map[string]float64{"double": 2 * in.(float64)}, nil
			}, worker.Options{Queues: []string{"work"}, Concurrency: 4, Name: "e2e-worker", Wait: time.Second,
				OnFinish: func(_ *worker.Job, err error) { finished <- err }})
			if err != nil {
				t.Fatal(err)
			}
			runCtx, stop := context.WithCancel(ctx)
			ran := make(chan error, 1)
			go func() { ran <- w.Run(runCtx) }()
			var failures []error
			for range specs {
				select {
				case err := <-finished:
					if err != nil {
						failures = append(failures, err)
					}
				case <-time.After(30 * time.Second):
					t.Fatalf("jobs still unfinished after 30s\nlogs:\n%s", s.logs)
				}
			}
			stop()
			if err := <-ran; err != nil {
				t.Errorf("Run = %v", err)
			}
			if len(failures) != 1 || !strings.Contains(failures[0].Error(), "cannot double a word") {
				t.Errorf("failed jobs: %v, want the bad one only", failures)
			}

			for j, err := range c.AllJobs(ctx, "work", ocy.ListOptions{Tag: "e2e", Limit: 7}) {
				if err != nil {
					t.Fatal(err)
				}
				var n int
				for i, id := range ids {
					if id == j.ID {
						n = i - 2
					}
				}
				if want := fmt.Sprintf(`{"double":%d}`, 2*n); j.Status != ocy.StatusCompleted || string(j.Output) != want || j.Worker != "e2e-worker" {
					t.Errorf("job %d = %s %s by %q, want completed %s by e2e-worker", j.ID, j.Status, j.Output, j.Worker, want)
				}
			}
			if j, err := c.GetJob(ctx, long, "status", "output", "last_heartbeat"); err != nil || j.Status != ocy.StatusCompleted ||
				string(j.Output) != `"survived"` || j.LastHeartbeat == nil {
				t.Errorf("long job = %+v, %v; want completed \"survived\" after heartbeats", j, err)
			}
			if j, err := c.GetJob(ctx, bad, "status", "ended", "error"); err != nil || j.Status != ocy.StatusFailed || !j.Ended ||
				j.Error == nil || j.Error.Group != "validation" {
				t.Errorf("bad job = %+v, %v; want failed for good in group validation", j, err)
			}
			if counts, err := c.Failures(ctx); err != nil || counts["validation"] != 1 {
				t.Errorf("Failures = %v, %v", counts, err)
			}
			info, err := c.Info(ctx)
			if err != nil || info.Queues["work"] != (ocy.QueueCounts{Completed: 21, Failed: 1}) {
				t.Errorf("Info = %+v, %v", info, err)
			}
			if ws, err := c.Workers(ctx); err != nil || len(ws) != 1 || ws[0].Name != "e2e-worker" || ws[0].Running != 0 {
				t.Errorf("Workers = %+v, %v", ws, err)
			}
		})
	}
}

// heartbeats is a RoundTripper that counts each job's accepted
// heartbeats and wakes the handlers waiting for them.
type heartbeats struct {
	mu     sync.Mutex
	counts map[string]int
	wake   chan struct{}
}

func (h *heartbeats) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/heartbeat") && resp.StatusCode == http.StatusNoContent {
		h.mu.Lock()
		if h.counts == nil {
			h.counts = map[string]int{}
		}
		h.counts[r.URL.Path]++
		if h.wake != nil {
			close(h.wake)
			h.wake = nil
		}
		h.mu.Unlock()
	}
	return resp, err
}

// await returns once job id had n heartbeats accepted, or with the
// context's error.
func (h *heartbeats) await(ctx context.Context, id uint64, n int) error {
	path := fmt.Sprintf("/job/%d/heartbeat", id)
	for {
		h.mu.Lock()
		if h.counts[path] >= n {
			h.mu.Unlock()
			return nil
		}
		if h.wake == nil {
			h.wake = make(chan struct{})
		}
		wake := h.wake
		h.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
