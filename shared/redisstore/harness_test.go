package redisstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

var _ httpapi.Store = (*redisstore.Store)(nil)

func TestMain(m *testing.M) { redistest.Main(m) }

// t0 is the test clock's start: whole seconds plus microseconds, so both
// the microsecond round trip and whole-second timeouts are exercised.
var t0 = time.Date(2024, 3, 1, 10, 0, 0, 123456000, time.UTC)

// backend is a Redis the conformance suite runs against.
type backend struct {
	name   string
	client func(tb testing.TB) redis.UniversalClient
}

var backends = []backend{
	{"redis", func(tb testing.TB) redis.UniversalClient { return redistest.Shared(tb).Client() }},
	{"miniredis", func(tb testing.TB) redis.UniversalClient { _, c := redistest.Miniredis(tb); return c }},
	// Every operation again through a cluster client on a cluster-enabled
	// server: a script touching keys of two slots fails with CROSSSLOT.
	{"cluster", clusterClient},
}

// harness is one test's store on its own namespace, with helpers.
type harness struct {
	t     *testing.T
	ctx   context.Context
	rdb   redis.UniversalClient
	s     *redisstore.Store
	clock *redistest.Clock
	ns    string
	keys  redisstore.Keys
	// logs collects the store's log lines (inline sweep events).
	logs *bytes.Buffer
	// skipInvariants turns off the index consistency check at the end of
	// the test (for tests that corrupt data on purpose).
	skipInvariants bool
}

func newHarness(t *testing.T, rdb redis.UniversalClient, opts redisstore.Options) *harness {
	t.Helper()
	h := &harness{t: t, ctx: context.Background(), rdb: rdb, clock: redistest.NewClock(t0)}
	h.ns = redistest.Namespace(t)
	opts.Namespace = h.ns
	opts.Now = h.clock.Now
	h.logs = new(bytes.Buffer)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		}))
	}
	s, err := redisstore.New(rdb, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.s, h.keys = s, redisstore.KeysFor(h.ns)
	t.Cleanup(func() {
		if !h.skipInvariants && !t.Failed() {
			h.checkInvariants()
		}
	})
	return h
}

// conformanceCase is one case of the suite every backend runs.
type conformanceCase struct {
	name string
	opts redisstore.Options
	run  func(t *testing.T, h *harness)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	cases := slices.Concat(queueCases, jobCases, transitionCases, sweepCases, infoCases, corruptCases)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			if b.name == "cluster" {
				t.Cleanup(func() { checkClusterRanEveryScript(t, len(cases)) }) // after every case
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, newHarness(t, b.client(t), c.opts))
				})
			}
		})
	}
}

// ---- store helpers: fail the test on an error ----

func (h *harness) putQueue(name string, qs ocypod.QueueSettings) {
	h.t.Helper()
	if _, err := h.s.PutQueue(h.ctx, name, qs); err != nil {
		h.t.Fatalf("PutQueue(%q) = %v", name, err)
	}
}

func (h *harness) create(queue string, spec ocypod.JobSpec) uint64 {
	h.t.Helper()
	id, err := h.s.CreateJob(h.ctx, queue, spec)
	if err != nil {
		h.t.Fatalf("CreateJob(%q) = %v", queue, err)
	}
	return id
}

func (h *harness) next(queue string) *ocypod.NextJob {
	h.t.Helper()
	j, err := h.s.NextJob(h.ctx, queue)
	if err != nil {
		h.t.Fatalf("NextJob(%q) = %v", queue, err)
	}
	return j
}

// take takes the next job of queue and checks that it is id.
func (h *harness) take(queue string, id uint64) {
	h.t.Helper()
	j := h.next(queue)
	if j == nil || j.ID != id {
		h.t.Fatalf("NextJob(%q) = %+v, want job %d", queue, j, id)
	}
}

func (h *harness) job(id uint64) *ocypod.Job {
	h.t.Helper()
	j, err := h.s.GetJob(h.ctx, id)
	if err != nil {
		h.t.Fatalf("GetJob(%d) = %v", id, err)
	}
	return j
}

func (h *harness) setStatus(id uint64, st ocypod.Status) {
	h.t.Helper()
	if err := h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: &st}); err != nil {
		h.t.Fatalf("UpdateJob(%d, %s) = %v", id, st, err)
	}
}

