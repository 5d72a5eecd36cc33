package redisstore_test

import (
	"slices"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestListingCursorAcrossByIDSwitch: a namespace as 0.3.0 left it (layout
// version 2, no by-id members) is not served until it is upgraded, so no
// listing cursor is issued before the by-id members exist; after the
// upgrade a listing without filters pages through by id with its own
// cursors.
func TestListingCursorAcrossByIDSwitch(t *testing.T) {
	h := newHarness(t, redistest.Shared(t).Client(), 1, redisstore.Options{})
	meta := "{" + h.ns + "}:meta"
	h.do("HSET", meta, "version", "2", "partitions", h.P) // as 0.3.0 left it
	h.putQueue("q", settings(60, 0, 600, 0))
	var ids []uint64
	for range 4 {
		ids = append(ids, h.create("q", ocypod.JobSpec{}))
	}
	for _, id := range ids { // 0.3.0 wrote no by-id members
		h.do("ZREM", h.lay.Key(0, "idx"), "q Q "+lp(id))
	}
	if info, err := h.s.Open(h.ctx); err != nil || !info.Upgrade || info.Layout != 2 {
		t.Fatalf("Open(version 2) = %+v, %v, want an upgrade from version 2", info, err)
	}
	if ok, err := h.s.Servable(h.ctx); ok || err != nil {
		t.Fatalf("Servable(version 2) = %v, %v, want false until the upgrade", ok, err)
	}
	if done, err := h.s.Upgrade(h.ctx, 0); err != nil || !done {
		t.Fatalf("Upgrade = %v, %v", done, err)
	}
	page, err := h.s.ListJobs(h.ctx, ocypod.ListRequest{Queue: "q", Limit: 2})
	if err != nil || page.NextCursor == "" {
		t.Fatalf("first page = %+v, %v", page, err)
	}
	h.sweep("SweepExpiry", h.s.SweepExpiry) // changes nothing of the listing
	got := []uint64{page.Jobs[0].ID, page.Jobs[1].ID}
	got = append(got, h.listAll(ocypod.ListRequest{Queue: "q", Limit: 2, Cursor: page.NextCursor})...)
	if !slices.Equal(got, ids) {
		t.Fatalf("pages = %v, want by id %v", got, ids)
	}
}

// TestListingStaleByIDMember: a by-id member left next to the job's member
// of another status (what a 0.3.0 take left when both versions shared a
// namespace, which layout version 3 now prevents) does not make a listing
// without filters list the job twice.
func TestListingStaleByIDMember(t *testing.T) {
	h := newHarness(t, redistest.Shared(t).Client(), 1, redisstore.Options{})
	h.skipInvariants = true
	if _, err := h.s.Open(h.ctx); err != nil {
		t.Fatal(err)
	}
	h.putQueue("q", settings(60, 0, 600, 0))
	a := h.create("q", ocypod.JobSpec{})
	b := h.create("q", ocypod.JobSpec{})
	h.take("q", a)
	h.do("ZADD", h.lay.Key(0, "idx"), 0, "q Q "+lp(a)) // what 0.3.0's take left
	for _, limit := range []int{1, 2, 10} {
		if got := h.listAll(ocypod.ListRequest{Queue: "q", Limit: limit}); !slices.Equal(got, []uint64{a, b}) {
			t.Errorf("q in pages of %d = %v, want %v", limit, got, []uint64{a, b})
		}
		if got := h.listAll(ocypod.ListRequest{Limit: limit}); !slices.Equal(got, []uint64{a, b}) {
			t.Errorf("every queue in pages of %d = %v, want %v", limit, got, []uint64{a, b})
		}
	}
}
