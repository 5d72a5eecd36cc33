package redisstore_test

import (
	"bytes"
	"cmp"
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
	// partitions is the store's partition count on this backend.
	partitions int
}

var backends = []backend{
	{"redis", func(tb testing.TB) redis.UniversalClient { return redistest.Shared(tb).Client() }, 1},
	{"miniredis", func(tb testing.TB) redis.UniversalClient { _, c := redistest.Miniredis(tb); return c }, 1},
	// Every operation again through a cluster client on a cluster-enabled
	// server: a script touching keys of two slots fails with CROSSSLOT.
	{"cluster", clusterClient, 1},
	// Four partitions: ids carry their partition, queues live in their own
	// partition, reads fan out.
	{"redis-P4", func(tb testing.TB) redis.UniversalClient { return redistest.Shared(tb).Client() }, 4},
	{"cluster-P4", clusterClient, 4},
}

// harness is one test's store on its own namespace, with helpers.
type harness struct {
	t     *testing.T
	ctx   context.Context
	rdb   redis.UniversalClient
	s     *redisstore.Store
	clock *redistest.Clock
	ns    string
	P     int
	lay   redisstore.Layout
	// logs collects the store's log lines (inline sweep events).
	logs *bytes.Buffer
	// skipInvariants turns off the index consistency check at the end of
	// the test (for tests that corrupt data on purpose).
	skipInvariants bool
	// countsErrorf, when set, gets the queued counts' invariant failures
	// instead of t.Errorf (to show that the check finds one).
	countsErrorf func(format string, args ...any)
}

