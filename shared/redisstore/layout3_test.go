package redisstore_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
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
// into h's namespace as layout version 3, sets h's clock to when it was
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
	h.clock.Set(ns.Now)
	return ns.Answers, true
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
			got := layout3Answers(t, h)
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
		})
	}
}
