package redisstore_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// randomOps is a random sequence of store operations over a few queues:
// creates (single and batch; with and without priority, delay, run_at,
// key, dependencies, tags, retries), takes, completions, failures (retried
// and permanent), cancels, deletes, retries, heartbeats, priority and
// run_at updates, pauses, the clock moving and every sweep. Each step's
// answer is recorded, so two stores given the same steps can be compared
// answer by answer.
type randomOps struct {
	rng    *rand.Rand
	queues []string
	ids    []uint64 // every id created so far
}

// step runs one random operation on h and returns a description of it
// and its answer, both of which depend only on the operation's inputs and
// the store's state (never on which backend runs it).
func (r *randomOps) step(h *harness) (string, string) {
	ctx := h.ctx
	q := r.queues[r.rng.IntN(len(r.queues))]
	anyID := func() uint64 {
		if len(r.ids) == 0 {
			return 1
		}
		return r.ids[r.rng.IntN(len(r.ids))]
	}
	answer := func(v any, err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	spec := func() ocypod.JobSpec {
		var s ocypod.JobSpec
		switch r.rng.IntN(4) {
		case 0:
			s.Priority = i64(int64(r.rng.IntN(5) - 2))
		case 1:
			s.Delay = dur(uint64(1 + r.rng.IntN(20)))
		case 2:
			at := h.clock.Now().Add(time.Duration(r.rng.IntN(30)) * time.Second)
			s.RunAt = &at
		}
		if r.rng.IntN(4) == 0 {
			s.Key = fmt.Sprintf("k%d", r.rng.IntN(3))
			s.OnConflict = []ocypod.OnConflict{ocypod.OnConflictKeep, ocypod.OnConflictUpdate, ocypod.OnConflictError}[r.rng.IntN(3)]
		}
		if r.rng.IntN(5) == 0 && len(r.ids) > 0 {
			s.DependsOn = []uint64{anyID()}
		}
		if r.rng.IntN(5) == 0 {
			s.Tags = []string{"a"}
		}
		if r.rng.IntN(3) == 0 {
			s.Retries = u64(uint64(r.rng.IntN(3)))
		}
		if r.rng.IntN(3) == 0 {
			s.Input = json.RawMessage(fmt.Sprintf(`{"n":%d}`, r.rng.IntN(100)))
		}
		return s
	}
	status := func(st ocypod.Status) *ocypod.Status { return &st }
	show := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	switch n := r.rng.IntN(100); {
	case n < 22:
		s := spec()
		c, err := h.s.CreateJob(ctx, q, s)
		if err == nil && !c.Existing {
			r.ids = append(r.ids, c.ID)
		}
		return "create " + q + " " + show(s), answer(c, err)
	case n < 27:
		specs := make([]ocypod.JobSpec, 1+r.rng.IntN(4))
		for i := range specs {
			if r.rng.IntN(2) == 0 {
				specs[i] = spec()
			}
		}
		cs, err := h.s.CreateJobs(ctx, q, specs)
		for _, c := range cs {
			if !c.Existing {
				r.ids = append(r.ids, c.ID)
			}
		}
		return "create batch " + q + " " + show(specs), answer(cs, err)
	case n < 47:
		req := ocypod.TakeRequest{Queues: []string{q}, Count: 1 + r.rng.IntN(3), Worker: fmt.Sprintf("w%d", r.rng.IntN(2))}
		if r.rng.IntN(4) == 0 {
			req.Queues = r.queues
		}
		jobs, err := h.s.Take(ctx, req)
		return fmt.Sprintf("take %v count=%d worker=%s", req.Queues, req.Count, req.Worker), answer(jobs, err)
	case n < 60:
		id := anyID()
		res, next, err := h.s.UpdateJob(ctx, id, ocypod.JobUpdate{Status: status(ocypod.StatusCompleted), Output: json.RawMessage(`"ok"`)}, nil)
		return fmt.Sprintf("complete %d", id), answer([]any{res, next}, err)
	case n < 68:
		id := anyID()
		u := ocypod.JobUpdate{Status: status(ocypod.StatusFailed), Error: &ocypod.JobError{Group: "g", Message: "m"}}
		if r.rng.IntN(3) == 0 {
			no := false
			u.Retry = &no
		}
		res, next, err := h.s.UpdateJob(ctx, id, u, nil)
		return fmt.Sprintf("fail %d retry=%v", id, u.Retry == nil), answer([]any{res, next}, err)
	case n < 72:
		id := anyID()
		res, next, err := h.s.UpdateJob(ctx, id, ocypod.JobUpdate{Status: status(ocypod.StatusCancelled)}, nil)
		return fmt.Sprintf("cancel %d", id), answer([]any{res, next}, err)
	case n < 75:
		id := anyID()
		return fmt.Sprintf("delete %d", id), answer(nil, h.s.DeleteJob(ctx, id))
	case n < 79:
		id := anyID()
		res, err := h.s.RetryJob(ctx, id, nil)
		return fmt.Sprintf("retry %d", id), answer(res, err)
	case n < 82:
		id := anyID()
		return fmt.Sprintf("heartbeat %d", id), answer(nil, h.s.Heartbeat(ctx, id, nil))
	case n < 86:
		id := anyID()
		u := ocypod.JobUpdate{Priority: i64(int64(r.rng.IntN(7) - 3))}
		if r.rng.IntN(2) == 0 {
			u = ocypod.JobUpdate{Delay: dur(uint64(r.rng.IntN(10)))}
		}
		res, next, err := h.s.UpdateJob(ctx, id, u, nil)
		return fmt.Sprintf("update %d %s", id, show(u)), answer([]any{res, next}, err)
	case n < 88:
		paused := r.rng.IntN(2) == 0
		return fmt.Sprintf("pause %s %v", q, paused), answer(nil, h.s.PatchQueue(ctx, q, ocypod.QueuePatch{Paused: &paused}))
	default:
		d := []time.Duration{time.Second, 7 * time.Second, 31 * time.Second, 301 * time.Second}[r.rng.IntN(4)]
		h.clock.Advance(d)
		var out []any
		for _, sweep := range []func() (redisstore.SweepResult, error){
			func() (redisstore.SweepResult, error) { return h.s.SweepTimeouts(ctx) },
			func() (redisstore.SweepResult, error) { return h.s.SweepRetries(ctx) },
			func() (redisstore.SweepResult, error) { return h.s.SweepExpiry(ctx) },
			func() (redisstore.SweepResult, error) { return h.s.SweepOutbox(ctx) },
		} {
			res, err := sweep()
			out = append(out, answer(res, err))
		}
		return fmt.Sprintf("advance %s and sweep", d), answer(out, nil)
	}
}

// TestDifferentialBackends: the same random operation sequences on real
// Redis and on miniredis (the embedded mode: another Lua engine, the
// fallback codecs) give the same answer to every step and the same
// read-only answers about every queue and job along the way.
func TestDifferentialBackends(t *testing.T) {
	t.Parallel()
	seeds := []uint64{1, 2, 3, 4}
	steps := 300
	if testing.Short() {
		seeds, steps = seeds[:1], 100
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			a := newHarness(t, backends[0].client(t), 1, redisstore.Options{})
			b := newHarness(t, backends[1].client(t), 1, redisstore.Options{})
			queues := []string{"a", "b"}
			for _, h := range []*harness{a, b} {
				h.putQueue("a", settings(30, 10, 120, 1, 5))
				h.putQueue("b", settings(0, 0, 0, 2, 3, 20))
			}
			ra := &randomOps{rng: rand.New(rand.NewPCG(seed, 1)), queues: queues}
			rb := &randomOps{rng: rand.New(rand.NewPCG(seed, 1)), queues: queues}
			var history []string
			for i := range steps {
				opA, gotA := ra.step(a)
				opB, gotB := rb.step(b)
				history = append(history, opA+" -> "+gotA)
				if opA != opB || gotA != gotB {
					t.Fatalf("step %d differs:\nredis:     %s -> %s\nminiredis: %s -> %s\nafter:\n%s",
						i, opA, gotA, opB, gotB, tail(history, 15))
				}
				if os.Getenv("DIFF_SHOW") != "" && i > steps-40 {
					t.Log(opA + " -> " + gotA)
				}
				if i%25 == 24 || i == steps-1 {
					compareAnswers(t, fmt.Sprintf("after step %d", i), readAnswers(t, a, queues), readAnswers(t, b, queues))
				}
			}
		})
	}
}

// compareAnswers fails t for every answer that differs between got and want.
func compareAnswers(t *testing.T, when string, got, want map[string]json.RawMessage) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !bytes.Equal(got[k], want[k]) {
			t.Errorf("%s: %s:\n got %s\nwant %s", when, k, got[k], want[k])
		}
	}
}

// tail is the last n lines of lines, one per line.
func tail(lines []string, n int) string {
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}
