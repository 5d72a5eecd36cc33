package redisstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Dependency cycles.
//
// A job waits on its dependencies; a cycle (a waits on b, b on a) would
// leave every job in it waiting forever. A new job cannot close one, since
// nothing waits on it yet: only a change of an existing pending job's
// depends_on can. guardDependsOn makes such changes safe when they run
// concurrently, in any partitions:
//
//   - The graph is "x waits on y" for each job x that has not ended and
//     each y of its waiting_on: x's own metadata, written in x's partition
//     by the very script that changes its dependencies (no outbox in
//     between). A change may close a cycle only if, from one of its new
//     dependencies, a walk along these edges reaches the changed job.
//     Every other operation only removes edges (a dependency completes, a
//     job ends or is deleted) or adds a job nothing waits on (a create), so
//     a walk that runs while they do misses no edge that exists after it.
//   - Changes take a lease lock with a token (dlk in partition 0, held for
//     depLease at most), so they normally walk and write one at a time,
//     and get a fence number from it, larger for each holder.
//   - A lease can run out under a holder that stalls (a pause, a slow
//     network), letting the next one in while the first has yet to write.
//     So every partition keeps in dfn the largest fence number that walked
//     (read) or wrote there, and a walk step or a change carrying a smaller
//     one is refused (dep_walk.lua, update_job.lua): the change is answered
//     503 and writes nothing.
//
// Why no cycle can form: take two applied changes f < g (their fence
// numbers) of jobs xf and xg. f's write to xf's partition came before g's
// walk read that partition, else dfn would have refused it, so if g's walk
// reached xf it saw f's new edges (they are only in xf's record). And f's
// walk never saw g's write: reading g's partition after it would have been
// refused (dfn >= g > f). So each applied change checked exactly what the
// applied changes with smaller numbers left, as if all had run one at a
// time in fence order, each checking the graph before adding its edges:
// by induction the graph stays acyclic. The lock only spares changes from
// refusing each other; safety comes from the fence alone.
//
// Any new path that changes an existing job's dependencies must go
// through guardDependsOn and pass its fence number as A.fence.

// depLease is how long a change may hold the dependency lock: more than
// its walk and write take within their timeouts.
func (s *Store) depLease() time.Duration {
	if s.o.OpTimeout <= 0 {
		return 10 * time.Second
	}
	return max(4*s.o.OpTimeout, time.Second)
}

// maxWalk bounds the jobs a cycle check visits.
const maxWalk = 10_000

// errFenced is a change refused by its fence: a later change went ahead of
// it while it stalled. Nothing was written; trying again is safe.
var errFenced = ocypod.UnavailableBecause(reasonBusy, errors.New("dependency change overtaken by a later one"))

// guardDependsOn checks that making job id wait on deps closes no cycle,
// and returns the fence number the change must carry (A.fence) and the
// function that releases the lock, to call once the change ran. A refusal
// that needs no lock (the cycle was already there) writes nothing.
func (s *Store) guardDependsOn(ctx context.Context, id uint64, deps []uint64) (int64, func(), error) {
	if err := s.checkNoCycle(ctx, id, deps); err != nil {
		return 0, nil, err
	}
	fence, release, err := s.lockDeps(ctx)
	if err != nil {
		return 0, nil, err
	}
	if err := s.walkDeps(ctx, id, deps, fence); err != nil {
		release()
		return 0, nil, err
	}
	return fence, release, nil
}

