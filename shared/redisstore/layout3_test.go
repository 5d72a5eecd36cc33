package redisstore_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// layout3Namespace is one namespace of testdata/layout3.json (written by
// TestWriteLayout3Fixture with the store of layout version 3): its keys,
// the clock when they were written, and what that store answered.
type layout3Namespace struct {
	Now     time.Time                  `json:"now"`
	Keys    []legacyEntry              `json:"keys"`
	Answers map[string]json.RawMessage `json:"answers"`
}

// layout3Queues are the queues of the fixture's scenario, in the order
// their jobs are taken at the end of layout3Answers.
var layout3Queues = []string{"q", "work", "slow", "sh", "lim", "paused", "dead", "p"}

// layout3Answers is what the store answers about the fixture's namespace
// (readAnswers of its queues), and last the take order of every queue
// (which takes every job it can).
func layout3Answers(t *testing.T, h *harness) map[string]json.RawMessage {
	t.Helper()
	out := readAnswers(t, h, layout3Queues)
	for _, q := range layout3Queues {
		jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{q}, Count: 1000, Push: q == "p", PushTimeout: time.Minute})
		var got []uint64
		for _, j := range jobs {
			got = append(got, j.ID)
		}
		putAnswer(t, out, "take "+q, got, err)
	}
	return out
}

// putAnswer records v (or err) as the answer called name.
func putAnswer(t *testing.T, out map[string]json.RawMessage, name string, v any, err error) {
	t.Helper()
	if err != nil {
		v = "error: " + err.Error()
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out[name] = b
}

// readAnswers is what the store answers, read-only, about the given
// queues and their jobs: every job, the queues' settings, sizes, ids and
// listings by status, statistics, failure groups, workers, schedules,
// callbacks due.
func readAnswers(t *testing.T, h *harness, queueNames []string) map[string]json.RawMessage {
	t.Helper()
	ctx := h.ctx
	out := map[string]json.RawMessage{}
	put := func(name string, v any, err error) {
		t.Helper()
		putAnswer(t, out, name, v, err)
	}
	info, err := h.s.Info(ctx)
	put("info", info, err)
	queues, err := h.s.ListQueues(ctx)
	slices.Sort(queues)
	put("queues", queues, err)
	var ids []uint64
	for _, q := range queueNames {
		qs, err := h.s.GetQueue(ctx, q)
		put("settings "+q, qs, err)
		n, err := h.s.QueueSize(ctx, q)
		put("size "+q, n, err)
		qids, err := h.s.QueueJobIDs(ctx, q)
		put("ids "+q, qids, err)
		for _, st := range ocypod.AllStatuses {
			page, err := h.s.ListJobs(ctx, ocypod.ListRequest{Queue: q, Status: st, Limit: ocypod.MaxListLimit})
			var got []uint64
			for _, j := range page.Jobs {
				got = append(got, j.ID)
				ids = append(ids, j.ID)
			}
			put("list "+q+" "+string(st), got, err)
		}
		stats, err := h.s.QueueStats(ctx, q, h.clock.Now())
		put("stats "+q, stats, err)
		minutes, err := h.s.QueueMinutes(ctx, q, h.clock.Now())
		put("minutes "+q, minutes, err)
	}
	slices.Sort(ids)
	for _, id := range ids {
		j, err := h.s.GetJob(ctx, id)
		put("job "+strconv.FormatUint(id, 10), j, err)
	}
	tagged, err := h.s.TagJobIDs(ctx, "a")
	put("tag a", tagged, err)
	groups, err := h.s.Failures(ctx)
	put("failures", groups, err)
	for g := range groups {
		page, err := h.s.FailureJobs(ctx, g, 100, "")
		var got []uint64
		for _, j := range page.Jobs {
			got = append(got, j.ID)
		}
		put("failures "+g, got, err)
	}
	workers, err := h.s.Workers(ctx)
	put("workers", workers, err)
	scheds, err := h.s.ListSchedules(ctx, "q")
	put("schedules", scheds, err)
	due, _, err := h.s.DueCallbacks(ctx, 100)
	put("callbacks", due, err)
	return out
}

// loadLayout3 writes testdata/layout3.json's namespace of h.P partitions
// into h's namespace as layout version 3 (with its layout record), sets h's clock to when it was
// written and returns what the store of layout 3 answered about it; false
// when the fixture has none of that many partitions.
func (h *harness) loadLayout3() (map[string]json.RawMessage, bool) {
	h.t.Helper()
	b, err := os.ReadFile("testdata/layout3.json")
	if err != nil {
		h.t.Fatal(err)
	}
	var all map[string]layout3Namespace
	if err := json.Unmarshal(b, &all); err != nil {
		h.t.Fatal(err)
	}
	ns, ok := all[strconv.Itoa(h.P)]
	if !ok {
		return nil, false
	}
	h.writeEntries(ns.Keys)
	// The layout record the store of layout 3 wrote when it opened the
	// namespace (the dump holds the partitions' keys only).
	h.do("HSET", "{"+h.ns+"}:meta", "version", "3", "partitions", h.P)
	h.clock.Set(ns.Now)
	return ns.Answers, true
}

// wantLayout3Answers fails t for each answer of got that differs from the
// fixture's want.
func wantLayout3Answers(t *testing.T, got, want map[string]json.RawMessage) {
	t.Helper()
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		var w bytes.Buffer
		if err := json.Compact(&w, want[k]); err != nil {
			t.Fatal(err)
		}
		if string(got[k]) != w.String() {
			t.Errorf("%s:\n got %s\nwant %s", k, got[k], w.String())
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d answers, the fixture has %d", len(got), len(want))
	}
}

// TestLayout3Fixture: a namespace written by the store of layout version 3,
// brought up to this version's layout by Open and Upgrade, answers every
// question as that store did: no job, setting, index entry, statistic or
// callback lost or changed, take order kept.
func TestLayout3Fixture(t *testing.T) {
	t.Parallel()
	for _, b := range []backend{backends[0], backends[3], backends[4]} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, b.client(t), b.partitions, redisstore.Options{})
			want, ok := h.loadLayout3()
			if !ok {
				t.Fatalf("testdata/layout3.json has no namespace of %d partitions", h.P)
			}
			info, err := h.s.Open(h.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.Upgrade {
				if done, err := h.s.Upgrade(h.ctx, 0); err != nil || !done {
					t.Fatalf("Upgrade = %v, %v", done, err)
				}
			}
			if ok, err := h.s.Servable(h.ctx); err != nil || !ok {
				t.Fatalf("Servable = %v, %v", ok, err)
			}
			wantLayout3Answers(t, layout3Answers(t, h), want)
		})
	}
}

