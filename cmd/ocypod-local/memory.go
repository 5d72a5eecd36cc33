package main

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/ocypod"
)

// fullRecheck is how long a "full" verdict stands before another forced
// collection may overturn it: near the bound, every refused write would
// otherwise cost a whole garbage collection. Deleting data lets writes in
// again within this time.
const fullRecheck = time.Second

// memoryBound refuses new data once the process's live heap passes max.
// The embedded miniredis keeps every job in this heap, so the bound turns
// what would be an out-of-memory death into 507 answers that leave reads,
// takes and deletes working.
type memoryBound struct {
	max int64
	msg string

	// heap is the bytes of heap objects, garbage not yet collected
	// included: cheap to read, and never below the live heap.
	heap func() uint64
	// collect runs a full garbage collection and returns the live heap.
	collect func() uint64
	now     func() time.Time

	mu       sync.Mutex
	fullTill time.Time // until then, refuse without collecting again
}

func newMemoryBound(max int64) *memoryBound {
	return &memoryBound{
		max: max,
		msg: "Storage full: the embedded Redis holds more than redis.embedded_max_memory (OCYPOD_EMBEDDED_MAX_MEMORY) = " +
			config.FormatSize(max) + "; delete or expire jobs, raise the setting, or configure a Redis URL",
		heap:    func() uint64 { return readMetric("/memory/classes/heap/objects:bytes") },
		collect: func() uint64 { runtime.GC(); return readMetric("/gc/heap/live:bytes") },
		now:     time.Now,
	}
}

// admit is redisstore.Options.Admit: nil while the heap is under the
// bound, ocypod.StorageFull otherwise. Only when the heap (garbage
// included) is over the bound does it force a collection to learn the live
// size; concurrent callers share that collection.
func (m *memoryBound) admit(context.Context) error {
	if m.heap() <= uint64(m.max) {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.now().Before(m.fullTill) {
		return ocypod.StorageFull(m.msg)
	}
	if m.heap() <= uint64(m.max) { // another caller has just collected
		return nil
	}
	if m.collect() <= uint64(m.max) {
		return nil
	}
	m.fullTill = m.now().Add(fullRecheck)
	return ocypod.StorageFull(m.msg)
}

// readMetric reads one runtime/metrics value of kind uint64.
func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
