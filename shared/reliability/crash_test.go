package reliability

import (
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// crashSetup creates a queue whose jobs time out after 10s (heartbeat
// timeout 5s) with one retry after 2s, and one job that a worker takes and
// then abandons.
func crashSetup(t *testing.T, inline int) (*redisstore.Store, *redistest.Clock, uint64) {
	t.Helper()
	srv := redistest.Shared(t)
	clk := newClock()
	rdb, err := redisstore.NewClient(redisstore.ClientOptions{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	st, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t), Now: clk.Now, InlineSweep: inline})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s := ocypod.DefaultQueueSettings()
	s.Timeout, s.HeartbeatTimeout, s.Retries = ocypod.Seconds(10), ocypod.Seconds(5), 1
	s.RetryDelays = []ocypod.Duration{ocypod.Seconds(2)}
	for _, q := range []string{"work", "other"} {
		if _, err := st.PutQueue(ctx, q, s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := st.CreateJob(ctx, "work", ocypod.JobSpec{})
	id := c.ID
	if err != nil {
		t.Fatal(err)
	}
	if next, err := st.NextJob(ctx, "work"); err != nil || next == nil || next.ID != id {
		t.Fatalf("NextJob = %+v, %v; want job %d", next, err, id)
	}
	return st, clk, id
}

func status(t *testing.T, st *redisstore.Store, id uint64) ocypod.Status {
	t.Helper()
	s, err := st.JobStatus(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCrashedWorkerRecoveredBySweeps: with the inline path off, only the
// scheduled sweeps notice the missed heartbeat and retry the job.
func TestCrashedWorkerRecoveredBySweeps(t *testing.T) {
	t.Parallel()
	st, clk, id := crashSetup(t, -1)
	ctx := t.Context()

	clk.Advance(5 * time.Second) // heartbeat deadline is strict: not yet
	if res, err := st.SweepTimeouts(ctx); err != nil || len(res.TimedOut) != 0 {
		t.Fatalf("SweepTimeouts at the deadline = %+v, %v; want nothing", res, err)
	}
	clk.Advance(time.Second)
	if res, err := st.SweepTimeouts(ctx); err != nil || len(res.TimedOut) != 1 || res.TimedOut[0] != id {
		t.Fatalf("SweepTimeouts after the deadline = %+v, %v; want job %d", res, err, id)
	}
	if got := status(t, st, id); got != ocypod.StatusTimedOut {
		t.Fatalf("status = %s, want timed_out", got)
	}
	if res, err := st.SweepRetries(ctx); err != nil || len(res.Retried) != 0 {
		t.Fatalf("SweepRetries before the delay = %+v, %v; want nothing", res, err)
	}
	clk.Advance(2 * time.Second)
	if res, err := st.SweepRetries(ctx); err != nil || len(res.Retried) != 1 {
		t.Fatalf("SweepRetries after the delay = %+v, %v; want job %d", res, err, id)
	}
	next, err := st.NextJob(ctx, "work")
	if err != nil || next == nil || next.ID != id {
		t.Fatalf("NextJob after retry = %+v, %v; want job %d again (at-least-once)", next, err, id)
	}
}

// TestCrashedWorkerRecoveredByTakers: with no sweeper running at all, the
// bounded sweep inside take-next-job (on any queue) times the job out and
// later requeues it.
func TestCrashedWorkerRecoveredByTakers(t *testing.T) {
	t.Parallel()
	st, clk, id := crashSetup(t, 8)
	ctx := t.Context()

	clk.Advance(6 * time.Second)
	if next, err := st.NextJob(ctx, "other"); err != nil || next != nil {
		t.Fatalf("NextJob(other) = %+v, %v; want empty", next, err)
	}
	if got := status(t, st, id); got != ocypod.StatusTimedOut {
		t.Fatalf("status after a take on another queue = %s, want timed_out", got)
	}
	clk.Advance(2 * time.Second)
	next, err := st.NextJob(ctx, "work")
	if err != nil || next == nil || next.ID != id {
		t.Fatalf("NextJob(work) after the retry delay = %+v, %v; want job %d", next, err, id)
	}
	job, err := st.GetJob(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != ocypod.StatusRunning || job.RetriesAttempted != 1 {
		t.Fatalf("retried job: status %s, retries_attempted %d; want running, 1", job.Status, job.RetriesAttempted)
	}
}
