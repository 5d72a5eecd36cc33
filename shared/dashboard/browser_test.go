package dashboard_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// seedEmails creates the queues and jobs the dashboard test looks at:
//
//	emails: 1 running (w1), 2 failed for good (group smtp), 3 completed,
//	        4 and 5 queued, 6 scheduled in an hour; 1 to 5 have a retry
//	        each, 2's failure was permanent
//	reports: 7 queued, whose input holds an integer a double cannot
func seedEmails(s *server) {
	s.must("PUT", "/queue/emails", `{}`, http.StatusCreated)
	s.must("PUT", "/queue/reports", `{}`, http.StatusCreated)
	for i := 1; i <= 5; i++ {
		s.must("POST", "/queue/emails/job", fmt.Sprintf(`{"input":{"n":%d},"tags":["batch"],"retries":1}`, i), http.StatusCreated)
	}
	s.must("POST", "/queue/emails/job", `{"input":{"n":6},"delay":"1h"}`, http.StatusCreated)
	s.must("POST", "/queue/reports/job", `{"input":{"big":12345678901234567890}}`, http.StatusCreated)
	for _, id := range []string{"1", "2", "3"} {
		if got := s.must("GET", "/queue/emails/job?worker=w1", "", http.StatusOK); !strings.Contains(got, `"id":`+id+`,`) {
			s.t.Fatalf("take = %s, want job %s", got, id)
		}
	}
	s.must("PATCH", "/job/2", `{"status":"failed","retry":false,"error":{"group":"smtp","message":"connection refused"}}`, http.StatusNoContent)
	s.must("PATCH", "/job/3", `{"status":"completed","output":{"sent":true}}`, http.StatusNoContent)
}

type queueRow struct {
	Queue  string
	Counts map[string]int
	State  string
}

// queueRows reads the overview's queue table.
func queueRows(p *page) []queueRow {
	var rows []queueRow
	p.mustEval(`[...document.querySelectorAll('#queues tbody tr')].map((tr) => ({
  queue: tr.dataset.queue,
  counts: Object.fromEntries([...tr.querySelectorAll('td[data-status]')].map((td) => [td.dataset.status, +td.textContent])),
  state: tr.querySelector('[data-field=state]').textContent,
}))`, &rows)
	return rows
}

// jobIDs reads the ids of the queue view's job table.
func jobIDs(p *page) []string {
	var ids []string
	p.mustEval(`[...document.querySelectorAll('#jobs tbody tr')].map((tr) => tr.dataset.job)`, &ids)
	return ids
}

// noProblems fails t with whatever went wrong in the page since the last
// check. The API has no /favicon.ico; Chromium asks for it only when
// told to ignore the page's policy (default-src 'none' forbids it).
func noProblems(t *testing.T, p *page) {
	t.Helper()
	for _, pr := range p.takeProblems() {
		if !strings.HasSuffix(pr, "/favicon.ico") {
			t.Errorf("page: %s", pr)
		}
	}
}

