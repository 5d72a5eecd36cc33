//go:build legacyfixture

package redisstore_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestWriteLegacyFixture writes testdata/gen0.json: namespaces (one
// partition and four) written by the store before it kept the queue
// generation a job's queue was created with (settings without "b", drop
// records without counts). It was run with the store's code of that time:
//
//	go test -tags legacyfixture -run TestWriteLegacyFixture ./shared/redisstore/
//
// (scripts, take.go, lex.go and job_ops.go checked out from the commit
// before "Store: a deleted queue's pending jobs are never taken...").
func TestWriteLegacyFixture(t *testing.T) {
	out := map[string][]legacyEntry{}
	for _, P := range []int{1, 4} {
		h := newHarness(t, redistest.Shared(t).Client(), P, redisstore.Options{})
		h.skipInvariants = true
		writeLegacyScenario(t, h)
		out[map[int]string{1: "1", 4: "4"}[P]] = h.dumpPartitions()
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("testdata/gen0.json", append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeLegacyScenario: queue gone deleted and not created again; queue q
// deleted with pending jobs of every kind left to drop and created again
// with a job of its own; queue keep never deleted.
func writeLegacyScenario(t *testing.T, h *harness) {
	h.putQueue("gone", settings(60, 0, 0, 0))
	if _, err := h.s.CreateJobs(h.ctx, "gone", make([]ocypod.JobSpec, 250)); err != nil {
		t.Fatal(err)
	}
	if err := h.s.DeleteQueue(h.ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	h.putQueue("q", settings(60, 0, 0, 1, 30))
	running := h.create("q", ocypod.JobSpec{})
	h.take("q", running)
	failed := h.create("q", ocypod.JobSpec{})
	h.take("q", failed)
	h.setStatus(failed, ocypod.StatusFailed)
	if _, err := h.s.CreateJobs(h.ctx, "q", make([]ocypod.JobSpec, 250)); err != nil {
		t.Fatal(err)
	}
	h.create("q", ocypod.JobSpec{Key: "k", Tags: []string{"t"}})
	h.create("q", ocypod.JobSpec{Delay: dur(10)})
	h.create("q", ocypod.JobSpec{DependsOn: []uint64{running}})
	if err := h.s.DeleteQueue(h.ctx, "q"); err != nil {
		t.Fatal(err)
	}
	h.putQueue("q", settings(60, 0, 0, 1, 30))
	h.create("q", ocypod.JobSpec{Tags: []string{"t"}})

	h.putQueue("keep", settings(60, 0, 0, 1, 30))
	kf := h.create("keep", ocypod.JobSpec{})
	h.take("keep", kf)
	h.setStatus(kf, ocypod.StatusFailed)
	kr := h.create("keep", ocypod.JobSpec{})
	h.take("keep", kr)
	h.create("keep", ocypod.JobSpec{Key: "k"})
	h.create("keep", ocypod.JobSpec{Delay: dur(10)})

}
