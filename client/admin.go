package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// Worker is a worker that took a job recently.
type Worker struct {
	Name     string    `json:"name"`
	LastSeen time.Time `json:"last_seen"`
	Running  uint64    `json:"running"`
	TimedOut uint64    `json:"timed_out"`
}

// WorkerJobs are a worker's running and timed-out job ids.
type WorkerJobs struct {
	Running  []uint64 `json:"running"`
	TimedOut []uint64 `json:"timed_out"`
}

// Workers lists the workers that took a job within the server's
// worker_expiry, most recent first (GET /workers).
func (c *Client) Workers(ctx context.Context) ([]Worker, error) {
	var ws []Worker
	return ws, c.get(ctx, "/workers", nil, &ws)
}

// WorkerJobs returns a worker's job ids (GET /workers/{name}); a worker
// never seen, or forgotten, is ErrNotFound.
func (c *Client) WorkerJobs(ctx context.Context, name string) (*WorkerJobs, error) {
	var wj WorkerJobs
	if err := c.get(ctx, "/workers/"+esc(name), nil, &wj); err != nil {
		return nil, err
	}
	return &wj, nil
}

// DurationStats summarise a day's wait or run times, in seconds.
type DurationStats struct {
	Count    uint64  `json:"count"`
	Mean     float64 `json:"mean"`
	Variance float64 `json:"variance"`
	// Histogram has 172 buckets: 60 of a second, 59 of a minute, 23 of an
	// hour, 30 of a day, the last open-ended.
	Histogram []uint64 `json:"histogram"`
}

// QueueStats are a queue's counts and times of one UTC day.
type QueueStats struct {
	Created   uint64        `json:"created"`
	Completed uint64        `json:"completed"`
	Failed    uint64        `json:"failed"`
	Retries   uint64        `json:"retries"`
	Wait      DurationStats `json:"wait"`
	Run       DurationStats `json:"run"`
}

// QueueStats returns a queue's statistics of the UTC day of day (GET
// /queue/{name}/stats); a zero day is the server's today.
func (c *Client) QueueStats(ctx context.Context, queue string, day time.Time) (*QueueStats, error) {
	var q url.Values
	if !day.IsZero() {
		q = url.Values{"date": {day.UTC().Format(time.DateOnly)}}
	}
	var s QueueStats
	if err := c.get(ctx, "/queue/"+esc(queue)+"/stats", q, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ScheduleSpec is a recurring job: Cron (5 fields, UTC) or Every (at
// least 1s), and the create body of the jobs it makes (without RunAt or
// Delay).
type ScheduleSpec struct {
	Cron  string
	Every time.Duration
	Job   JobSpec
}

// Schedule is a recurring job as the server shows it.
type Schedule struct {
	ID      string
	Queue   string
	Cron    string
	Every   time.Duration
	Job     json.RawMessage // the create body, as the server keeps it
	NextRun *time.Time
}

// UnmarshalJSON reads the server's schedule object.
func (s *Schedule) UnmarshalJSON(b []byte) error {
	var w struct {
		ID      string          `json:"id"`
		Queue   string          `json:"queue"`
		Cron    string          `json:"cron"`
		Every   *duration       `json:"every"`
		Job     json.RawMessage `json:"job"`
		NextRun *time.Time      `json:"next_run"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = Schedule{ID: w.ID, Queue: w.Queue, Cron: w.Cron, Job: w.Job, NextRun: w.NextRun}
	if w.Every != nil {
		s.Every = time.Duration(*w.Every)
	}
	return nil
}

func schedulePath(queue, id string) string {
	return "/queue/" + esc(queue) + "/schedules/" + esc(id)
}

// PutSchedule creates or replaces a recurring job (PUT
// /queue/{name}/schedules/{id}); created reports a new schedule. A bad
// cron, period or job is ErrBadRequest.
func (c *Client) PutSchedule(ctx context.Context, queue, id string, spec ScheduleSpec) (created bool, err error) {
	var o object
	if spec.Cron != "" {
		o.value("cron", spec.Cron)
	}
	if spec.Every != 0 {
		o.duration("every", spec.Every)
	}
	job, err := spec.Job.MarshalJSON()
	if err != nil {
		return false, err
	}
	o.raw("job", job)
	body, err := o.bytes()
	if err != nil {
		return false, err
	}
	resp, err := c.do(ctx, call{method: http.MethodPut, path: schedulePath(queue, id), body: body, safety: idempotent})
	if err != nil {
		return false, err
	}
	return resp.status == http.StatusCreated, nil
}

// GetSchedule returns a schedule with its next run (GET
// /queue/{name}/schedules/{id}); a missing one is ErrNotFound.
func (c *Client) GetSchedule(ctx context.Context, queue, id string) (*Schedule, error) {
	var s Schedule
	if err := c.get(ctx, schedulePath(queue, id), nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// DeleteSchedule deletes a schedule (DELETE
// /queue/{name}/schedules/{id}); a missing one is ErrNotFound.
func (c *Client) DeleteSchedule(ctx context.Context, queue, id string) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: schedulePath(queue, id)})
	return err
}

// ListSchedules returns a queue's schedules by id (GET
// /queue/{name}/schedules).
func (c *Client) ListSchedules(ctx context.Context, queue string) ([]Schedule, error) {
	var ss []Schedule
	return ss, c.get(ctx, "/queue/"+esc(queue)+"/schedules", nil, &ss)
}
