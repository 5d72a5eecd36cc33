package redisstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// upgradeBatch is how many version-1 jobs one upgrade call converts
// (Store.upgradeBatch, when set, in tests).
const upgradeBatch = 200

// v1Statuses are the per-queue index sets version 1 kept.
var v1Statuses = []string{"running", "failed", "completed", "cancelled", "timed_out"}

// Layout versions and their upgrade.
//
// A namespace records its layout version in "{ns}:meta" (version-1 data has
// no record: Open recognises its keys). A store serves only the version it
// knows (layoutVersion); an older namespace is brought up by Upgrade, which
// runs the steps of upgradeSteps in order, each from one version to the
// next. A step is resumable and idempotent: it records its progress in
// Redis as it goes, can stop anywhere (budget spent, context cancelled, the
// process killed) and be run again from where it stopped, and its last
// write records the next version, so the namespace never reads as upgraded
// before it is. A step must also stay safe if a holder whose lease lapsed
// (a stalled process) still runs one more of its calls beside the holder
// that took over: each call converts items atomically and skips the ones
// already done.
//
// One process upgrades at a time, under the lock "{ns}:upgrade" (the
// namespace's own hash tag, whatever the partition count). The lock has a
// short lease that its holder renews while it works, so the lock of a
// killed holder lapses within seconds; the other processes wait (checking
// the version and the lock a few times per lease) and take over the moment
// it lapses, from the progress the step recorded. Nothing treats a held
// lock as done: Upgrade returns done only when the namespace has this
// version's layout.

// layoutVersion is the namespace layout this version of the store serves:
// 4 since each queue counts its queued jobs ("<queue> n" in q, indexes.lua's
// count_queued), which /info and sizes read: a process of version 3 would
// not keep the counts, so it must not share a namespace with this version.
// Version 3 gave each queued job its by-id idx member ("<queue> Q
// <lp(id)>", indexes.lua's by_id_member), which listings by id across
// statuses read; version 2 (0.3.0) had none.
const layoutVersion = 4

// upgradeStep brings a namespace from layout version from to from+1. run
// works until the step is done (true) or, if end is not zero, until end
// passes (false, its progress recorded). The step itself records version
// from+1 in "{ns}:meta", once everything is converted.
type upgradeStep struct {
	from int
	run  func(s *Store, ctx context.Context, end time.Time) (done bool, err error)
}

// upgradeSteps are the steps, in order: upgradeSteps[i] upgrades version
// i+1 to i+2.
var upgradeSteps = []upgradeStep{
	{from: 1, run: (*Store).upgradeV1},
	{from: 2, run: (*Store).upgradeV2},
	{from: layoutQueuedCounts - 1, run: (*Store).upgradeQueuedCounts},
}

// defaultUpgradeLease is the lease of the upgrade lock (Store.upgradeLease,
// when set, in tests): a killed upgrader's lock lapses after this long at
// most. It is at least five Redis timeouts, so that a holder renewing
// every third of it keeps it through a slow call.
const defaultUpgradeLease = 15 * time.Second

// errLeaseLost is the cause of an upgrade step's cancellation when its
// holder found its lease taken over.
var errLeaseLost = errors.New("the upgrade lock's lease lapsed and another process took it over")

// errUpgradeDied is the error of an upgrader that stopped as a killed
// process would (tests only, upgradeHooks.die): its lock stays held.
var errUpgradeDied = errors.New("the upgrader died")

// upgradeHooks are the upgrade's test hooks.
type upgradeHooks struct {
	// die, when set, makes the upgrade stop after that many batches as a
	// killed process would: no renewal, no release.
	die int
	// afterBatch, when set, is called after each batch's progress is
	// recorded.
	afterBatch func()
	// renewed, when set, is called after each renewal of the lease.
	renewed func()
}

// batch runs the hooks of the end of a batch.
func (u *upgradeHooks) batch() error {
	if u.afterBatch != nil {
		u.afterBatch()
	}
	if u.die > 0 {
		if u.die--; u.die == 0 {
			return errUpgradeDied
		}
	}
	return nil
}

// renewLease extends the lease of the upgrade lock KEYS[1] if the token
// ARGV[1] holds it, or takes it again if it lapsed and nobody took it
// (nobody else is working then); 0 if another process holds it.
var renewLease = redis.NewScript(`local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
elseif not v then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`)

// releaseLock deletes the upgrade lock KEYS[1] if the token ARGV[1] holds it.
var releaseLock = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// lease is the upgrade lock's lease.
func (s *Store) lease() time.Duration {
	if s.upgradeLease > 0 {
		return s.upgradeLease
	}
	return max(defaultUpgradeLease, 5*s.o.OpTimeout)
}

