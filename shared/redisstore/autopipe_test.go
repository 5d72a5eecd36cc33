package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redistest"
)

// incrScript counts its runs in KEYS[1] and answers the count.
const incrScript = "return tostring(redis.call('INCR', KEYS[1]))"

// gatedConn is a connection whose next read, once armed, runs onRead first
// (to stall a flush in flight, or to close the connection under it).
type gatedConn struct {
	net.Conn
	d *gatedDialer
}

type gatedDialer struct {
	armed  atomic.Bool
	onRead func(c net.Conn)
}

func (d *gatedDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &gatedConn{Conn: c, d: d}, nil
}

func (c *gatedConn) Read(p []byte) (int, error) {
	if c.d.armed.CompareAndSwap(true, false) {
		c.d.onRead(c.Conn)
	}
	return c.Conn.Read(p)
}

// gatedClient is NewClient's client for srv (generous timeouts) whose
// connections go through a gatedDialer.
func gatedClient(t *testing.T, srv *redistest.Server) (redis.UniversalClient, *gatedDialer) {
	t.Helper()
	u, err := parseURL(srv.URL(), false)
	if err != nil {
		t.Fatal(err)
	}
	settings(u, ClientOptions{DialTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	d := &gatedDialer{}
	u.Dialer = d.dial
	rdb := newClient(u)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb, d
}

// holdFirstFlush makes a's first flush wait until n calls are queued: they
// then go in one pipeline (the batch is large enough).
// The hooks stay set (flushes may still read them): they do nothing once
// the n-th call was queued.
func holdFirstFlush(a *autoPipe, n int) {
	waitIdle(a)
	var count atomic.Int64
	ready := make(chan struct{})
	a.afterQueue.Store(ptr(func() {
		if count.Add(1) == int64(n) {
			close(ready)
		}
	}))
	a.beforeTake.Store(ptr(func() { <-ready }))
}

func ptr[T any](v T) *T { return &v }

// waitIdle waits until a has no flush running (the one of a call that
// returned may still be ending).
func waitIdle(a *autoPipe) {
	for {
		a.mu.Lock()
		live := a.live
		a.mu.Unlock()
		if live == 0 {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func incr(ctx context.Context, a *autoPipe, key string) (string, error) {
	return a.do(ctx, time.Time{}, scriptCmd(ctx, "eval", incrScript, []string{key}, ""))
}

// TestAutoPipeBatches: calls queued while a flush is busy go together in
// one pipeline, and each gets its own answer.
func TestAutoPipeBatches(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	rdb, _ := gatedClient(t, srv)
	a := newAutoPipe(rdb, 1)
	const n = 50
	holdFirstFlush(a, n)
	ctx := t.Context()
	ns := redistest.Namespace(t)
	var wg sync.WaitGroup
	got := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			// Each call has its own key: its answer is 1, and the key
			// tells whose it is.
			got[i], errs[i] = a.do(ctx, time.Time{}, scriptCmd(ctx, "eval", "return KEYS[1] .. '=' .. redis.call('INCR', KEYS[1])", []string{fmt.Sprintf("%s:%d", ns, i)}, ""))
		})
	}
	wg.Wait()
	for i := range n {
		if want := fmt.Sprintf("%s:%d=1", ns, i); errs[i] != nil || got[i] != want {
			t.Errorf("call %d = %q, %v, want %q", i, got[i], errs[i], want)
		}
	}
	if f := a.flushes.Load(); f != 1 {
		t.Errorf("%d calls went in %d pipelines, want 1", n, f)
	}
}

// TestAutoPipeKilledFlush: a connection that dies after Redis ran a flush's
// scripts, before their answers are read, fails every call of that flush,
// and none is sent again: each script ran exactly once.
func TestAutoPipeKilledFlush(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	rdb, d := gatedClient(t, srv)
	ctx := t.Context()
	key := redistest.Namespace(t) + ":runs"
	a := newAutoPipe(rdb, 1)
	// A first call dials the pipeline connection (its handshake reads are
	// not the ones to cut).
	if _, err := incr(ctx, a, key); err != nil {
		t.Fatal(err)
	}
	const n = 20
	holdFirstFlush(a, n)
	d.onRead = func(c net.Conn) {
		// Every script of the flush has run: then the connection dies.
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if v, _ := srv.Client().Get(ctx, key).Int(); v == 1+n {
				break
			}
			time.Sleep(time.Millisecond)
		}
		_ = c.Close()
	}
	d.armed.Store(true)
	var wg sync.WaitGroup
	var failed atomic.Int32
	for range n {
		wg.Go(func() {
			if _, err := incr(ctx, a, key); err != nil {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() != n {
		t.Errorf("%d of %d calls failed, want all (one flush, cut)", failed.Load(), n)
	}
	if v, err := srv.Client().Get(ctx, key).Int(); err != nil || v != 1+n {
		t.Fatalf("scripts ran %d times (%v), want %d: a call was sent again", v-1, err, n)
	}
	// The pipeline works again on a new connection.
	if got, err := incr(ctx, a, key); err != nil || got != strconv.Itoa(n+2) {
		t.Fatalf("call after the cut = %q, %v", got, err)
	}
}

// TestAutoPipeCancel: a call whose context ends while it is queued returns
// at once and is never sent; one whose context ends while its flush is in
// flight returns at once, and its command still runs.
func TestAutoPipeCancel(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	rdb, d := gatedClient(t, srv)
	ctx := t.Context()
	key := redistest.Namespace(t) + ":runs"
	a := newAutoPipe(rdb, 1)

	// Queued: the flush is held until the call gave up.
	release := make(chan struct{})
	queued := make(chan struct{})
	var once sync.Once
	a.afterQueue.Store(ptr(func() { once.Do(func() { close(queued) }) }))
	a.beforeTake.Store(ptr(func() { <-release }))
	cctx, cancel := context.WithCancel(ctx)
	res := make(chan error, 1)
	go func() { _, err := incr(cctx, a, key); res <- err }()
	<-queued
	cancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled queued call = %v, want context.Canceled", err)
	}
	close(release)
	// The next call goes after the held batch: the cancelled one never ran.
	if got, err := incr(ctx, a, key); err != nil || got != "1" {
		t.Fatalf("call after the cancelled one = %q, %v, want 1 (the cancelled call ran)", got, err)
	}

	// In flight: the flush's read is stalled until the call gave up.
	inFlight, resume := make(chan struct{}), make(chan struct{})
	d.onRead = func(net.Conn) { close(inFlight); <-resume }
	d.armed.Store(true)
	cctx, cancel = context.WithCancel(ctx)
	go func() { _, err := incr(cctx, a, key); res <- err }()
	<-inFlight
	cancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call in flight = %v, want context.Canceled", err)
	}
	close(resume)
	// Its command was sent and ran: the next call sees 3.
	if got, err := incr(ctx, a, key); err != nil || got != "3" {
		t.Fatalf("call after the cancelled one in flight = %q, %v, want 3", got, err)
	}
}

// TestAutoPipeDeadline: a call's own deadline (the operation's, passed
// without a context of its own) ends it as its context would: while
// queued, it returns when it passes and is never sent; in flight, it
// returns when it passes, and its command still runs.
func TestAutoPipeDeadline(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	rdb, d := gatedClient(t, srv)
	ctx := context.WithoutCancel(t.Context()) // no deadline: the call's own decides
	key := redistest.Namespace(t) + ":runs"
	a := newAutoPipe(rdb, 1)
	const budget = 200 * time.Millisecond
	call := func() (string, error) {
		return a.do(ctx, time.Now().Add(budget), scriptCmd(ctx, "eval", incrScript, []string{key}, ""))
	}
	check := func(what string, start time.Time, err error) {
		t.Helper()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s = %v, want context.DeadlineExceeded", what, err)
		}
		if took := time.Since(start); took < budget || took > budget+5*time.Second {
			t.Fatalf("%s returned after %v, want its deadline (%v)", what, took, budget)
		}
		if ocypod.ErrorMessage(translate(err)) != "Failed to connect to Redis: timed out" {
			t.Fatalf("%s: %v answers %v", what, err, translate(err))
		}
	}

	// Queued: the flush is held until the call gave up.
	release := make(chan struct{})
	a.beforeTake.Store(ptr(func() { <-release }))
	start := time.Now()
	_, err := call()
	check("call queued past its deadline", start, err)
	close(release)
	a.beforeTake.Store(nil)
	// The next call goes after the held batch: the expired one never ran.
	if got, err := incr(ctx, a, key); err != nil || got != "1" {
		t.Fatalf("call after the expired one = %q, %v, want 1 (the expired call ran)", got, err)
	}

	// In flight: the flush's read is stalled until the call gave up.
	inFlight, resume := make(chan struct{}), make(chan struct{})
	d.onRead = func(net.Conn) { close(inFlight); <-resume }
	d.armed.Store(true)
	res := make(chan error, 1)
	start = time.Now()
	go func() { _, err := call(); res <- err }()
	<-inFlight
	check("call in flight past its deadline", start, <-res)
	close(resume)
	// Its command was sent and ran: the next call sees 3.
	if got, err := incr(ctx, a, key); err != nil || got != "3" {
		t.Fatalf("call after the expired one in flight = %q, %v, want 3", got, err)
	}

	// A deadline already past: nothing is sent.
	if _, err := a.do(ctx, time.Now().Add(-time.Second), scriptCmd(ctx, "eval", incrScript, []string{key}, "")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call past its deadline = %v", err)
	}
	if got, err := incr(ctx, a, key); err != nil || got != "4" {
		t.Fatalf("call after one past its deadline = %q, %v, want 4", got, err)
	}
}

// pipedStore is a store on srv's shared server with automatic pipelining
// whose first flush waits for n calls.
func pipedStore(t *testing.T, rdb redis.UniversalClient, opts Options, n int) *Store {
	t.Helper()
	opts.Namespace = redistest.Namespace(t)
	s, err := New(rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.pipe == nil {
		t.Fatal("automatic pipelining is off by default")
	}
	ctx := t.Context()
	if _, err := s.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	s.pipe.flushes.Store(0)
	holdFirstFlush(s.pipe, n)
	return s
}

// createMany creates n jobs at once, job i with input i, and checks that
// each creator got its own job and that there are n jobs.
func createMany(t *testing.T, s *Store, n int) {
	t.Helper()
	ctx := t.Context()
	ids := make([]uint64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := s.CreateJob(ctx, "q", ocypod.JobSpec{Input: json.RawMessage(strconv.Itoa(i))})
			ids[i], errs[i] = c.ID, err
		})
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("CreateJob %d = %v", i, errs[i])
		}
		if seen[ids[i]] {
			t.Fatalf("job %d given to two creators", ids[i])
		}
		seen[ids[i]] = true
		j, err := s.GetJob(ctx, ids[i])
		if err != nil || string(j.Input) != strconv.Itoa(i) {
			t.Fatalf("job %d of creator %d = %s, %v", ids[i], i, j.Input, err)
		}
	}
	if size, err := s.QueueSize(ctx, "q"); err != nil || size != uint64(n) {
		t.Fatalf("queue size = %d, %v, want %d", size, err, n)
	}
}

