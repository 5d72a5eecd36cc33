package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"time"
)

// layoutQueuedCounts is the layout version from which each queue counts
// its queued jobs (upgradeQueuedCounts brings the version before it up).
const layoutQueuedCounts = 4

// upgradeQueuedCounts is the step from layout version 3 to 4: each queue
// gets its counter of queued jobs ("<queue> n" in keyQueues, indexes.lua's
// count_queued), which every change of a queued job keeps from then on and
// /info and sizes read. Partition by partition, a batch of queues per
// upgrade_counters.lua call, each set to the count of its queued idx range:
// a call records the last queue it counted in the partition's counters
// (ctr "cnm", "cnd" once the partition is done) in the same script, so a
// call run again (after a crash, or by a holder whose lease lapsed) goes
// on from there, and counting a queue twice sets the same count. Once
// every partition is done the layout is marked version 4
// (layoutQueuedCounts). The statistics need no conversion: the days' and
// hours' hashes keep their fields, and the pending counts (keyPending)
// start empty.
func (s *Store) upgradeQueuedCounts(ctx context.Context, end time.Time) (done bool, err error) {
	fail := func(err error) (bool, error) { return false, fmt.Errorf("version 3 to 4: %w", err) }
	batch := cmp.Or(s.upgradeBatch, upgradeBatch)
	if done, err := s.partitionBatches(ctx, end, layoutQueuedCounts, "queues' counts of queued jobs", func(p int) *call {
		return &call{sc: scriptUpCounts, p: p, args: &upCountsArgs{Limit: batch}}
	}); err != nil {
		return fail(err)
	} else if !done {
		return false, nil
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	if err := s.rdb.HSet(octx, s.metaKey(), "version", strconv.Itoa(layoutQueuedCounts)).Err(); err != nil {
		return fail(translate(err))
	}
	for p := range s.l.P {
		if err := s.rdb.HDel(octx, s.l.key(p, keyCounters), "cnm", "cnd").Err(); err != nil {
			return fail(translate(err))
		}
	}
	return true, nil
}

// upCountsArgs is upgrade_counters.lua's argument: the most queues a call
// counts.
type upCountsArgs struct {
	Limit int `json:"limit"`
}
