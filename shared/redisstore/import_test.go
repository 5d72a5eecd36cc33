package redisstore_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// importSource writes the standard upstream fixture into the shared plain
// server under a namespace of the test's own and returns the options of an
// import of it.
func (h *harness) importSource() (redisstore.ImportOptions, string) {
	h.t.Helper()
	srv := redistest.Shared(h.t)
	ns := "up-" + h.ns
	upstreamFixture(newUpstreamDB(h.t, srv.Client(), ns, t0))
	return redisstore.ImportOptions{Source: sourceClient(h.t, srv), SourceNamespace: ns, SourceName: "upstream"}, ns + ":"
}

func (h *harness) runImport(o redisstore.ImportOptions) *redisstore.ImportReport {
	h.t.Helper()
	rep, err := h.s.Import(h.ctx, o)
	if err != nil {
		h.t.Fatalf("Import = %v", err)
	}
	return rep
}

// wantRefused checks that err is an import refusal naming want.
func wantRefused(t *testing.T, err error, want string) {
	t.Helper()
	var r *redisstore.ImportRefusal
	if !errors.As(err, &r) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Import = %v, want a refusal saying %q", err, want)
	}
}

// us is t0+d as the store keeps it (microseconds).
func us(d time.Duration) time.Time { return t0.Add(d).Truncate(time.Microsecond) }