// TestAutoPipeStore: many concurrent store calls through one pipeline each
// get their own answer.
func TestAutoPipeStore(t *testing.T) {
	t.Parallel()
	s := pipedStore(t, redistest.Shared(t).Client(), Options{}, 40)
	createMany(t, s, 40)
}

// TestAutoPipeScriptMissing: a pipeline whose scripts the server does not
// have (NOSCRIPT for EVALSHA, no function library for FCALL) did not run
// them; each call is sent again with its script and runs once.
func TestAutoPipeScriptMissing(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	for _, mode := range []string{"eval", "functions"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			rdb := srv.Client()
			s := pipedStore(t, rdb, Options{Scripts: mode}, 30)
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if err := rdb.FunctionFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			createMany(t, s, 30)
		})
	}
}

// TestAutoPipeCluster: one pipeline of calls for namespaces on every node
// of a cluster is split by node, and each call gets its own answer.
func TestAutoPipeCluster(t *testing.T) {
	t.Parallel()
	three := redistest.SharedCluster3(t)
	rdb, err := NewClient(ClientOptions{URL: three.URL(), ClusterMode: true, ReadTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()
	// Stores on every node, sharing one client (so one pipeline).
	var stores []*Store
	onNode := map[int]bool{}
	for len(onNode) < three.Len() || len(stores) < 6 {
		ns := redistest.Namespace(t)
		onNode[three.NodeForKey(LayoutOf(ns, 1).Key(0, "q"))] = true
		s, err := New(rdb, Options{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	const per = 10
	// The stores have pipes of their own: route all through the first's.
	a := stores[0].pipe
	for _, s := range stores {
		s.pipe = a
	}
	a.flushes.Store(0)
	holdFirstFlush(a, per*len(stores))
	type res struct {
		id  uint64
		err error
	}
	got := make([][]res, len(stores))
	var wg sync.WaitGroup
	for k, s := range stores {
		got[k] = make([]res, per)
		for i := range per {
			wg.Go(func() {
				c, err := s.CreateJob(ctx, "q", ocypod.JobSpec{Input: json.RawMessage(strconv.Itoa(i))})
				got[k][i] = res{c.ID, err}
			})
		}
	}
	wg.Wait()
	if f := a.flushes.Load(); f != 1 {
		t.Errorf("the creates went in %d pipelines, want 1", f)
	}
	for k, s := range stores {
		for i, r := range got[k] {
			if r.err != nil {
				t.Fatalf("store %d CreateJob %d = %v", k, i, r.err)
			}
			j, err := s.GetJob(ctx, r.id)
			if err != nil || string(j.Input) != strconv.Itoa(i) {
				t.Fatalf("store %d job %d of creator %d = %s, %v", k, r.id, i, j.Input, err)
			}
		}
		if size, err := s.QueueSize(ctx, "q"); err != nil || size != per {
			t.Fatalf("store %d queue size = %d, %v, want %d", k, size, err, per)
		}
	}
}

// TestAutoPipeOff: a negative Options.AutoPipeline sends each call on its
// own, and the store works the same.
func TestAutoPipeOff(t *testing.T) {
	t.Parallel()
	s, err := New(redistest.Shared(t).Client(), Options{Namespace: redistest.Namespace(t), AutoPipeline: -1})
	if err != nil {
		t.Fatal(err)
	}
	if s.pipe != nil {
		t.Fatal("AutoPipeline -1 left automatic pipelining on")
	}
	if _, err := s.PutQueue(t.Context(), "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	createMany(t, s, 20)
	for _, n := range []int{0, 3} {
		s, err := New(redistest.Shared(t).Client(), Options{AutoPipeline: n})
		if err != nil || s.pipe == nil || s.pipe.maxLive != max(n, defaultAutoPipeline) {
			t.Fatalf("AutoPipeline %d: pipe %+v, %v", n, s.pipe, err)
		}
	}
}

// TestAutoPipeBounds: a flush carries at most maxBatch calls and about
// maxPipeBytes of arguments.
func TestAutoPipeBounds(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	rdb, _ := gatedClient(t, srv)
	ctx := t.Context()
	key := redistest.Namespace(t)
	for _, tc := range []struct {
		name      string
		n, batch  int
		arg       int
		wantFlush int64
	}{
		{"calls", 10, 4, 10, 3},                   // 4 + 4 + 2
		{"bytes", 10, maxPipeBatch, 300 << 10, 4}, // 3 + 3 + 3 + 1 of 300 KiB
		{"one call over the bytes", 2, maxPipeBatch, maxPipeBytes + 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAutoPipe(rdb, 1)
			a.maxBatch = tc.batch
			holdFirstFlush(a, tc.n)
			arg := strings.Repeat("x", tc.arg)
			var wg sync.WaitGroup
			for range tc.n {
				wg.Go(func() {
					if got, err := a.do(ctx, time.Time{}, scriptCmd(ctx, "eval", "return tostring(#ARGV[1])", []string{key}, arg)); err != nil || got != strconv.Itoa(tc.arg) {
						t.Errorf("call = %q, %v", got, err)
					}
				})
			}
			wg.Wait()
			if f := a.flushes.Load(); f != tc.wantFlush {
				t.Errorf("%d calls went in %d pipelines, want %d", tc.n, f, tc.wantFlush)
			}
		})
	}
}

// TestAutoPipeMoved: the slot of a store's partition moves to another node
// after the client learnt the slot map; the next flush's calls are all
// answered MOVED, go-redis sends them to the new node, and each runs once.
func TestAutoPipeMoved(t *testing.T) {
	t.Parallel()
	c, err := redistest.StartCluster(redistest.ClusterOptions{Primaries: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	rdb, err := NewClient(ClientOptions{URL: c.URL(), ClusterMode: true, ReadTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()
	s, err := New(rdb, Options{Namespace: "moved"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	// Move the partition's slot, with its keys, from node "from" to "to".
	slot := redistest.Slot(s.l.key(0, "q"))
	from := c.NodeForSlot(slot)
	to := 1 - from
	src, dst := c.Node(from).Client(), c.Node(to).Client()
	srcID, err := src.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		t.Fatal(err)
	}
	dstID, err := dst.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(c.Addrs()[to])
	for _, step := range [][]any{
		{dst, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID},
		{src, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID},
	} {
		if err := step[0].(redis.UniversalClient).Do(ctx, step[1:]...).Err(); err != nil {
			t.Fatalf("%v: %v", step[1:], err)
		}
	}
	keys, err := src.Do(ctx, "CLUSTER", "GETKEYSINSLOT", slot, 1000).StringSlice()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys in slot %d: %v, %v", slot, keys, err)
	}
	migrate := []any{"MIGRATE", host, port, "", 0, 10000, "KEYS"}
	for _, k := range keys {
		migrate = append(migrate, k)
	}
	if err := src.Do(ctx, migrate...).Err(); err != nil {
		t.Fatalf("MIGRATE: %v", err)
	}
	for _, node := range []redis.UniversalClient{dst, src} {
		if err := node.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err(); err != nil {
			t.Fatalf("SETSLOT NODE: %v", err)
		}
	}
	moved := func() int {
		info, err := src.Info(ctx, "errorstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "errorstat_MOVED:count="); ok {
				n, _ := strconv.Atoi(rest)
				return n
			}
		}
		return 0
	}
	before := moved()
	holdFirstFlush(s.pipe, 30)
	createMany(t, s, 30)
	if n := moved() - before; n < 30 {
		t.Errorf("the old node answered MOVED %d times, want the 30 creates' at least", n)
	}
	if n, err := src.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", slot).Int(); err != nil || n != 0 {
		t.Fatalf("the old node holds %d keys of the slot (%v)", n, err)
	}
}
