package main

import (
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// TestMemoryBoundDecisions drives memoryBound with a fake heap and clock:
// no collection while the heap is under the bound, a collection decides
// when it is over, a full verdict stands for fullRecheck, then a new
// collection can let writes in again.
func TestMemoryBoundDecisions(t *testing.T) {
	t.Parallel()
	const max = 100
	m := newMemoryBound(max)
	var heap, live uint64
	collections := 0
	now := time.Unix(1000, 0)
	m.heap = func() uint64 { return heap }
	m.collect = func() uint64 { collections++; heap = live; return live }
	m.now = func() time.Time { return now }
	ctx := t.Context()

	check := func(step string, wantFull bool, wantCollections int) {
		t.Helper()
		err := m.admit(ctx)
		if full := err != nil; full != wantFull {
			t.Fatalf("%s: admit = %v, want full %t", step, err, wantFull)
		}
		if err != nil && (ocypod.ErrorKind(err) != ocypod.KindStorageFull ||
			!strings.Contains(ocypod.ErrorMessage(err), "redis.embedded_max_memory (OCYPOD_EMBEDDED_MAX_MEMORY) = 100B")) {
			t.Fatalf("%s: admit = %v, want StorageFull naming the setting", step, err)
		}
		if collections != wantCollections {
			t.Fatalf("%s: %d collections, want %d", step, collections, wantCollections)
		}
	}
	heap, live = 100, 100
	check("at the bound", false, 0)
	heap, live = 150, 80
	check("garbage over the bound", false, 1)
	heap, live = 150, 120
	check("live over the bound", true, 2)
	heap = 200
	now = now.Add(fullRecheck - time.Nanosecond)
	check("full verdict stands", true, 2)
	live = 50
	now = now.Add(time.Nanosecond)
	check("freed after the recheck time", false, 3)
	heap = 60
	check("under again", false, 3)
}

// TestMemoryMetrics keeps the runtime/metrics names memoryBound reads valid:
// an unknown name would read as 0 and disable the bound silently.
func TestMemoryMetrics(t *testing.T) {
	t.Parallel()
	want := map[string]bool{"/memory/classes/heap/objects:bytes": false, "/gc/heap/live:bytes": false}
	for _, d := range metrics.All() {
		if _, ok := want[d.Name]; ok {
			want[d.Name] = d.Kind == metrics.KindUint64
		}
	}
	for name, ok := range want {
		if !ok {
			t.Errorf("runtime/metrics has no uint64 %s", name)
		}
	}
	if m := newMemoryBound(1); m.heap() == 0 || m.collect() == 0 {
		t.Errorf("heap %d, live %d: want both above 0", m.heap(), m.collect())
	}
}
