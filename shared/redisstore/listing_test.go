package redisstore_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// listAll pages through a listing with limit and returns every id, failing
// on a repeated one.
func (h *harness) listAll(req ocypod.ListRequest) []uint64 {
	h.t.Helper()
	var ids []uint64
	for pages := 0; ; pages++ {
		if pages > 1000 {
			h.t.Fatalf("ListJobs(%+v) does not end", req)
		}
		page, err := h.s.ListJobs(h.ctx, req)
		if err != nil {
			h.t.Fatalf("ListJobs(%+v) = %v", req, err)
		}
		for _, j := range page.Jobs {
			if slices.Contains(ids, j.ID) {
				h.t.Fatalf("ListJobs(%+v) repeats job %d", req, j.ID)
			}
			ids = append(ids, j.ID)
		}
		if page.NextCursor == "" {
			return ids
		}
		req.Cursor = page.NextCursor
	}
}

var listingCases = []conformanceCase{
	{name: "listing", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 600, 0))
		other := h.queueApart("o", "q")
		h.putQueue(other, settings(60, 0, 600, 0))
		var queued, done []uint64
		for i := range 25 {
			id := h.create("q", ocypod.JobSpec{Tags: []string{"t"}, Tracked: ptrBool(i%5 == 0)})
			queued = append(queued, id)
		}
		for range 7 {
			id := h.create(other, ocypod.JobSpec{Tags: []string{"t"}})
			h.take(other, id)
			h.complete(id)
			done = append(done, id)
		}
		got := h.listAll(ocypod.ListRequest{Queue: "q", Status: ocypod.StatusQueued, Limit: 4})
		if !slices.Equal(got, queued) {
			t.Fatalf("queued in pages of 4 = %v, want %v", got, queued)
		}
		got = h.listAll(ocypod.ListRequest{Status: ocypod.StatusCompleted, Limit: 3})
		if !slices.Equal(got, done) {
			t.Fatalf("completed everywhere in pages of 3 = %v, want %v", got, done)
		}
		all := append(slices.Clone(queued), done...)
		slices.Sort(all)
		got = h.listAll(ocypod.ListRequest{HasTag: true, Tag: "t", Limit: 6})
		if !slices.Equal(got, all) {
			t.Fatalf("tag t in pages of 6 = %v, want %v", got, all)
		}
		if got = h.listAll(ocypod.ListRequest{Limit: 5}); len(got) != len(all) {
			t.Fatalf("everything = %d jobs, want %d", len(got), len(all))
		}
		got = h.listAll(ocypod.ListRequest{Tracked: yes(), Limit: 2})
		if want := []uint64{queued[0], queued[5], queued[10], queued[15], queued[20]}; !slices.Equal(got, want) {
			t.Fatalf("tracked = %v, want %v", got, want)
		}
		got = h.listAll(ocypod.ListRequest{Queue: other, HasTag: true, Tag: "t", Status: ocypod.StatusCompleted, Limit: 2})
		if !slices.Equal(got, done) {
			t.Fatalf("tag and status and queue = %v, want %v", got, done)
		}
		// A job that stays put is never skipped or repeated while others
		// come and go between pages.
		page, _ := h.s.ListJobs(h.ctx, ocypod.ListRequest{Queue: "q", Status: ocypod.StatusQueued, Limit: 10})
		h.takeIDs("q", 3) // the first three leave
		late := h.create("q", ocypod.JobSpec{})
		rest := h.listAll(ocypod.ListRequest{Queue: "q", Status: ocypod.StatusQueued, Limit: 10, Cursor: page.NextCursor})
		if want := append(slices.Clone(queued[10:]), late); !slices.Equal(rest, want) {
			t.Fatalf("pages after changes = %v, want %v", rest, want)
		}
		// Fields: the job parts are read only when shown.
		page, _ = h.s.ListJobs(h.ctx, ocypod.ListRequest{Queue: "q", Limit: 1, Fields: []string{"id", "status"}})
		if len(page.Jobs) != 1 || page.Jobs[0].Status == "" {
			t.Fatalf("ListJobs(fields) = %+v", page)
		}
		// Bad input.
		for _, req := range []ocypod.ListRequest{
			{Limit: 1001}, {Limit: -1}, {Cursor: "garbage"}, {Cursor: page.NextCursor[:len(page.NextCursor)-2] + "xx"},
			{Queue: other, Cursor: page.NextCursor}, {Key: "k"},
		} {
			_, err := h.s.ListJobs(h.ctx, req)
			wantKind(t, "ListJobs(bad)", err, ocypod.KindInvalid, "")
		}
		_, err := h.s.ListJobs(h.ctx, ocypod.ListRequest{Queue: "nope"})
		wantKind(t, "ListJobs(missing queue)", err, ocypod.KindNotFound, "")
	}},
	{name: "failures", opts: redisstore.Options{InlineSweep: -1}, run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(1, 0, 600, 0))
		retry := h.queueApart("r", "q")
		h.putQueue(retry, settings(60, 0, 600, 0))
		var bad []uint64
		for range 5 {
			id := h.create("q", ocypod.JobSpec{})
			h.take("q", id)
			if err := h.update(id, ocypod.JobUpdate{Status: status(ocypod.StatusFailed),
				Error: &ocypod.JobError{Group: "bad input", Message: "x"}}); err != nil {
				t.Fatal(err)
			}
			bad = append(bad, id)
		}
		slow := h.create("q", ocypod.JobSpec{})
		h.take("q", slow)
		h.clock.Advance(2 * time.Second)
		h.sweepTimeouts()
		plain := h.create("q", ocypod.JobSpec{})
		h.take("q", plain)
		h.setStatus(plain, ocypod.StatusFailed)
		f, err := h.s.Failures(h.ctx)
		if want := map[string]uint64{"bad input": 5, "timed_out": 1, "failed": 1}; err != nil || !maps.Equal(f, want) {
			t.Fatalf("Failures = %v, %v, want %v", f, err, want)
		}
		var listed []uint64
		cur := ""
		for {
			page, err := h.s.FailureJobs(h.ctx, "bad input", 2, cur)
			if err != nil || page.Total != 5 {
				t.Fatalf("FailureJobs = %+v, %v", page, err)
			}
			for _, j := range page.Jobs {
				listed = append(listed, j.ID)
				if j.Error == nil || j.Error.Group != "bad input" {
					t.Fatalf("failed job without its error: %+v", j)
				}
			}
			if cur = page.NextCursor; cur == "" {
				break
			}
		}
		if !slices.Equal(listed, bad) {
			t.Fatalf("FailureJobs pages = %v, want %v", listed, bad)
		}
		if page, err := h.s.FailureJobs(h.ctx, "nothing", 10, ""); err != nil || page.Total != 0 || len(page.Jobs) != 0 {
			t.Fatalf("FailureJobs(unknown) = %+v, %v", page, err)
		}
		n, err := h.s.RetryFailures(h.ctx, "bad input", 3, "")
		if err != nil || n != 3 {
			t.Fatalf("RetryFailures(3) = %d, %v", n, err)
		}
		n, err = h.s.RetryFailures(h.ctx, "bad input", 10, retry)
		if err != nil || n != 2 {
			t.Fatalf("RetryFailures(into %s) = %d, %v", retry, n, err)
		}
		if f, _ := h.s.Failures(h.ctx); f["bad input"] != 0 {
			t.Fatalf("Failures after retries = %v", f)
		}
		if q := h.queueIDs("q").Queued; len(q) != 3 {
			t.Fatalf("queue q holds %v, want the 3 retried", q)
		}
		if q := h.queueIDs(retry).Queued; len(q) != 2 {
			t.Fatalf("queue %s holds %v, want the 2 moved", retry, q)
		}
		_, err = h.s.RetryFailures(h.ctx, "failed", 1, "nope")
		wantKind(t, "RetryFailures(missing queue)", err, ocypod.KindNotFound, "")
	}},
	{name: "workers", opts: redisstore.Options{InlineSweep: -1, WorkerExpiry: time.Hour}, run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(1, 0, 600, 0))
		for range 3 {
			h.create("q", ocypod.JobSpec{})
		}
		take := func(worker string) uint64 {
			t.Helper()
			jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"q"}, Worker: worker})
			if err != nil || len(jobs) != 1 {
				t.Fatalf("Take(%s) = %+v, %v", worker, jobs, err)
			}
			return jobs[0].ID
		}
		a := take("alpha")
		h.clock.Advance(time.Minute)
		b := take("beta one")
		c := take("beta one")
		h.clock.Advance(2 * time.Second)
		h.s.Heartbeat(h.ctx, c, nil) //nolint:errcheck // c times out anyway
		h.sweepTimeouts()
		ws, err := h.s.Workers(h.ctx)
		if err != nil || len(ws) != 2 || ws[0].Name != "beta one" || ws[1].Name != "alpha" ||
			ws[0].TimedOut != 2 || ws[1].TimedOut != 1 || !ws[0].LastSeen.Equal(t0.Add(time.Minute).Truncate(time.Millisecond)) {
			t.Fatalf("Workers = %+v, %v", ws, err)
		}
		if j := h.job(b); j.Worker != "beta one" {
			t.Fatalf("job worker = %q", j.Worker)
		}
		w, err := h.s.Worker(h.ctx, "beta one")
		if err != nil || len(w.Running) != 0 || !slices.Equal(w.TimedOut, sortedIDs(b, c)) {
			t.Fatalf("Worker = %+v, %v", w, err)
		}
		h.clock.Advance(2 * time.Hour)
		if ws, _ := h.s.Workers(h.ctx); len(ws) != 0 {
			t.Fatalf("Workers after the expiry = %+v", ws)
		}
		_, err = h.s.Worker(h.ctx, "alpha")
		wantKind(t, "Worker(forgotten)", err, ocypod.KindNotFound, "Worker 'alpha' does not exist")
		_ = a
	}},
	{name: "stats", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 600, 1))
		for range 3 {
			h.create("q", ocypod.JobSpec{})
		}
		h.clock.Advance(2 * time.Second)
		x := h.takeIDs("q", 1)[0]
		h.clock.Advance(90 * time.Second)
		h.complete(x)
		y := h.takeIDs("q", 1)[0]
		h.clock.Advance(4 * time.Second)
		h.setStatus(y, ocypod.StatusFailed)
		h.takeIDs("q", 1) // the retry's take is the third wait
		st, err := h.s.QueueStats(h.ctx, "q", t0)
		if err != nil || st.Created != 3 || st.Completed != 1 || st.Failed != 1 || st.Retries != 1 {
			t.Fatalf("QueueStats = %+v, %v", st, err)
		}
		if st.Run.Count != 2 || st.Run.Histogram[4] != 1 || st.Run.Histogram[60] != 1 || st.Run.Mean != 47.25 {
			t.Fatalf("run = %+v", st.Run)
		}
		if st.Wait.Count != 3 || st.Wait.Histogram[2] != 1 {
			t.Fatalf("wait = %+v", st.Wait)
		}
		if st, _ := h.s.QueueStats(h.ctx, "q", t0.AddDate(0, 0, -1)); st.Created != 0 {
			t.Fatalf("yesterday = %+v", st)
		}
		_, err = h.s.QueueStats(h.ctx, "nope", t0)
		wantKind(t, "QueueStats(missing queue)", err, ocypod.KindNotFound, "")
	}},
	{name: "schedules", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 600, 0))
		body := json.RawMessage(`{"input":{"report":true},"key":"nightly"}`)
		sc := ocypod.Schedule{ID: "every-10s", Queue: "q", Every: ocypod.Seconds(10), Job: body,
			Spec: ocypod.JobSpec{Input: json.RawMessage(`{"report":true}`), Key: "nightly"}}
		created, err := h.s.PutSchedule(h.ctx, sc)
		if err != nil || !created {
			t.Fatalf("PutSchedule = %v, %v", created, err)
		}
		if created, _ := h.s.PutSchedule(h.ctx, sc); created {
			t.Fatalf("PutSchedule again created")
		}
		got, err := h.s.GetSchedule(h.ctx, "q", "every-10s")
		if err != nil || !got.NextRun.Equal(t0.Add(10*time.Second).Truncate(time.Second)) || string(got.Job) != string(body) {
			t.Fatalf("GetSchedule = %+v, %v", got, err)
		}
		fire := func() int {
			t.Helper()
			r, err := h.s.SweepSchedules(h.ctx)
			if err != nil {
				t.Fatal(err)
			}
			return r.Other
		}
		if n := fire(); n != 0 {
			t.Fatalf("fired %d before due", n)
		}
		h.clock.Advance(10 * time.Second)
		if n := fire() + fire(); n != 1 { // overlapping sweeps: once
			t.Fatalf("fired %d times at the due time", n)
		}
		// A late sweep catches up once, and the next firing stays on the grid.
		h.clock.Advance(35 * time.Second)
		if n := fire(); n != 1 {
			t.Fatalf("late sweep fired %d", n)
		}
		if got, _ := h.s.GetSchedule(h.ctx, "q", "every-10s"); !got.NextRun.Equal(t0.Truncate(time.Second).Add(50 * time.Second)) {
			t.Fatalf("next run = %v", got.NextRun)
		}
		// The key makes it a singleton: one pending job.
		if q := h.queueIDs("q").Queued; len(q) != 1 {
			t.Fatalf("queued = %v, want one job (keyed)", q)
		}
		cron := ocypod.Schedule{ID: "c", Queue: "q", Cron: "0 3 * * *", Job: json.RawMessage(`{}`)}
		if _, err := h.s.PutSchedule(h.ctx, cron); err != nil {
			t.Fatal(err)
		}
		list, err := h.s.ListSchedules(h.ctx, "q")
		if err != nil || len(list) != 2 || list[0].ID != "c" || list[0].NextRun.Hour() != 3 {
			t.Fatalf("ListSchedules = %+v, %v", list, err)
		}
		before := h.snapshot()
		for _, bad := range []ocypod.Schedule{
			{ID: "x", Queue: "q", Cron: "0 0 30 2 *", Job: json.RawMessage(`{}`)},
			{ID: "x", Queue: "q", Cron: "nope", Job: json.RawMessage(`{}`)},
			{ID: "x", Queue: "q", Job: json.RawMessage(`{}`)},
			{ID: "bad id", Queue: "q", Every: ocypod.Seconds(5), Job: json.RawMessage(`{}`)},
		} {
			_, err := h.s.PutSchedule(h.ctx, bad)
			wantKind(t, "PutSchedule("+bad.Cron+")", err, ocypod.KindInvalid, "")
		}
		_, err = h.s.PutSchedule(h.ctx, ocypod.Schedule{ID: "x", Queue: "nope", Every: ocypod.Seconds(5), Job: json.RawMessage(`{}`)})
		wantKind(t, "PutSchedule(missing queue)", err, ocypod.KindNotFound, "")
		h.wantUnchanged("refused schedules", before)
		if err := h.s.DeleteSchedule(h.ctx, "q", "c"); err != nil {
			t.Fatal(err)
		}
		_, err = h.s.GetSchedule(h.ctx, "q", "c")
		wantKind(t, "GetSchedule(deleted)", err, ocypod.KindNotFound, "")
		if !strings.Contains(ocypod.ErrorMessage(err), "Schedule 'c'") {
			t.Fatalf("message = %q", ocypod.ErrorMessage(err))
		}
	}},
}

func ptrBool(b bool) *bool { return &b }

func sortedIDs(ids ...uint64) []uint64 { return slices.Sorted(slices.Values(ids)) }