var importCases = []conformanceCase{
	{name: "import from Ocypod", run: func(t *testing.T, h *harness) {
		o, pre := h.importSource()
		before := dumpKeys(t, redistest.Shared(t).Client(), pre)
		o.BatchSize = 16
		rep := h.runImport(o)
		if rep.Copied != 71 || rep.Present != 0 || rep.SkippedTotal != 1 || rep.Skipped[0].ID != upStub ||
			!slices.Equal(rep.Queues, []string{"bulk", "jobs", "mail"}) || rep.LastID != upLastID || rep.Resumed {
			t.Fatalf("report = %+v", rep)
		}
		if got := rep.Jobs["bulk"]; got[ocypod.StatusQueued] != 62 || got[ocypod.StatusFailed] != 1 {
			t.Errorf("report of bulk = %v", got)
		}
		wantStats := ocypod.Statistics{Created: 80, Completed: 20, Retried: 7, Failed: 9, TimedOut: 3, Cancelled: 2}
		if rep.Statistics == nil || *rep.Statistics != wantStats {
			t.Errorf("report statistics = %v", rep.Statistics)
		}
		if after := dumpKeys(t, redistest.Shared(t).Client(), pre); !maps.Equal(before, after) {
			t.Fatal("the import changed the source")
		}

		// Queues and their settings.
		if qs, err := h.s.GetQueue(h.ctx, "mail"); err != nil || qs.Timeout.Secs != 30 || qs.HeartbeatTimeout.Secs != 10 ||
			qs.ExpiresAfter.Secs != 300 || qs.Retries != 2 || !slices.Equal(qs.RetryDelays, durs(10, 60)) || qs.Shards != 0 {
			t.Errorf("mail settings = %+v, %v", qs, err)
		}
		if qs, err := h.s.GetQueue(h.ctx, "jobs"); err != nil || qs.Timeout.Secs != 300 || qs.RetryDelays != nil {
			t.Errorf("jobs settings = %+v, %v", qs, err)
		}
		// Ocypod kept no per-queue daily statistics: they start now.
		if st, err := h.s.QueueStats(h.ctx, "bulk", t0); err != nil || st.Created != 0 || st.Wait.Count != 0 {
			t.Errorf("QueueStats(bulk) = %+v, %v", st, err)
		}
		if names, err := h.s.ListQueues(h.ctx); err != nil || !slices.Equal(names, []string{"bulk", "jobs", "mail"}) {
			t.Errorf("ListQueues = %v, %v", names, err)
		}

		// Jobs with their fields.
		j := h.job(upCompleted)
		if j.Status != ocypod.StatusCompleted || j.Queue != "mail" || !slices.Equal(j.Tags, []string{"a", "ü x"}) ||
			!j.CreatedAt.Equal(us(-100*time.Second)) || !j.StartedAt.Equal(us(-90*time.Second)) ||
			!j.EndedAt.Equal(us(-80*time.Second)) || j.LastHeartbeat != nil || string(j.Input) != `{"n":1}` ||
			string(j.Output) != `{"ok":true}` || j.Timeout.Secs != 30 || j.HeartbeatTimeout.Secs != 10 ||
			j.ExpiresAfter.Secs != 300 || j.Retries != 2 || j.RetriesAttempted != 0 || j.RetryDelays != nil || !j.Ended() {
			t.Errorf("completed job = %+v", j)
		}
		j = h.job(upRunning)
		if j.Status != ocypod.StatusRunning || string(j.Input) != bigInput || !j.LastHeartbeat.Equal(us(-5*time.Second)) ||
			!slices.Equal(j.RetryDelays, durs(10, 60)) || j.Ended() {
			t.Errorf("running job = %+v", j)
		}
		j = h.job(upRetrying)
		if j.Status != ocypod.StatusFailed || j.RetriesAttempted != 1 || j.Ended() || j.RetryDue == nil ||
			!j.RetryDue.Equal(us(30*time.Second).Truncate(time.Millisecond)) || string(j.Output) != `{"err":"x"}` {
			t.Errorf("failed job with a retry due = %+v (due %v)", j, j.RetryDue)
		}
		for id, st := range map[uint64]ocypod.Status{upExhausted: ocypod.StatusTimedOut, upFailedBulk: ocypod.StatusFailed,
			upDelayBug: ocypod.StatusFailed, upCancelled: ocypod.StatusCancelled} {
			if j := h.job(id); j.Status != st || !j.Ended() || j.RetryDue != nil {
				t.Errorf("job %d = %+v, want %s and ended", id, j, st)
			}
		}
		if j := h.job(upFailedBulk); j.Tags == nil || len(j.Tags) != 0 {
			t.Errorf("tags [] became %#v", j.Tags)
		}
		if j := h.job(upBulkFirst); j.Status != ocypod.StatusQueued || string(j.Input) != `{"i":10}` || j.Tags != nil {
			t.Errorf("queued job = %+v", j)
		}
		if _, err := h.s.GetJob(h.ctx, upStub); ocypod.ErrorKind(err) != ocypod.KindNotFound {
			t.Errorf("the stub job = %v, want not found", err)
		}
		if ids, err := h.s.TagJobIDs(h.ctx, "a"); err != nil || !slices.Equal(ids, []uint64{upCompleted, upRetrying}) {
			t.Errorf("tag a = %v, %v", ids, err)
		}
		if ids, err := h.s.TagJobIDs(h.ctx, "ü x"); err != nil || !slices.Equal(ids, []uint64{upCompleted}) {
			t.Errorf("tag ü x = %v, %v", ids, err)
		}

		// Counts, statistics, failure groups.
		info := h.info()
		if info.Statistics != wantStats {
			t.Errorf("statistics = %+v", info.Statistics)
		}
		want := map[string]ocypod.QueueCounts{
			"mail": {Running: 1, Failed: 2, TimedOut: 1, Completed: 1, Cancelled: 1},
			"bulk": {Queued: 62, Failed: 1},
			"jobs": {},
			"gone": {Queued: 1, Running: 1},
		}
		if !maps.Equal(info.Queues, want) {
			t.Errorf("info queues = %+v", info.Queues)
		}
		if n, err := h.s.QueueSize(h.ctx, "bulk"); err != nil || n != 62 {
			t.Errorf("QueueSize(bulk) = %d, %v", n, err)
		}
		if g, err := h.s.Failures(h.ctx); err != nil || !maps.Equal(g, map[string]uint64{"failed": 2, "timed_out": 1}) {
			t.Errorf("Failures = %v, %v", g, err)
		}

		// Ocypod's take order, per partition (across partitions a spanned
		// queue is served as a sharded one).
		order := upBulkOrder()
		if got := h.queueIDs("bulk").Queued; h.P == 1 && !slices.Equal(got, order) {
			t.Errorf("queued bulk jobs = %v, want %v", got, order)
		}
		var taken []uint64
		for range order {
			n := h.next("bulk")
			if n == nil {
				t.Fatalf("bulk ran dry after %v", taken)
			}
			taken = append(taken, n.ID)
		}
		for p := range h.P {
			inP := func(ids []uint64) []uint64 {
				return slices.DeleteFunc(slices.Clone(ids), func(id uint64) bool { return h.lay.PartitionOf(id) != p })
			}
			if !slices.Equal(inP(taken), inP(order)) {
				t.Errorf("partition %d took %v, want %v", p, inP(taken), inP(order))
			}
		}
		if n := h.next("bulk"); n != nil {
			t.Errorf("bulk has more: %+v", n)
		}
		h.setStatus(taken[0], ocypod.StatusCompleted)
		h.wantStatus(taken[0], ocypod.StatusCompleted)

		// New ids continue above Ocypod's; the new job is taken after the
		// copied ones.
		id := h.create("mail", ocypod.JobSpec{})
		if id <= upLastID || id > upLastID+uint64(h.P) || h.lay.PartitionOf(id) != h.lay.Home("mail") {
			t.Errorf("new id %d, want the first above %d in mail's partition", id, upLastID)
		}
		if j := h.job(id); !slices.Equal(j.RetryDelays, durs(10, 60)) {
			t.Errorf("a new mail job does not inherit the copied retry delays: %+v", j)
		}

		// Timeouts, retries and expiry carry on.
		h.clock.Set(t0.Add(5 * time.Second))
		if r := h.sweepTimeouts(); len(r.TimedOut) != 0 {
			t.Errorf("timed out before the heartbeat deadline: %+v", r)
		}
		h.clock.Set(t0.Add(7 * time.Second))
		if r := h.sweepTimeouts(); !slices.Equal(r.TimedOut, []uint64{upRunning}) {
			t.Errorf("SweepTimeouts = %+v, want job %d", r, upRunning)
		}
		h.clock.Set(t0.Add(31 * time.Second))
		if r := h.sweepRetries(); !slices.Contains(r.Retried, upRetrying) {
			t.Errorf("SweepRetries = %+v, want job %d retried", r, upRetrying)
		}
		if j := h.job(upRetrying); j.Status != ocypod.StatusQueued || j.RetriesAttempted != 2 || j.Output != nil {
			t.Errorf("retried job = %+v", j)
		}
		// The new job, then the requeued ones (requeues go to the back).
		if got := h.takeIDs("mail", 5); len(got) != 3 || !slices.Contains(got, id) || !slices.Contains(got, upRunning) || !slices.Contains(got, upRetrying) ||
			h.P == 1 && got[0] != id {
			t.Errorf("takes from mail = %v, want %d, then %d and %d", got, id, upRunning, upRetrying)
		}
		h.clock.Set(t0.Add(-80*time.Second + 301*time.Second))
		if r := h.sweepExpiry(); !slices.Contains(r.Expired, upCompleted) {
			t.Errorf("SweepExpiry = %+v, want job %d expired", r, upCompleted)
		}

		// Done: a second run has nothing to do and writes nothing.
		snap := h.snapshot()
		rep = h.runImport(o)
		if !rep.NothingToDo || rep.Finished == "" || rep.Copied != 0 {
			t.Errorf("second run = %+v", rep)
		}
		h.wantUnchanged("a finished import run again", snap)
	}},
	{name: "import resumes where it stopped", run: func(t *testing.T, h *harness) {
		o, _ := h.importSource()
		o.BatchSize = 10
		ctx, cancel := context.WithCancel(h.ctx)
		defer cancel()
		steps := 0
		o.Progress = func(done, total int) {
			if steps++; steps == 2 {
				cancel()
			}
		}
		rep, err := h.s.Import(ctx, o)
		if !errors.Is(err, context.Canceled) || rep.Copied == 0 || rep.Copied >= 71 {
			t.Fatalf("interrupted Import = %+v, %v", rep, err)
		}
		first := rep.Copied
		// The server is not started meanwhile, but ids are reserved already.
		if c := h.create("mail", ocypod.JobSpec{}); c <= upLastID {
			t.Errorf("a job created during the import got id %d", c)
		}
		o.Progress = nil
		// As if the progress of the last step had not been recorded.
		h.do("HSET", h.lay.ImportKey(), "through", 10)
		rep = h.runImport(o)
		if !rep.Resumed || rep.ResumedAfter != 10 || rep.Present != first-9 || rep.Copied != 71-first || rep.Statistics != nil {
			t.Fatalf("resumed Import = %+v (first run copied %d)", rep, first)
		}
		info := h.info()
		if got := info.Queues["bulk"].Queued; got != 62 {
			t.Errorf("bulk queued = %d, want 62", got)
		}
		if info.Statistics.Created != 81 { // 80 copied, 1 created here
			t.Errorf("statistics = %+v", info.Statistics)
		}
		if h.P == 1 {
			if got := h.queueIDs("bulk").Queued; !slices.Equal(got, upBulkOrder()) {
				t.Errorf("queued bulk jobs = %v", got)
			}
		}
	}},
	{name: "import refuses a target with data", run: func(t *testing.T, h *harness) {
		o, _ := h.importSource()
		h.putQueue("mine", settings(60, 0, 60, 0))
		snap := h.snapshot()
		_, err := h.s.Import(h.ctx, o)
		wantRefused(t, err, "already holds data")
		h.wantUnchanged("a refused import", snap)

		// An unfinished import of another source.
		ns := redistest.Namespace(t)
		other, err := redisstore.New(h.rdb, redisstore.Options{Namespace: ns, Partitions: h.P})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(h.ctx)
		o.BatchSize = 10
		o.Progress = func(int, int) { cancel() }
		if _, err := other.Import(ctx, o); !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted Import = %v", err)
		}
		o.Progress = nil
		o.SourceName = "elsewhere"
		_, err = other.Import(h.ctx, o)
		wantRefused(t, err, "holds an import of another source (upstream")
		// Data written with another partition count.
		wrongP, err := redisstore.New(h.rdb, redisstore.Options{Namespace: ns, Partitions: h.P + 1})
		if err != nil {
			t.Fatal(err)
		}
		o.SourceName = "upstream"
		_, err = wrongP.Import(h.ctx, o)
		wantRefused(t, err, "partitions")
	}},
	{name: "import refuses what is not Ocypod", run: func(t *testing.T, h *harness) {
		o, pre := h.importSource()
		srv := redistest.Shared(t)
		snap := h.snapshot()
		src := dumpKeys(t, srv.Client(), pre)
		none := o
		none.SourceNamespace = pre + "none"
		_, err := h.s.Import(h.ctx, none)
		wantRefused(t, err, "holds no Ocypod data")
		badNS := "bad-" + h.ns
		bad := newUpstreamDB(t, srv.Client(), badNS, t0)
		bad.do("SET", badNS+":job_id", 3)
		bad.do("SET", badNS+":queues", "mail")
		shape := o
		shape.SourceNamespace = badNS
		_, err = h.s.Import(h.ctx, shape)
		wantRefused(t, err, `"`+badNS+`:queues" is a string, Ocypod keeps a set`)
		bad.do("DEL", badNS+":queues")
		bad.job(1, "mail", "queued", 1, 1, 1, 0, 0, 0)
		bad.do("SET", badNS+":job:2", "x")
		_, err = h.s.Import(h.ctx, shape)
		wantRefused(t, err, `"`+badNS+`:job:2" is a string, Ocypod keeps a hash`)
		h.wantUnchanged("a refused import", snap)
		if after := dumpKeys(t, srv.Client(), pre); !maps.Equal(src, after) {
			t.Error("a refused import changed the source")
		}
	}},
	{name: "import dry run", run: func(t *testing.T, h *harness) {
		o, _ := h.importSource()
		o.DryRun = true
		snap := h.snapshot()
		rep := h.runImport(o)
		if rep.Copied != 71 || rep.Jobs["mail"][ocypod.StatusFailed] != 2 || rep.SkippedTotal != 1 || !rep.DryRun {
			t.Errorf("dry run = %+v", rep)
		}
		h.wantUnchanged("a dry run", snap)
	}},
}
