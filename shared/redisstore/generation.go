package redisstore

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// dropGens is, per partition, the deleted queues whose pending jobs are
// being dropped there, each with the newest deleted generation.
type dropGens map[int]map[string]uint64

// readDropGens reads the partitions' drop records (HGETALL of each drop
// hash, by partition). An unreadable record is left out.
func readDropGens(drops []*redis.MapStringStringCmd) dropGens {
	gens := dropGens{}
	for p, c := range drops {
		for q, text := range c.Val() {
			var d struct {
				G flexNum `json:"g"`
			}
			if json.Unmarshal([]byte(text), &d) != nil {
				continue
			}
			g, _ := d.G.uint()
			if gens[p] == nil {
				gens[p] = map[string]uint64{}
			}
			gens[p][q] = g
		}
	}
	return gens
}

// withoutDropped leaves out of ids (from an index read without a script)
// the pending jobs of deleted queues that are not dropped yet: those of a
// generation no newer than their queue's drop record in their partition
// (generations.lua's old_pending). It reads the jobs' metadata (one pipelined
// round) only when a partition of theirs is dropping something.
func (s *Store) withoutDropped(ctx context.Context, ids []uint64, gens dropGens) ([]uint64, error) {
	byPart := map[int][]uint64{}
	for _, id := range ids {
		if p := s.l.partitionOf(id); gens[p] != nil {
			byPart[p] = append(byPart[p], id)
		}
	}
	if len(byPart) == 0 {
		return ids, nil
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	pipe := s.rdb.Pipeline()
	metas := map[int]*redis.SliceCmd{}
	for p, l := range byPart {
		fields := make([]string, len(l))
		for i, id := range l {
			fields[i] = strconv.FormatUint(id, 10)
		}
		metas[p] = pipe.HMGet(ctx, s.l.key(p, keyJob), fields...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, translate(err)
	}
	gone := map[uint64]bool{}
	for p, c := range metas {
		for i, v := range c.Val() {
			text, ok := v.(string)
			if !ok {
				continue
			}
			var j storedJob
			if json.Unmarshal([]byte(text), &j) != nil {
				continue
			}
			g, deleted := gens[p][j.Queue]
			gen, _ := j.Gen.uint()
			switch j.Status {
			case "", "queued", "scheduled", "waiting":
				if deleted && gen <= g {
					gone[byPart[p][i]] = true
				}
			}
		}
	}
	out := make([]uint64, 0, len(ids)-len(gone))
	for _, id := range ids {
		if !gone[id] {
			out = append(out, id)
		}
	}
	return out, nil
}