// TestDashboard drives the page in headless Chromium against the real
// handler stack: counts, paging, a job's detail, every action (checked in
// the store through the API), and the API's errors shown to the user.
func TestDashboard(t *testing.T) {
	b := startBrowser(t)
	s := newServer(t)
	seedEmails(s)
	shots := t.ArtifactDir()
	p := b.newPage(t, pageOptions{})
	ready := `document.body.dataset.state === 'ready'`

	t.Run("overview", func(t *testing.T) {
		p := p.on(t)
		p.navigate(s.url + "/ui")
		p.wait(ready + ` && document.querySelector('#queues')`)
		// These steps read the page between the changes they make: they
		// turn the page's own refresh off (TestDashboardRefresh tests it).
		p.click(`#auto`)
		p.wait(`document.body.dataset.refresh === 'off'`)
		zero := map[string]int{"queued": 0, "scheduled": 0, "waiting": 0, "running": 0, "completed": 0, "failed": 0, "timed_out": 0, "cancelled": 0}
		counts := func(m map[string]int) map[string]int {
			out := maps.Clone(zero)
			for k, v := range m {
				out[k] = v
			}
			return out
		}
		want := []queueRow{
			{"emails", counts(map[string]int{"queued": 2, "scheduled": 1, "running": 1, "completed": 1, "failed": 1}), "active"},
			{"reports", counts(map[string]int{"queued": 1}), "active"},
		}
		if got := queueRows(p); !reflect.DeepEqual(got, want) {
			t.Errorf("queue table = %+v, want %+v", got, want)
		}
		if got := p.text(`#workers tr[data-worker="w1"]`); !strings.HasPrefix(got, "w1\t") || !strings.HasSuffix(got, "\t1\t0") {
			t.Errorf("worker row = %q, want w1 with 1 running, 0 timed out", got)
		}
		if got := p.text(`#failures tr[data-group="smtp"]`); got != "▸ smtp\t1\tRetry group" {
			t.Errorf("failure row = %q, want smtp 1", got)
		}
		if got := p.text(`#statistics [data-stat="total_jobs_created"]`); !strings.HasSuffix(got, "7") {
			t.Errorf("created statistic = %q, want 7", got)
		}
		p.screenshot(shots, "overview")
		noProblems(t, p)
	})

	t.Run("paging", func(t *testing.T) {
		p := p.on(t)
		// The API's own order, in one page.
		var listing struct{ Jobs []struct{ ID json.Number } }
		if err := json.Unmarshal([]byte(s.must("GET", "/queue/emails/jobs?fields=id", "", http.StatusOK)), &listing); err != nil {
			t.Fatal(err)
		}
		var all []string
		for _, j := range listing.Jobs {
			all = append(all, j.ID.String())
		}
		if sorted := slices.Sorted(slices.Values(all)); !slices.Equal(sorted, []string{"1", "2", "3", "4", "5", "6"}) {
			t.Fatalf("GET /queue/emails/jobs lists %v, want jobs 1 to 6", all)
		}
		p.click(`#queues a[href="#/queue/emails"]`)
		p.wait(ready + ` && location.hash === '#/queue/emails' && document.querySelector('#jobs')`)
		if got := jobIDs(p); !slices.Equal(got, all) {
			t.Errorf("first page of 20 = %v, want %v", got, all)
		}
		// Pages of two: Next until there is none, then Previous.
		p.mustEval(`location.hash = '#/queue/emails?limit=2'`, nil)
		p.wait(ready + ` && document.querySelector('#page-size').value === '2'`)
		var seen [][]string
		for page := 1; ; page++ {
			p.wait(ready + fmt.Sprintf(` && document.querySelector('#page-number').textContent === 'page %d'`, page))
			seen = append(seen, jobIDs(p))
			var last bool
			p.mustEval(`document.querySelector('#page-next').disabled`, &last)
			if last || page > 5 {
				break
			}
			p.click(`#page-next`)
		}
		if got := slices.Concat(seen...); !slices.Equal(got, all) || len(seen[0]) != 2 || len(seen) < 3 {
			t.Errorf("pages of 2 = %v, want %v in pages of 2", seen, all)
		}
		p.click(`#page-prev`)
		p.wait(ready + fmt.Sprintf(` && document.querySelector('#page-number').textContent === 'page %d'`, len(seen)-1))
		if got := jobIDs(p); !slices.Equal(got, seen[len(seen)-2]) {
			t.Errorf("previous page = %v, want %v", got, seen[len(seen)-2])
		}
		p.screenshot(shots, "queue-page")
		// The status filter.
		p.mustEval(`(() => { const s = document.querySelector('#status-filter'); s.value = 'queued'; s.dispatchEvent(new Event('change')); })()`, nil)
		p.wait(ready + ` && location.hash === '#/queue/emails?status=queued&limit=2' && document.querySelector('#page-number').textContent === 'page 1'`)
		if got := jobIDs(p); !slices.Equal(got, []string{"4", "5"}) {
			t.Errorf("queued jobs = %v, want [4 5]", got)
		}
		noProblems(t, p)
	})

	t.Run("job detail", func(t *testing.T) {
		p := p.on(t)
		p.click(`#jobs a[href="#/job/4"]`)
		p.wait(ready + ` && location.hash === '#/job/4'`)
		p.mustEval(`location.hash = '#/job/2'`, nil)
		p.wait(ready + ` && document.querySelector('#job-fields [data-field=id]')?.textContent === '2'`)
		for field, want := range map[string]string{"queue": "emails", "status": "failed", "tags": "batch", "worker": "w1", "attempt": "1", "retries": "1", "retries_attempted": "0"} {
			if got := p.text(`#job-fields [data-field="` + field + `"]`); got != want {
				t.Errorf("field %s = %q, want %q", field, got, want)
			}
		}
		if got := p.text(`#job-input`); got != "{\n  \"n\": 2\n}" {
			t.Errorf("input = %q", got)
		}
		if got := p.text(`#job-error`); got != "smtp: connection refused" {
			t.Errorf("error = %q", got)
		}
		var history []string
		p.mustEval(`[...document.querySelectorAll('#history tbody td')].map((td) => td.innerText)`, &history)
		if len(history) != 6 || history[0] != "1" || history[1] != "w1" || history[4] != "failed" || history[5] != "smtp: connection refused" {
			t.Errorf("history row = %q, want attempt 1 by w1, failed, smtp: connection refused", history)
		}
		p.screenshot(shots, "job")
		// Exact numbers: the API's text, not a double's.
		p.mustEval(`location.hash = '#/job/7'`, nil)
		p.wait(ready + ` && document.querySelector('#job-fields [data-field=id]')?.textContent === '7'`)
		if got := p.text(`#job-input`); got != "{\n  \"big\": 12345678901234567890\n}" {
			t.Errorf("input of job 7 = %q, want the integer unchanged", got)
		}
		noProblems(t, p)
	})

	t.Run("actions", func(t *testing.T) {
		p := p.on(t)
		open := func(id string) {
			t.Helper()
			p.mustEval(`location.hash = '#/job/`+id+`'`, nil)
			p.wait(ready + ` && document.querySelector('#job-fields [data-field=id]')?.textContent === '` + id + `'`)
		}
		open("2")
		p.click(`[data-action=retry]`)
		p.wait(ready + ` && document.querySelector('#notice').textContent === 'Job 2 retried: now queued'`)
		if got := s.must("GET", "/job/2?fields=status,retries_attempted", "", http.StatusOK); got != `{"status":"queued","retries_attempted":1}` {
			t.Errorf("job 2 after Retry = %s, want queued with its retry spent", got)
		}
		if got := p.text(`#job-fields [data-field=status]`); got != "queued" {
			t.Errorf("job 2's page after Retry shows %q, want queued", got)
		}

		open("4")
		p.click(`[data-action=cancel]`)
		p.wait(ready + ` && document.querySelector('#notice').textContent === 'Job 4 cancelled'`)
		if got := s.status("4"); got != "cancelled" {
			t.Errorf("job 4 after Cancel = %q, want cancelled", got)
		}
		p.click(`[data-action=requeue]`)
		p.wait(ready + ` && document.querySelector('#notice').textContent === 'Job 4 requeued'`)
		if got := s.status("4"); got != "queued" {
			t.Errorf("job 4 after Requeue = %q, want queued", got)
		}

		open("5")
		p.click(`[data-action=delete]`)
		if got := p.text(`[data-action=delete]`); got != "Click again to delete job 5" {
			t.Errorf("Delete's first click shows %q, want a request to confirm", got)
		}
		if got := s.status("5"); got != "queued" {
			t.Fatalf("job 5 after one click on Delete = %q, want it untouched", got)
		}
		p.click(`[data-action=delete]`)
		p.wait(ready + ` && location.hash === '#/queue/emails' && document.querySelector('#notice').textContent === 'Job 5 deleted'`)
		if got := s.status("5"); got != "" {
			t.Errorf("job 5 after Delete = %q, want it gone", got)
		}

		p.mustEval(`location.hash = '#/'`, nil)
		p.wait(ready + ` && document.querySelector('#queues')`)
		p.click(`tr[data-queue="emails"] [data-action=pause]`)
		p.wait(ready + ` && document.querySelector('tr[data-queue="emails"] [data-field=state]').textContent === 'paused'`)
		if got := s.must("GET", "/queue/emails", "", http.StatusOK); !strings.Contains(got, `"paused":true`) {
			t.Errorf("queue after Pause = %s, want paused", got)
		}
		s.must("GET", "/queue/emails/job", "", http.StatusNoContent) // a paused queue gives nothing
		p.screenshot(shots, "paused")
		p.click(`tr[data-queue="emails"] [data-action=resume]`)
		p.wait(ready + ` && document.querySelector('tr[data-queue="emails"] [data-field=state]').textContent === 'active'`)
		if got := s.must("GET", "/queue/emails", "", http.StatusOK); strings.Contains(got, `"paused"`) {
			t.Errorf("queue after Resume = %s, want not paused", got)
		}
		noProblems(t, p)
	})

	t.Run("errors", func(t *testing.T) {
		p := p.on(t)
		// Job 1 is running in the page; a worker completes it meanwhile.
		p.mustEval(`location.hash = '#/job/1'`, nil)
		p.wait(ready + ` && document.querySelector('#job-fields [data-field=status]')?.textContent === 'running'`)
		s.must("PATCH", "/job/1", `{"status":"completed"}`, http.StatusNoContent)
		p.click(`[data-action=cancel]`)
		p.wait(`!document.querySelector('#error').hidden`)
		want := "PATCH /job/1: 409 Conflict: Cannot change status from completed to cancelled"
		if got := p.text(`#error-text`); got != want {
			t.Errorf("error shown = %q, want %q", got, want)
		}
		if got := s.status("1"); got != "completed" {
			t.Errorf("job 1 = %q, want completed", got)
		}
		// The refusal shows the view was out of date: it is read again.
		p.wait(ready + ` && document.querySelector('#job-fields [data-field=status]').textContent === 'completed'`)
		if got := p.text(`#notice`); got != "" {
			t.Errorf("notice = %q next to an error, want none", got)
		}
		p.screenshot(shots, "error")
		p.click(`#error-close`)
		p.wait(`document.querySelector('#error').hidden`)

		p.mustEval(`location.hash = '#/job/999'`, nil)
		p.wait(`document.body.dataset.state === 'error'`)
		if got := p.text(`#error-text`); !strings.HasSuffix(got, "404 Not Found: Job with ID 999 does not exist") {
			t.Errorf("error shown = %q, want the 404's text", got)
		}
		// The browser logs each failed request; nothing else may go wrong.
		for _, pr := range p.takeProblems() {
			if !strings.Contains(pr, "status of 409") && !strings.Contains(pr, "status of 404") {
				t.Errorf("page: %s", pr)
			}
		}
	})
}
