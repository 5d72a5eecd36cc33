package client_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ocyless/ocyless/client"
	"github.com/ocyless/ocyless/client/internal/testserver"
)

// TestBatchCalls: the batch methods send the contract's bodies, refuse a
// batch they cannot send before any request, and give each item's
// refusal as the single call's error.
func TestBatchCalls(t *testing.T) {
	t.Parallel()
	srv := testserver.New(t)
	var mu sync.Mutex
	var bodies []string
	c, err := client.New(srv.URL, client.WithTransport(roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil && r.URL.Path != "/queue/q" {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, r.Method+" "+r.URL.RequestURI()+" "+string(b))
			mu.Unlock()
			r.Body = io.NopCloser(strings.NewReader(string(b)))
		}
		return http.DefaultTransport.RoundTrip(r)
	})))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := c.UpdateJobs(ctx, nil); err == nil {
		t.Error("UpdateJobs of no item: no error")
	}
	if _, err := c.HeartbeatJobs(ctx, make([]client.BatchHeartbeat, client.MaxBatch+1)); err == nil {
		t.Error("HeartbeatJobs of 1001 items: no error")
	}
	if _, err := c.UpdateJobs(ctx, []client.BatchUpdate{{ID: 1, JobUpdate: client.JobUpdate{Take: &client.TakeAfter{Queue: "q"}}}}); err == nil {
		t.Error("UpdateJobs of an item with Take: no error")
	}
	if len(bodies) != 0 {
		t.Fatalf("refused batches were sent: %v", bodies)
	}
	if _, err := c.PutQueue(ctx, "q", client.QueueSpec{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateJobs(ctx, "q", []client.JobSpec{{}, {}}); err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Take(ctx, "q", client.TakeOptions{Count: 2})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("Take = %v, %v", jobs, err)
	}
	beats, err := c.HeartbeatJobs(ctx, []client.BatchHeartbeat{{ID: 1, Attempt: 1}, {ID: 2, Attempt: 3}})
	if err != nil || len(beats) != 2 || beats[0].Err() != nil || !errors.Is(beats[1].Err(), client.ErrStaleAttempt) {
		t.Fatalf("HeartbeatJobs = %+v, %v", beats, err)
	}
	res, taken, err := c.UpdateJobsAndTake(ctx, []client.BatchUpdate{
		{ID: 1, JobUpdate: client.JobUpdate{Attempt: 1, Status: client.StatusCompleted, Output: 1,
			Next: &client.NextJob{Queue: "q", JobSpec: client.JobSpec{Input: "n"}}}},
		{ID: 2},
		{ID: 9, JobUpdate: client.JobUpdate{Status: client.StatusCancelled}},
	}, "q", client.TakeOptions{Worker: "w"})
	if err != nil || len(res) != 3 || res[0].Status != 201 || res[0].NextID != 3 || res[1].Status != 204 ||
		!client.IsNotFound(res[2].Err()) || len(taken) != 1 || taken[0].ID != 3 || string(taken[0].Input) != `"n"` {
		t.Fatalf("UpdateJobsAndTake = %+v, %+v, %v", res, taken, err)
	}
	want := []string{
		`POST /jobs/heartbeat [{"id":1,"attempt":1},{"id":2,"attempt":3}]`,
		`PATCH /jobs?take=q&worker=w [{"id":1,"attempt":1,"status":"completed","output":1,"next":{"queue":"q","input":"n"}},{"id":2},{"id":9,"status":"cancelled"}]`,
	}
	mu.Lock()
	defer mu.Unlock()
	got := bodies[len(bodies)-2:]
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d =\n%s\nwant\n%s", i, got[i], want[i])
		}
	}
}
