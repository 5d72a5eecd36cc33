package redisstore_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// cursorCases: a listing cursor cannot be forged from public knowledge.
var cursorCases = []conformanceCase{
	{name: "a cursor signed without the namespace's secret is refused", run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		// Beside q, and sorting before it: a position at its name reads
		// its entries up to q's range, were it taken as given.
		other := h.queueBeside("o", "q")
		h.putQueue(other, settings(60, 0, 60, 0))
		for range 3 {
			h.create("q", ocypod.JobSpec{})
		}
		secret := h.create(other, ocypod.JobSpec{})
		page, err := h.s.ListJobs(h.ctx, ocypod.ListRequest{Queue: "q", Status: ocypod.StatusQueued, Limit: 1})
		if err != nil || page.NextCursor == "" {
			t.Fatalf("first page = %+v, %v", page, err)
		}
		body, _, _ := strings.Cut(page.NextCursor, ".")
		raw, err := base64.RawURLEncoding.DecodeString(body)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Q string           `json:"q"`
			P []map[string]any `json:"p"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		// Point every partition's position before the other queue's
		// entries, and sign the text as anyone could with a public key.
		for _, p := range c.P {
			if p != nil {
				p["m"] = other
			}
		}
		forged, _ := json.Marshal(c)
		mac := hmac.New(sha256.New, []byte("ocyless cursor "+h.ns))
		mac.Write(forged)
		for _, n := range []int{8, 16} {
			text := base64.RawURLEncoding.EncodeToString(forged) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:n])
			before := h.snapshot()
			page, err := h.s.ListJobs(h.ctx, ocypod.ListRequest{Queue: "q", Status: ocypod.StatusQueued, Limit: 10, Cursor: text})
			for _, j := range page.Jobs {
				if j.ID == secret {
					t.Fatalf("a forged cursor listed job %d of queue %s", secret, other)
				}
			}
			wantKind(t, "forged cursor", err, ocypod.KindInvalid, "")
			if !strings.HasPrefix(err.Error(), "redisstore: list jobs: Invalid cursor: ") {
				t.Fatalf("forged cursor = %v", err)
			}
			h.wantUnchanged("forged cursor", before)
		}
		// The real cursor still works, in every partition.
		if got := h.listAll(ocypod.ListRequest{Queue: "q", Limit: 1}); len(got) != 3 {
			t.Fatalf("paging one by one listed %v, want 3 jobs", got)
		}
	}},
}
