package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Where a create goes.
//
// A batch is one script in one partition, so it is all or nothing whatever
// the queue's shards: a batch without keys goes to one of the queue's
// shards at random, a batch with a key to the queue's home partition
// (shard 0, which never moves). Keyed jobs always live there, whatever the
// shards, so the create, the take and the end of every job of one key run
// in one partition and a key has at most one pending and one running job
// however the shards change and whatever a process believes they are.
//
// Earlier versions put a keyed job in shard hash(key) mod shards, so a key
// may still be held in another partition by a job written then. A keyed
// create on a queue that has spanned more than one partition first looks
// its keys up in the others (one HMGET per partition, one pipelined round);
// a key held elsewhere is created there, by a script that checks the
// holder is still there (else it writes nothing and the create looks
// again). A queue this version spread from one partition has none of
// those (its settings say so: kh), and its keyed creates skip the lookup.
// Nothing puts a key outside the home any more (a requeue there is
// refused unless a job of its key runs there, see requeue_refusal in
// job_keys.lua), so a key found nowhere else stays so: the lookup and the create
// need not be one atomic step. The home's script refuses a create whose
// lookup did not cover every partition the queue has used (a process that
// believed the queue narrower), and the store looks again.

// keyPlace is where a key is held outside its queue's home partition.
type keyPlace struct {
	p       int
	pending uint64 // the pending job holding it there, 0 for none
}

// keysElsewhere looks up keys of queue in its partitions other than home
// (span of them): the keys held there, by a pending or a running job.
func (s *Store) keysElsewhere(ctx context.Context, queue string, home, span int, keys []string) (map[string]keyPlace, error) {
	fields := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		fields = append(fields, keySlot(slotPending, queue, k), keySlot(slotRunning, queue, k))
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	cmds := make([]*redis.SliceCmd, span)
	_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i := 1; i < span; i++ {
			cmds[i] = pipe.HMGet(ctx, s.l.key(s.l.shard(home, i), keyJobKeys), fields...)
		}
		return nil
	})
	if err != nil {
		return nil, translate(err)
	}
	out := map[string]keyPlace{}
	for i := 1; i < span; i++ {
		vals := cmds[i].Val()
		for n, k := range keys {
			if n*2+1 >= len(vals) {
				break
			}
			p, _ := vals[n*2].(string)
			r, _ := vals[n*2+1].(string)
			if p == "" && r == "" {
				continue
			}
			id, _ := strconv.ParseUint(p, 10, 64)
			out[k] = keyPlace{p: s.l.shard(home, i), pending: id}
		}
	}
	return out, nil
}

