package redistest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/redistest"
)

// TestSlot compares Slot with the server's own CLUSTER KEYSLOT, hash tags
// included.
func TestSlot(t *testing.T) {
	t.Parallel()
	rdb := redistest.SharedCluster3(t).Node(0).Client()
	keys := []string{"", "a", "foo", "123456789", "{user1000}.following", "{user1000}.followers",
		"foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "{", "}{", "{ocypod}:job:42", "ünïcode"}
	for i := range 200 {
		keys = append(keys, fmt.Sprintf("key:%d", i))
	}
	for _, k := range keys {
		want, err := rdb.ClusterKeySlot(t.Context(), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := redistest.Slot(k); int64(got) != want {
			t.Errorf("Slot(%q) = %d, CLUSTER KEYSLOT = %d", k, got, want)
		}
	}
}

// TestClusterSlotsEven: the three nodes split the slots into contiguous,
// even ranges, and every node sees that map.
func TestClusterSlotsEven(t *testing.T) {
	t.Parallel()
	c := redistest.SharedCluster3(t)
	if c.Len() != 3 {
		t.Fatalf("Len() = %d", c.Len())
	}
	next := 0
	for i := range c.Len() {
		first, last := c.SlotRange(i)
		if first != next || last-first+1 < redistest.SlotCount/3 || last-first+1 > redistest.SlotCount/3+1 {
			t.Errorf("node %d serves %d-%d after %d", i, first, last, next)
		}
		next = last + 1
		if c.NodeForSlot(first) != i || c.NodeForSlot(last) != i {
			t.Errorf("NodeForSlot of node %d's range is wrong", i)
		}
	}
	if next != redistest.SlotCount {
		t.Errorf("slots end at %d", next)
	}
	for i := range c.Len() {
		slots, err := c.Node(i).Client().ClusterSlots(t.Context()).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(slots) != c.Len() {
			t.Fatalf("node %d: CLUSTER SLOTS = %v", i, slots)
		}
		for _, s := range slots {
			owner := c.NodeForSlot(int(s.Start))
			if first, last := c.SlotRange(owner); int(s.Start) != first || int(s.End) != last || s.Nodes[0].Addr != c.Node(owner).Addr() {
				t.Errorf("node %d: CLUSTER SLOTS has %d-%d on %s", i, s.Start, s.End, s.Nodes[0].Addr)
			}
		}
	}
}

// TestClusterKeyNode: the node NodeForKey names serves the key, the others
// answer MOVED to it; the cluster client reaches all of them, and each
// node's command statistics count the work it did.
func TestClusterKeyNode(t *testing.T) {
	t.Parallel()
	c := redistest.SharedCluster3(t)
	ctx := t.Context()
	ns := redistest.Namespace(t)
	keys := keysPerNode(t, c, ns)
	before, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for owner, key := range keys {
		if err := c.Client().Set(ctx, key, "v", 0).Err(); err != nil {
			t.Fatalf("SET %s through the cluster client: %v", key, err)
		}
		for i := range c.Len() {
			v, err := c.Node(i).Client().Get(ctx, key).Result()
			switch {
			case i == owner && (err != nil || v != "v"):
				t.Errorf("GET %s on its node %d = %q, %v", key, i, v, err)
			case i != owner && (err == nil || !strings.HasPrefix(err.Error(), "MOVED ") || !strings.HasSuffix(err.Error(), c.Node(owner).Addr())):
				t.Errorf("GET %s on node %d = %q, %v; want MOVED to %s", key, i, v, err, c.Node(owner).Addr())
			}
		}
	}
	// Node 0 alone runs a burst of INCRs; the others' INCR counts stay put.
	for range 50 {
		if err := c.Client().Incr(ctx, keys[0]+":n").Err(); err != nil {
			t.Fatal(err)
		}
	}
	after, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Len() {
		d := after[i].Sub(before[i])
		want := int64(0)
		if i == c.NodeForKey(keys[0]+":n") {
			want = 50
		}
		if d.Commands["incr"].Calls != want || d.Commands["set"].Calls < 1 || d.Calls() < 2 || d.Usec() <= 0 || after[i].Addr != c.Node(i).Addr() {
			t.Errorf("node %d did %+v; want %d INCR and a SET", i, d, want)
		}
		if after[i].CPUSys+after[i].CPUUser <= 0 {
			t.Errorf("node %d: no CPU time in %+v", i, after[i])
		}
	}
}

// keysPerNode returns a key of namespace ns for each node, by node index.
func keysPerNode(t *testing.T, c *redistest.Cluster, ns string) []string {
	t.Helper()
	keys := make([]string, c.Len())
	found := 0
	for i := 0; found < c.Len(); i++ {
		k := fmt.Sprintf("{%s-%d}:k", ns, i)
		if n := c.NodeForKey(k); keys[n] == "" {
			keys[n] = k
			found++
		}
	}
	return keys
}

// TestClusterStopNode: with one node stopped, only keys of its slots fail;
// after RestartNode every key works again.
func TestClusterStopNode(t *testing.T) {
	t.Parallel()
	c, err := redistest.StartCluster(redistest.ClusterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), DisableIdentity: true, MaxRedirects: 1, DialerRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	keys := keysPerNode(t, c, redistest.Namespace(t))
	for _, k := range keys {
		if err := rdb.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	const down = 1
	if err := c.StopNode(down); err != nil {
		t.Fatal(err)
	}
	for n, k := range keys {
		err := rdb.Set(ctx, k, "w", 0).Err()
		if (n == down) != (err != nil) {
			t.Errorf("SET %s (node %d) with node %d stopped = %v", k, n, down, err)
		}
	}
	if _, err := c.Node(down).Stats(ctx); err == nil {
		t.Errorf("Stats of a stopped node succeeded")
	}
	if err := c.RestartNode(down); err != nil {
		t.Fatal(err)
	}
	for n, k := range keys {
		if err := rdb.Set(ctx, k, "x", 0).Err(); err != nil {
			t.Errorf("SET %s (node %d) after the restart = %v", k, n, err)
		}
	}
	if _, err := c.Stats(ctx); err != nil {
		t.Errorf("Stats after the restart = %v", err)
	}
}
