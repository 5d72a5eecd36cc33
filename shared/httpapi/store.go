package httpapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Store is what the handlers need from storage. *redisstore.Store implements
// it. Every method returns an *ocypod.Error for refusals (missing job or
// queue, illegal transition, invalid value, Redis unavailable) carrying the
// client's message.
type Store interface {
	Ping(ctx context.Context) error
	Info(ctx context.Context) (ocypod.ServerInfo, error)
	ListQueues(ctx context.Context) ([]string, error)
	GetQueue(ctx context.Context, name string) (ocypod.QueueSettings, error)
	PutQueue(ctx context.Context, name string, s ocypod.QueueSettings) (created bool, err error)
	PatchQueue(ctx context.Context, name string, p ocypod.QueuePatch) error
	DeleteQueue(ctx context.Context, name string) error
	QueueSize(ctx context.Context, name string) (uint64, error)
	QueueJobIDs(ctx context.Context, name string) (ocypod.JobIDs, error)
	CreateJob(ctx context.Context, queue string, spec ocypod.JobSpec) (ocypod.Created, error)
	CreateJobs(ctx context.Context, queue string, specs []ocypod.JobSpec) ([]ocypod.Created, error)
	// Take returns no job and no error when none could be taken.
	Take(ctx context.Context, req ocypod.TakeRequest) ([]ocypod.NextJob, error)
	GetJob(ctx context.Context, id uint64) (*ocypod.Job, error)
	// WaitJob returns the job as GetJob does once it has ended for good,
	// or when wait is over, or stop closes, or ctx ends (the job as it is
	// then); ocypod.JobNotFound also when it is deleted meanwhile.
	WaitJob(ctx context.Context, id uint64, wait time.Duration, stop <-chan struct{}) (*ocypod.Job, error)
	JobStatus(ctx context.Context, id uint64) (ocypod.Status, error)
	// JobOutput returns nil output for JSON null.
	JobOutput(ctx context.Context, id uint64) (json.RawMessage, error)
	SetJobOutput(ctx context.Context, id uint64, output json.RawMessage, attempt *uint64) error
	// UpdateJob applies a PATCH and, with take, takes jobs afterwards.
	UpdateJob(ctx context.Context, id uint64, u ocypod.JobUpdate, take *ocypod.TakeRequest) (ocypod.UpdateResult, []ocypod.NextJob, error)
	Heartbeat(ctx context.Context, id uint64, attempt *uint64) error
	// UpdateJobs applies each item as UpdateJob would, each on its own, and
	// with take then takes jobs; outcomes[i] is item i's refusal or result.
	// The error is the whole batch's: the take's queue (then nothing is
	// applied), the take, or Redis failing every item.
	UpdateJobs(ctx context.Context, items []ocypod.BatchUpdate, take *ocypod.TakeRequest) ([]ocypod.BatchOutcome, []ocypod.NextJob, error)
	// HeartbeatJobs heartbeats each item's job (Update.Attempt fences it)
	// as Heartbeat would, each on its own.
	HeartbeatJobs(ctx context.Context, items []ocypod.BatchUpdate) ([]ocypod.BatchOutcome, error)
	DeleteJob(ctx context.Context, id uint64) error
	RetryJob(ctx context.Context, id uint64, runAt *time.Time) (ocypod.RetryResult, error)
	TagJobIDs(ctx context.Context, tag string) ([]uint64, error)
	JobModelStore
}

// JobModelStore is the part of Store behind the extended job model's
// listing, failure, worker, statistics and schedule routes.
type JobModelStore interface {
	// ListJobs lists jobs of one queue (req.Queue) or of every queue, with
	// filters and an opaque cursor; ocypod.Invalid for a tampered cursor.
	ListJobs(ctx context.Context, req ocypod.ListRequest) (ocypod.JobPage, error)
	// Failures counts the jobs failed for good by failure group.
	Failures(ctx context.Context) (map[string]uint64, error)
	// FailureJobs pages one failure group (an unknown group is empty).
	FailureJobs(ctx context.Context, group string, limit int, cursor string) (ocypod.FailurePage, error)
	// RetryFailures requeues up to limit jobs of a failure group, into
	// queue when it is not "", and returns how many.
	RetryFailures(ctx context.Context, group string, limit int, queue string) (int, error)
	// Workers lists the workers seen within the worker expiry, most recent
	// first; Worker returns one (ocypod.WorkerNotFound when unknown).
	Workers(ctx context.Context) ([]ocypod.Worker, error)
	Worker(ctx context.Context, name string) (ocypod.WorkerJobs, error)
	// QueueStats returns a queue's statistics of the UTC day of day.
	QueueStats(ctx context.Context, queue string, day time.Time) (ocypod.QueueStats, error)
	// QueueMinutes returns a queue's jobs created, completed and failed in
	// each minute of the hour up to now's (ocypod.MinuteStats).
	QueueMinutes(ctx context.Context, queue string, now time.Time) (ocypod.MinuteStats, error)
	// PutSchedule creates (created) or replaces a schedule; the rest read
	// and delete them (ocypod.ScheduleNotFound, ocypod.QueueNotFound).
	PutSchedule(ctx context.Context, s ocypod.Schedule) (created bool, err error)
	GetSchedule(ctx context.Context, queue, id string) (ocypod.Schedule, error)
	DeleteSchedule(ctx context.Context, queue, id string) error
	ListSchedules(ctx context.Context, queue string) ([]ocypod.Schedule, error)
}
