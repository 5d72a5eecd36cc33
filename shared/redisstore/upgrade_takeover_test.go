package redisstore_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// signalLog is a log that closes seen the first time a line contains want.
type signalLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	once sync.Once
	seen chan struct{}
}

func newSignalLog(want string) *signalLog { return &signalLog{want: want, seen: make(chan struct{})} }

func (l *signalLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if bytes.Contains(p, []byte(l.want)) {
		l.once.Do(func() { close(l.seen) })
	}
	return l.buf.Write(p)
}

func (l *signalLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// upgradeBackends are the Redis servers the upgrade's lock tests run on;
// mini is set for miniredis, whose key TTLs move only when told.
var upgradeBackends = []struct {
	name   string
	client func(t *testing.T) (redis.UniversalClient, *miniredis.Miniredis)
}{
	{"redis", func(t *testing.T) (redis.UniversalClient, *miniredis.Miniredis) {
		return redistest.Shared(t).Client(), nil
	}},
	{"cluster", func(t *testing.T) (redis.UniversalClient, *miniredis.Miniredis) {
		return redistest.SharedCluster(t).Client(), nil
	}},
	{"miniredis", func(t *testing.T) (redis.UniversalClient, *miniredis.Miniredis) {
		m, c := redistest.Miniredis(t)
		return c, m
	}},
}

// v1Jobs returns the jobs of testdata/v1.json by id.
func v1Jobs(t *testing.T, entries []v1Entry) map[uint64]map[string]string {
	t.Helper()
	jobs := map[uint64]map[string]string{}
	for _, e := range entries {
		if strings.HasPrefix(e.Key, "{v1}:job:") {
			var v map[string]string
			if err := json.Unmarshal(e.Value, &v); err != nil {
				t.Fatal(err)
			}
			id, _ := strconv.ParseUint(v["id"], 10, 64)
			jobs[id] = v
		}
	}
	return jobs
}

// checkV1Jobs fails t unless s serves every job of jobs as version 1 had
// it, and a new job gets an id above all of theirs without touching them.
func checkV1Jobs(t *testing.T, h *harness, s *redisstore.Store, jobs map[uint64]map[string]string) {
	t.Helper()
	var maxID uint64
	check := func(when string) {
		t.Helper()
		for id, v := range jobs {
			maxID = max(maxID, id)
			j, err := s.GetJob(h.ctx, id)
			if err != nil {
				t.Errorf("%s: job %d: %v", when, id, err)
				continue
			}
			created, _ := strconv.ParseInt(v["created_at"], 10, 64)
			if string(j.Status) != v["status"] || j.Queue != v["queue"] || !j.CreatedAt.Equal(time.UnixMicro(created)) {
				t.Errorf("%s: job %d = %s in %s created %v, version 1 had %v", when, id, j.Status, j.Queue, j.CreatedAt, v)
			}
			if in := v["input"]; in != "" && string(j.Input) != in {
				t.Errorf("%s: job %d input = %s, want %s", when, id, j.Input, in)
			}
		}
	}
	check("after the upgrade")
	c, err := s.CreateJob(h.ctx, "mail", ocypod.JobSpec{Input: json.RawMessage(`"new"`)})
	if err != nil {
		t.Fatal(err)
	}
	if c.ID <= maxID {
		t.Errorf("a new job got id %d, want above version 1's %d", c.ID, maxID)
	}
	check("after a create")
}

// TestUpgradeTakeoverAfterKill: an upgrade killed half-way leaves its lock
// held; a process started within the lease must wait (the namespace still
// reports an unfinished upgrade), take over once the lease lapses, finish
// from where the dead one stopped, and only then report done: every job is
// there and a new job gets a fresh id.
func TestUpgradeTakeoverAfterKill(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	for _, b := range upgradeBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rdb, mini := b.client(t)
			h := newHarness(t, rdb, 1, redisstore.Options{})
			jobs := v1Jobs(t, h.loadV1())
			redisstore.SetUpgradeBatch(h.s, 4)
			redisstore.SetUpgradeLease(h.s, lease)
			if err := redisstore.KillUpgrade(h.ctx, h.s, 2); err != nil {
				t.Fatal(err)
			}

			// The second process, started while the dead one's lease runs.
			logs := newSignalLog("waiting for it to finish")
			s, err := redisstore.New(rdb, redisstore.Options{Namespace: h.ns, Partitions: 1, Now: h.clock.Now,
				Logger: slog.New(slog.NewTextHandler(logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			redisstore.SetUpgradeBatch(s, 4)
			redisstore.SetUpgradeLease(s, lease)
			info, err := s.Open(h.ctx)
			if err != nil || !info.Upgrade || !info.Upgrading {
				t.Fatalf("Open during the dead upgrader's lease = %+v, %v; want an unfinished upgrade, under way", info, err)
			}
			type result struct {
				done bool
				err  error
			}
			res := make(chan result, 1)
			go func() {
				done, err := s.Upgrade(h.ctx, 0)
				res <- result{done, err}
			}()
			select {
			case r := <-res:
				t.Fatalf("Upgrade = %v, %v while the killed upgrader's lease ran: it must wait for the lease to lapse, then take over\n%s", r.done, r.err, logs)
			case <-logs.seen:
			case <-time.After(30 * time.Second):
				t.Fatalf("Upgrade neither waited nor returned\n%s", logs)
			}
			if info, err := s.Open(h.ctx); err != nil || !info.Upgrade {
				t.Fatalf("Open while the second process waits = %+v, %v; want an unfinished upgrade", info, err)
			}
			if mini != nil {
				// miniredis' TTLs move only when told: the lease cannot
				// have lapsed, so the upgrade cannot have finished.
				select {
				case r := <-res:
					t.Fatalf("Upgrade = %v, %v before the dead upgrader's lease lapsed", r.done, r.err)
				default:
				}
				mini.FastForward(lease)
			}
			var r result
			select {
			case r = <-res:
			case <-time.After(30 * time.Second):
				t.Fatalf("Upgrade did not take over after the lease lapsed\n%s", logs)
			}
			if !r.done || r.err != nil {
				t.Fatalf("Upgrade after the lease lapsed = %v, %v, want done\n%s", r.done, r.err, logs)
			}
			if info, err := s.Open(h.ctx); err != nil || info.Upgrade {
				t.Fatalf("Open after the upgrade = %+v, %v", info, err)
			}
			if n := rdb.Exists(h.ctx, redisstore.UpgradeLockKey(h.ns)).Val(); n != 0 {
				t.Errorf("the upgrade lock is still held after the upgrade")
			}
			checkV1Jobs(t, h, s, jobs)
		})
	}
}

// TestUpgradeWaitsForLiveHolder: an upgrader that works longer than its
// lease keeps the lock by renewing it; a second process waits all along
// (never takes over, never reports done) and reports done once the first
// has finished.
func TestUpgradeWaitsForLiveHolder(t *testing.T) {
	t.Parallel()
	for _, b := range upgradeBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rdb, _ := b.client(t)
			waitsForLiveHolder(t, newHarness(t, rdb, 1, redisstore.Options{}))
		})
	}
}