// upgradeLock is the upgrade lock's key.
func (s *Store) upgradeLock() string { return "{" + s.l.ns + "}:upgrade" }

// storedLayout reads the namespace's layout version: the one its record
// names, 1 for version-1 data (no record, version 1's keys), 0 for an
// empty namespace.
func (s *Store) storedLayout(ctx context.Context) (int, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	v, err := s.rdb.HGet(ctx, "{"+s.l.ns+"}:meta", "version").Result()
	if err != nil && !isNil(err) {
		return 0, translate(err)
	}
	if v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("namespace %q has layout version %q; this server knows version %d", s.l.ns, v, layoutVersion)
		}
		return n, nil
	}
	v1 := "{" + s.l.ns + "}:"
	n, err := s.rdb.Exists(ctx, v1+"job_id", v1+"queues").Result()
	if err != nil {
		return 0, translate(err)
	}
	if n > 0 {
		return 1, nil
	}
	return 0, nil
}

// upgradeHeld tells whether a process holds the upgrade lock now.
func (s *Store) upgradeHeld(ctx context.Context) (bool, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	n, err := s.rdb.Exists(ctx, s.upgradeLock()).Result()
	if err != nil {
		return false, translate(err)
	}
	return n > 0, nil
}

// Upgrade brings a namespace written by an earlier version of the store
// (Open reports it in OpenInfo.Upgrade) to this version's layout, step by
// step: for version-1 data, the first step converts queues and their
// settings, jobs in every status with their timestamps, input, output,
// tags and retry state (a pending retry keeps its due time), the queued
// jobs' order, the statistics and the id counter; for version-2 data
// (0.3.0's), the second gives every queued job its by-id idx member; for
// version 3, the third counts each queue's queued jobs. It
// records its progress in Redis as it goes and can stop (budget spent,
// context cancelled, a crash) and be started again any number of times:
// nothing is lost or doubled.
//
// One process upgrades at a time. While another holds the upgrade lock,
// Upgrade waits for it to finish, or takes over where it stopped once its
// lease lapses (a killed process's lease lapses within seconds).
//
// It returns done once the namespace has this version's layout (at once
// when it already had). A budget of zero works, or waits, until then or
// until ctx ends (an error); a positive budget also stops it when spent,
// working or waiting, with done false: the upgrade is unfinished and the
// store must not serve yet. Writers of an older version must be stopped
// first (they have no idea of the new layout).
func (s *Store) Upgrade(ctx context.Context, budget time.Duration) (done bool, err error) {
	fail := func(err error) (bool, error) { return false, fmt.Errorf("redisstore: upgrade: %w", err) }
	var end time.Time
	if budget > 0 {
		end = time.Now().Add(budget)
	}
	lease := s.lease()
	poll := min(max(lease/5, 10*time.Millisecond), time.Second)
	waiting := false
	for {
		v, err := s.storedLayout(ctx)
		switch {
		case err != nil:
			return fail(err)
		case v == layoutVersion:
			s.servable.Store(true)
			return true, nil
		case v == 0:
			return true, nil // empty: Open records the layout
		case v > layoutVersion:
			return fail(fmt.Errorf("namespace %q has layout version %d; this server knows version %d", s.l.ns, v, layoutVersion))
		}
		token := rand.Text()
		octx, cancel := s.opContext(ctx)
		got, err := s.rdb.SetNX(octx, s.upgradeLock(), token, lease).Result()
		cancel()
		if err != nil {
			return fail(translate(err))
		}
		if got {
			done, err := s.runSteps(ctx, token, lease, end)
			if errors.Is(err, errLeaseLost) {
				s.log.WarnContext(ctx, "upgrade: another process took the lock over; waiting for it", slog.String("namespace", s.l.ns))
				continue
			}
			if err != nil {
				return fail(err)
			}
			if done {
				s.servable.Store(true)
			}
			return done, nil
		}
		if !waiting {
			waiting = true
			s.log.InfoContext(ctx, "another process is upgrading the namespace: waiting for it to finish, or to take over if it stops",
				slog.String("namespace", s.l.ns), slog.Duration("lease", lease))
		}
		if !end.IsZero() && time.Now().Add(poll).After(end) {
			return false, nil
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return fail(&ocypod.Error{Kind: ocypod.KindUnavailable, Message: "stopped while waiting for another process's upgrade", Err: ctx.Err()})
		case <-t.C:
		}
	}
}

