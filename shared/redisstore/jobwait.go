package redisstore

import (
	"context"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// WaitJob returns job id as GetJob does, once it has ended for good or
// when wait is over, whichever comes first (GET /job/{id}?wait=). A
// failure that will be retried is not an ending. It waits in the store's
// hub (waiters.go), woken by the script that ends the job, without a Redis
// connection of its own; it reads the job again when woken and when the
// subscription is (re)established. Past Options.MaxLongPolls waiters it
// answers at once, with the job as it is. The wait also ends when stop
// closes or ctx ends: it then answers the job as last read (ctx's end
// answers its error only when the job was never read).
//
// Returns ocypod.JobNotFound when the job does not exist, also when it is
// deleted during the wait.
func (s *Store) WaitJob(ctx context.Context, id uint64, wait time.Duration, stop <-chan struct{}) (*ocypod.Job, error) {
	if wait <= 0 {
		return s.GetJob(ctx, id)
	}
	w := s.hub.joinJob(id)
	if w == nil {
		return s.GetJob(ctx, id)
	}
	defer s.hub.leave(w, false)
	waitCtx := ctx
	if stop != nil {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-stop:
				cancel()
			case <-waitCtx.Done():
			}
		}()
	}
	deadline := time.Now().Add(wait)
	for {
		left := time.Until(deadline)
		var watch int64
		if left > 0 && waitCtx.Err() == nil {
			// The mark outlasts the wait a little: the store's clock and
			// this one may differ by the time a call takes.
			watch = s.now().Add(left + time.Second).UnixMilli()
		}
		j, watched, err := s.getJob(ctx, id, AllParts, watch)
		if err != nil || watch == 0 || !watched || j.Ended() {
			return j, err
		}
		if !s.hub.wait(waitCtx, w, left) {
			return j, nil
		}
	}
}