// waitsForLiveHolder is TestUpgradeWaitsForLiveHolder on h's Redis (on
// miniredis, whose TTLs stand still, it shows the renewals work there).
func waitsForLiveHolder(t *testing.T, h *harness) {
	const lease = 2 * time.Second
	jobs := v1Jobs(t, h.loadV1())
	redisstore.SetUpgradeBatch(h.s, 4)
	redisstore.SetUpgradeLease(h.s, lease)
	inBatch, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	redisstore.OnUpgradeBatch(h.s, func() {
		once.Do(func() {
			close(inBatch)
			<-release
		})
	})
	renewals := make(chan struct{}, 100)
	redisstore.OnUpgradeRenewed(h.s, func() { renewals <- struct{}{} })
	type result struct {
		done bool
		err  error
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		done, err := h.s.Upgrade(h.ctx, 0)
		first <- result{done, err}
	}()
	select {
	case <-inBatch:
	case r := <-first:
		t.Fatalf("the first upgrade = %v, %v before its first batch ended", r.done, r.err)
	}
	logs := newSignalLog("waiting for it to finish")
	s, err := redisstore.New(h.rdb, redisstore.Options{Namespace: h.ns, Partitions: 1, Now: h.clock.Now,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	redisstore.SetUpgradeLease(s, lease)
	go func() {
		done, err := s.Upgrade(h.ctx, 0)
		second <- result{done, err}
	}()
	select {
	case r := <-second:
		close(release)
		t.Fatalf("the second upgrade = %v, %v while the first worked: it must wait\n%s", r.done, r.err, logs)
	case <-logs.seen:
	}
	// More than a lease goes by while the first holds its batch: only its
	// renewals keep the lock.
	for range 4 {
		select {
		case <-renewals:
		case <-time.After(30 * time.Second):
			close(release)
			t.Fatal("the first upgrader does not renew its lease")
		}
	}
	select {
	case r := <-second:
		close(release)
		t.Fatalf("the second upgrade = %v, %v while the first, alive, held the lock\n%s", r.done, r.err, logs)
	default:
	}
	if info, err := s.Open(h.ctx); err != nil || !info.Upgrade || !info.Upgrading {
		t.Errorf("Open while the first upgrades = %+v, %v; want an unfinished upgrade, under way", info, err)
	}
	close(release)
	for name, ch := range map[string]chan result{"first": first, "second": second} {
		select {
		case r := <-ch:
			if !r.done || r.err != nil {
				t.Errorf("the %s upgrade = %v, %v, want done", name, r.done, r.err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the %s upgrade did not return\n%s", name, logs)
		}
	}
	if strings.Contains(logs.String(), "upgrading version-1 data") {
		t.Errorf("the second process converted jobs while the first held the lock:\n%s", logs)
	}
	checkV1Jobs(t, h, s, jobs)
}
