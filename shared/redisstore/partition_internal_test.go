package redisstore

import (
	"slices"
	"strconv"
	"testing"

	"github.com/ocyless/ocyless/shared/redistest"
)

// TestSlotMatchesRedis: the store's slot of a key is the one Redis Cluster
// computes (redistest.Slot is checked against CLUSTER KEYSLOT).
func TestSlotMatchesRedis(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"", "a", "{ns}:j", "{ns:3:1z}:idx", "{}x", "{a}{b}", "x{y", "{ns:11:k}:wake:q"} {
		if got, want := Slot(k), redistest.Slot(k); got != want {
			t.Errorf("Slot(%q) = %d, Redis: %d", k, got, want)
		}
	}
}

// TestPartitionsSpreadOverSlots: one partition keeps the namespace as its
// tag; with more, partition p's slot lies in the p-th of P equal slices of
// the slot range, so a cluster of N nodes with evenly split slots serves
// each node its share (P/N, rounded up or down) of the partitions.
func TestPartitionsSpreadOverSlots(t *testing.T) {
	t.Parallel()
	if tags := partitionTags("ns", 1); !slices.Equal(tags, []string{"ns"}) {
		t.Errorf("tags of one partition = %v, want [ns]", tags)
	}
	for _, P := range []int{2, 3, 4, 7, 12, 16, 64, MaxPartitions} {
		l := layoutFor("ns-"+strconv.Itoa(P), P)
		width := float64(clusterSlots) / float64(P)
		slots := make([]int, P)
		for p := range P {
			slots[p] = Slot(l.key(p, keyJob))
			if lo, hi := float64(p)*width, float64(p+1)*width; float64(slots[p]) < lo || float64(slots[p]) >= hi {
				t.Fatalf("P=%d: partition %d in slot %d, outside its slice [%.0f, %.0f)", P, p, slots[p], lo, hi)
			}
		}
		for _, N := range []int{2, 3, 5, 6} {
			if N > P {
				continue
			}
			per := make([]int, N)
			for _, s := range slots {
				per[s*N/clusterSlots]++
			}
			if slices.Max(per)-slices.Min(per) > 1 {
				t.Errorf("P=%d on %d nodes: partitions per node %v", P, N, per)
			}
		}
	}
}

// TestShardSpread: a queue's shards are distinct partitions starting at
// its home, and the first K of them lie on K different nodes of a cluster
// of K nodes whenever P is K times a power of two.
func TestShardSpread(t *testing.T) {
	t.Parallel()
	for P := 1; P <= MaxPartitions; P++ {
		l := layoutFor("ns", P)
		for _, home := range []int{0, P / 2, P - 1} {
			seen := map[int]bool{}
			for i := range P {
				seen[l.shard(home, i)] = true
			}
			for i := range P {
				if got := l.shardIndex(home, l.shard(home, i)); got != i {
					t.Fatalf("P=%d home %d: shardIndex of shard %d = %d", P, home, i, got)
				}
			}
			if l.shard(home, 0) != home || len(seen) != P {
				t.Fatalf("P=%d home %d: shard 0 = %d, %d distinct shards", P, home, l.shard(home, 0), len(seen))
			}
		}
	}
	for _, c := range []struct{ P, K int }{{12, 3}, {6, 3}, {8, 2}, {8, 4}, {16, 4}, {24, 3}, {20, 5}} {
		l := layoutFor("ns", c.P)
		for home := range c.P {
			nodes := map[int]bool{}
			for i := range c.K {
				nodes[Slot(l.key(l.shard(home, i), "j"))*c.K/clusterSlots] = true
			}
			if len(nodes) != c.K {
				t.Errorf("P=%d, home %d: the first %d shards are on %d of %d nodes", c.P, home, c.K, len(nodes), c.K)
			}
		}
	}
}
