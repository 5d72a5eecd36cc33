package redisstore_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// serverCPU is the CPU time (µs, user and system) a redis-server process
// has used: unlike the time a command took, it does not grow when the
// machine is busy with other work.
func serverCPU(t *testing.T, rdb redis.UniversalClient) int64 {
	t.Helper()
	info, err := rdb.Info(t.Context(), "cpu").Result()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for line := range strings.SplitSeq(info, "\n") {
		name, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if name == "used_cpu_user" || name == "used_cpu_sys" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("INFO cpu: %q", line)
			}
			total += f
		}
	}
	return int64(total * 1e6)
}

// TestDependentsCostFlat creates batches of 1,000 jobs that all depend on
// one job, on a private redis-server, and measures the CPU time Redis spends
// on each: the last batches (7,000 and more dependents already there) cost
// about what the first did: adding a dependent does not rewrite the
// dependency's list. Ending the dependency then releases every dependent,
// at a cost per dependent that does not grow with their number.
func TestDependentsCostFlat(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	rdb := srv.Client()
	h := newHarness(t, rdb, 1, redisstore.Options{})
	h.putQueue("q", settings(60, 0, 60, 0))
	dep := h.create("q", ocypod.JobSpec{})
	small := h.create("q", ocypod.JobSpec{})
	const batches, size = 10, ocypod.MaxBatch
	specs := make([]ocypod.JobSpec, size)
	for i := range specs {
		specs[i] = ocypod.JobSpec{DependsOn: []uint64{dep}}
	}
	cost := make([]int64, batches)
	for b := range batches {
		before := serverCPU(t, rdb)
		if _, err := h.s.CreateJobs(h.ctx, "q", specs); err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
		cost[b] = max(serverCPU(t, rdb)-before, 1)
	}
	// The cheapest of the first three batches against the cheapest of the
	// last three: a batch slowed by something else does not count.
	first, last := slices.Min(cost[:3]), slices.Min(cost[batches-3:])
	t.Logf("redis-server CPU per batch (µs): %v; last / first = %.2f", cost, float64(last)/float64(first))
	if float64(last) > 2*float64(first) {
		t.Fatalf("a batch of %d dependents costs %.1f times more with %d dependents already there (µs per batch: %v)",
			size, float64(last)/float64(first), (batches-3)*size, cost)
	}
	if j, err := h.s.GetJob(h.ctx, dep); err != nil || len(j.Dependents) != batches*size {
		t.Fatalf("dependents of %d: %d, %v, want %d", dep, len(j.Dependents), err, batches*size)
	}
	// Ending a dependency releases its dependents in time linear in their
	// number: per dependent, 10,000 cost about what 1,000 do.
	for i := range specs {
		specs[i] = ocypod.JobSpec{DependsOn: []uint64{small}}
	}
	if _, err := h.s.CreateJobs(h.ctx, "q", specs); err != nil {
		t.Fatal(err)
	}
	h.take("q", dep)
	h.take("q", small)
	release := func(id uint64) float64 {
		before := serverCPU(t, rdb)
		h.complete(id)
		return float64(max(serverCPU(t, rdb)-before, 1))
	}
	perSmall, perBig := release(small)/size, release(dep)/(batches*size)
	t.Logf("redis-server CPU per released dependent (µs): %.1f of 1,000, %.1f of 10,000", perSmall, perBig)
	if perBig > 3*perSmall {
		t.Errorf("releasing 10,000 dependents costs %.1f µs each, 1,000 %.1f µs each", perBig, perSmall)
	}
	if n, err := h.s.QueueSize(h.ctx, "q"); err != nil || n != (batches+1)*size {
		t.Fatalf("queue size after the dependencies completed = %d, %v, want %d", n, err, (batches+1)*size)
	}
}

