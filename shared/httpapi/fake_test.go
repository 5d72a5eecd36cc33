package httpapi

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// fakeStore is a Store whose methods call the matching XxxFunc field when
// set, and otherwise succeed with zero values. It records every call, so
// tests can check that a refused request never reached the store.
type fakeStore struct {
	PingFunc         func(ctx context.Context) error
	InfoFunc         func(ctx context.Context) (ocypod.ServerInfo, error)
	ListQueuesFunc   func(ctx context.Context) ([]string, error)
	GetQueueFunc     func(ctx context.Context, name string) (ocypod.QueueSettings, error)
	PutQueueFunc     func(ctx context.Context, name string, s ocypod.QueueSettings) (bool, error)
	DeleteQueueFunc  func(ctx context.Context, name string) error
	QueueSizeFunc    func(ctx context.Context, name string) (uint64, error)
	QueueJobIDsFunc  func(ctx context.Context, name string) (ocypod.JobIDs, error)
	CreateJobFunc    func(ctx context.Context, queue string, spec ocypod.JobSpec) (uint64, error)
	NextJobFunc      func(ctx context.Context, queue string) (*ocypod.NextJob, error)
	GetJobFunc       func(ctx context.Context, id uint64) (*ocypod.Job, error)
	JobStatusFunc    func(ctx context.Context, id uint64) (ocypod.Status, error)
	JobOutputFunc    func(ctx context.Context, id uint64) (json.RawMessage, error)
	SetJobOutputFunc func(ctx context.Context, id uint64, output json.RawMessage) error
	UpdateJobFunc    func(ctx context.Context, id uint64, u ocypod.JobUpdate) error
	HeartbeatFunc    func(ctx context.Context, id uint64) error
	DeleteJobFunc    func(ctx context.Context, id uint64) error
	TagJobIDsFunc    func(ctx context.Context, tag string) ([]uint64, error)

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

func (f *fakeStore) CreateJob(ctx context.Context, queue string, spec ocypod.JobSpec) (uint64, error) {
	f.called("CreateJob")
	if f.CreateJobFunc != nil {
		return f.CreateJobFunc(ctx, queue, spec)
	}
	return 1, nil
}

func (f *fakeStore) NextJob(ctx context.Context, queue string) (*ocypod.NextJob, error) {
	f.called("NextJob")
	if f.NextJobFunc != nil {
		return f.NextJobFunc(ctx, queue)
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

func (f *fakeStore) SetJobOutput(ctx context.Context, id uint64, output json.RawMessage) error {
	f.called("SetJobOutput")
	if f.SetJobOutputFunc != nil {
		return f.SetJobOutputFunc(ctx, id, output)
	}
	return nil
}

func (f *fakeStore) UpdateJob(ctx context.Context, id uint64, u ocypod.JobUpdate) error {
	f.called("UpdateJob")
	if f.UpdateJobFunc != nil {
		return f.UpdateJobFunc(ctx, id, u)
	}
	return nil
}

func (f *fakeStore) Heartbeat(ctx context.Context, id uint64) error {
	f.called("Heartbeat")
	if f.HeartbeatFunc != nil {
		return f.HeartbeatFunc(ctx, id)
	}
	return nil
}

func (f *fakeStore) DeleteJob(ctx context.Context, id uint64) error {
	f.called("DeleteJob")
	if f.DeleteJobFunc != nil {
		return f.DeleteJobFunc(ctx, id)
	}
	return nil
}

func (f *fakeStore) TagJobIDs(ctx context.Context, tag string) ([]uint64, error) {
	f.called("TagJobIDs")
	if f.TagJobIDsFunc != nil {
		return f.TagJobIDsFunc(ctx, tag)
	}
	return nil, nil
}
