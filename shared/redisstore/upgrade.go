package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"
)

// upgradeBatch is how many version-1 jobs one upgrade call converts
// (Store.upgradeBatch, when set, in tests).
const upgradeBatch = 200

// v1Statuses are the per-queue index sets version 1 kept.
var v1Statuses = []string{"running", "failed", "completed", "cancelled", "timed_out"}

// Upgrade converts a namespace written by version 1 of the store (Open
// reports it in OpenInfo.Upgrade) into this layout: queues and their
// settings, jobs in every status with their timestamps, input, output, tags
// and retry state (a pending retry keeps its due time), the queued jobs'
// order (ahead of any job created afterwards), the statistics and the id
// counter. It works in batches of a few hundred jobs, records its progress
// in Redis after each, and can stop (budget spent, context cancelled, a
// crash) and be started again any number of times: a job is converted and
// its version-1 hash deleted in one script, so nothing is lost or doubled.
// It returns done once the namespace is version 2. Version-1 writers must
// be stopped first (the version-1 store has no idea of the new layout).
func (s *Store) Upgrade(ctx context.Context, budget time.Duration) (done bool, err error) {
	fail := func(err error) (bool, error) { return false, fmt.Errorf("redisstore: upgrade: %w", err) }
	if s.l.P != 1 {
		return fail(fmt.Errorf("version-1 data upgrades with partitions 1 only"))
	}
	end := time.Now().Add(budget)
	v1 := "{" + s.l.ns + "}:"
	progress := v1 + "v1up"
	// One upgrader at a time (the sweepers start together): the others
	// return and try again on their next run.
	lock, hold := v1+"v1up:lock", max(budget, time.Minute)+time.Minute
	octx, cancel := s.opContext(ctx)
	got, err := s.rdb.SetNX(octx, lock, "1", hold).Result()
	cancel()
	if err != nil {
		return fail(translate(err))
	}
	if !got {
		return false, nil
	}
	defer func() {
		octx, cancel := s.opContext(context.WithoutCancel(ctx))
		s.rdb.Del(octx, lock)
		cancel()
	}()
	octx, cancel = s.opContext(ctx)
	names, err := s.rdb.SUnion(octx, v1+"queues", v1+"jobqueues").Result()
	cancel()
	if err != nil {
		return fail(translate(err))
	}
	for _, q := range names {
		if _, err := s.upgradeCall(ctx, map[string]any{"op": "queue", "name": q}, v1+"queue:"+q); err != nil {
			return fail(err)
		}
	}
	seq := map[string]string{}
	for _, q := range names {
		octx, cancel := s.opContext(ctx)
		zs, err := s.rdb.ZRangeWithScores(octx, v1+"queue:"+q+":jobs", 0, -1).Result()
		cancel()
		if err != nil {
			return fail(translate(err))
		}
		for _, z := range zs {
			seq[z.Member.(string)] = strconv.FormatFloat(z.Score, 'f', -1, 64)
		}
	}
	for {
		octx, cancel := s.opContext(ctx)
		next, err1 := s.rdb.HGet(octx, progress, "next").Int64()
		last, err2 := s.rdb.Get(octx, v1+"job_id").Int64()
		cancel()
		if err1 != nil && !isNil(err1) || err2 != nil && !isNil(err2) {
			return fail(translate(fmt.Errorf("%w %w", err1, err2)))
		}
		next = max(next, 1)
		if next > last {
			break
		}
		hi := min(next+int64(cmp.Or(s.upgradeBatch, upgradeBatch))-1, last)
		ids := make([]string, 0, hi-next+1)
		keys := make([]string, 0, hi-next+2)
		batchSeq := map[string]any{}
		for id := next; id <= hi; id++ {
			sid := strconv.FormatInt(id, 10)
			ids = append(ids, sid)
			keys = append(keys, v1+"job:"+sid)
			if sq, ok := seq[sid]; ok {
				batchSeq[sid] = sq
			}
		}
		n, err := s.upgradeCall(ctx, map[string]any{"op": "jobs", "ids": ids, "seq": batchSeq}, append(keys, v1+"failed")...)
		if err != nil {
			return fail(err)
		}
		// The progress, and the lock held for another while.
		octx, cancel = s.opContext(ctx)
		pipe := s.rdb.Pipeline()
		pipe.HSet(octx, progress, "next", hi+1)
		pipe.Expire(octx, lock, hold)
		_, err = pipe.Exec(octx)
		cancel()
		if err != nil {
			return fail(translate(err))
		}
		s.log.InfoContext(ctx, "upgrading version-1 data", slog.Int64("jobs_through", hi), slog.Int64("last_job", last), slog.Int("converted", n))
		if budget > 0 && time.Now().After(end) {
			return false, nil
		}
	}
	// Every job is converted: the version-1 indexes go, then the totals and
	// the counter move and the layout is marked version 2.
	var old []string
	for _, q := range names {
		old = append(old, v1+"queue:"+q, v1+"queue:"+q+":jobs")
		for _, st := range v1Statuses {
			old = append(old, v1+"queue:"+q+":"+st)
		}
	}
	old = append(old, v1+"queues", v1+"jobqueues", v1+"seq", v1+"running", v1+"failed", v1+"ended")
	octx, cancel = s.opContext(ctx)
	defer cancel()
	iter := s.rdb.Scan(octx, 0, v1+"tag:*", 1000).Iterator()
	for iter.Next(octx) {
		old = append(old, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return fail(translate(err))
	}
	for len(old) > 0 {
		n := min(len(old), 500)
		if err := s.rdb.Unlink(octx, old[:n]...).Err(); err != nil {
			return fail(translate(err))
		}
		old = old[n:]
	}
	if _, err := s.upgradeCall(ctx, map[string]any{"op": "finish"}, v1+"stats", v1+"job_id"); err != nil {
		return fail(err)
	}
	if err := s.rdb.Del(octx, progress).Err(); err != nil && !isNil(err) {
		return fail(translate(err))
	}
	s.log.InfoContext(ctx, "version-1 data upgraded", slog.String("namespace", s.l.ns))
	return true, nil
}

// upgradeCall runs one upgrade.lua call with the version-1 keys v1keys.
func (s *Store) upgradeCall(ctx context.Context, args map[string]any, v1keys ...string) (int, error) {
	var got struct {
		Done int `json:"done"`
	}
	r, err := s.run(ctx, &call{sc: scriptUpgrade, p: 0, args: args, extra: v1keys}, &got)
	if err != nil {
		return 0, err
	}
	if r.Err != "" {
		return 0, refusal(r, 0, "", nil)
	}
	return got.Done, nil
}
