package httpapi

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// fakeStore is a Store whose methods call the matching XxxFunc field when
// set, and otherwise succeed with zero values. It records every call, so
// tests can check that a refused request never reached the store.
type fakeStore struct {
	PingFunc           func(ctx context.Context) error
	InfoFunc           func(ctx context.Context) (ocypod.ServerInfo, error)
	ListQueuesFunc     func(ctx context.Context) ([]string, error)
	GetQueueFunc       func(ctx context.Context, name string) (ocypod.QueueSettings, error)
	PutQueueFunc       func(ctx context.Context, name string, s ocypod.QueueSettings) (bool, error)
	PatchQueueFunc     func(ctx context.Context, name string, p ocypod.QueuePatch) error
	DeleteQueueFunc    func(ctx context.Context, name string) error
	QueueSizeFunc      func(ctx context.Context, name string) (uint64, error)
	QueueJobIDsFunc    func(ctx context.Context, name string) (ocypod.JobIDs, error)
	CreateJobFunc      func(ctx context.Context, queue string, spec ocypod.JobSpec) (ocypod.Created, error)
	CreateJobsFunc     func(ctx context.Context, queue string, specs []ocypod.JobSpec) ([]ocypod.Created, error)
	TakeFunc           func(ctx context.Context, req ocypod.TakeRequest) ([]ocypod.NextJob, error)
	GetJobFunc         func(ctx context.Context, id uint64) (*ocypod.Job, error)
	WaitJobFunc        func(ctx context.Context, id uint64, wait time.Duration, stop <-chan struct{}) (*ocypod.Job, error)
	JobStatusFunc      func(ctx context.Context, id uint64) (ocypod.Status, error)
	JobOutputFunc      func(ctx context.Context, id uint64) (json.RawMessage, error)
	SetJobOutputFunc   func(ctx context.Context, id uint64, output json.RawMessage, attempt *uint64) error
	UpdateJobFunc      func(ctx context.Context, id uint64, u ocypod.JobUpdate, take *ocypod.TakeRequest) (ocypod.UpdateResult, []ocypod.NextJob, error)
	HeartbeatFunc      func(ctx context.Context, id uint64, attempt *uint64) error
	UpdateJobsFunc     func(ctx context.Context, items []ocypod.BatchUpdate, take *ocypod.TakeRequest) ([]ocypod.BatchOutcome, []ocypod.NextJob, error)
	HeartbeatJobsFunc  func(ctx context.Context, items []ocypod.BatchUpdate) ([]ocypod.BatchOutcome, error)
	DeleteJobFunc      func(ctx context.Context, id uint64) error
	RetryJobFunc       func(ctx context.Context, id uint64, runAt *time.Time) (ocypod.RetryResult, error)
	TagJobIDsFunc      func(ctx context.Context, tag string) ([]uint64, error)
	ListJobsFunc       func(ctx context.Context, req ocypod.ListRequest) (ocypod.JobPage, error)
	FailuresFunc       func(ctx context.Context) (map[string]uint64, error)
	FailureJobsFunc    func(ctx context.Context, group string, limit int, cursor string) (ocypod.FailurePage, error)
	RetryFailuresFunc  func(ctx context.Context, group string, limit int, queue string) (int, error)
	WorkersFunc        func(ctx context.Context) ([]ocypod.Worker, error)
	WorkerFunc         func(ctx context.Context, name string) (ocypod.WorkerJobs, error)
	QueueStatsFunc     func(ctx context.Context, queue string, day time.Time) (ocypod.QueueStats, error)
	QueueMinutesFunc   func(ctx context.Context, queue string, now time.Time) (ocypod.MinuteStats, error)
	PutScheduleFunc    func(ctx context.Context, s ocypod.Schedule) (bool, error)
	GetScheduleFunc    func(ctx context.Context, queue, id string) (ocypod.Schedule, error)
	DeleteScheduleFunc func(ctx context.Context, queue, id string) error
	ListSchedulesFunc  func(ctx context.Context, queue string) ([]ocypod.Schedule, error)

	mu    sync.Mutex
	calls []string
}

var _ Store = (*fakeStore)(nil)

func (f *fakeStore) called(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
}

// Calls returns the names of the methods called so far.
func (f *fakeStore) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeStore) Ping(ctx context.Context) error {
	f.called("Ping")
	if f.PingFunc != nil {
		return f.PingFunc(ctx)
	}
	return nil
}

func (f *fakeStore) Info(ctx context.Context) (ocypod.ServerInfo, error) {
	f.called("Info")
	if f.InfoFunc != nil {
		return f.InfoFunc(ctx)
	}
	return ocypod.ServerInfo{}, nil
}

func (f *fakeStore) ListQueues(ctx context.Context) ([]string, error) {
	f.called("ListQueues")
	if f.ListQueuesFunc != nil {
		return f.ListQueuesFunc(ctx)
	}
	return nil, nil
}

func (f *fakeStore) GetQueue(ctx context.Context, name string) (ocypod.QueueSettings, error) {
	f.called("GetQueue")
	if f.GetQueueFunc != nil {
		return f.GetQueueFunc(ctx, name)
	}
	return ocypod.DefaultQueueSettings(), nil
}

