package client_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/ocyless/ocyless/client"
)

func TestListing(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := t.Context()
	must(c.PutQueue(ctx, "a", client.QueueSpec{}))(t)
	must(c.PutQueue(ctx, "b", client.QueueSpec{}))(t)
	must(c.CreateJobs(ctx, "a", []client.JobSpec{{Tags: []string{"t"}}, {}, {Tags: []string{"t"}}, {}, {}}))(t)
	must(c.CreateJobs(ctx, "b", []client.JobSpec{{Tags: []string{"t"}}, {}}))(t)
	must(c.TakeOne(ctx, "a", client.TakeOptions{Worker: "w"}))(t)

	page := must(c.ListQueueJobs(ctx, "a", client.ListOptions{Status: client.StatusQueued, Limit: 2}))(t)
	if len(page.Jobs) != 2 || page.Jobs[0].ID != 2 || page.Jobs[0].Queue != "a" || page.Jobs[0].Status != client.StatusQueued ||
		page.NextCursor == "" {
		t.Fatalf("first page = %+v", page)
	}
	next := must(c.ListQueueJobs(ctx, "a", client.ListOptions{Status: client.StatusQueued, Limit: 2, Cursor: page.NextCursor}))(t)
	if len(next.Jobs) != 2 || next.Jobs[0].ID != 4 {
		t.Errorf("second page = %+v", next)
	}
	// A full page may carry a cursor to an empty last page.
	if next.NextCursor != "" {
		last := must(c.ListQueueJobs(ctx, "a", client.ListOptions{Status: client.StatusQueued, Limit: 2, Cursor: next.NextCursor}))(t)
		if len(last.Jobs) != 0 || last.NextCursor != "" {
			t.Errorf("page after the last job = %+v", last)
		}
	}
	collect := func(queue string, o client.ListOptions) []uint64 {
		t.Helper()
		var ids []uint64
		for j, err := range c.AllJobs(ctx, queue, o) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, j.ID)
		}
		slices.Sort(ids) // every job once, whatever the order
		return ids
	}
	for _, tc := range []struct {
		name  string
		queue string
		o     client.ListOptions
		want  []uint64
	}{
		{"queue a", "a", client.ListOptions{Limit: 2}, []uint64{1, 2, 3, 4, 5}},
		{"every queue", "", client.ListOptions{Limit: 3, Fields: []string{"id"}}, []uint64{1, 2, 3, 4, 5, 6, 7}},
		{"queued", "a", client.ListOptions{Status: client.StatusQueued}, []uint64{2, 3, 4, 5}},
		{"running", "", client.ListOptions{Status: client.StatusRunning}, []uint64{1}},
		{"tag", "", client.ListOptions{Tag: "t", Limit: 1}, []uint64{1, 3, 6}},
		{"worker", "", client.ListOptions{Worker: "w"}, []uint64{1}},
		{"untracked", "b", client.ListOptions{Tracked: new(false)}, []uint64{6, 7}},
	} {
		if got := collect(tc.queue, tc.o); !slices.Equal(got, tc.want) {
			t.Errorf("%s: AllJobs = %v, want %v", tc.name, got, tc.want)
		}
	}
	n := 0
	for range c.AllJobs(ctx, "", client.ListOptions{Limit: 1}) {
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("an iteration stopped after 2 jobs ran %d times", n)
	}
	_, err := c.ListJobs(ctx, client.ListOptions{Cursor: "garbage"})
	if !client.IsBadRequest(err) {
		t.Errorf("ListJobs with a bad cursor = %v, want 400", err)
	}
	for j, err := range c.AllJobs(ctx, "missing", client.ListOptions{}) {
		if j != nil || !client.IsNotFound(err) {
			t.Errorf("AllJobs of a missing queue yields %v, %v; want a 404", j, err)
		}
	}
}

