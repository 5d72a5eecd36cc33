package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Layout exposes a namespace's key names to the external tests, so they
// never spell a key themselves.
type Layout struct{ l *layout }

// LayoutOf returns the layout of namespace ns over P partitions.
func LayoutOf(ns string, P int) Layout { return Layout{layoutFor(ns, P)} }

// Key is the key called name (j, idx, run, ...) of partition p.
func (l Layout) Key(p int, name string) string { return l.l.key(p, name) }

// StatusCodes maps each status to its code in idx members (layout.go).
func StatusCodes() map[string]string {
	m := make(map[string]string, len(codeStatus))
	for code, st := range codeStatus {
		m[string(st)] = code
	}
	return m
}

// Prefix is the "{tag}:" of partition p.
func (l Layout) Prefix(p int) string { return l.l.pre[p] }

// Tag is the hash tag content of partition p.
func (l Layout) Tag(p int) string { return l.l.tags[p] }

// Home is the home partition of a queue.
func (l Layout) Home(queue string) int { return l.l.home(queue) }

// PartitionOf is the partition of a job id.
func (l Layout) PartitionOf(id uint64) int { return l.l.partitionOf(id) }

// ScriptIDs maps each script file to the SHA1 its EVALSHA uses and the
// function name its FCALL uses.
func ScriptIDs() map[string][2]string {
	m := make(map[string][2]string, len(loaded))
	for name, s := range loaded {
		b := s.get()
		m[name] = [2]string{b.rs.Hash(), b.fn}
	}
	return m
}

// SetCrashAfterCall makes s behave as a process that dies right after each
// script call: the effects it recorded are left in the outbox.
func SetCrashAfterCall(s *Store, on bool) { s.crashAfterCall = on }

// LayoutVersion is the layout version the store serves.
const LayoutVersion = layoutVersion

// SetUpgradeBatch makes s's upgrade convert n version-1 jobs per batch.
func SetUpgradeBatch(s *Store, n int) { s.upgradeBatch = n }

// SetUpgradeLease sets the lease of s's upgrade lock.
func SetUpgradeLease(s *Store, d time.Duration) { s.upgradeLease = d }

// KillUpgrade runs s's upgrade until it has converted n batches, then
// stops it as a killed process would: its lock stays held, not renewed,
// until its lease lapses.
func KillUpgrade(ctx context.Context, s *Store, n int) error {
	s.upgradeHooks.die = n
	defer func() { s.upgradeHooks.die = 0 }()
	if _, err := s.Upgrade(ctx, 0); !errors.Is(err, errUpgradeDied) {
		return fmt.Errorf("the upgrade did not stop after %d batches: %v", n, err)
	}
	return nil
}

// OnUpgradeBatch calls f after each batch s's upgrade converts.
func OnUpgradeBatch(s *Store, f func()) { s.upgradeHooks.afterBatch = f }

// OnUpgradeRenewed calls f after each renewal of s's upgrade lease.
func OnUpgradeRenewed(s *Store, f func()) { s.upgradeHooks.renewed = f }

// UpgradeLockKey is the key of the upgrade lock of namespace ns.
func UpgradeLockKey(ns string) string { return "{" + ns + "}:upgrade" }

// Shard is the partition of shard i of a queue whose home is home.
func (l Layout) Shard(home, i int) int { return l.l.shard(home, i) }

// CreateInShard creates one job in shard i of queue, as earlier versions
// placed a keyed job (in shard hash(key) mod shards): data such a version
// left for the current one to serve.
func CreateInShard(ctx context.Context, s *Store, queue string, i int, spec ocypod.JobSpec) (uint64, error) {
	now := s.now()
	a, err := specArgs(&spec, now)
	if err != nil {
		return 0, err
	}
	var got struct {
		IDs list[idStr] `json:"ids"`
	}
	r, err := s.run(ctx, &call{sc: scriptCreateJob, p: s.l.shard(s.l.home(queue), i), queue: queue, now: now,
		args: &createJobArgs{Specs: []*jobSpecArg{&a}}}, &got)
	if err == nil && r.Err != "" {
		err = refusal(r, 0, queue, nil)
	}
	if err != nil || len(got.IDs) != 1 {
		return 0, fmt.Errorf("create in shard %d: %v (%d ids)", i, err, len(got.IDs))
	}
	s.afterCall(ctx, r)
	return uint64(got.IDs[0]), nil
}

// OnPark calls f each time a long-polling take of s starts waiting
// between two attempts.
func OnPark(s *Store, f func()) { s.hub.onPark.Store(&f) }

// LongPolls is how many takes wait in s's hub now, and how many of them
// are between two attempts.
func LongPolls(s *Store) (waiting int, parked int64) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.hub.n, s.hub.parked.Load()
}

// Subscribed returns once s's long-poll subscription is confirmed, so that
// a take waiting after it is woken by messages alone (not by the look
// every waiter takes when the subscription starts). It stays up for a
// while after (hubLinger).
func Subscribed(tb interface{ Fatal(...any) }, s *Store) {
	w := s.hub.join([]string{"subscribed"})
	defer s.hub.leave(w, false)
	s.hub.mu.Lock()
	up := s.hub.up
	s.hub.mu.Unlock()
	select {
	case <-up:
	case <-time.After(10 * time.Second):
		tb.Fatal("the long-poll subscription was never confirmed")
	}
}

// SetLostAck makes s apply each outbox effect but leave it in its outbox
// and report a 503, as a process that dies between applying an effect and
// acknowledging it, or a call whose reply was lost after Redis ran it.
func SetLostAck(s *Store, on bool) { s.lostAck = on }

// FoldStats folds s's pending statistics of the minutes before now's, as
// the sweeps do, until none is left.
func FoldStats(ctx context.Context, s *Store, now time.Time) error {
	for p := range s.l.P {
		for {
			more, err := s.foldStats(ctx, p, now)
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	return nil
}

// UpgradeCountsCall runs one call of the upgrade step that counts queued
// jobs on partition p, counting up to limit queues (as a holder whose
// lease lapsed may still do).
func UpgradeCountsCall(ctx context.Context, s *Store, p, limit int) error {
	r, err := s.run(ctx, &call{sc: scriptUpCounts, p: p, args: &upCountsArgs{Limit: limit}}, nil)
	if err == nil && r.Err != "" {
		err = refusal(r, 0, "", nil)
	}
	return err
}