// cycleRace runs, for pairs of pending jobs a (queue q) and b (queue q, or
// every other pair a queue apart), "a depends on b" and "b depends on a"
// at the same time through change, with four partitions on one server and
// on a three-node cluster: exactly one of the two applies, the other is
// refused (400), never both (which would leave both waiting forever). keys
// gives the jobs the keys change may name.
func cycleRace(t *testing.T, pairs int, keys bool, change func(h *harness, queue, key string, id, dep uint64) error) {
	for _, b := range []struct {
		name   string
		client func(tb testing.TB) redis.UniversalClient
	}{
		{"redis-P4", func(tb testing.TB) redis.UniversalClient { return redistest.Shared(tb).Client() }},
		{"cluster3-P4", func(tb testing.TB) redis.UniversalClient { return redistest.SharedCluster3(tb).Client() }},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, b.client(t), 4, redisstore.Options{})
			h.putQueue("q", settings(60, 0, 60, 0))
			other := h.queueApart("o", "q")
			h.putQueue(other, settings(60, 0, 60, 0))
			cycles, applied := 0, 0
			for i := range pairs {
				qb := "q"
				if i%2 == 1 { // every other pair spans two partitions
					qb = other
				}
				ka, kb := fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
				sa, sb := ocypod.JobSpec{}, ocypod.JobSpec{}
				if keys {
					sa.Key, sb.Key = ka, kb
				}
				a, bb := h.create("q", sa), h.create(qb, sb)
				start := make(chan struct{})
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for k, c := range []struct {
					queue, key string
					id, dep    uint64
				}{{"q", ka, a, bb}, {qb, kb, bb, a}} {
					wg.Go(func() {
						<-start
						errs[k] = change(h, c.queue, c.key, c.id, c.dep)
					})
				}
				close(start)
				wg.Wait()
				for _, err := range errs {
					if err == nil {
						applied++
					} else {
						wantKind(t, fmt.Sprintf("pair %d", i), err, ocypod.KindInvalid, "")
					}
				}
				ja, jb := h.job(a), h.job(bb)
				if slices.Contains(ja.DependsOn, bb) && slices.Contains(jb.DependsOn, a) {
					cycles++
				}
			}
			if cycles > 0 || applied != pairs {
				t.Fatalf("%d of %d pairs of concurrent dependency changes made a cycle; %d changes applied, want %d",
					cycles, pairs, applied, pairs)
			}
		})
	}
}

// TestDependsOnCycleRace: concurrent PATCHes of depends_on.
func TestDependsOnCycleRace(t *testing.T) {
	t.Parallel()
	cycleRace(t, 50, false, func(h *harness, _, _ string, id, dep uint64) error {
		return h.update(id, ocypod.JobUpdate{DependsOn: []uint64{dep}, DependsOnSet: true})
	})
}

// TestConflictUpdateCycleRace: an on_conflict update that gives a pending
// job new dependencies changes an existing job's depends_on too; two of
// them racing never close a cycle (they take the dependency lock and
// fence, as PATCH does).
func TestConflictUpdateCycleRace(t *testing.T) {
	t.Parallel()
	cycleRace(t, 40, true, func(h *harness, queue, key string, _, dep uint64) error {
		_, err := h.s.CreateJob(h.ctx, queue, ocypod.JobSpec{Key: key, OnConflict: ocypod.OnConflictUpdate, DependsOn: []uint64{dep}})
		return err
	})
}

// loadFixture writes a namespace dump of testdata (v1Entry records, keys
// starting "{<from>}:") into h's namespace.
func (h *harness) loadFixture(file, from string) {
	h.t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		h.t.Fatal(err)
	}
	var entries []v1Entry
	if err := json.Unmarshal(b, &entries); err != nil {
		h.t.Fatal(err)
	}
	dumped := make([]legacyEntry, len(entries))
	for i, e := range entries {
		dumped[i] = legacyEntry{P: 0, Name: strings.TrimPrefix(e.Key, "{"+from+"}:"), Type: e.Type, Value: e.Value}
	}
	h.writeEntries(dumped)
}