// createPlaced creates specs (their create_job arguments args) in queue,
// placed as described above. depth counts the looks taken again.
func (s *Store) createPlaced(ctx context.Context, queue string, specs []ocypod.JobSpec, args []jobSpecArg, now time.Time, depth int) ([]ocypod.Created, error) {
	if depth > 4 {
		return nil, ocypod.Internal(fmt.Errorf("create: the keys of queue %q kept moving", queue))
	}
	home := s.l.home(queue)
	var keys []string
	for i := range specs {
		if k := specs[i].Key; k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	target, span := home, 1
	var elsewhere map[string]keyPlace
	switch {
	case len(keys) > 0 && s.l.P > 1:
		if _, ok := s.keysHome.Load(queue); ok {
			break // the home's script checks this is still true
		}
		if span = s.freshSpan(ctx, queue); span > 1 {
			var err error
			if elsewhere, err = s.keysElsewhere(ctx, queue, home, span, keys); err != nil {
				return nil, err
			}
		}
	case len(keys) == 0:
		if k := s.shards(queue); k > 1 {
			target = s.l.shard(home, rand.IntN(k))
		}
	}
	parts := map[int][]int{}
	order := []int{target}
	for i := range specs {
		p := target
		if kp, ok := elsewhere[specs[i].Key]; ok {
			if specs[i].OnConflict == ocypod.OnConflictError && kp.pending != 0 {
				return nil, ocypod.KeyExists(specs[i].Key, kp.pending)
			}
			p = kp.p
			if _, ok := parts[p]; !ok {
				order = append(order, p)
			}
		}
		parts[p] = append(parts[p], i)
	}
	if len(parts[target]) == 0 {
		order = order[1:]
	}
	// Dependencies in a job's own partition its script checks.
	var deps []uint64
	for _, p := range order {
		for _, i := range parts[p] {
			for _, d := range specs[i].DependsOn {
				if s.l.partitionOf(d) != p {
					deps = append(deps, d)
				}
			}
		}
	}
	if err := s.checkJobsExist(ctx, deps); err != nil {
		return nil, err
	}
	// An on_conflict update of a pending job's dependencies holds the
	// dependency lock until its creates ran; a retry below (depth > 0)
	// runs under the fence its first call took.
	fence, held := ctx.Value(depFenceKey{}).(int64)
	if !held {
		f, release, err := s.guardUpdateCycles(ctx, queue, specs, parts)
		if err != nil {
			return nil, err
		}
		if release != nil {
			defer release()
			fence, ctx = f, context.WithValue(ctx, depFenceKey{}, f)
		}
	}
	type created struct {
		IDs      list[idStr] `json:"ids"`
		Existing list[bool]  `json:"existing"`
		Shards   list[int]   `json:"shards"`
		KeysHome int         `json:"kh"`
		PushDue  bool        `json:"pd"`
	}
	res := make([]ocypod.Created, len(specs))
	// The home's (or the chosen shard's) part first: it holds every spec
	// but those of keys still held elsewhere, which only earlier versions
	// wrote.
	for _, p := range order {
		idx := parts[p]
		a := &createJobArgs{Specs: make([]*jobSpecArg, len(idx)), Fence: fence}
		for i, si := range idx {
			a.Specs[i] = &args[si]
		}
		if p != target {
			a.Elsewhere = true
		} else if len(keys) > 0 {
			a.Span = span
		}
		var c created
		r, err := s.run(ctx, &call{sc: scriptCreateJob, p: p, queue: queue, now: now, args: a}, &c)
		if err != nil {
			return nil, err
		}
		switch r.Err {
		case "":
		case "queue_not_found":
			if p == home {
				return nil, refusal(r, 0, queue, nil)
			}
			// A shard whose copy of the settings is not written yet (the
			// queue's shards just grew): the home decides.
			s.shardCache.Delete(queue)
			return s.createPlaced(ctx, queue, specs, args, now, depth+1)
		case "stale_span":
			// The queue spans more partitions than this process knew:
			// nothing was written; look at all of them.
			var x struct {
				Shards list[int] `json:"shards"`
			}
			_ = json.Unmarshal(r.raw, &x)
			s.noteShards(queue, x.Shards)
			s.keysHome.Delete(queue)
			return s.createPlaced(ctx, queue, specs, args, now, depth+1)
		case "key_moved":
			// The keys' jobs there ended: their keys now live at home.
			sub := make([]ocypod.JobSpec, len(idx))
			subArgs := make([]jobSpecArg, len(idx))
			for i, si := range idx {
				sub[i], subArgs[i] = specs[si], args[si]
			}
			got, err := s.createPlaced(ctx, queue, sub, subArgs, now, depth+1)
			if err != nil {
				return nil, err
			}
			for i, si := range idx {
				res[si] = got[i]
			}
			continue
		default:
			return nil, refusal(r, 0, queue, nil)
		}
		s.noteShards(queue, c.Shards)
		if c.KeysHome == 1 {
			s.keysHome.Store(queue, true)
		}
		if c.PushDue {
			s.pushDue.notify(queue)
		}
		if len(c.IDs) != len(idx) {
			return nil, ocypod.Internal(fmt.Errorf("create: %d ids for %d jobs", len(c.IDs), len(idx)))
		}
		for i, si := range idx {
			res[si] = ocypod.Created{ID: uint64(c.IDs[i]), Existing: i < len(c.Existing) && c.Existing[i]}
		}
		s.afterCall(ctx, r)
	}
	return res, nil
}

// createJobArgs is create_job.lua's argument for a create request (the
// queue is the call's).
type createJobArgs struct {
	Specs []*jobSpecArg `json:"specs"`
	// Fence is the dependency lock's fence number an on_conflict update
	// of dependencies holds (0: none).
	Fence int64 `json:"fence,omitempty"`
	// Elsewhere: the specs' keys are held in this partition, which is not
	// the queue's home.
	Elsewhere bool `json:"elsewhere,omitempty"`
	// Span is how many of the queue's partitions a keyed create in its
	// home looked for its keys in (at least 1; 0: not keyed).
	Span int `json:"span,omitempty"`
}

func (a *createJobArgs) appendArgs(b []byte) []byte {
	b = append(b, `,"specs":`...)
	if a.Specs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, sp := range a.Specs {
			if i > 0 {
				b = append(b, ',')
			}
			if sp == nil {
				b = append(b, "null"...)
			} else {
				b = sp.appendJSON(b)
			}
		}
		b = append(b, ']')
	}
	if a.Fence != 0 {
		b = appendIntField(b, "fence", a.Fence)
	}
	if a.Elsewhere {
		b = appendBoolField(b, "elsewhere", true)
	}
	if a.Span != 0 {
		b = appendIntField(b, "span", int64(a.Span))
	}
	return b
}

// depFenceKey marks a context whose create holds the dependency lock with
// this fence number (guardUpdateCycles).
type depFenceKey struct{}
