package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/redistest"
)

// TestDashboardOnCall checks what the overview tells someone on call, and
// what its links and buttons do: counts open their filtered listing with
// the errors previewed, the oldest queued job is found past the front of
// the take order, running jobs show their worker and time running, a
// failure group opens to its jobs and is retried whole, and a queue's view
// shows its day's statistics and its schedules.
func TestDashboardOnCall(t *testing.T) {
	b := startBrowser(t)
	clock := redistest.NewClock(time.Now())
	s := newServerClock(t, clock)
	s.must("PUT", "/queue/mail", `{}`, http.StatusCreated)
	// 1 and 2 fail for good in group smtp; 3 runs on w-7; 4 is queued
	// first, 5 after it with a higher priority, so 5 is taken first.
	for i := 1; i <= 3; i++ {
		s.must("POST", "/queue/mail/job", fmt.Sprintf(`{"input":%d}`, i), http.StatusCreated)
	}
	for _, id := range []string{"1", "2"} {
		s.must("GET", "/queue/mail/job?worker=w-1", "", http.StatusOK)
		s.must("PATCH", "/job/"+id, `{"status":"failed","retry":false,"error":{"group":"smtp","message":"550 mailbox unavailable\nsecond line"}}`, http.StatusNoContent)
	}
	s.must("GET", "/queue/mail/job?worker=w-7", "", http.StatusOK)
	s.must("POST", "/queue/mail/job", `{"input":4}`, http.StatusCreated)
	clock.Advance(2 * time.Second)
	s.must("POST", "/queue/mail/job", `{"input":5,"priority":10}`, http.StatusCreated)
	if got := s.must("GET", "/queue/mail/jobs?status=queued&fields=id", "", http.StatusOK); !strings.HasPrefix(got, `{"jobs":[{"id":5},{"id":4}]`) {
		t.Fatalf("take order = %s, want 5 before 4", got)
	}
	s.must("PUT", "/queue/mail/schedules/digest", `{"cron":"0 6 * * *","job":{"input":"digest"}}`, http.StatusCreated)

	p := b.newPage(t, pageOptions{})
	shots := t.ArtifactDir()
	ready := `document.body.dataset.state === 'ready'`
	p.navigate(s.url + "/ui")
	p.wait(ready + ` && document.querySelector('#running tr[data-running="3"]')`)
	p.click(`#auto`)
	p.wait(`document.body.dataset.refresh === 'off'`)

	// The oldest queued job is 4, though 5 is at the front.
	var oldest struct{ Job, Exact string }
	p.mustEval(`({...document.querySelector('tr[data-queue="mail"] [data-field=oldest] span').dataset})`, &oldest)
	if oldest.Job != "4" || oldest.Exact != "true" {
		t.Errorf("oldest queued = %+v, want job 4, exact", oldest)
	}
	if got := p.text(`tr[data-queue="mail"] [data-field=oldest]`); !regexp.MustCompile(`^\d+s$`).MatchString(got) {
		t.Errorf("oldest queued shows %q, want an age in seconds", got)
	}
	// Job 3 runs on w-7, for a few seconds.
	if got := p.text(`#running tr[data-running="3"] [data-field=worker]`); got != "w-7" {
		t.Errorf("running job 3's worker = %q, want w-7", got)
	}
	var runningFor int
	p.mustEval(`+document.querySelector('#running tr[data-running="3"] [data-field=running-for] span').dataset.age`, &runningFor)
	if runningFor < 0 || runningFor > 60 {
		t.Errorf("job 3 running for %ds, want a few seconds", runningFor)
	}
	// The failure group opens to its jobs, each error's first line shown.
	p.click(`#failures tr[data-group="smtp"] [data-action=toggle]`)
	p.wait(ready + ` && document.querySelector('#failures tr[data-group-jobs="smtp"]')`)
	var failed []string
	p.mustEval(`[...document.querySelectorAll('#failures tr[data-group-jobs="smtp"] tbody tr')].map((tr) => tr.dataset.job + ' ' + tr.querySelector('[data-field=error]').innerText)`, &failed)
	if want := []string{"1 smtp: 550 mailbox unavailable …", "2 smtp: 550 mailbox unavailable …"}; !slices.Equal(failed, want) {
		t.Errorf("group smtp's jobs = %q, want %q", failed, want)
	}
	p.screenshot(shots, "on-call")

	// Retry group asks for a second click, then queues the group again.
	p.click(`#failures tr[data-group="smtp"] [data-action=retry-group]`)
	if got := p.text(`#failures tr[data-group="smtp"] [data-action=retry-group]`); got != "Click again to retry 2 jobs" {
		t.Errorf("Retry group's first click shows %q", got)
	}
	if got := s.must("GET", "/failures", "", http.StatusOK); got != `{"smtp":2}` {
		t.Fatalf("after one click: GET /failures = %s, want the group untouched", got)
	}
	p.click(`#failures tr[data-group="smtp"] [data-action=retry-group]`)
	p.wait(ready + ` && document.querySelector('#notice').textContent === 'Group smtp: 2 jobs queued again'`)
	if got := s.must("GET", "/failures", "", http.StatusOK); got != `{}` {
		t.Errorf("after Retry group: GET /failures = %s, want none", got)
	}
	for _, id := range []string{"1", "2"} {
		if got := s.status(id); got != "queued" {
			t.Errorf("job %s after Retry group = %q, want queued", id, got)
		}
	}
	p.wait(ready + ` && document.querySelector('#failures').textContent === 'None.'`)

	// A count is a link to the queue's listing of that status.
	p.wait(ready + ` && document.querySelector('tr[data-queue="mail"] td[data-status=queued] a')?.textContent === '4'`)
	p.click(`tr[data-queue="mail"] td[data-status=queued] a`)
	p.wait(ready + ` && location.hash === '#/queue/mail?status=queued' && document.querySelector('#jobs')`)
	if got := jobIDs(p); !slices.Equal(got, []string{"5", "4", "1", "2"}) {
		t.Errorf("queued listing = %v, want [5 4 1 2] (take order)", got)
	}
	// A listing previews each job's error: 1 and 2 keep the last one.
	if got := p.text(`#jobs tr[data-job="1"] [data-field=error]`); got != "smtp: 550 mailbox unavailable …" {
		t.Errorf("job 1's error preview = %q", got)
	}
	// The queue's day and its schedules.
	var stats map[string]json.Number
	if err := json.Unmarshal([]byte(s.must("GET", "/queue/mail/stats", "", http.StatusOK)), &stats); err == nil {
		for _, k := range []string{"created", "completed", "failed", "retries"} {
			if got := p.text(`#queue-stats [data-stat=` + k + `]`); got != k+"\n"+stats[k].String() {
				t.Errorf("stat %s shows %q, want %s", k, got, stats[k])
			}
		}
	}
	if got := p.text(`#schedules tr[data-schedule="digest"]`); !strings.HasPrefix(got, "digest\tcron 0 6 * * *\t") || !strings.HasSuffix(got, `{"input":"digest"}`) {
		t.Errorf("schedule row = %q", got)
	}
	p.screenshot(shots, "queue")
	noProblems(t, p)
}
