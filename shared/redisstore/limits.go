package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Limits of a sharded queue.
//
// A sharded queue's concurrency and rate limit are split between its
// members: the partitions new jobs go to (its shards) and those beyond them
// that still hold jobs to serve (after its shards were lowered). Each copy
// of its settings enforces its own share in the scripts of its partition,
// so the shares together must never exceed the limits, also while they
// move. A change of the settings (PATCH) lowers each copy's allowance to at
// most its new share in the same script that writes the copy; raising an
// allowance to the new share waits until every copy has been lowered and
// runs no more jobs than its new share (rebalance below). A partition
// beyond the shards stays a member, with its share, until it has no job
// left to serve (queued, waiting, running, or due); a job that comes back
// there later (a retry) makes it a member again. Takes held back by a share
// below its target, or by members that may be done, ask for a rebalance
// (at most once a second per queue and process).

// shareProbe is shares.lua's reply.
type shareProbe struct {
	Missing  bool   `json:"missing"`
	V        int64  `json:"v"`
	Running  int64  `json:"running"`
	Live     int64  `json:"live"`
	Fits     bool   `json:"fits"`
	Below    bool   `json:"below"`
	Settings string `json:"settings"`
}

// shareSettings is what rebalance reads of a queue's settings.
type shareSettings struct {
	Shards      int       `json:"k"`
	Span        int       `json:"s"`
	Members     []int     `json:"m"`
	V           int64     `json:"v"`
	Concurrency flexNum   `json:"c"`
	RateLimit   *storedRL `json:"rl"`
}

// rebalanceEvery is how often a process moves a queue's shares when takes
// ask.
const rebalanceEvery = time.Second

// maybeRebalance rebalances queue q unless this process did within
// rebalanceEvery. A failure is logged: the take that asked goes on.
func (s *Store) maybeRebalance(ctx context.Context, q string) {
	now := s.now()
	if v, ok := s.rebalanced.Load(q); ok && now.Sub(v.(time.Time)) < rebalanceEvery && now.Sub(v.(time.Time)) >= 0 {
		return
	}
	s.rebalanced.Store(q, now)
	if err := s.rebalance(ctx, q); err != nil {
		s.log.WarnContext(ctx, "moving a sharded queue's limit shares failed; a later take retries",
			"queue", q, "error", ocypod.RedactSecrets(err.Error()))
	}
}

// rebalance brings the limit shares of queue q's copies to their targets
// as far as is safe now: copies left behind by a failed replication get
// the settings again, partitions beyond the shards with nothing left to
// serve stop sharing the limits, and copies below their share are raised
// once every copy fits its own.
func (s *Store) rebalance(ctx context.Context, q string) error {
	if s.l.P == 1 {
		return nil
	}
	home, span := s.l.home(q), s.freshSpan(ctx, q)
	for range 4 {
		probes, err := s.probeShares(ctx, q, home, span, nil)
		if err != nil {
			return err
		}
		if probes[0].Missing {
			return nil
		}
		var st shareSettings
		if err := json.Unmarshal([]byte(probes[0].Settings), &st); err != nil {
			return ocypod.Internal(fmt.Errorf("queue %q: unreadable settings: %v", q, err))
		}
		if st.Span > span {
			span = st.Span
			continue
		}
		if c, _ := st.Concurrency.uint(); c == 0 && st.RateLimit == nil {
			return nil
		}
		stale := false
		for _, p := range probes[1:] {
			stale = stale || p.Missing || p.V != st.V
		}
		if stale {
			if err := s.replicate(ctx, q, probes[0].Settings); err != nil {
				return err
			}
			continue
		}
		k := max(st.Shards, 1)
		cur := st.Members
		if cur == nil {
			for i := range max(span, k) {
				cur = append(cur, i)
			}
		}
		var want []int
		for i := range max(span, k) {
			if i < k || (i < len(probes) && probes[i].Live > 0) {
				want = append(want, i)
			}
		}
		if !slices.Equal(want, cur) {
			var got struct {
				Settings string `json:"settings"`
				Stale    bool   `json:"stale"`
			}
			r, err := s.run(ctx, &call{sc: scriptPatchQueue, p: home, queue: q,
				args: &shareMembersArgs{Members: want, IfV: st.V}}, &got)
			if err == nil && r.Err != "" {
				err = refusal(r, 0, q, nil)
			}
			if err == nil && !got.Stale {
				err = s.replicate(ctx, q, got.Settings)
			}
			if err != nil {
				return err
			}
			continue
		}
		var below []int
		for i, p := range probes {
			if !p.Fits {
				return nil // a copy still runs more than its share: a later take asks again
			}
			if p.Below {
				below = append(below, i)
			}
		}
		if len(below) > 0 {
			_, err = s.probeShares(ctx, q, home, span, &raise{v: st.V, shards: below})
		}
		return err
	}
	return nil
}

// sharesArgs is shares.lua's argument: report the limit shares of the
// call's queue here, or raise them if its settings are at version V.
type sharesArgs struct {
	Raise bool   `json:"raise,omitempty"`
	V     *int64 `json:"v,omitempty"`
}

// raise asks probeShares to raise the allowance of the given shards.
type raise struct {
	v      int64
	shards []int
}

// probeShares runs shares.lua on every copy of q (shards 0..span-1; with
// r, only on r's shards, raising them) in one pipelined round.
func (s *Store) probeShares(ctx context.Context, q string, home, span int, r *raise) ([]shareProbe, error) {
	shards := make([]int, 0, span)
	if r != nil {
		shards = r.shards
	} else {
		for i := range span {
			shards = append(shards, i)
		}
	}
	calls := make([]*call, len(shards))
	outs := make([]any, len(shards))
	probes := make([]shareProbe, len(shards))
	for n, i := range shards {
		args := &sharesArgs{}
		if r != nil {
			args.Raise, args.V = true, &r.v
		}
		calls[n] = &call{sc: scriptShares, p: s.l.shard(home, i), queue: q, args: args}
		outs[n] = &probes[n]
	}
	replies, errs := s.runAll(ctx, calls, outs)
	for n := range calls {
		if errs[n] != nil {
			return nil, errs[n]
		}
		if replies[n].Err != "" {
			return nil, refusal(replies[n], 0, q, nil)
		}
	}
	return probes, nil
}
