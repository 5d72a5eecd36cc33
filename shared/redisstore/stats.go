package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// QueueStats returns queue's statistics of the UTC day of day (qless's
// stats): jobs created, completed, failed (timed out included) and retried, and the wait (queued
// to taken) and run (taken to ended, every attempt) times as count, mean,
// variance (of the day's population, in seconds) and histogram. Each event
// costs one write (stats.lua: a take its wait's bucket, an end its run's
// bucket by outcome); the mean and variance are computed from the
// histogram, each duration counted at the middle of its bucket (to the
// second under a minute, the minute under an hour...). A day is kept
// Options.StatsDays. A read is one transaction per partition: the day's
// hash and the pending counts (summed where they count, foldStats).
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
	at := make(map[string]int, len(fields))
	for i, f := range fields {
		at[f] = i
	}
	d := day.UTC()
	dayNo := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC).Unix() / 86400
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	var exists *redis.BoolCmd
	var cmds []*redis.SliceCmd
	var pend []*redis.MapStringStringCmd
	// The queue's partitions, its home first, where its existence is read.
	home := s.l.home(queue)
	err := s.readTx(ctx, s.listPartitions(ctx, queue), func(pipe redis.Pipeliner, p int) {
		if p == home {
			exists = pipe.HExists(ctx, s.l.key(p, keyQueues), queue)
		}
		cmds = append(cmds, pipe.HMGet(ctx, s.partKey(p, keyStats, "", day), fields...))
		pend = append(pend, pipe.HGetAll(ctx, s.l.key(p, keyPending)))
	})
	if err != nil {
		return fail(translate(err))
	}
	if exists == nil || !exists.Val() {
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
	for _, c := range pend {
		for f, v := range c.Val() {
			ps, ok := parsePending(f)
			if !ok || ps.queue != queue || ps.minute/1440 != dayNo {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fail(ocypod.Internal(fmt.Errorf("pending stats field %q: unreadable %q", f, truncate(v))))
			}
			if w := pendingCodes[ps.code]; w.day != "" {
				sums[at[queue+" "+w.day]] += float64(n)
			}
			if i, ok := at[queue+" "+statRun+ps.bucket]; ok && ps.bucket != "" {
				sums[i] += float64(n)
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

// minuteTTL is how long the per-minute counts of a minute are kept
// (stats.lua's MINUTE_TTL).
const minuteTTL = 2 * time.Hour

// QueueMinutes returns queue's jobs created, completed and failed (timed
// out included) in each of the ocypod.MinuteCount minutes up to the one of
// now (which is under way), summed over the queue's partitions. Each event
// costs one write when it happens (stats.lua), a read one transaction per
// partition: an HMGET per hour and the pending counts (foldStats). Returns
// ocypod.QueueNotFound for a missing queue.
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
		sl.fields = append(sl.fields, queue+" "+m+minuteCreated, queue+" "+m+minuteCompleted, queue+" "+m+minuteFailed)
		sl.at = append(sl.at, i)
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	type read struct {
		sl  *slot
		cmd *redis.SliceCmd
	}
	var exists *redis.BoolCmd
	var reads []read
	var pend []*redis.MapStringStringCmd
	// The queue's partitions, its home first, where its existence is read.
	home := s.l.home(queue)
	err := s.readTx(ctx, s.listPartitions(ctx, queue), func(pipe redis.Pipeliner, p int) {
		if p == home {
			exists = pipe.HExists(ctx, s.l.key(p, keyQueues), queue)
		}
		for _, sl := range slots {
			reads = append(reads, read{sl, pipe.HMGet(ctx, s.l.key(p, keyMinutes+":"+sl.hour), sl.fields...)})
		}
		pend = append(pend, pipe.HGetAll(ctx, s.l.key(p, keyPending)))
	})
	if err != nil {
		return fail(translate(err))
	}
	if exists == nil || !exists.Val() {
		return fail(ocypod.QueueNotFound(queue))
	}
	counts := map[string]*[ocypod.MinuteCount]uint64{
		minuteCreated: &out.Created, minuteCompleted: &out.Completed, minuteFailed: &out.Failed}
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
	first := out.Start.Unix() / 60
	for _, c := range pend {
		for f, v := range c.Val() {
			ps, ok := parsePending(f)
			i := ps.minute - first
			if !ok || ps.queue != queue || i < 0 || i >= ocypod.MinuteCount || pendingCodes[ps.code].minute == "" {
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return fail(ocypod.Internal(fmt.Errorf("pending stats field %q: unreadable %q", f, truncate(v))))
			}
			counts[pendingCodes[ps.code].minute][i] += n
		}
	}
	return out, nil
}

// pendingStat is a field of keyPending split (stats.lua's parse_pending):
// events of queue in one minute (since the epoch), of code (a key of
// pendingCodes) with the run time's bucket ("" for none).
type pendingStat struct {
	queue  string
	minute int64
	code   string
	bucket string
}

// parsePending splits a keyPending field "<queue> <minute> <code><bucket>";
// false when it is not one.
func parsePending(f string) (pendingStat, bool) {
	q, rest, ok := strings.Cut(f, " ")
	if !ok || q == "" {
		return pendingStat{}, false
	}
	m, rest, ok := strings.Cut(rest, " ")
	if !ok || !digits(m) || m == "" || rest == "" {
		return pendingStat{}, false
	}
	minute, err := strconv.ParseInt(m, 10, 64)
	if err != nil {
		return pendingStat{}, false
	}
	ps := pendingStat{queue: q, minute: minute, code: rest[:1], bucket: rest[1:]}
	if _, ok := pendingCodes[ps.code]; !ok || !digits(ps.bucket) {
		return pendingStat{}, false
	}
	return ps, true
}

// digits tells whether s is only decimal digits (or empty).
func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// readTx reads partitions parts each in one transaction (MULTI/EXEC), so
// that the keys read of a partition are seen at one moment (a fold moves
// counts from one to others): read adds a partition's reads to pipe. On a
// cluster each partition's transaction goes to its node, all at once;
// elsewhere they all go in one.
func (s *Store) readTx(ctx context.Context, parts []int, read func(pipe redis.Pipeliner, p int)) error {
	_, cluster := s.rdb.(*redis.ClusterClient)
	var pipes []redis.Pipeliner
	for i, p := range parts {
		if i == 0 || cluster {
			pipes = append(pipes, s.rdb.TxPipeline())
		}
		read(pipes[len(pipes)-1], p)
	}
	errs := make([]error, len(pipes))
	var wg sync.WaitGroup
	for i, pp := range pipes {
		wg.Go(func() { _, errs[i] = pp.Exec(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// foldDue folds the pending statistics of every partition (foldStats),
// once per minute of the store's clock: each sweep calls it, so whichever
// sweeps run, the statistics wait a minute or two at most to be folded,
// and the reads, which add what is pending, stay cheap. more reports that
// some were left for the next call.
func (s *Store) foldDue(ctx context.Context) (more bool, err error) {
	now := s.now()
	minute := now.UnixMilli() / 60000
	if s.folded.Load() >= minute {
		return false, nil
	}
	for p := range s.l.P {
		m, err := s.foldStats(ctx, p, now)
		if err != nil {
			return false, err
		}
		more = more || m
	}
	if !more {
		s.folded.Store(minute)
	}
	return more, nil
}

// foldBatch is how many pending statistics fields one fold_stats.lua call
// folds, and foldCalls how many calls one sweep of a partition makes at
// most.
const (
	foldBatch = 500
	foldCalls = 20
)

// foldStats folds the pending statistics of partition p (keyPending,
// stats.lua) of the minutes before now's into the figures they count in:
// the totals, the statistics of their day and, for the minutes of the last
// two hours, the per-minute counts. Each field is moved by one
// fold_stats.lua call, atomically: every read sees it once, pending or
// folded, and two sweeps folding at once fold it once. more reports that
// some were left for the next sweep.
func (s *Store) foldStats(ctx context.Context, p int, now time.Time) (more bool, err error) {
	octx, cancel := s.opContext(ctx)
	names, err := s.rdb.HKeys(octx, s.l.key(p, keyPending)).Result()
	cancel()
	if err != nil {
		return false, translate(err)
	}
	type item struct {
		f      string
		minute int64
	}
	cur := now.UnixMilli() / 60000
	var items []item
	for _, f := range names {
		if ps, ok := parsePending(f); ok && ps.minute < cur {
			items = append(items, item{f, ps.minute})
		}
	}
	slices.SortFunc(items, func(a, b item) int { return cmp.Compare(a.minute, b.minute) })
	for calls := 0; len(items) > 0; calls++ {
		if calls == foldCalls {
			return true, nil
		}
		n := min(len(items), foldBatch)
		var keys []string
		index := map[string]int{}
		key := func(k string) int {
			if i, ok := index[k]; ok {
				return i
			}
			keys = append(keys, k)
			index[k] = len(keys)
			return len(keys)
		}
		args := &foldStatsArgs{Fields: make([]foldField, 0, n)}
		for _, it := range items[:n] {
			t := time.Unix(it.minute*60, 0).UTC()
			f := foldField{field: it.f, day: key(s.partKey(p, keyStats, "", t))}
			if now.Sub(t) < minuteTTL {
				f.hour = key(s.partKey(p, keyMinutes, "", t))
			}
			args.Fields = append(args.Fields, f)
		}
		r, err := s.run(ctx, &call{sc: scriptFoldStats, p: p, now: now, extra: keys, args: args}, nil)
		if err != nil {
			return false, err
		}
		if r.Err != "" {
			return false, refusal(r, 0, "", nil)
		}
		items = items[n:]
	}
	return false, nil
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

// foldStatsArgs is fold_stats.lua's argument: the pending fields to fold.
type foldStatsArgs struct {
	Fields []foldField `json:"fields"`
}

// foldField is a pending field to fold with the KW indexes of the hashes
// of its minute's day and hour (0: none), written [field, day, hour].
type foldField struct {
	field     string
	day, hour int
}

func (f foldField) MarshalJSON() ([]byte, error) { return json.Marshal([]any{f.field, f.day, f.hour}) }

// queueMetricsArgs is queue_metrics.lua's argument.
type queueMetricsArgs struct {
	Queues []string `json:"queues"`
}
