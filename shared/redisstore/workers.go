package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Workers lists the workers that took a job within Options.WorkerExpiry,
// most recently seen first, with how many jobs each runs and how many of
// its jobs timed out. One pipelined round over partitions.
func (s *Store) Workers(ctx context.Context) ([]ocypod.Worker, error) {
	type entry struct {
		Name     string  `json:"name"`
		LastSeen flexNum `json:"last_seen"`
		Running  uint64  `json:"running"`
		TimedOut uint64  `json:"timed_out"`
	}
	type reply struct {
		Workers list[entry] `json:"workers"`
	}
	since := s.now().Add(-s.o.WorkerExpiry).UnixMilli()
	calls := make([]*call, s.l.P)
	outs := make([]any, s.l.P)
	for p := range s.l.P {
		calls[p] = &call{sc: scriptWorkers, p: p, args: &workersArgs{Since: since}}
		outs[p] = new(reply)
	}
	_, errs := s.runAll(ctx, calls, outs)
	byName := map[string]*ocypod.Worker{}
	for p := range s.l.P {
		if errs[p] != nil {
			return nil, fmt.Errorf("redisstore: workers: %w", errs[p])
		}
		for _, e := range outs[p].(*reply).Workers {
			w := byName[e.Name]
			if w == nil {
				w = &ocypod.Worker{Name: e.Name}
				byName[e.Name] = w
			}
			ms, _ := strconv.ParseFloat(string(e.LastSeen), 64)
			if t := time.UnixMilli(int64(ms)).UTC(); t.After(w.LastSeen) {
				w.LastSeen = t
			}
			w.Running += e.Running
			w.TimedOut += e.TimedOut
		}
	}
	out := make([]ocypod.Worker, 0, len(byName))
	for _, w := range byName {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b ocypod.Worker) int {
		return cmp.Or(b.LastSeen.Compare(a.LastSeen), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// Worker returns the ids of the jobs worker name runs and of its jobs that
// timed out. Returns ocypod.WorkerNotFound for a worker not seen within
// Options.WorkerExpiry.
func (s *Store) Worker(ctx context.Context, name string) (ocypod.WorkerJobs, error) {
	type reply struct {
		Found    bool        `json:"found"`
		Running  list[idStr] `json:"running"`
		TimedOut list[idStr] `json:"timed_out"`
	}
	calls := make([]*call, s.l.P)
	outs := make([]any, s.l.P)
	for p := range s.l.P {
		calls[p] = &call{sc: scriptWorkers, p: p, args: &workerJobsArgs{Name: name, Since: s.now().Add(-s.o.WorkerExpiry).UnixMilli()}}
		outs[p] = new(reply)
	}
	_, errs := s.runAll(ctx, calls, outs)
	res := ocypod.WorkerJobs{Running: []uint64{}, TimedOut: []uint64{}}
	found := false
	for p := range s.l.P {
		if errs[p] != nil {
			return ocypod.WorkerJobs{}, fmt.Errorf("redisstore: worker %q: %w", name, errs[p])
		}
		r := outs[p].(*reply)
		found = found || r.Found
		res.Running = append(res.Running, ids(r.Running)...)
		res.TimedOut = append(res.TimedOut, ids(r.TimedOut)...)
	}
	if !found {
		return ocypod.WorkerJobs{}, fmt.Errorf("redisstore: worker %q: %w", name, ocypod.WorkerNotFound(name))
	}
	slices.Sort(res.Running)
	slices.Sort(res.TimedOut)
	return res, nil
}

// workersArgs is workers.lua's argument to list the workers seen since
// Since (ms).
type workersArgs struct {
	Since int64 `json:"since"`
}

// workerJobsArgs is workers.lua's argument to list the jobs of worker
// Name, if seen since Since (ms).
type workerJobsArgs struct {
	Name  string `json:"name"`
	Since int64  `json:"since"`
}