// runSteps runs the upgrade's steps under the lock that token holds,
// renewing its lease while they work, and releases it when they stop.
func (s *Store) runSteps(ctx context.Context, token string, lease time.Duration, end time.Time) (done bool, err error) {
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(lease / 3)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			octx, ocancel := s.opContext(wctx)
			ok, err := renewLease.Run(octx, s.rdb, []string{s.upgradeLock()}, token, lease.Milliseconds()).Int()
			ocancel()
			switch {
			case err == nil && ok == 1:
				last = time.Now()
				if s.upgradeHooks.renewed != nil {
					s.upgradeHooks.renewed()
				}
			case err == nil || time.Since(last) >= lease:
				// Taken over, or not renewed for a whole lease: another
				// process may be working now.
				cancel(errLeaseLost)
				return
			}
		}
	}()
	died := false
	defer func() {
		close(stop)
		<-renewed
		if died {
			return // as a killed process: the lock stays until its lease lapses
		}
		octx, ocancel := s.opContext(context.WithoutCancel(ctx))
		_ = releaseLock.Run(octx, s.rdb, []string{s.upgradeLock()}, token).Err()
		ocancel()
	}()
	for {
		// Read again under the lock: the holder before may have finished.
		v, err := s.storedLayout(wctx)
		if err == nil && v > layoutVersion {
			err = fmt.Errorf("namespace %q has layout version %d; this server knows version %d", s.l.ns, v, layoutVersion)
		}
		if err != nil {
			return false, leaseErr(wctx, err)
		}
		if v == 0 || v == layoutVersion {
			return true, nil
		}
		step := upgradeSteps[v-1]
		s.log.InfoContext(ctx, "upgrading the namespace's layout", slog.String("namespace", s.l.ns),
			slog.Int("from", step.from), slog.Int("to", step.from+1))
		done, err := step.run(s, wctx, end)
		if errors.Is(err, errUpgradeDied) {
			died = true
			return false, err
		}
		if err != nil {
			return false, leaseErr(wctx, err)
		}
		if !done {
			return false, nil
		}
		s.log.InfoContext(ctx, "namespace upgraded", slog.String("namespace", s.l.ns), slog.Int("version", step.from+1))
	}
}

// leaseErr is errLeaseLost when the step's context was cancelled because
// the lease was lost, else err.
func leaseErr(wctx context.Context, err error) error {
	if context.Cause(wctx) == errLeaseLost {
		return errLeaseLost
	}
	return err
}

