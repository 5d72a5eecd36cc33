package redisstore

import (
	"fmt"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestDependsOnFence plays the race the lease lock alone cannot prevent: a
// change of a's dependencies whose lease ran out after its walk (the lock
// is gone) while a later change made b wait on a. Its write then carries
// the older fence number and is refused, and a's own walk would be too:
// the two jobs never wait on each other. Four partitions; a and b apart.
func TestDependsOnFence(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	rdb := redistest.Shared(t).Client()
	s, err := New(rdb, Options{Namespace: redistest.Namespace(t), Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutQueue(ctx, "q", ocypod.QueueSettings{}); err != nil {
		t.Fatal(err)
	}
	other := "o"
	for i := 0; s.l.home(other) == s.l.home("q"); i++ {
		other = fmt.Sprint("o", i)
	}
	if _, err := s.PutQueue(ctx, other, ocypod.QueueSettings{}); err != nil {
		t.Fatal(err)
	}
	ca, err := s.CreateJob(ctx, "q", ocypod.JobSpec{})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := s.CreateJob(ctx, other, ocypod.JobSpec{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := ca.ID, cb.ID
	// The first change: lock, fence, walk from b (finds nothing)...
	f1, _, err := s.lockDeps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.walkDeps(ctx, a, []uint64{b}, f1); err != nil {
		t.Fatalf("first walk = %v", err)
	}
	// ... then stalls past its lease: the lock expires.
	if err := rdb.Del(ctx, s.l.key(0, keyDepLock)).Err(); err != nil {
		t.Fatal(err)
	}
	// The second change goes through: b waits on a.
	if _, _, err := s.UpdateJob(ctx, b, ocypod.JobUpdate{DependsOn: []uint64{a}, DependsOnSet: true}, nil); err != nil {
		t.Fatalf("second change = %v", err)
	}
	// The first one's write arrives late, and is refused.
	r, err := s.run(ctx, s.jobCall(scriptUpdateJob, a, &updateJobArgs{DependsOn: idStrings([]uint64{b}), Fence: f1}), nil)
	if err != nil || r.Err != "fenced" {
		t.Fatalf("late write with fence %d = %+v, %v, want fenced", f1, r, err)
	}
	if err := refusal(r, a, "", nil); ocypod.ErrorKind(err) != ocypod.KindUnavailable {
		t.Fatalf("fenced refusal = %v, want a 503", err)
	}
	// A walk with it is refused where the later change read (a's partition).
	if err := s.walkDeps(ctx, b, []uint64{a}, f1); err != errFenced {
		t.Fatalf("late walk = %v, want fenced", err)
	}
	ja, err := s.GetJob(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if ja.Status != ocypod.StatusQueued || len(ja.DependsOn) != 0 {
		t.Fatalf("job a = %s depends on %v, want queued without dependencies", ja.Status, ja.DependsOn)
	}
	// A refused change is refused again with its cycle, through the API.
	err = func() error {
		_, _, err := s.UpdateJob(ctx, a, ocypod.JobUpdate{DependsOn: []uint64{b}, DependsOnSet: true}, nil)
		return err
	}()
	if ocypod.ErrorKind(err) != ocypod.KindInvalid {
		t.Fatalf("a depends on b = %v, want 400 (b waits on a)", err)
	}
}
