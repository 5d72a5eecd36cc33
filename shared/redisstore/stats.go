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
// stats): jobs created, completed, failed (timed out included) and retried, and the wait (queued
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
	fields := []string{queue + " " + statCreated, queue + " " + statCompleted, queue + " " + statFailed, queue + " " + statRetried, queue + " " + statTimedOut}
	for _, w := range []string{statWait, statRun} {
		for b := range ocypod.HistogramBuckets {
			fields = append(fields, queue+" "+w+strconv.Itoa(b))
		}
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	parts := s.listPartitions(ctx, queue)
	pipe := s.rdb.Pipeline()
	exists := pipe.HExists(ctx, s.l.key(s.l.home(queue), keyQueues), queue) // in the same round
	var cmds []*redis.SliceCmd
	for _, p := range parts {
		cmds = append(cmds, pipe.HMGet(ctx, s.partKey(p, keyStats, "", day), fields...))
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
	// Timed out attempts count as failed ones (t is kept apart for the
	// metrics).
	st := ocypod.QueueStats{Created: uint64(sums[0]), Completed: uint64(sums[1]),
		Failed: uint64(sums[2] + sums[4]), Retries: uint64(sums[3])}
	for i, d := range []*ocypod.DurationStats{&st.Wait, &st.Run} {
		hist := sums[5+i*ocypod.HistogramBuckets : 5+(i+1)*ocypod.HistogramBuckets]
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

// minuteHour is the hour of t that names its per-minute counts ("sm:<hour>").
func minuteHour(t time.Time) string { return t.UTC().Format("2006-01-02T15") }

// QueueMinutes returns queue's jobs created, completed and failed (timed
// out included) in each of the ocypod.MinuteCount minutes up to the one of
// now (which is under way), summed over the queue's partitions. Each event
// costs one write when it happens (scripts/lib.lua's minute_count), a read
// one HMGET per partition and hour. Returns ocypod.QueueNotFound for a
// missing queue.
func (s *Store) QueueMinutes(ctx context.Context, queue string, now time.Time) (ocypod.MinuteStats, error) {
	fail := func(err error) (ocypod.MinuteStats, error) {
		return ocypod.MinuteStats{}, fmt.Errorf("redisstore: minute stats of %q: %w", queue, err)
	}
	if !ocypod.ValidQueueName(queue) {
		return fail(ocypod.InvalidQueueName())
	}
	last := now.UTC().Truncate(time.Minute)
	out := ocypod.MinuteStats{Start: last.Add(-(ocypod.MinuteCount - 1) * time.Minute)}
	// The minutes fall in two hours at most: one HMGET each.
	type slot struct {
		hour   string
		fields []string
		at     []int // the minute index of each field's triple
	}
	var slots []*slot
	for i := range ocypod.MinuteCount {
		t := out.Start.Add(time.Duration(i) * time.Minute)
		h := minuteHour(t)
		if len(slots) == 0 || slots[len(slots)-1].hour != h {
			slots = append(slots, &slot{hour: h})
		}
		sl := slots[len(slots)-1]
		m := strconv.Itoa(t.Minute())
		sl.fields = append(sl.fields, queue+" "+m+"c", queue+" "+m+"d", queue+" "+m+"f")
		sl.at = append(sl.at, i)
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	parts := s.listPartitions(ctx, queue)
	pipe := s.rdb.Pipeline()
	exists := pipe.HExists(ctx, s.l.key(s.l.home(queue), "q"), queue) // in the same round
	type read struct {
		sl  *slot
		cmd *redis.SliceCmd
	}
	var reads []read
	for _, p := range parts {
		for _, sl := range slots {
			reads = append(reads, read{sl, pipe.HMGet(ctx, s.l.key(p, "sm:"+sl.hour), sl.fields...)})
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fail(translate(err))
	}
	if !exists.Val() {
		return fail(ocypod.QueueNotFound(queue))
	}
	for _, r := range reads {
		for k, v := range r.cmd.Val() {
			str, ok := v.(string)
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(str, 10, 64)
			if err != nil {
				return fail(ocypod.Internal(fmt.Errorf("minute field %q: unreadable %q", r.sl.fields[k], truncate(str))))
			}
			i := r.sl.at[k/3]
			switch k % 3 {
			case 0:
				out.Created[i] += n
			case 1:
				out.Completed[i] += n
			default:
				out.Failed[i] += n
			}
		}
	}
	return out, nil
}

// QueueMetrics returns figures of each of queues for GET /metrics: its
// jobs created, completed, failed and timed out today (UTC, the day's
// statistics: they start again from zero each day), and how long the job
// queued longest has been queued (by the store's clock; 0 when none is).
// A queue with none of these anywhere is left out. One script per
// partition, in one pipelined round, O(queues × priority classes) each.
func (s *Store) QueueMetrics(ctx context.Context, queues []string) (map[string]ocypod.QueueMetrics, error) {
	type figures struct {
		C flexNum `json:"c"`
		D flexNum `json:"d"`
		F flexNum `json:"f"`
		T flexNum `json:"t"`
		O *string `json:"o"`
	}
	type metricsReply struct {
		Queues dict[figures] `json:"queues"`
	}
	out := map[string]ocypod.QueueMetrics{}
	if len(queues) == 0 {
		return out, nil
	}
	now := s.now()
	calls := make([]*call, s.l.P)
	outs := make([]any, s.l.P)
	for p := range s.l.P {
		calls[p] = &call{sc: scriptQueueMetric, p: p, now: now, args: &queueMetricsArgs{Queues: stringList(queues)}}
		outs[p] = new(metricsReply)
	}
	_, errs := s.runAll(ctx, calls, outs)
	for p := range s.l.P {
		if errs[p] != nil {
			return nil, fmt.Errorf("redisstore: queue metrics: %w", errs[p])
		}
		for q, f := range outs[p].(*metricsReply).Queues {
			m := out[q]
			for _, c := range []struct {
				n  flexNum
				to *uint64
			}{{f.C, &m.Created}, {f.D, &m.Completed}, {f.F, &m.Failed}, {f.T, &m.TimedOut}} {
				if n, err := c.n.uint(); err == nil {
					*c.to += n
				}
			}
			if f.O != nil {
				us, err := strconv.ParseInt(*f.O, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("redisstore: queue metrics: %w",
						ocypod.Internal(fmt.Errorf("queued time of %q: unreadable %q", q, truncate(*f.O))))
				}
				m.OldestQueued = max(m.OldestQueued, now.Sub(time.UnixMicro(us)))
			}
			out[q] = m
		}
	}
	return out, nil
}

// queueMetricsArgs is queue_metrics.lua's argument.
type queueMetricsArgs struct {
	Queues []string `json:"queues"`
}
