package httpapi

import (
	"context"
	"encoding/json"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Store is what the handlers need from storage. *redisstore.Store implements
// it. Every method returns an *ocypod.Error for refusals (missing job or
// queue, illegal transition, Redis unavailable) carrying Ocypod's message.
type Store interface {
	Ping(ctx context.Context) error
	Info(ctx context.Context) (ocypod.ServerInfo, error)
	ListQueues(ctx context.Context) ([]string, error)
	GetQueue(ctx context.Context, name string) (ocypod.QueueSettings, error)
	PutQueue(ctx context.Context, name string, s ocypod.QueueSettings) (created bool, err error)
	DeleteQueue(ctx context.Context, name string) error
	QueueSize(ctx context.Context, name string) (uint64, error)
	QueueJobIDs(ctx context.Context, name string) (ocypod.JobIDs, error)
	CreateJob(ctx context.Context, queue string, spec ocypod.JobSpec) (uint64, error)
	// NextJob returns nil, nil when the queue is empty.
	NextJob(ctx context.Context, queue string) (*ocypod.NextJob, error)
	GetJob(ctx context.Context, id uint64) (*ocypod.Job, error)
	JobStatus(ctx context.Context, id uint64) (ocypod.Status, error)
	// JobOutput returns nil output for JSON null.
	JobOutput(ctx context.Context, id uint64) (json.RawMessage, error)
	SetJobOutput(ctx context.Context, id uint64, output json.RawMessage) error
	UpdateJob(ctx context.Context, id uint64, u ocypod.JobUpdate) error
	Heartbeat(ctx context.Context, id uint64) error
	DeleteJob(ctx context.Context, id uint64) error
	TagJobIDs(ctx context.Context, tag string) ([]uint64, error)
}