func newHarness(t *testing.T, rdb redis.UniversalClient, partitions int, opts redisstore.Options) *harness {
	t.Helper()
	h := &harness{t: t, ctx: t.Context(), rdb: rdb, clock: redistest.NewClock(t0)}
	h.ns = redistest.Namespace(t)
	opts.Namespace = h.ns
	opts.Now = h.clock.Now
	if opts.Partitions == 0 {
		opts.Partitions = partitions
	}
	if opts.Rand == nil {
		opts.Rand = func() float64 { return 0.5 }
	}
	h.P = opts.Partitions
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
	h.s, h.lay = s, redisstore.LayoutOf(h.ns, h.P)
	t.Cleanup(func() {
		if !h.skipInvariants && !t.Failed() {
			// t.Context() is cancelled before cleanups run.
			h.ctx = context.WithoutCancel(h.ctx)
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
	cases := slices.Concat(queueCases, jobCases, batchCases, transitionCases, sweepCases, infoCases, corruptCases, jobModelCases, effectCases, listingCases, upgradeCases, importCases, importLimitCases, shardCases, shardLimitCases, shardUpgradeCases, depsCases, generationCases, longPollCases, conflictUpdateCases, boundedCases, cursorCases, workerTrimCases, jobWaitCases, minuteCases, byIDListingCases, counterCases)
	clusterBackends := 0
	for _, b := range backends {
		if strings.HasPrefix(b.name, "cluster") {
			clusterBackends++
		}
	}
	// After every case of every backend: the cluster backends together
	// (one partition and four) must run every script.
	t.Cleanup(func() { checkClusterRanEveryScript(t, clusterBackends*len(cases)) })
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, newHarness(t, b.client(t), b.partitions, c.opts))
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
	c, err := h.s.CreateJob(h.ctx, queue, spec)
	if err != nil {
		h.t.Fatalf("CreateJob(%q) = %v", queue, err)
	}
	return c.ID
}

// update is UpdateJob without a take, for its error alone.
func (h *harness) update(id uint64, u ocypod.JobUpdate) error {
	_, _, err := h.s.UpdateJob(h.ctx, id, u, nil)
	return err
}

// queueBeside returns a queue name starting with prefix that lives in the
// same partition as queue other.
func (h *harness) queueBeside(prefix, other string) string {
	for i := 0; ; i++ {
		name := prefix + strconv.Itoa(i)
		if h.lay.Home(name) == h.lay.Home(other) {
			return name
		}
	}
}

// firstID is the id the first job of queue gets.
func (h *harness) firstID(queue string) uint64 {
	return uint64(h.P + h.lay.Home(queue))
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

// job returns job id as Ocypod sees it: the extension's bookkeeping
// (attempt, history, dependents) left out.
func (h *harness) job(id uint64) *ocypod.Job {
	h.t.Helper()
	j, err := h.s.GetJob(h.ctx, id)
	if err != nil {
		h.t.Fatalf("GetJob(%d) = %v", id, err)
	}
	j.Attempt, j.History, j.Dependents = 0, nil, nil
	return j
}

func (h *harness) setStatus(id uint64, st ocypod.Status) {
	h.t.Helper()
	if _, _, err := h.s.UpdateJob(h.ctx, id, ocypod.JobUpdate{Status: &st}, nil); err != nil {
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
	var ks []string
	for p := range h.P {
		k, err := h.rdb.Keys(h.ctx, h.lay.Prefix(p)+"*").Result()
		if err != nil {
			h.t.Fatalf("KEYS: %v", err)
		}
		ks = append(ks, k...)
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

// checkInvariants checks that every index agrees with the jobs' metadata:
// each job has exactly the index entries its metadata calls for (indexes.lua's
// attach, re-derived here independently) and no index holds anything else.
func (h *harness) checkInvariants() {
	t := h.t
	t.Helper()
	if err := h.rdb.Ping(h.ctx).Err(); err != nil {
		t.Fatalf("invariants: Redis cannot be read: %v", err)
	}
	for p := range h.P {
		h.checkPartition(p)
	}
}

var statusCode = redisstore.StatusCodes()

func lp(v any) string {
	s := fmt.Sprint(v)
	if f, ok := v.(float64); ok {
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	return string(rune(96+len(s))) + s
}

func esc(s string) string { return strings.NewReplacer(" ", "!a", "!", "!b").Replace(s) }

// checkQueuedCounts checks, for the invariants, that each queue's counter
// of queued jobs in partition p ("<queue> n" in q) is the number of
// members of its queued idx range, and is absent when that is zero.
func (h *harness) checkQueuedCounts(p int) {
	want := map[string]string{}
	n := map[string]int{}
	for _, m := range h.rdb.ZRangeByLex(h.ctx, h.lay.Key(p, "idx"), &redis.ZRangeBy{Min: "-", Max: "+"}).Val() {
		if q, rest, _ := strings.Cut(m, " "); strings.HasPrefix(rest, "q ") {
			n[q]++
			want[q+" n"] = strconv.Itoa(n[q])
		}
	}
	got := map[string]string{}
	for f, v := range h.rdb.HGetAll(h.ctx, h.lay.Key(p, "q")).Val() {
		if strings.HasSuffix(f, " n") {
			got[f] = v
		}
	}
	if !maps.Equal(got, want) {
		errorf := h.t.Errorf
		if h.countsErrorf != nil {
			errorf = h.countsErrorf
		}
		errorf("invariant: partition %d queued counts %v, want the queued idx ranges' %v", p, got, want)
	}
}

func (h *harness) checkPartition(p int) {
	t := h.t
	key := func(name string) string { return h.lay.Key(p, name) }
	lexIndexes := []string{"idx", "dq", "tag", "trk", "fg", "wk"}
	scoreIndexes := []string{"run", "due", "exp"}
	want := map[string]map[string]string{} // index -> member -> score ("" for lex)
	for _, n := range append(lexIndexes, scoreIndexes...) {
		want[n] = map[string]string{}
	}
	wantKeys := map[string]string{}
	oldKeys := map[string][]string{}
	wantGroups := map[string]int{}
	for id, raw := range h.rdb.HGetAll(h.ctx, key("j")).Val() {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Errorf("invariant: job %s: unreadable metadata %q", id, raw)
			continue
		}
		str := func(k string) string {
			if v, ok := m[k]; ok {
				if f, ok := v.(float64); ok {
					return strconv.FormatFloat(f, 'f', -1, 64)
				}
				return fmt.Sprint(v)
			}
			return ""
		}
		q, st := str("q"), cmp.Or(str("s"), "queued")
		if n, _ := strconv.ParseUint(id, 10, 64); h.lay.PartitionOf(n) != p {
			t.Errorf("invariant: job %s is in partition %d", id, p)
		}
		code := statusCode[st]
		if code == "" {
			t.Errorf("invariant: job %s has status %q", id, st)
			continue
		}
		if st == "queued" {
			prio, _ := strconv.ParseInt(cmp.Or(str("p"), "0"), 10, 64)
			key := "m"
			switch {
			case prio > 0:
				key = "a" + lp(1000000-prio)
			case prio < 0:
				key = "z" + lp(-prio)
			}
			sr := ""
			if r := str("O"); r != "" && r != "0" {
				sr = lp(r)
			}
			sc := str("o")
			if sc == "" { // a job queued at its creation: its id's sequence number
				n, _ := strconv.ParseUint(id, 10, 64)
				sc = strconv.FormatUint((n-uint64(p))/uint64(h.P), 10)
			}
			want["idx"][q+" q "+key+lp(sc)+sr+" "+id] = ""
			// By id, for listings across statuses.
			want["idx"][q+" Q "+lp(id)] = ""
		} else {
			want["idx"][q+" "+code+" "+lp(id)] = ""
		}
		due := str("u")
		ended := st == "completed" || st == "cancelled" || ((st == "failed" || st == "timed_out") && due == "")
		switch {
		case st == "running":
			want["run"][id] = "?"
			if w := str("w"); w != "" {
				want["wk"][esc(w)+" r "+lp(id)] = ""
			}
		case due != "":
			want["due"][id] = due
			want["dq"][q+" "+lp(due)+lp(id)] = ""
		case ended:
			if e := str("e"); e != "" && e != "0" {
				want["exp"][id] = "?"
			}
			if st == "failed" || st == "timed_out" {
				g := cmp.Or(str("E"), st)
				want["fg"][esc(g)+" "+lp(id)] = ""
				wantGroups[g]++
			}
		}
		if st == "timed_out" && str("w") != "" {
			want["wk"][esc(str("w"))+" t "+lp(id)] = ""
		}
		if k := str("k"); k != "" {
			switch st {
			case "running":
				wantKeys["r "+q+" "+k] = id
			case "queued", "scheduled", "waiting":
				if h.oldPending(p, q, m) {
					// A job of a deleted queue yields its key to a newer job.
					oldKeys["p "+q+" "+k] = append(oldKeys["p "+q+" "+k], id)
				} else {
					wantKeys["p "+q+" "+k] = id
				}
			}
		}
		if tags := str("g"); tags != "" {
			var list []string
			_ = json.Unmarshal([]byte(tags), &list)
			for _, tag := range list {
				want["tag"][esc(tag)+" "+lp(id)] = ""
			}
		}
		if v, ok := m["R"]; ok && v != false {
			want["trk"][q+" "+lp(id)] = ""
		}
	}
	for _, n := range lexIndexes {
		got := map[string]string{}
		for _, m := range h.rdb.ZRange(h.ctx, key(n), 0, -1).Val() {
			got[m] = ""
		}
		if !maps.Equal(got, want[n]) {
			t.Errorf("invariant: partition %d %s holds %v, want %v", p, n, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want[n])))
		}
	}
	h.checkQueuedCounts(p)
	for _, n := range scoreIndexes {
		got := map[string]string{}
		for _, z := range h.rdb.ZRangeWithScores(h.ctx, key(n), 0, -1).Val() {
			got[z.Member.(string)] = strconv.FormatFloat(z.Score, 'f', -1, 64)
		}
		for m, sc := range want[n] {
			if sc == "?" {
				if g, ok := got[m]; ok {
					want[n][m] = g
				}
			}
		}
		if !maps.Equal(got, want[n]) {
			t.Errorf("invariant: partition %d %s holds %v, want %v", p, n, got, want[n])
		}
	}
	got := h.rdb.HGetAll(h.ctx, key("keys")).Val()
	for k, ids := range oldKeys {
		if _, ok := wantKeys[k]; !ok {
			wantKeys[k] = ids[0]
			if slices.Contains(ids, got[k]) {
				wantKeys[k] = got[k]
			}
		}
	}
	if !maps.Equal(got, wantKeys) {
		t.Errorf("invariant: partition %d keys = %v, want %v", p, got, wantKeys)
	}
	h.checkDropCounts(p)
	gotGroups := map[string]int{}
	for g, n := range h.rdb.HGetAll(h.ctx, key("fgc")).Val() {
		gotGroups[g], _ = strconv.Atoi(n)
	}
	if !maps.Equal(gotGroups, wantGroups) {
		t.Errorf("invariant: partition %d fgc = %v, want %v", p, gotGroups, wantGroups)
	}
}