// upgradeV1 is the step from version 1 (one hash per job, per-queue index
// sets) to version 2: queues and their settings, jobs in every status with
// their timestamps, input, output, tags and retry state (a pending retry
// keeps its due time), the queued jobs' order (ahead of any job created
// afterwards), the statistics and the id counter. It works in batches of a
// few hundred jobs and records its progress ({ns}:v1up) after each: a job
// is converted and its version-1 hash deleted in one script, so a batch
// run again (after a crash, or by a holder whose lease lapsed) skips what
// is done, and nothing is lost or doubled. Its last call (finish) moves the
// totals and the id counter and records version 2.
func (s *Store) upgradeV1(ctx context.Context, end time.Time) (done bool, err error) {
	fail := func(err error) (bool, error) { return false, fmt.Errorf("version 1 to 2: %w", err) }
	if s.l.P != 1 {
		return fail(fmt.Errorf("version-1 data upgrades with partitions 1 only"))
	}
	v1 := "{" + s.l.ns + "}:"
	progress := v1 + "v1up"
	octx, cancel := s.opContext(ctx)
	names, err := s.rdb.SUnion(octx, v1+"queues", v1+"jobqueues").Result()
	cancel()
	if err != nil {
		return fail(translate(err))
	}
	for _, q := range names {
		if _, err := s.upgradeCall(ctx, &upgradeQueueArgs{Op: "queue", Name: q}, v1+"queue:"+q); err != nil {
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
		batchSeq := map[string]string{}
		for id := next; id <= hi; id++ {
			sid := strconv.FormatInt(id, 10)
			ids = append(ids, sid)
			keys = append(keys, v1+"job:"+sid)
			if sq, ok := seq[sid]; ok {
				batchSeq[sid] = sq
			}
		}
		n, err := s.upgradeCall(ctx, &upgradeJobsArgs{Op: "jobs", IDs: ids, Seq: batchSeq}, append(keys, v1+"failed")...)
		if err != nil {
			return fail(err)
		}
		octx, cancel = s.opContext(ctx)
		err = s.rdb.HSet(octx, progress, "next", hi+1).Err()
		cancel()
		if err != nil {
			return fail(translate(err))
		}
		s.log.InfoContext(ctx, "upgrading version-1 data", slog.Int64("jobs_through", hi), slog.Int64("last_job", last), slog.Int("converted", n))
		if err := s.upgradeHooks.batch(); err != nil {
			return false, err
		}
		if !end.IsZero() && time.Now().After(end) {
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
	// (v1up:lock is the lock of the upgraders of 0.3.0 and earlier.)
	old = append(old, v1+"queues", v1+"jobqueues", v1+"seq", v1+"running", v1+"failed", v1+"ended", v1+"v1up:lock")
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
	if _, err := s.upgradeCall(ctx, &upgradeArgs{Op: "finish"}, v1+"stats", v1+"job_id"); err != nil {
		return fail(err)
	}
	if err := s.rdb.Del(octx, progress).Err(); err != nil && !isNil(err) {
		return fail(translate(err))
	}
	return true, nil
}

// upgradeCall runs one upgrade.lua call with the version-1 keys v1keys.
func (s *Store) upgradeCall(ctx context.Context, args any, v1keys ...string) (int, error) {
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

// upgradeV2 is the step from version 2 to version 3: every queued job gets
// its by-id idx member ("<queue> Q <lp(id)>"). Partition by partition, a
// batch of queued jobs per upgrade.lua call, queue by queue: each call
// records where it stopped in the partition's counters (ctr "v3m", "v3d"
// once the partition is done) in the same script, so a call run again
// (after a crash, or by a holder whose lease lapsed) goes on from there,
// and adding a member twice changes nothing. Once every partition is done
// the layout is marked version 3.
func (s *Store) upgradeV2(ctx context.Context, end time.Time) (done bool, err error) {
	fail := func(err error) (bool, error) { return false, fmt.Errorf("version 2 to 3: %w", err) }
	batch := cmp.Or(s.upgradeBatch, upgradeBatch)
	if done, err := s.partitionBatches(ctx, end, 3, "queued jobs' by-id entries", func(p int) *call {
		return &call{sc: scriptUpgrade, p: p, args: &upgradeArgs{Op: "by_id", Limit: batch}}
	}); err != nil {
		return fail(err)
	} else if !done {
		return false, nil
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	// The listing mode of the builds between 0.3.0 and this layout goes.
	pipe := s.rdb.TxPipeline()
	pipe.HDel(octx, "{"+s.l.ns+"}:meta", "listing")
	pipe.HSet(octx, "{"+s.l.ns+"}:meta", "version", "3")
	if _, err := pipe.Exec(octx); err != nil {
		return fail(translate(err))
	}
	for p := range s.l.P {
		if err := s.rdb.HDel(octx, s.l.key(p, keyCounters), "v3m", "v3d", "bym", "byd").Err(); err != nil {
			return fail(translate(err))
		}
	}
	return true, nil
}

// upgradeArgs is upgrade.lua's argument for the ops "finish" (the version-1
// totals and id counter move) and "by_id" (up to Limit, > 0, queued jobs
// get their by-id entries).
type upgradeArgs struct {
	Op    string `json:"op"`
	Limit int    `json:"limit,omitempty"`
}

// upgradeQueueArgs is upgrade.lua's argument to convert version-1 queue
// Name.
type upgradeQueueArgs struct {
	Op   string `json:"op"` // queue
	Name string `json:"name"`
}

// upgradeJobsArgs is upgrade.lua's argument to convert version-1 jobs:
// their ids and their queued places (id -> score).
type upgradeJobsArgs struct {
	Op  string            `json:"op"` // jobs
	IDs []string          `json:"ids"`
	Seq map[string]string `json:"seq"`
}

// partitionBatches runs the batched script of the step to layout version
// to, partition by partition:
// the call of partition p (next) converts a batch and answers {done, more};
// the partition's calls go on while more is set. It reports false (and no
// error) when end passes first; the step, resumable, goes on from there
// the next time. Each batch is logged (what the step converts) and passes
// the test hook upgradeHooks.batch.
func (s *Store) partitionBatches(ctx context.Context, end time.Time, to int, what string, next func(p int) *call) (bool, error) {
	for p := range s.l.P {
		for {
			var got struct {
				Done int  `json:"done"`
				More bool `json:"more"`
			}
			r, err := s.run(ctx, next(p), &got)
			if err != nil {
				return false, err
			}
			if r.Err != "" {
				return false, refusal(r, 0, "", nil)
			}
			s.log.InfoContext(ctx, "upgrading to layout version "+strconv.Itoa(to)+": "+what,
				slog.Int("partition", p), slog.Int("converted", got.Done), slog.Bool("more", got.More))
			if err := s.upgradeHooks.batch(); err != nil {
				return false, err
			}
			if !got.More {
				break
			}
			if !end.IsZero() && time.Now().After(end) {
				return false, nil
			}
		}
	}
	return true, nil
}