func (f *fakeStore) PutQueue(ctx context.Context, name string, s ocypod.QueueSettings) (bool, error) {
	f.called("PutQueue")
	if f.PutQueueFunc != nil {
		return f.PutQueueFunc(ctx, name, s)
	}
	return true, nil
}

func (f *fakeStore) PatchQueue(ctx context.Context, name string, p ocypod.QueuePatch) error {
	f.called("PatchQueue")
	if f.PatchQueueFunc != nil {
		return f.PatchQueueFunc(ctx, name, p)
	}
	return nil
}

func (f *fakeStore) DeleteQueue(ctx context.Context, name string) error {
	f.called("DeleteQueue")
	if f.DeleteQueueFunc != nil {
		return f.DeleteQueueFunc(ctx, name)
	}
	return nil
}

func (f *fakeStore) QueueSize(ctx context.Context, name string) (uint64, error) {
	f.called("QueueSize")
	if f.QueueSizeFunc != nil {
		return f.QueueSizeFunc(ctx, name)
	}
	return 0, nil
}

func (f *fakeStore) QueueJobIDs(ctx context.Context, name string) (ocypod.JobIDs, error) {
	f.called("QueueJobIDs")
	if f.QueueJobIDsFunc != nil {
		return f.QueueJobIDsFunc(ctx, name)
	}
	return ocypod.JobIDs{}, nil
}

func (f *fakeStore) CreateJob(ctx context.Context, queue string, spec ocypod.JobSpec) (ocypod.Created, error) {
	f.called("CreateJob")
	if f.CreateJobFunc != nil {
		return f.CreateJobFunc(ctx, queue, spec)
	}
	return ocypod.Created{ID: 1}, nil
}

func (f *fakeStore) CreateJobs(ctx context.Context, queue string, specs []ocypod.JobSpec) ([]ocypod.Created, error) {
	f.called("CreateJobs")
	if f.CreateJobsFunc != nil {
		return f.CreateJobsFunc(ctx, queue, specs)
	}
	out := make([]ocypod.Created, len(specs))
	for i := range out {
		out[i].ID = uint64(i + 1)
	}
	return out, nil
}

func (f *fakeStore) Take(ctx context.Context, req ocypod.TakeRequest) ([]ocypod.NextJob, error) {
	f.called("Take")
	if f.TakeFunc != nil {
		return f.TakeFunc(ctx, req)
	}
	return nil, nil
}

func (f *fakeStore) GetJob(ctx context.Context, id uint64) (*ocypod.Job, error) {
	f.called("GetJob")
	if f.GetJobFunc != nil {
		return f.GetJobFunc(ctx, id)
	}
	return &ocypod.Job{ID: id, Queue: "q", Status: ocypod.StatusQueued}, nil
}

func (f *fakeStore) WaitJob(ctx context.Context, id uint64, wait time.Duration, stop <-chan struct{}) (*ocypod.Job, error) {
	f.called("WaitJob")
	if f.WaitJobFunc != nil {
		return f.WaitJobFunc(ctx, id, wait, stop)
	}
	return &ocypod.Job{ID: id, Queue: "q", Status: ocypod.StatusQueued}, nil
}

func (f *fakeStore) JobStatus(ctx context.Context, id uint64) (ocypod.Status, error) {
	f.called("JobStatus")
	if f.JobStatusFunc != nil {
		return f.JobStatusFunc(ctx, id)
	}
	return ocypod.StatusQueued, nil
}

func (f *fakeStore) JobOutput(ctx context.Context, id uint64) (json.RawMessage, error) {
	f.called("JobOutput")
	if f.JobOutputFunc != nil {
		return f.JobOutputFunc(ctx, id)
	}
	return nil, nil
}

func (f *fakeStore) SetJobOutput(ctx context.Context, id uint64, output json.RawMessage, attempt *uint64) error {
	f.called("SetJobOutput")
	if f.SetJobOutputFunc != nil {
		return f.SetJobOutputFunc(ctx, id, output, attempt)
	}
	return nil
}

func (f *fakeStore) UpdateJob(ctx context.Context, id uint64, u ocypod.JobUpdate, take *ocypod.TakeRequest) (ocypod.UpdateResult, []ocypod.NextJob, error) {
	f.called("UpdateJob")
	if f.UpdateJobFunc != nil {
		return f.UpdateJobFunc(ctx, id, u, take)
	}
	return ocypod.UpdateResult{}, nil, nil
}

func (f *fakeStore) Heartbeat(ctx context.Context, id uint64, attempt *uint64) error {
	f.called("Heartbeat")
	if f.HeartbeatFunc != nil {
		return f.HeartbeatFunc(ctx, id, attempt)
	}
	return nil
}

func (f *fakeStore) UpdateJobs(ctx context.Context, items []ocypod.BatchUpdate, take *ocypod.TakeRequest) ([]ocypod.BatchOutcome, []ocypod.NextJob, error) {
	f.called("UpdateJobs")
	if f.UpdateJobsFunc != nil {
		return f.UpdateJobsFunc(ctx, items, take)
	}
	return make([]ocypod.BatchOutcome, len(items)), nil, nil
}

