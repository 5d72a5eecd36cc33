package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// QueueStats returns queue's statistics of the UTC day of day (qless's
// stats): jobs created, completed, failed and retried, and the wait (queued
// to taken) and run (taken to ended, every attempt) times as count, mean,
// variance (of the day's population, in seconds) and histogram. Each take
// and each ended attempt costs one write (its histogram bucket); the mean
// and variance are computed from the histogram, each duration counted at
// the middle of its bucket (to the second under a minute, the minute
// under an hour...). A day is kept Options.StatsDays.
// Returns ocypod.QueueNotFound for a missing queue.
func (s *Store) QueueStats(ctx context.Context, queue string, day time.Time) (ocypod.QueueStats, error) {
	fail := func(err error) (ocypod.QueueStats, error) {
		return ocypod.QueueStats{}, fmt.Errorf("redisstore: stats of %q: %w", queue, err)
	}
	if !ocypod.ValidQueueName(queue) {
		return fail(ocypod.InvalidQueueName())
	}
	fields := []string{queue + " c", queue + " d", queue + " f", queue + " r"}
	for _, w := range []string{"w", "r"} {
		for b := range ocypod.HistogramBuckets {
			fields = append(fields, queue+" "+w+strconv.Itoa(b))
		}
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	parts := s.listPartitions(ctx, queue)
	pipe := s.rdb.Pipeline()
	exists := pipe.HExists(ctx, s.l.key(s.l.home(queue), "q"), queue) // in the same round
	var cmds []*redis.SliceCmd
	for _, p := range parts {
		cmds = append(cmds, pipe.HMGet(ctx, s.partKey(p, "st", "", day), fields...))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fail(translate(err))
	}
	if !exists.Val() {
		return fail(ocypod.QueueNotFound(queue))
	}
	sums := make([]float64, len(fields))
	for _, c := range cmds {
		for i, v := range c.Val() {
			if str, ok := v.(string); ok {
				f, err := strconv.ParseFloat(str, 64)
				if err != nil {
					return fail(ocypod.Internal(fmt.Errorf("stats field %q: unreadable %q", fields[i], truncate(str))))
				}
				sums[i] += f
			}
		}
	}
	st := ocypod.QueueStats{Created: uint64(sums[0]), Completed: uint64(sums[1]), Failed: uint64(sums[2]), Retries: uint64(sums[3])}
	for i, d := range []*ocypod.DurationStats{&st.Wait, &st.Run} {
		hist := sums[4+i*ocypod.HistogramBuckets : 4+(i+1)*ocypod.HistogramBuckets]
		var sum, sq float64
		for b, n := range hist {
			d.Histogram[b] = uint64(n)
			d.Count += uint64(n)
			x := ocypod.BucketValue(b)
			sum += n * x
			sq += n * x * x
		}
		if d.Count > 0 {
			n := float64(d.Count)
			d.Mean = sum / n
			d.Variance = max(sq/n-d.Mean*d.Mean, 0)
		}
	}
	return st, nil
}
