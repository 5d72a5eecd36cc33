package redisstore_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// conflictUpdateCases: a create with on_conflict "update" changes every
// field it gives on the pending job holding its key, and only those.
var conflictUpdateCases = []conformanceCase{
	{name: "on_conflict update keeps what it is not given", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		big := `"` + strings.Repeat("x", 1000) + `"` // kept apart from the metadata
		id := h.create("q", ocypod.JobSpec{Key: "k", Input: json.RawMessage(big), Tags: []string{"a"},
			Priority: i64(3), Tracked: ptrBool(true), TimeoutRetries: u64(2),
			RetryDelays: []ocypod.Duration{ocypod.Seconds(5)}})
		before := h.job(id)
		if got, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "k", OnConflict: ocypod.OnConflictUpdate,
			Retries: u64(4)}); err != nil || got.ID != id || !got.Existing {
			t.Fatalf("update = %+v, %v", got, err)
		}
		j := h.job(id)
		if string(j.Input) != big || !slices.Equal(j.Tags, []string{"a"}) || j.Priority != 3 || !j.Tracked ||
			j.TimeoutRetries == nil || *j.TimeoutRetries != 2 || !slices.Equal(j.RetryDelays, before.RetryDelays) {
			t.Fatalf("fields not given changed: input %.20s tags %v priority %d tracked %v timeout_retries %v delays %v",
				j.Input, j.Tags, j.Priority, j.Tracked, j.TimeoutRetries, j.RetryDelays)
		}
		if j.Retries != 4 {
			t.Fatalf("retries = %d, want 4", j.Retries)
		}
		if ids, _ := h.s.TagJobIDs(h.ctx, "a"); !slices.Equal(ids, []uint64{id}) {
			t.Fatalf("tag a = %v, want [%d]", ids, id)
		}
		h.wantStatus(id, ocypod.StatusQueued)
	}},
	{name: "on_conflict update applies every field it is given", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		id := h.create("q", ocypod.JobSpec{Key: "k", Input: json.RawMessage(`1`), Tags: []string{"a"},
			Priority: i64(3), Tracked: ptrBool(true), RetryDelays: []ocypod.Duration{ocypod.Seconds(5)}})
		dep := h.create("q", ocypod.JobSpec{})
		backoff := &ocypod.Backoff{Min: ocypod.Seconds(1), Max: ocypod.Seconds(60), Factor: 2}
		if got, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "k", OnConflict: ocypod.OnConflictUpdate,
			Tags: []string{"b", "c"}, Priority: i64(0), Tracked: ptrBool(false), TimeoutRetries: u64(7),
			RetryBackoff: backoff, DependsOn: []uint64{dep}}); err != nil || got.ID != id || !got.Existing {
			t.Fatalf("update = %+v, %v", got, err)
		}
		j := h.job(id)
		if string(j.Input) != "1" || !slices.Equal(j.Tags, []string{"b", "c"}) || j.Priority != 0 || j.Tracked ||
			j.TimeoutRetries == nil || *j.TimeoutRetries != 7 || j.RetryDelays != nil || j.RetryBackoff == nil ||
			!slices.Equal(j.DependsOn, []uint64{dep}) {
			t.Fatalf("update not applied: %+v", j)
		}
		for tag, want := range map[string][]uint64{"a": nil, "b": {id}, "c": {id}} {
			if ids, _ := h.s.TagJobIDs(h.ctx, tag); !slices.Equal(ids, want) {
				t.Fatalf("tag %s = %v, want %v", tag, ids, want)
			}
		}
		// The job waits for the dependency it was given: only that runs.
		h.wantStatus(id, ocypod.StatusWaiting)
		h.take("q", dep)
		h.complete(dep)
		h.wantStatus(id, ocypod.StatusQueued)
		// retry_delays replaces the backoff; an empty depends_on clears.
		if _, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "k", OnConflict: ocypod.OnConflictUpdate,
			RetryDelays: []ocypod.Duration{ocypod.Seconds(9)}, RetryDelaysSet: true}); err != nil {
			t.Fatal(err)
		}
		if j := h.job(id); j.RetryBackoff != nil || len(j.RetryDelays) != 1 || j.RetryDelays[0].Secs != 9 {
			t.Fatalf("retry_delays update: %+v", j)
		}
	}},
	{name: "on_conflict update refuses a dependency cycle", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		other := h.queueApart("o", "q")
		h.putQueue(other, settings(60, 0, 60, 0))
		a := h.create("q", ocypod.JobSpec{Key: "k"})
		b := h.create("q", ocypod.JobSpec{DependsOn: []uint64{a}})
		c := h.create(other, ocypod.JobSpec{DependsOn: []uint64{b}}) // another partition with P > 1
		before := h.snapshot()
		for _, deps := range [][]uint64{{a}, {b}, {c}} {
			_, err := h.s.CreateJob(h.ctx, "q", ocypod.JobSpec{Key: "k", OnConflict: ocypod.OnConflictUpdate,
				Input: json.RawMessage(`2`), DependsOn: deps})
			wantKind(t, fmt.Sprintf("update with depends_on %v", deps), err, ocypod.KindInvalid, "")
		}
		h.wantUnchanged("refused updates", before)
		h.wantStatus(a, ocypod.StatusQueued)
	}},
}