func (f *fakeStore) HeartbeatJobs(ctx context.Context, items []ocypod.BatchUpdate) ([]ocypod.BatchOutcome, error) {
	f.called("HeartbeatJobs")
	if f.HeartbeatJobsFunc != nil {
		return f.HeartbeatJobsFunc(ctx, items)
	}
	return make([]ocypod.BatchOutcome, len(items)), nil
}

func (f *fakeStore) DeleteJob(ctx context.Context, id uint64) error {
	f.called("DeleteJob")
	if f.DeleteJobFunc != nil {
		return f.DeleteJobFunc(ctx, id)
	}
	return nil
}

func (f *fakeStore) RetryJob(ctx context.Context, id uint64, runAt *time.Time) (ocypod.RetryResult, error) {
	f.called("RetryJob")
	if f.RetryJobFunc != nil {
		return f.RetryJobFunc(ctx, id, runAt)
	}
	return ocypod.RetryResult{Status: ocypod.StatusQueued}, nil
}

func (f *fakeStore) TagJobIDs(ctx context.Context, tag string) ([]uint64, error) {
	f.called("TagJobIDs")
	if f.TagJobIDsFunc != nil {
		return f.TagJobIDsFunc(ctx, tag)
	}
	return nil, nil
}

func (f *fakeStore) ListJobs(ctx context.Context, req ocypod.ListRequest) (ocypod.JobPage, error) {
	f.called("ListJobs")
	if f.ListJobsFunc != nil {
		return f.ListJobsFunc(ctx, req)
	}
	return ocypod.JobPage{}, nil
}

func (f *fakeStore) Failures(ctx context.Context) (map[string]uint64, error) {
	f.called("Failures")
	if f.FailuresFunc != nil {
		return f.FailuresFunc(ctx)
	}
	return nil, nil
}

func (f *fakeStore) FailureJobs(ctx context.Context, group string, limit int, cursor string) (ocypod.FailurePage, error) {
	f.called("FailureJobs")
	if f.FailureJobsFunc != nil {
		return f.FailureJobsFunc(ctx, group, limit, cursor)
	}
	return ocypod.FailurePage{}, nil
}

func (f *fakeStore) RetryFailures(ctx context.Context, group string, limit int, queue string) (int, error) {
	f.called("RetryFailures")
	if f.RetryFailuresFunc != nil {
		return f.RetryFailuresFunc(ctx, group, limit, queue)
	}
	return 0, nil
}

func (f *fakeStore) Workers(ctx context.Context) ([]ocypod.Worker, error) {
	f.called("Workers")
	if f.WorkersFunc != nil {
		return f.WorkersFunc(ctx)
	}
	return nil, nil
}

func (f *fakeStore) Worker(ctx context.Context, name string) (ocypod.WorkerJobs, error) {
	f.called("Worker")
	if f.WorkerFunc != nil {
		return f.WorkerFunc(ctx, name)
	}
	return ocypod.WorkerJobs{}, nil
}

func (f *fakeStore) QueueStats(ctx context.Context, queue string, day time.Time) (ocypod.QueueStats, error) {
	f.called("QueueStats")
	if f.QueueStatsFunc != nil {
		return f.QueueStatsFunc(ctx, queue, day)
	}
	return ocypod.QueueStats{}, nil
}

func (f *fakeStore) QueueMinutes(ctx context.Context, queue string, now time.Time) (ocypod.MinuteStats, error) {
	f.called("QueueMinutes")
	if f.QueueMinutesFunc != nil {
		return f.QueueMinutesFunc(ctx, queue, now)
	}
	return ocypod.MinuteStats{Start: now.UTC().Truncate(time.Minute).Add(-(ocypod.MinuteCount - 1) * time.Minute)}, nil
}

func (f *fakeStore) PutSchedule(ctx context.Context, s ocypod.Schedule) (bool, error) {
	f.called("PutSchedule")
	if f.PutScheduleFunc != nil {
		return f.PutScheduleFunc(ctx, s)
	}
	return true, nil
}

func (f *fakeStore) GetSchedule(ctx context.Context, queue, id string) (ocypod.Schedule, error) {
	f.called("GetSchedule")
	if f.GetScheduleFunc != nil {
		return f.GetScheduleFunc(ctx, queue, id)
	}
	return ocypod.Schedule{ID: id, Queue: queue, Every: ocypod.Seconds(60), Job: json.RawMessage(`{}`)}, nil
}

func (f *fakeStore) DeleteSchedule(ctx context.Context, queue, id string) error {
	f.called("DeleteSchedule")
	if f.DeleteScheduleFunc != nil {
		return f.DeleteScheduleFunc(ctx, queue, id)
	}
	return nil
}

func (f *fakeStore) ListSchedules(ctx context.Context, queue string) ([]ocypod.Schedule, error) {
	f.called("ListSchedules")
	if f.ListSchedulesFunc != nil {
		return f.ListSchedulesFunc(ctx, queue)
	}
	return nil, nil
}
