package redisstore_test

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// readCommands are the commands an import may send to its source: reads
// and the connection handshake (INFO and CONFIG are this test's own).
var readCommands = []string{"hello", "auth", "select", "ping", "client|setname", "client|setinfo",
	"scan", "type", "exists", "get", "mget", "hgetall", "hget", "hmget", "lrange", "llen", "smembers", "scard",
	"info", "config|resetstat"}

// TestImportOnlyReadsTheSource imports from a private redis-server holding
// an upstream database without a namespace (Ocypod's default) and checks,
// on the server itself, that only read commands reached it and that every
// key's DUMP is the same afterwards.
func TestImportOnlyReadsTheSource(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	upstreamFixture(newUpstreamDB(t, srv.Client(), "", t0))
	before := dumpKeys(t, srv.Client(), "")
	dirty := func() string {
		info := srv.Client().Info(t.Context(), "persistence").Val()
		for line := range strings.Lines(info) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "rdb_changes_since_last_save:"); ok {
				return v
			}
		}
		t.Fatal("INFO persistence has no rdb_changes_since_last_save")
		return ""
	}
	changes := dirty()
	if err := srv.Client().ConfigResetStat(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}

	h := newHarness(t, redistest.Shared(t).Client(), 1, redisstore.Options{})
	src := sourceClient(t, srv)
	rep := h.runImport(redisstore.ImportOptions{Source: src, SourceName: "private", BatchSize: 7})
	if rep.Copied != 71 {
		t.Fatalf("report = %+v", rep)
	}
	// The hook Import put on the client refuses writes before they leave.
	if err := src.Set(t.Context(), "x", "1", 0).Err(); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("SET through the source client = %v, want it refused", err)
	}
	if err := src.Eval(t.Context(), "return 1", nil).Err(); err == nil {
		t.Error("EVAL through the source client went through")
	}
	// A refusal of the other namespace name reads only too.
	_, err = h.s.Import(h.ctx, redisstore.ImportOptions{Source: sourceClient(t, srv), SourceNamespace: "ocy", SourceName: "private"})
	wantRefused(t, err, `holds no Ocypod data: no key "ocy:queues" or "ocy:job_id"; Ocypod data was found under the namespace "" (none)`)

	st, err := srv.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range st.Commands {
		if !slices.Contains(readCommands, name) {
			t.Errorf("the source ran %s %d times", name, c.Calls)
		}
	}
	if got := dirty(); got != changes {
		t.Errorf("rdb_changes_since_last_save went from %s to %s", changes, got)
	}
	if after := dumpKeys(t, srv.Client(), ""); !maps.Equal(before, after) {
		t.Error("the source's keys changed")
	}
	if g, err := h.s.Failures(h.ctx); err != nil || g["timed_out"] != 1 {
		t.Errorf("Failures = %v, %v", g, err)
	}
}

// TestImportClusterPartitions imports into four partitions on a cluster of
// three primaries: each job is found by its id on the node of its
// partition, and every queue serves its jobs wherever they landed.
func TestImportClusterPartitions(t *testing.T) {
	t.Parallel()
	c := redistest.SharedCluster3(t)
	h := newHarness(t, c.Client(), 4, redisstore.Options{})
	nodes := map[int]bool{}
	for p := range 4 {
		nodes[c.NodeForKey(h.lay.Key(p, "j"))] = true
	}
	if len(nodes) < 2 {
		t.Fatalf("the four partitions are on %d node(s)", len(nodes))
	}
	o, _ := h.importSource()
	// Data on any node of the namespace refuses the import: the target
	// check looks at every primary.
	full := newHarness(t, c.Client(), 4, redisstore.Options{})
	var other string
	for i := 0; other == ""; i++ {
		if i == 1000 {
			t.Fatal("no queue name has its home away from the namespace's own node")
		}
		q := "q" + strconv.Itoa(i)
		if c.NodeForKey(full.lay.Key(full.lay.Home(q), "q")) != c.NodeForKey("{"+full.ns+"}:meta") {
			other = q
		}
	}
	full.putQueue(other, settings(60, 0, 60, 0))
	snap := clusterDump(t, c, full.ns)
	_, err := full.s.Import(full.ctx, o)
	wantRefused(t, err, "already holds data")
	if after := clusterDump(t, c, full.ns); len(snap) == 0 || !maps.Equal(snap, after) {
		t.Errorf("a refused import changed the data: %v -> %v", slices.Sorted(maps.Keys(snap)), slices.Sorted(maps.Keys(after)))
	}

	rep := h.runImport(o)
	if rep.Copied != 71 {
		t.Fatalf("report = %+v", rep)
	}
	for id := uint64(1); id <= upGoneQueued; id++ {
		if id == upStub {
			continue
		}
		if j, err := h.s.GetJob(h.ctx, id); err != nil || j.ID != id {
			t.Errorf("GetJob(%d) = %+v, %v", id, j, err)
		}
	}
	if n, err := h.s.QueueSize(h.ctx, "bulk"); err != nil || n != 62 {
		t.Errorf("QueueSize(bulk) = %d, %v", n, err)
	}
	seen := map[uint64]bool{}
	for {
		n := h.next("bulk")
		if n == nil {
			break
		}
		seen[n.ID] = true
	}
	if len(seen) != 62 {
		t.Errorf("took %d bulk jobs, want 62", len(seen))
	}
	h.setStatus(upRunning, ocypod.StatusCompleted)
	h.wantStatus(upRunning, ocypod.StatusCompleted)
}

// clusterDump is the DUMP of every key of namespace ns on every primary
// of c.
func clusterDump(t *testing.T, c *redistest.Cluster, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i := range c.Len() {
		rdb := c.Node(i).Client()
		for _, pat := range []string{"{" + ns + "}:*", "{" + ns + ":*"} {
			keys, err := rdb.Keys(t.Context(), pat).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				out[k] = rdb.Dump(t.Context(), k).Val()
			}
		}
	}
	return out
}
