package redisstore

import (
	"context"
	"fmt"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Info returns the /info summary: per-queue counts for every registered
// queue (all zeros included) and for deleted queues that still have jobs,
// plus the global statistics. A failed job whose retries are exhausted
// counts as failed. One script, O(queues).
func (s *Store) Info(ctx context.Context) (ocypod.ServerInfo, error) {
	arr, err := s.run(ctx, scriptInfo, s.keys.Queues())
	var info ocypod.ServerInfo
	if err == nil {
		info, err = decodeInfo(arr)
	}
	if err != nil {
		return ocypod.ServerInfo{}, fmt.Errorf("redisstore: info: %w", err)
	}
	return info, nil
}

func decodeInfo(arr []any) (ocypod.ServerInfo, error) {
	bad := func() (ocypod.ServerInfo, error) {
		return ocypod.ServerInfo{}, ocypod.Internal(fmt.Errorf("unexpected info reply %v", arr))
	}
	if c, err := replyCode(arr); err != nil || c != codeOK || len(arr) < 2 {
		return bad()
	}
	flat, ok := arr[1].([]any)
	if !ok {
		return bad()
	}
	var d decoder
	stats := map[string]string{}
	for i := 0; i+1 < len(flat); i += 2 {
		stats[replyString(flat, i)] = replyString(flat, i+1)
	}
	info := ocypod.ServerInfo{
		Queues: make(map[string]ocypod.QueueCounts, len(arr)-2),
		Statistics: ocypod.Statistics{
			Created:   d.uint(stats, "created"),
			Completed: d.uint(stats, "completed"),
			Retried:   d.uint(stats, "retried"),
			Failed:    d.uint(stats, "failed"),
			TimedOut:  d.uint(stats, "timed_out"),
			Cancelled: d.uint(stats, "cancelled"),
		},
	}
	if d.err != nil {
		return ocypod.ServerInfo{}, ocypod.Internal(fmt.Errorf("statistics: %w", d.err))
	}
	for _, v := range arr[2:] {
		q, ok := v.([]any)
		if !ok || len(q) != 7 {
			return bad()
		}
		var n [6]uint64
		for i := range n {
			c, err := replyInt(q, i+1)
			if err != nil {
				return bad()
			}
			n[i] = uint64(c)
		}
		info.Queues[replyString(q, 0)] = ocypod.QueueCounts{
			Queued: n[0], Running: n[1], Failed: n[2], Completed: n[3], Cancelled: n[4], TimedOut: n[5],
		}
	}
	return info, nil
}
