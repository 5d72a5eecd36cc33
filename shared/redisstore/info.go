package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Info returns the /info summary: per-queue counts for every registered
// queue (all zeros included) and for deleted queues that still have jobs,
// plus the global statistics. A failed job whose retries are exhausted
// counts as failed. One script per partition, in one pipelined round;
// O(queues) each.
func (s *Store) Info(ctx context.Context) (ocypod.ServerInfo, error) {
	type infoReply struct {
		Queues dict[dict[uint64]] `json:"queues"`
		Totals dict[string]       `json:"totals"`
	}
	calls := make([]*call, s.l.P)
	outs := make([]any, s.l.P)
	for p := range s.l.P {
		calls[p] = &call{sc: scriptInfo, p: p}
		outs[p] = new(infoReply)
	}
	_, errs := s.runAll(ctx, calls, outs)
	info := ocypod.ServerInfo{Queues: map[string]ocypod.QueueCounts{}}
	var tot [6]uint64
	for p := range s.l.P {
		if errs[p] != nil {
			return ocypod.ServerInfo{}, fmt.Errorf("redisstore: info: %w", errs[p])
		}
		r := outs[p].(*infoReply)
		for q, c := range r.Queues {
			n := info.Queues[q]
			n.Queued += c[codeQueued]
			n.Running += c[codeRunning]
			n.Failed += c[codeFailed]
			n.Completed += c[codeCompleted]
			n.Cancelled += c[codeCancelled]
			n.TimedOut += c[codeTimedOut]
			n.Scheduled += c[codeScheduled]
			n.Waiting += c[codeWaiting]
			info.Queues[q] = n
		}
		for i, name := range []string{"created", "completed", "retried", "failed", "timed_out", "cancelled"} {
			if v, ok := r.Totals[name]; ok {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return ocypod.ServerInfo{}, fmt.Errorf("redisstore: info: %w",
						ocypod.Internal(fmt.Errorf("statistics: unreadable %s %q", name, truncate(v))))
				}
				tot[i] += n
			}
		}
		if v, ok := r.Totals["dead_letters_skipped"]; ok {
			n, _ := strconv.ParseUint(v, 10, 64)
			info.DeadLettersSkipped += n
		}
		if v, ok := r.Totals["callbacks_given_up"]; ok {
			n, _ := strconv.ParseUint(v, 10, 64)
			info.CallbacksGivenUp += n
		}
	}
	info.Statistics = ocypod.Statistics{Created: tot[0], Completed: tot[1], Retried: tot[2],
		Failed: tot[3], TimedOut: tot[4], Cancelled: tot[5]}
	return info, nil
}