var depsCases = []conformanceCase{
	{name: "many dependents are released 100 per call", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		other := h.queueApart("o", "q")
		h.putQueue(other, settings(60, 0, 60, 0))
		// waitOn gives job dep 100 dependents (deps.lua's RELEASE_BATCH) in
		// q and 3 in other.
		waitOn := func(dep uint64) {
			specs := make([]ocypod.JobSpec, 100)
			for i := range specs {
				specs[i] = ocypod.JobSpec{DependsOn: []uint64{dep}}
			}
			if _, err := h.s.CreateJobs(h.ctx, "q", specs); err != nil {
				t.Fatal(err)
			}
			if _, err := h.s.CreateJobs(h.ctx, other, specs[:3]); err != nil {
				t.Fatal(err)
			}
		}
		dependents := func(id uint64) int {
			j, err := h.s.GetJob(h.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return len(j.Dependents)
		}
		sweep := func() {
			h.clock.Advance(time.Minute)
			if _, err := h.s.SweepOutbox(h.ctx); err != nil {
				t.Fatal(err)
			}
		}
		size := func(q string) uint64 {
			n, err := h.s.QueueSize(h.ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		a := h.create("q", ocypod.JobSpec{})
		qb := h.queueBeside("b", "q")
		h.putQueue(qb, settings(60, 0, 60, 0))
		b := h.create(qb, ocypod.JobSpec{})
		waitOn(a)
		waitOn(b)
		h.take("q", a)
		// The completion releases 100 and leaves the rest to an effect;
		// the process dies before applying it: the outbox sweep does.
		redisstore.SetCrashAfterCall(h.s, true)
		h.complete(a)
		redisstore.SetCrashAfterCall(h.s, false)
		if n := dependents(a); n != 3 {
			t.Fatalf("%d dependents of %d left after its completion, want 3 (the next call's)", n, a)
		}
		sweep()
		if n := dependents(a); n != 0 || size("q")+size(other) != 103 {
			t.Fatalf("after the sweep: %d dependents left, %d + %d queued, want 0 and 103", n, size("q"), size(other))
		}
		// A dependency cancelled, then queued again before the rest of its
		// dependents heard of it: those wait for its next end.
		redisstore.SetCrashAfterCall(h.s, true)
		h.setStatus(b, ocypod.StatusCancelled)
		redisstore.SetCrashAfterCall(h.s, false)
		h.setStatus(b, ocypod.StatusQueued)
		sweep()
		jb, err := h.s.GetJob(h.ctx, b)
		if err != nil || len(jb.Dependents) != 3 {
			t.Fatalf("dependents of requeued job %d = %v, %v, want the 3 not cancelled", b, jb.Dependents, err)
		}
		h.take(qb, b)
		h.complete(b)
		for _, id := range jb.Dependents {
			h.wantStatus(id, ocypod.StatusQueued)
		}
	}},
	{name: "depends_on changes", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		other := h.queueApart("o", "q")
		h.putQueue(other, settings(60, 0, 60, 0))
		a := h.create("q", ocypod.JobSpec{})
		b := h.create(other, ocypod.JobSpec{})
		c := h.create("q", ocypod.JobSpec{})
		dependOn := func(id uint64, deps ...uint64) error {
			return h.update(id, ocypod.JobUpdate{DependsOn: deps, DependsOnSet: true})
		}
		// c waits on b, b on a: a chain across partitions.
		if err := dependOn(b, a); err != nil {
			t.Fatal(err)
		}
		if err := dependOn(c, b); err != nil {
			t.Fatal(err)
		}
		h.wantStatus(c, ocypod.StatusWaiting)
		// a waiting on c would close the chain into a cycle.
		before := h.snapshot()
		wantKind(t, "a depends on c", dependOn(a, c), ocypod.KindInvalid, fmt.Sprintf("Invalid depends_on: job %d depends on job %d", c, a))
		h.wantUnchanged("a refused cycle", before)
		// Once b no longer waits on a, it may.
		if err := dependOn(b); err != nil {
			t.Fatal(err)
		}
		h.wantStatus(b, ocypod.StatusQueued)
		if err := dependOn(a, c); err != nil {
			t.Fatal(err)
		}
		h.wantStatus(a, ocypod.StatusWaiting)
		h.take(other, b)
		h.complete(b)
		h.take("q", c)
		h.complete(c)
		h.wantStatus(a, ocypod.StatusQueued)
	}},
	{name: "dependents in the deps hash of earlier versions", run: func(t *testing.T, h *harness) {
		if h.P != 1 {
			return // the fixture has one partition
		}
		// testdata/deps_hash.json was written by the store as it was when
		// a dependency's dependents were a JSON list in the hash deps:
		// queue q; jobs 1 and 4 queued; 2 and 3 wait on 1, 5 on 4, 6 on 1
		// and 4.
		h.loadFixture("testdata/deps_hash.json", "v2")
		if _, err := h.s.Open(h.ctx); err != nil {
			t.Fatalf("Open = %v", err)
		}
		j7 := h.create("q", ocypod.JobSpec{DependsOn: []uint64{1}})
		if j, err := h.s.GetJob(h.ctx, 1); err != nil || !slices.Equal(j.Dependents, []uint64{2, 3, 6, j7}) {
			t.Fatalf("dependents of 1 = %v, %v, want [2 3 6 %d]", j.Dependents, err, j7)
		}
		// The cycle check sees the jobs written before too.
		err := h.update(1, ocypod.JobUpdate{DependsOn: []uint64{2}, DependsOnSet: true})
		wantKind(t, "UpdateJob(1 depends on 2)", err, ocypod.KindInvalid, "Invalid depends_on: job 2 depends on job 1")
		h.take("q", 1)
		h.complete(1)
		for _, id := range []uint64{2, 3, j7} {
			h.wantStatus(id, ocypod.StatusQueued)
		}
		h.wantStatus(6, ocypod.StatusWaiting)
		h.setStatus(4, ocypod.StatusCancelled)
		h.wantStatus(5, ocypod.StatusCancelled)
		h.wantStatus(6, ocypod.StatusCancelled)
		for _, name := range []string{"deps", "dpt"} {
			if n := h.do("EXISTS", h.lay.Key(0, name)).Val(); n != int64(0) {
				t.Errorf("%s still exists after every dependency ended", name)
			}
		}
	}},
}