func (h *harness) wantStatus(id uint64, want ocypod.Status) {
	h.t.Helper()
	got, err := h.s.JobStatus(h.ctx, id)
	if err != nil || got != want {
		h.t.Fatalf("JobStatus(%d) = %q, %v, want %q", id, got, err, want)
	}
}

func (h *harness) queueIDs(name string) ocypod.JobIDs {
	h.t.Helper()
	ids, err := h.s.QueueJobIDs(h.ctx, name)
	if err != nil {
		h.t.Fatalf("QueueJobIDs(%q) = %v", name, err)
	}
	return ids
}

func (h *harness) info() ocypod.ServerInfo {
	h.t.Helper()
	info, err := h.s.Info(h.ctx)
	if err != nil {
		h.t.Fatalf("Info() = %v", err)
	}
	return info
}

func (h *harness) sweep(name string, f func(context.Context) (redisstore.SweepResult, error)) redisstore.SweepResult {
	h.t.Helper()
	r, err := f(h.ctx)
	if err != nil {
		h.t.Fatalf("%s() = %v", name, err)
	}
	return r
}

func (h *harness) sweepTimeouts() redisstore.SweepResult {
	h.t.Helper()
	return h.sweep("SweepTimeouts", h.s.SweepTimeouts)
}

func (h *harness) sweepRetries() redisstore.SweepResult {
	h.t.Helper()
	return h.sweep("SweepRetries", h.s.SweepRetries)
}

func (h *harness) sweepExpiry() redisstore.SweepResult {
	h.t.Helper()
	return h.sweep("SweepExpiry", h.s.SweepExpiry)
}

// do runs a raw Redis command (test setup and inspection only).
func (h *harness) do(args ...any) *redis.Cmd {
	h.t.Helper()
	cmd := h.rdb.Do(h.ctx, args...)
	if err := cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
		h.t.Fatalf("%v: %v", args, err)
	}
	return cmd
}

// ---- values ----

func dur(s uint64) *ocypod.Duration { d := ocypod.Seconds(s); return &d }
func u64(n uint64) *uint64          { return &n }
func status(s ocypod.Status) *ocypod.Status {
	return &s
}
func durs(secs ...uint64) []ocypod.Duration {
	out := make([]ocypod.Duration, len(secs))
	for i, s := range secs {
		out[i] = ocypod.Seconds(s)
	}
	return out
}

// settings are queue settings without defaults getting in the way.
func settings(timeout, hb, expires, retries uint64, delays ...uint64) ocypod.QueueSettings {
	return ocypod.QueueSettings{
		Timeout: ocypod.Seconds(timeout), HeartbeatTimeout: ocypod.Seconds(hb),
		ExpiresAfter: ocypod.Seconds(expires), Retries: retries, RetryDelays: durs(delays...),
	}
}

// ---- errors ----

// wantKind checks that err is an *ocypod.Error of kind k with message msg
// ("" for any message).
func wantKind(t testing.TB, what string, err error, k ocypod.Kind, msg string) {
	t.Helper()
	var oe *ocypod.Error
	if !errors.As(err, &oe) {
		t.Fatalf("%s = %v, want an *ocypod.Error of kind %d", what, err, k)
	}
	if oe.Kind != k || (msg != "" && oe.Message != msg) {
		t.Fatalf("%s = kind %d %q, want kind %d %q", what, oe.Kind, oe.Message, k, msg)
	}
}

// ---- snapshots ----

// snapshot renders every key of the namespace with its type and content,
// so two snapshots are equal exactly when the data is.
func (h *harness) snapshot() map[string]string {
	h.t.Helper()
	ks, err := h.rdb.Keys(h.ctx, h.keys.Prefix()+"*").Result()
	if err != nil {
		h.t.Fatalf("KEYS: %v", err)
	}
	snap := make(map[string]string, len(ks))
	for _, k := range ks {
		typ := h.rdb.Type(h.ctx, k).Val()
		var v any
		switch typ {
		case "string":
			v = h.rdb.Get(h.ctx, k).Val()
		case "hash":
			v = h.rdb.HGetAll(h.ctx, k).Val()
		case "set":
			m := h.rdb.SMembers(h.ctx, k).Val()
			sort.Strings(m)
			v = m
		case "zset":
			v = h.rdb.ZRangeWithScores(h.ctx, k, 0, -1).Val()
		case "list":
			v = h.rdb.LRange(h.ctx, k, 0, -1).Val()
		}
		snap[k] = fmt.Sprintf("%s %v", typ, v)
	}
	return snap
}

