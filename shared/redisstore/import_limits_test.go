package redisstore_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// importLimitCases: the import copies only what the API accepts; a job it
// would refuse is skipped with a report line, the rest copied.
var importLimitCases = []conformanceCase{
	{name: "import skips what the API refuses", run: func(t *testing.T, h *harness) {
		srv := redistest.Shared(t)
		ns := "up-" + h.ns
		u := newUpstreamDB(t, srv.Client(), ns, t0)
		u.queue("q", 300, 0, 300, 0)
		u.do("SET", u.pre+"job_id", 6)
		many, _ := json.Marshal(strings.Split(strings.Repeat("t,", 100)+"t", ","))
		long, _ := json.Marshal([]string{strings.Repeat("x", ocypod.MaxNameLength+1)})
		const limit = 4 << 10
		big := `"` + strings.Repeat("x", limit) + `"`
		done := []string{"started_at", u.rfc(-9 * time.Second), "ended_at", u.rfc(-8 * time.Second)}
		u.job(1, "q", "queued", 300, 0, 300, 0, 0, -10*time.Second, "tags", string(many))
		u.job(2, "q", "queued", 300, 0, 300, 0, 0, -10*time.Second, "tags", `["ok",""]`)
		u.job(3, "q", "queued", 300, 0, 300, 0, 0, -10*time.Second, "tags", string(long))
		u.job(4, "q", "queued", 300, 0, 300, 0, 0, -10*time.Second, "input", big)
		u.job(5, "q", "completed", 300, 0, 300, 0, 0, -10*time.Second, append(done, "output", big)...)
		u.job(6, "q", "queued", 300, 0, 300, 0, 0, -10*time.Second, "tags", `["ok"]`, "input", `"fine"`)
		u.push("queue:q:jobs", "LPUSH", 1, 2, 3, 4, 6)
		u.push("ended", "LPUSH", 5)
		o := redisstore.ImportOptions{Source: sourceClient(t, srv), SourceNamespace: ns, SourceName: "upstream"}
		o.MaxValueSize = limit
		rep := h.runImport(o)
		if rep.Copied != 1 || rep.SkippedTotal != 5 || len(rep.Skipped) != 5 {
			t.Fatalf("report: copied %d, skipped %d: %+v", rep.Copied, rep.SkippedTotal, rep.Skipped)
		}
		for i, want := range []string{"at most 64 tags", "empty", "1024 bytes", "input is", "output is"} {
			if s := rep.Skipped[i]; s.ID != uint64(i+1) || !strings.Contains(s.Reason, want) {
				t.Errorf("skipped[%d] = %+v, want job %d saying %q", i, s, i+1, want)
			}
		}
		if j := h.job(6); j == nil || string(j.Input) != `"fine"` {
			t.Fatalf("job 6 = %+v", j)
		}
		for id := range uint64(5) {
			if _, err := h.s.GetJob(h.ctx, id+1); ocypod.ErrorKind(err) != ocypod.KindNotFound {
				t.Errorf("job %d was copied: %v", id+1, err)
			}
		}
	}},
}