// lockDeps takes the dependency lock, waiting while another change holds
// it (up to a lease and a timeout), and returns its fence number.
func (s *Store) lockDeps(ctx context.Context) (int64, func(), error) {
	token := rand.Text()
	lease := s.depLease()
	giveUp := time.Now().Add(lease + max(s.o.OpTimeout, time.Second))
	pause := time.Millisecond
	for {
		var got struct {
			Fence int64 `json:"fence"`
			Held  int64 `json:"held"`
		}
		_, err := s.run(ctx, &call{sc: scriptDepLock, p: 0,
			args: &depLockArgs{Op: "lock", Token: token, Lease: lease.Milliseconds()}}, &got)
		if err != nil {
			return 0, nil, err
		}
		if got.Fence > 0 {
			release := func() {
				rctx := context.WithoutCancel(ctx)
				if _, err := s.run(rctx, &call{sc: scriptDepLock, p: 0,
					args: &depLockArgs{Op: "unlock", Token: token}}, nil); err != nil {
					s.log.WarnContext(rctx, "dependency lock not released; it expires with its lease",
						"error", ocypod.RedactSecrets(err.Error()))
				}
			}
			return got.Fence, release, nil
		}
		if time.Now().After(giveUp) {
			return 0, nil, ocypod.UnavailableBecause(reasonBusy, errors.New("dependency lock held too long"))
		}
		wait := pause
		if got.Held > 0 {
			wait = min(wait, time.Duration(got.Held)*time.Millisecond)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, nil, ocypod.Unavailable(ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// depLockArgs is dep_lock.lua's argument: Op "lock" (for Lease ms, > 0)
// or "unlock", by the holder Token.
type depLockArgs struct {
	Op    string `json:"op"`
	Token string `json:"token"`
	Lease int64  `json:"lease,omitempty"`
}

// depWalkArgs is dep_walk.lua's argument: the jobs asked about, and the
// fence of a walk under the dependency lock (0: none).
type depWalkArgs struct {
	IDs   []string `json:"ids"`
	Fence int64    `json:"fence,omitempty"`
}

// walkReply is dep_walk.lua's reply: what each job asked about waits on.
type walkReply struct {
	W list[list[idStr]] `json:"w"`
}

// checkNoCycle refuses dependencies deps of job id that would close a
// cycle, reading only: alone, it does not hold against concurrent changes
// (guardDependsOn does).
func (s *Store) checkNoCycle(ctx context.Context, id uint64, deps []uint64) error {
	return s.walkDeps(ctx, id, deps, 0)
}

// walkDeps refuses dependencies deps of job id that would close a cycle:
// a walk from each along what jobs wait on (one pipelined round per level,
// bounded) must not reach id. With fence > 0 each step is fenced (see
// above).
func (s *Store) walkDeps(ctx context.Context, id uint64, deps []uint64, fence int64) error {
	root := map[uint64]uint64{} // a job reached -> the dependency its walk started from
	var frontier []uint64
	for _, d := range deps {
		if _, ok := root[d]; !ok {
			root[d] = d
			frontier = append(frontier, d)
		}
	}
	for len(frontier) > 0 {
		byPart := map[int][]uint64{}
		for _, f := range frontier {
			p := s.l.partitionOf(f)
			byPart[p] = append(byPart[p], f)
		}
		calls := make([]*call, 0, len(byPart))
		outs := make([]any, 0, len(byPart))
		sent := make([][]uint64, 0, len(byPart))
		for p, ids := range byPart {
			calls = append(calls, &call{sc: scriptDepWalk, p: p, args: &depWalkArgs{IDs: idStrings(ids), Fence: fence}})
			outs = append(outs, &walkReply{})
			sent = append(sent, ids)
		}
		replies, errs := s.runAll(ctx, calls, outs)
		var next []uint64
		for i := range calls {
			switch {
			case errs[i] != nil:
				return errs[i]
			case replies[i].Err == "fenced":
				return errFenced
			case replies[i].Err != "":
				return ocypod.Internal(fmt.Errorf("dependency walk: %s", replies[i].Err))
			}
			w := outs[i].(*walkReply).W
			for k, from := range sent[i] {
				if k >= len(w) {
					break
				}
				for _, x := range w[k] {
					x := uint64(x)
					if x == id {
						return ocypod.Invalid(fmt.Sprintf("Invalid depends_on: job %d depends on job %d", root[from], id))
					}
					if _, ok := root[x]; !ok {
						root[x] = root[from]
						next = append(next, x)
					}
				}
			}
		}
		if len(root) > maxWalk {
			return ocypod.Invalid("Invalid depends_on: too many dependencies to check for a cycle")
		}
		frontier = next
	}
	return nil
}