// TestLayout3ScenarioAnswers: the fixture's scenario, played by this
// store on an empty namespace, gets the answers the store of layout 3 gave
// (its statistics counted one increment per event, its queued jobs by
// their queues' counts); the same once the pending statistics are folded.
func TestLayout3ScenarioAnswers(t *testing.T) {
	t.Parallel()
	for _, b := range []backend{backends[0], backends[3], backends[4]} {
		for _, fold := range []bool{false, true} {
			t.Run(b.name+map[bool]string{false: "", true: "/folded"}[fold], func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, b.client(t), b.partitions, redisstore.Options{})
				want, ok := h.loadLayout3()
				if !ok {
					t.Fatalf("testdata/layout3.json has no namespace of %d partitions", h.P)
				}
				// The fixture's keys give way to a namespace of their own.
				h.ns = redistest.Namespace(t) + "x"
				s, err := redisstore.New(h.rdb, redisstore.Options{Namespace: h.ns, Partitions: h.P, Now: h.clock.Now,
					Rand: func() float64 { return 0.5 }})
				if err != nil {
					t.Fatal(err)
				}
				h.s, h.lay = s, redisstore.LayoutOf(h.ns, h.P)
				h.clock.Set(t0)
				writeLayout3Scenario(t, h)
				if fold {
					if err := redisstore.FoldStats(h.ctx, h.s, h.clock.Now().Add(time.Minute)); err != nil {
						t.Fatal(err)
					}
					if n := h.pendingStats(); n != 0 {
						t.Fatalf("%d statistics fields pending after the fold", n)
					}
				}
				wantLayout3Answers(t, layout3Answers(t, h), want)
			})
		}
	}
}

