package redisstore_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// sizedInput is a JSON string input of about n bytes, distinct per i.
func sizedInput(i, n int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`"%d%s"`, i, strings.Repeat("x", n)))
}

// budget is the answer budget of boundedCases (Options.MaxAnswerBytes;
// ocypod.MaxAnswerBytes by default, which TestBoundedAnswers of httpapi
// checks): small, so that the inputs stay small on every backend.
const budget = 64 << 10

// boundedCases: a listing page and a take answer at most
// Options.MaxAnswerBytes, and a take leaves queued what it did not answer.
var boundedCases = []conformanceCase{
	{name: "take with count stops at the answer budget", opts: redisstore.Options{MaxAnswerBytes: budget}, run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		if h.P > 1 {
			// Spread over every partition: the budget holds across them.
			if err := h.s.PatchQueue(h.ctx, "q", ocypod.QueuePatch{Shards: u64(uint64(h.P))}); err != nil {
				t.Fatal(err)
			}
		}
		const n, size = 24, 4 << 10 // 96 KiB in all
		for i := range n {
			h.create("q", ocypod.JobSpec{Input: sizedInput(i, size)})
		}
		var bytes, answered int
		for round := 0; answered < n; round++ {
			jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"q"}, Count: n})
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) == 0 || round > n {
				t.Fatalf("round %d took %d jobs, %d of %d answered", round, len(jobs), answered, n)
			}
			bytes = 0
			for _, j := range jobs {
				bytes += len(j.Input)
			}
			if bytes > budget {
				t.Fatalf("a take answered %d jobs, %d bytes of input: over %d", len(jobs), bytes, budget)
			}
			answered += len(jobs)
			// Every running job was answered: none left running unseen.
			ids, err := h.s.QueueJobIDs(h.ctx, "q")
			if err != nil {
				t.Fatal(err)
			}
			if len(ids.Running) != answered {
				t.Fatalf("%d jobs running after %d were answered", len(ids.Running), answered)
			}
		}
	}},
	{name: "a take answers one job larger than the budget", opts: redisstore.Options{MaxAnswerBytes: budget}, run: func(t *testing.T, h *harness) {
		h.putQueue("q", settings(60, 0, 60, 0))
		huge := h.create("q", ocypod.JobSpec{Input: sizedInput(0, budget+16<<10)})
		small := h.create("q", ocypod.JobSpec{Input: json.RawMessage(`1`)})
		jobs, err := h.s.Take(h.ctx, ocypod.TakeRequest{Queues: []string{"q"}, Count: 10})
		if err != nil || len(jobs) != 1 || jobs[0].ID != huge {
			t.Fatalf("take = %d jobs, %v; want only job %d", len(jobs), err, huge)
		}
		h.wantStatus(small, ocypod.StatusQueued)
	}},
	{name: "listing pages stop at the answer budget", opts: redisstore.Options{MaxAnswerBytes: budget}, run: func(t *testing.T, h *harness) {
		queues := []string{"q", h.queueApart("o", "q")}
		const n, size = 10, 12 << 10
		var want []uint64
		for i := range n {
			q := queues[i%2]
			if i < 2 {
				h.putQueue(q, settings(60, 0, 60, 0))
			}
			want = append(want, h.create(q, ocypod.JobSpec{Input: sizedInput(i, size)}))
		}
		huge := h.create("q", ocypod.JobSpec{Input: sizedInput(n, budget+16<<10)})
		want = append(want, huge)
		var got []uint64
		req := ocypod.ListRequest{Limit: 1000}
		for pages := 0; ; pages++ {
			if pages > len(want) {
				t.Fatalf("more than %d pages", len(want))
			}
			page, err := h.s.ListJobs(h.ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			bytes := 0
			for _, j := range page.Jobs {
				bytes += len(j.Input) + 1024
				got = append(got, j.ID)
			}
			if len(page.Jobs) == 0 && page.NextCursor != "" {
				t.Fatalf("page %d is empty and has a next cursor", pages)
			}
			if bytes > budget && len(page.Jobs) > 1 {
				t.Fatalf("page %d holds %d jobs, %d bytes with their overhead: over %d", pages, len(page.Jobs), bytes, budget)
			}
			if page.NextCursor == "" {
				break
			}
			req.Cursor = page.NextCursor
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("listed %v, want each of %v once", got, want)
		}
	}},
}
