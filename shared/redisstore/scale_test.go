package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// scaleStore is a store of a fresh namespace over P partitions on cluster
// c, through the client a deployment uses (a cluster client seeded with
// one node, as with a configuration endpoint).
func scaleStore(t *testing.T, c *redistest.Cluster, P int, timeout time.Duration) (*redisstore.Store, string) {
	t.Helper()
	rdb := mustClient(t, redisstore.ClientOptions{URL: c.URL(), ClusterMode: true,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	ns := redistest.Namespace(t)
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Partitions: P})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s, ns
}

// TestHotQueueSpreadsOverNodes: a queue sharded over 3 or all 12
// partitions of a 3-primary cluster spreads its work evenly: no node
// executes more than 1.25x the mean of the script calls, nor holds more
// than 1.25x the mean of the jobs.
func TestHotQueueSpreadsOverNodes(t *testing.T) {
	t.Parallel()
	c, err := redistest.StartCluster(redistest.ClusterOptions{Primaries: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	const P = 12
	for _, shards := range []uint64{3, P} { // one after the other: the counts are per node
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			s, ns := scaleStore(t, c, P, 0)
			ctx := t.Context()
			if _, err := s.PutQueue(ctx, "hot", ocypod.DefaultQueueSettings()); err != nil {
				t.Fatal(err)
			}
			if err := s.PatchQueue(ctx, "hot", ocypod.QueuePatch{Shards: &shards}); err != nil {
				t.Fatal(err)
			}
			before, err := c.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			runLifecycles(t, s, 6, 200)
			after, err := c.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			calls := make([]float64, c.Len())
			usec := make([]float64, c.Len())
			for i := range after {
				d := after[i].Sub(before[i])
				for _, name := range []string{"fcall", "evalsha", "eval"} {
					calls[i] += float64(d.Commands[name].Calls)
					usec[i] += float64(d.Commands[name].Usec)
				}
			}
			// Every job's metadata lives in its partition's job hash.
			l := redisstore.LayoutOf(ns, P)
			jobs := make([]float64, c.Len())
			for p := range P {
				key := l.Key(p, "j")
				n, err := c.Client().HLen(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				jobs[c.NodeForKey(key)] += float64(n)
			}
			t.Logf("per node: script calls %v, script µs %v (not asserted: a timing), jobs %v", calls, usec, jobs)
			for _, m := range []struct {
				what string
				per  []float64
			}{{"script calls", calls}, {"jobs", jobs}} {
				mean := 0.0
				for _, v := range m.per {
					mean += v / float64(len(m.per))
				}
				for i, v := range m.per {
					if mean == 0 || v > 1.25*mean {
						t.Errorf("node %d: %s %.0f, mean %.1f: want at most 1.25x the mean", i, m.what, v, mean)
					}
				}
			}
		})
	}
}

// runLifecycles runs workers goroutines of each lifecycles on the hot
// queue; it fails t at the first error.
func runLifecycles(t *testing.T, s *redisstore.Store, workers, each int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range each {
				if err := scaleLifecycle(t.Context(), s); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// scaleLifecycle creates two jobs in the hot queue, takes one and
// completes it: half the jobs stay queued, so their memory is compared
// too.
func scaleLifecycle(ctx context.Context, s *redisstore.Store) error {
	for range 2 {
		if _, err := s.CreateJob(ctx, "hot", ocypod.JobSpec{Input: []byte(`{"n":1}`)}); err != nil {
			return err
		}
	}
	next, err := s.NextJob(ctx, "hot")
	if err != nil {
		return err
	}
	if next == nil {
		return fmt.Errorf("no job to take")
	}
	completed := ocypod.StatusCompleted
	_, _, err = s.UpdateJob(ctx, next.ID, ocypod.JobUpdate{Status: &completed}, nil)
	return err
}

// TestNodeStopsMidRun: with one of three primaries stopped, the operations
// on the partitions it serves answer Unavailable (a 503) and change
// nothing, the others keep working; when the node is back (its data
// persisted, as a replica's promotion keeps it), the same store serves
// every partition again and no job is lost.
func TestNodeStopsMidRun(t *testing.T) {
	t.Parallel()
	c, err := redistest.StartCluster(redistest.ClusterOptions{Primaries: 3, AppendOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	const P = 12
	s, ns := scaleStore(t, c, P, 0)
	ctx := t.Context()
	l := redisstore.LayoutOf(ns, P)
	// One queue homed in each partition.
	queues := make([]string, P)
	for i, found := 0, 0; found < P; i++ {
		q := fmt.Sprintf("q%d", i)
		if p := l.Home(q); queues[p] == "" {
			queues[p] = q
			found++
		}
	}
	ids := make([][]uint64, P) // the jobs of each partition
	create := func(p int) error {
		cr, err := s.CreateJob(ctx, queues[p], ocypod.JobSpec{Input: []byte(`{"p":1}`)})
		if err == nil {
			ids[p] = append(ids[p], cr.ID)
		}
		return err
	}
	for p, q := range queues {
		if _, err := s.PutQueue(ctx, q, ocypod.DefaultQueueSettings()); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := create(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	node := func(p int) int { return c.NodeForKey(l.Key(p, "j")) }
	const down = 1
	onDown := 0
	for p := range P {
		if node(p) == down {
			onDown++
		}
	}
	if onDown == 0 || onDown == P {
		t.Fatalf("%d of %d partitions on node %d: the test needs some on it and some elsewhere", onDown, P, down)
	}
	if err := c.StopNode(down); err != nil {
		t.Fatal(err)
	}
	for p := range P {
		isDown := node(p) == down
		err := create(p)
		checkDownErr(t, fmt.Sprintf("CreateJob in partition %d", p), err, isDown)
		_, err = s.GetJob(ctx, ids[p][0])
		checkDownErr(t, fmt.Sprintf("GetJob of partition %d", p), err, isDown)
		next, err := s.NextJob(ctx, queues[p])
		checkDownErr(t, fmt.Sprintf("NextJob in partition %d", p), err, isDown)
		if err == nil && (next == nil || next.ID != ids[p][0]) {
			t.Errorf("NextJob in partition %d = %+v, want job %d", p, next, ids[p][0])
		}
	}
	// A fan-out read needs every partition.
	_, err = s.Info(ctx)
	checkDownErr(t, "Info", err, true)

	if err := c.RestartNode(down); err != nil {
		t.Fatal(err)
	}
	// The same store, without a restart: every partition answers, every
	// acknowledged job is there, and none of the refused creates is.
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("Info after the node came back = %v", err)
	}
	var total uint64
	for p, q := range queues {
		qi := info.Queues[q]
		total += qi.Queued + qi.Running
		want := len(ids[p])
		if got := int(qi.Queued + qi.Running); got != want {
			t.Errorf("queue %s (partition %d, node %d): %d jobs, want %d", q, p, node(p), got, want)
		}
		for _, id := range ids[p] {
			if _, err := s.GetJob(ctx, id); err != nil {
				t.Errorf("job %d of partition %d after the restart: %v", id, p, err)
			}
		}
		if err := create(p); err != nil {
			t.Errorf("CreateJob in partition %d after the restart = %v", p, err)
		}
	}
	if want := uint64(P*4 - onDown); total != want {
		t.Errorf("%d jobs in all, want %d (3 per partition, plus one per partition that was up)", total, want)
	}
}

// checkDownErr fails t unless err is an Unavailable error when the call's
// partition is on the stopped node, and nil otherwise.
func checkDownErr(t *testing.T, what string, err error, down bool) {
	t.Helper()
	switch {
	case down && ocypod.ErrorKind(err) != ocypod.KindUnavailable:
		t.Errorf("%s with its node stopped = %v, want Unavailable", what, err)
	case !down && err != nil:
		t.Errorf("%s with another node stopped = %v, want success", what, err)
	}
}