// wantUnchanged checks that the namespace's data equals before.
func (h *harness) wantUnchanged(what string, before map[string]string) {
	h.t.Helper()
	after := h.snapshot()
	if reflect.DeepEqual(before, after) {
		return
	}
	var diff []string
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(before, after))) {
		if before[k] != after[k] {
			diff = append(diff, fmt.Sprintf("  %s:\n    before %s\n    after  %s", k, before[k], after[k]))
		}
	}
	h.t.Fatalf("%s changed the data:\n%s", what, strings.Join(diff, "\n"))
}

func mergeKeys(a, b map[string]string) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// ---- invariants ----

// checkInvariants checks that every index agrees with the job hashes: each
// job is exactly where its status says, every index entry is a job in that
// state, jobqueues lists exactly the queues with jobs, tag sets match tags.
func (h *harness) checkInvariants() {
	t := h.t
	t.Helper()
	last, _ := strconv.ParseUint(h.rdb.Get(h.ctx, h.keys.JobID()).Val(), 10, 64)
	type jobInfo struct {
		queue  string
		status ocypod.Status
		tags   []string
	}
	jobs := map[string]jobInfo{}
	for id := uint64(1); id <= last; id++ {
		m := h.rdb.HGetAll(h.ctx, h.keys.Job(id)).Val()
		if len(m) == 0 {
			continue
		}
		var tags []string
		_ = json.Unmarshal([]byte(m["tags"]), &tags)
		jobs[strconv.FormatUint(id, 10)] = jobInfo{m["queue"], ocypod.Status(m["status"]), tags}
	}
	queues := map[string]bool{}
	for _, q := range h.rdb.SUnion(h.ctx, h.keys.Queues(), h.keys.JobQueues()).Val() {
		queues[q] = true
	}
	for _, j := range jobs {
		queues[j.queue] = true
	}
	// want: index key -> members.
	want := map[string][]string{}
	add := func(key, id string) { want[key] = append(want[key], id) }
	withJobs := map[string]bool{}
	for id, j := range jobs {
		withJobs[j.queue] = true
		switch j.status {
		case ocypod.StatusQueued:
			add(h.keys.QueueJobs(j.queue), id)
		case ocypod.StatusRunning:
			add(h.keys.Running(), id)
			add(h.keys.QueueStatus(j.queue, j.status), id)
		case ocypod.StatusFailed, ocypod.StatusTimedOut:
			// In exactly one of failed (retry pending) and ended.
			inFailed := h.rdb.ZScore(h.ctx, h.keys.Failed(), id).Err() == nil
			if inFailed {
				add(h.keys.Failed(), id)
			} else {
				add(h.keys.Ended(), id)
			}
			add(h.keys.QueueStatus(j.queue, j.status), id)
		default:
			add(h.keys.Ended(), id)
			add(h.keys.QueueStatus(j.queue, j.status), id)
		}
		for _, tag := range j.tags {
			if !slices.Contains(want[h.keys.Tag(tag)], id) {
				add(h.keys.Tag(tag), id)
			}
		}
	}
	indexes := []string{h.keys.Running(), h.keys.Failed(), h.keys.Ended()}
	for q := range queues {
		indexes = append(indexes, h.keys.QueueJobs(q))
		for _, st := range ocypod.Statuses[1:] {
			indexes = append(indexes, h.keys.QueueStatus(q, st))
		}
	}
	for _, j := range jobs {
		for _, tag := range j.tags {
			indexes = append(indexes, h.keys.Tag(tag))
		}
	}
	for _, key := range indexes {
		got := h.rdb.ZRange(h.ctx, key, 0, -1).Val()
		w := want[key]
		sort.Strings(got)
		sort.Strings(w)
		if len(got) == 0 && len(w) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("invariant: %s holds %v, want %v", key, got, w)
		}
	}
	gotJQ := h.rdb.SMembers(h.ctx, h.keys.JobQueues()).Val()
	wantJQ := slices.Collect(maps.Keys(withJobs))
	sort.Strings(gotJQ)
	sort.Strings(wantJQ)
	if len(gotJQ)+len(wantJQ) > 0 && !reflect.DeepEqual(gotJQ, wantJQ) {
		t.Errorf("invariant: jobqueues = %v, want %v", gotJQ, wantJQ)
	}
}
