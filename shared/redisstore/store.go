package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Options configure a Store.
type Options struct {
	// Namespace is Ocypod's key_namespace; it becomes the hash tag of every
	// key ("{<ns>}:job:1"). Empty means "ocypod". Valid characters:
	// [A-Za-z0-9_.-], at most 64 bytes.
	Namespace string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SweepBatch is the most jobs one sweep call handles; <= 0 means 100.
	SweepBatch int
	// InlineSweep is the most overdue timeouts and due retries that taking a
	// job also handles, so workers polling a queue see them promptly even
	// between scheduled sweeps. 0 means 8; negative disables.
	InlineSweep int
}

// Store is the Ocypod job store on Redis. Every operation is one Lua script
// (or one read command): exactly one round trip, atomic.
type Store struct {
	rdb  redis.UniversalClient
	opts Options
}

// New returns a Store on rdb. It fails if the namespace is invalid.
func New(rdb redis.UniversalClient, opts Options) (*Store, error) {
	return nil, errors.New("TODO")
}

// SweepResult reports one sweep call. The id lists hold the jobs affected.
type SweepResult struct {
	TimedOut  []uint64 // running jobs failed as timed_out
	Retried   []uint64 // failed/timed-out jobs requeued
	Abandoned []uint64 // retries given up because the job's queue was deleted
	Expired   []uint64 // ended jobs deleted
	// More is true when the batch limit was reached: more jobs are due now.
	More bool
	// NextDue is when the next job of this sweep's kind becomes due, zero if
	// none is scheduled.
	NextDue time.Time
}

// SweepTimeouts fails, as timed_out, up to SweepBatch running jobs whose
// timeout or heartbeat_timeout has passed.
func (s *Store) SweepTimeouts(ctx context.Context) (SweepResult, error) {
	return SweepResult{}, errors.New("TODO")
}

// SweepRetries requeues up to SweepBatch failed jobs whose retry is due.
func (s *Store) SweepRetries(ctx context.Context) (SweepResult, error) {
	return SweepResult{}, errors.New("TODO")
}

// SweepExpiry deletes up to SweepBatch ended jobs whose expires_after passed.
func (s *Store) SweepExpiry(ctx context.Context) (SweepResult, error) {
	return SweepResult{}, errors.New("TODO")
}

var (
	_ = ocypod.StatusQueued
	_ json.RawMessage
)