func TestSchedules(t *testing.T) {
	t.Parallel()
	_, c := newClient(t)
	ctx := t.Context()
	must(c.PutQueue(ctx, "q", client.QueueSpec{}))(t)
	spec := client.ScheduleSpec{Every: time.Hour, Job: client.JobSpec{Input: map[string]int{"n": 1}, Key: "hourly"}}
	if created := must(c.PutSchedule(ctx, "q", "hourly", spec))(t); !created {
		t.Error("PutSchedule of a new schedule: created = false")
	}
	if created := must(c.PutSchedule(ctx, "q", "hourly", spec))(t); created {
		t.Error("PutSchedule of an existing schedule: created = true")
	}
	must(c.PutSchedule(ctx, "q", "daily", client.ScheduleSpec{Cron: "0 3 * * *", Job: client.JobSpec{}}))(t)
	s := must(c.GetSchedule(ctx, "q", "hourly"))(t)
	var job map[string]any
	if err := json.Unmarshal(s.Job, &job); err != nil || s.ID != "hourly" || s.Queue != "q" || s.Every != time.Hour ||
		s.Cron != "" || s.NextRun == nil || job["key"] != "hourly" {
		t.Errorf("GetSchedule = %+v (job %v, %v)", s, job, err)
	}
	ss := must(c.ListSchedules(ctx, "q"))(t)
	if len(ss) != 2 || ss[0].ID != "daily" || ss[0].Cron != "0 3 * * *" || ss[0].NextRun == nil ||
		ss[0].NextRun.Hour() != 3 || ss[1].ID != "hourly" {
		t.Errorf("ListSchedules = %+v", ss)
	}
	_, err := c.PutSchedule(ctx, "q", "bad", client.ScheduleSpec{Cron: "nope", Job: client.JobSpec{}})
	if !client.IsBadRequest(err) {
		t.Errorf("PutSchedule with a bad cron = %v, want 400", err)
	}
	if err := c.DeleteSchedule(ctx, "q", "hourly"); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetSchedule(ctx, "q", "hourly")
	wantError(t, "GetSchedule of a deleted schedule", err, 404, "Schedule 'hourly' of queue 'q' does not exist", client.ErrNotFound)
	wantError(t, "DeleteSchedule twice", c.DeleteSchedule(ctx, "q", "hourly"), 404,
		"Schedule 'hourly' of queue 'q' does not exist", client.ErrNotFound)
}

func TestStats(t *testing.T) {
	t.Parallel()
	srv, c := newClient(t)
	ctx := t.Context()
	must(c.PutQueue(ctx, "q", client.QueueSpec{}))(t)
	must(c.CreateJobs(ctx, "q", []client.JobSpec{{}, {}}))(t)
	for range 2 {
		j := must(c.TakeOne(ctx, "q", client.TakeOptions{}))(t)
		if err := c.Complete(ctx, j.ID, j.Attempt, nil); err != nil {
			t.Fatal(err)
		}
	}
	s := must(c.QueueStats(ctx, "q", time.Time{}))(t)
	if s.Created != 2 || s.Completed != 2 || s.Wait.Count != 2 || s.Run.Count != 2 || len(s.Run.Histogram) != 172 ||
		s.Run.Histogram[0] != 2 {
		t.Errorf("QueueStats(today) = %+v", s)
	}
	if s := must(c.QueueStats(ctx, "q", srv.Now().AddDate(0, 0, -1)))(t); s.Created != 0 || len(s.Wait.Histogram) != 172 {
		t.Errorf("QueueStats(yesterday) = %+v", s)
	}
	_, err := c.QueueStats(ctx, "missing", time.Time{})
	wantError(t, "QueueStats of a missing queue", err, 404, "Queue 'missing' does not exist", client.ErrNotFound)
}

func TestServer(t *testing.T) {
	t.Parallel()
	srv, c := newClient(t)
	ctx := t.Context()
	if err := c.Health(ctx); err != nil {
		t.Errorf("Health = %v", err)
	}
	if v := must(c.Version(ctx))(t); v != "0.8.0" {
		t.Errorf("Version = %q", v)
	}
	srv.SetDown(true)
	wantError(t, "Health while Redis is down", c.Health(ctx), 503, "Failed to connect to Redis: connection failed", client.ErrUnavailable)
	_, err := c.GetJob(ctx, 1)
	wantError(t, "GetJob while Redis is down", err, 503, "Failed to connect to Redis: connection failed", client.ErrUnavailable)
	if !client.IsUnavailable(err) || client.IsNotFound(err) || client.IsConflict(err) || client.StatusCode(err) != 503 {
		t.Errorf("the helpers misread %v", err)
	}
	if v, err := c.Version(ctx); v != "0.8.0" || err != nil {
		t.Errorf("Version while Redis is down = %q, %v (it does not need Redis)", v, err)
	}
	srv.SetDown(false)
	if err := c.Health(ctx); err != nil {
		t.Errorf("Health once Redis is back = %v", err)
	}
}