// TestLayout3UpgradeKilledHalfWay: an upgrade of the fixture's namespace
// killed half-way through counting the queues' queued jobs leaves layout
// 3 recorded and its lock held; a second process, once the lease lapsed,
// goes on from where it stopped (not from the start), a last call of the
// dead one changes nothing, and the namespace answers as layout 3 did.
func TestLayout3UpgradeKilledHalfWay(t *testing.T) {
	t.Parallel()
	for _, b := range []backend{backends[0], backends[3], backends[4]} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, b.client(t), b.partitions, redisstore.Options{})
			want, ok := h.loadLayout3()
			if !ok {
				t.Fatalf("testdata/layout3.json has no namespace of %d partitions", h.P)
			}
			// One queue per call: each partition takes a call per queue of
			// its idx and one that finds none left.
			calls := 0
			for p := range h.P {
				seen := map[string]bool{}
				for _, m := range h.rdb.ZRangeByLex(h.ctx, h.lay.Key(p, "idx"), &redis.ZRangeBy{Min: "-", Max: "+"}).Val() {
					q, _, _ := strings.Cut(m, " ")
					seen[q] = true
				}
				calls += len(seen) + 1
			}
			const killedAfter = 3
			if calls <= killedAfter+1 {
				t.Fatalf("the upgrade takes %d calls: too few to kill it half-way", calls)
			}
			redisstore.SetUpgradeBatch(h.s, 1)
			redisstore.SetUpgradeLease(h.s, time.Minute)
			if info, err := h.s.Open(h.ctx); err != nil || !info.Upgrade || info.Layout != 3 {
				t.Fatalf("Open(layout 3) = %+v, %v, want an upgrade from 3", info, err)
			}
			if err := redisstore.KillUpgrade(h.ctx, h.s, killedAfter); err != nil {
				t.Fatal(err)
			}
			meta := "{" + h.ns + "}:meta"
			if v := h.rdb.HGet(h.ctx, meta, "version").Val(); v != "3" {
				t.Fatalf("layout version after the killed upgrade = %q, want 3", v)
			}
			if info, err := h.s.Open(h.ctx); err != nil || !info.Upgrade || !info.Upgrading {
				t.Fatalf("Open after the killed upgrade = %+v, %v, want an upgrade under way", info, err)
			}
			counted := 0
			for p := range h.P {
				for f := range h.rdb.HGetAll(h.ctx, h.lay.Key(p, "q")).Val() {
					if strings.HasSuffix(f, " n") {
						counted++
					}
				}
			}
			if counted == 0 {
				t.Fatal("the killed upgrade counted no queue")
			}

			// Another process, once the dead one's lease lapsed (here: its
			// lock deleted).
			h.do("DEL", redisstore.UpgradeLockKey(h.ns))
			s, err := redisstore.New(h.rdb, redisstore.Options{Namespace: h.ns, Partitions: h.P, Now: h.clock.Now,
				Rand: func() float64 { return 0.5 }})
			if err != nil {
				t.Fatal(err)
			}
			redisstore.SetUpgradeBatch(s, 1)
			batches := 0
			redisstore.OnUpgradeBatch(s, func() { batches++ })
			if done, err := s.Upgrade(h.ctx, 0); err != nil || !done {
				t.Fatalf("Upgrade after the kill = %v, %v, want done", done, err)
			}
			if batches != calls-killedAfter {
				t.Errorf("the upgrade after the kill ran %d calls, want the %d left of %d", batches, calls-killedAfter, calls)
			}
			if v := h.rdb.HGet(h.ctx, meta, "version").Val(); v != strconv.Itoa(redisstore.LayoutVersion) {
				t.Errorf("layout version after the upgrade = %q, want %d", v, redisstore.LayoutVersion)
			}
			for p := range h.P {
				for _, f := range []string{"cnm", "cnd"} {
					if h.rdb.HExists(h.ctx, h.lay.Key(p, "ctr"), f).Val() {
						t.Errorf("partition %d: ctr field %s left after the upgrade", p, f)
					}
				}
			}
			// The dead process's last call, late: it counts a queue again.
			if err := redisstore.UpgradeCountsCall(h.ctx, h.s, 0, 1); err != nil {
				t.Fatal(err)
			}
			h.s = s
			for p := range h.P {
				h.checkQueuedCounts(p)
			}
			wantLayout3Answers(t, layout3Answers(t, h), want)
		})
	}
}
