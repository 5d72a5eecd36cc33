package dashboard_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/redistest"
)

// TestDashboardThroughput checks the per-minute charts against the
// counts the API returns (GET /queue/{name}/stats?by=minute): each series
// is the server's 60 minutes, also for minutes before the page opened,
// and a refresh shows the minute the server moved on to.
func TestDashboardThroughput(t *testing.T) {
	b := startBrowser(t)
	clock := redistest.NewClock(time.Now().UTC().Truncate(time.Minute).Add(-30 * time.Minute))
	s := newServerClock(t, clock)
	s.must("PUT", "/queue/q", `{}`, http.StatusCreated)
	// Thirty minutes ago: 3 created, 1 completed, 1 failed; a minute later
	// 2 more created; now 1 created.
	for range 3 {
		s.must("POST", "/queue/q/job", `{}`, http.StatusCreated)
	}
	s.must("GET", "/queue/q/job", "", http.StatusOK)
	s.must("GET", "/queue/q/job", "", http.StatusOK)
	s.must("PATCH", "/job/1", `{"status":"completed"}`, http.StatusNoContent)
	s.must("PATCH", "/job/2", `{"status":"failed","retry":false}`, http.StatusNoContent)
	clock.Advance(time.Minute)
	s.must("POST", "/queue/q/job", `{}`, http.StatusCreated)
	s.must("POST", "/queue/q/job", `{}`, http.StatusCreated)
	clock.Advance(29 * time.Minute)
	s.must("POST", "/queue/q/job", `{}`, http.StatusCreated)

	// apiMinutes is what the API answers, as the chart's data-values.
	apiMinutes := func() map[string]string {
		var st struct {
			Minutes map[string]json.RawMessage
		}
		if err := json.Unmarshal([]byte(s.must("GET", "/queue/q/stats?by=minute", "", http.StatusOK)), &st); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, k := range []string{"created", "completed", "failed"} {
			var ns []uint64
			if err := json.Unmarshal(st.Minutes[k], &ns); err != nil || len(ns) != 60 {
				t.Fatalf("minutes.%s = %s, %v", k, st.Minutes[k], err)
			}
			out[k] = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(ns)), ","), "[]")
		}
		return out
	}
	// minutes is a series of 60 zeros but at the given indexes.
	minutes := func(at map[int]int) string {
		v := make([]string, 60)
		for i := range v {
			v[i] = fmt.Sprint(at[i])
		}
		return strings.Join(v, ",")
	}

	p := b.newPage(t, pageOptions{})
	ready := `document.body.dataset.state === 'ready'`
	p.navigate(s.url + "/ui")
	p.wait(ready + ` && document.querySelector('#queues [data-chart="q"]')`)
	p.click(`#auto`) // refreshes are the test's clicks
	p.wait(`document.body.dataset.refresh === 'off'`)
	series := func(sel string) map[string]string {
		t.Helper()
		var out map[string]string
		p.mustEval(`Object.fromEntries([...document.querySelectorAll('`+sel+` [data-chart="q"] g[data-series]')].map((g) =>
  [g.dataset.series, g.dataset.values]))`, &out)
		return out
	}
	want := apiMinutes()
	if w := map[string]string{"created": minutes(map[int]int{29: 3, 30: 2, 59: 1}), "completed": minutes(map[int]int{29: 1}),
		"failed": minutes(map[int]int{29: 1})}; !maps.Equal(want, w) {
		t.Fatalf("the API's minutes = %v, want %v", want, w)
	}
	if got := series("#queues"); !maps.Equal(got, want) {
		t.Errorf("overview chart = %v, want the API's %v", got, want)
	}
	var now []string
	p.mustEval(`[...document.querySelectorAll('#queues [data-chart="q"] .chart-now span')].map((e) => e.dataset.now + ' ' + e.textContent)`, &now)
	if got := strings.Join(now, ", "); got != "created 1, completed 0, failed 0" {
		t.Errorf("this minute shows %q, want 1 0 0", got)
	}
	var title string
	p.mustEval(`document.querySelector('#queues [data-chart="q"] title').textContent`, &title)
	if !strings.Contains(title, "created 6, completed 1, failed 1 (peak 3/min)") {
		t.Errorf("chart title = %q, want the hour's sums and peak", title)
	}

	// A minute later, a refresh shows the hour the server moved on to.
	clock.Advance(time.Minute)
	s.must("POST", "/queue/q/job", `{}`, http.StatusCreated)
	p.mustEval(`document.querySelector('#queues').dataset.old = '1'`, nil)
	p.click(`#refresh`)
	p.wait(ready + ` && !document.querySelector('#queues').dataset.old`)
	want = apiMinutes()
	if got := series("#queues"); !maps.Equal(got, want) || want["created"] != minutes(map[int]int{28: 3, 29: 2, 58: 1, 59: 1}) {
		t.Errorf("after a minute, overview chart = %v, want the API's %v", got, want)
	}

	// The queue's view charts the same.
	p.click(`#queues a[href="#/queue/q"]`)
	p.wait(ready + ` && location.hash === '#/queue/q' && document.querySelector('.big-chart [data-chart="q"]')`)
	if got := series(".big-chart"); !maps.Equal(got, want) {
		t.Errorf("queue view chart = %v, want the API's %v", got, want)
	}
	p.screenshot(t.ArtifactDir(), "throughput")
	noProblems(t, p)
}

// fastTimers makes the page's timers run 25 times sooner (its 5 s refresh
// every 200 ms) and lets the test hide and show the tab.
const fastTimers = `(() => {
  const st = window.setTimeout.bind(window);
  window.setTimeout = (f, ms, ...a) => st(f, (ms || 0) / 25, ...a);
  window.__hidden = false;
  Object.defineProperty(Document.prototype, 'visibilityState', { get() { return window.__hidden ? 'hidden' : 'visible'; } });
  Object.defineProperty(Document.prototype, 'hidden', { get() { return window.__hidden; } });
  window.__setHidden = (h) => { window.__hidden = h; document.dispatchEvent(new Event('visibilitychange')); };
})();`

// TestDashboardRefresh checks that the page refreshes itself: new data
// shows without a click, the view is never blanked in between, an open
// failure group stays open and an armed button stays armed, and a hidden
// tab sends no request until it is shown again.
func TestDashboardRefresh(t *testing.T) {
	b := startBrowser(t)
	s := newServer(t)
	s.must("PUT", "/queue/q", `{}`, http.StatusCreated)
	s.must("POST", "/queue/q/job", `{}`, http.StatusCreated)
	s.must("GET", "/queue/q/job", "", http.StatusOK)
	s.must("PATCH", "/job/1", `{"status":"failed","error":{"group":"g","message":"boom"}}`, http.StatusNoContent)
	p := b.newPage(t, pageOptions{script: fastTimers})
	ready := `document.body.dataset.state === 'ready'`
	p.navigate(s.url + "/ui")
	p.wait(ready + ` && document.querySelector('#queues') && document.body.dataset.refresh === 'on'`)
	// Count the view's replacements, and any moment it lacks the queues.
	p.mustEval(`window.__swaps = 0; window.__blank = 0;
new MutationObserver(() => {
  window.__swaps++;
  if (!document.querySelector('main #queues')) window.__blank++;
}).observe(document.querySelector('main'), { childList: true })`, nil)

	s.must("POST", "/queue/q/job", `{}`, http.StatusCreated)
	p.wait(`document.querySelector('tr[data-queue="q"] td[data-status=queued]')?.textContent === '1'`)

	p.click(`#failures tr[data-group="g"] [data-action=toggle]`)
	p.wait(ready + ` && document.querySelector('#failures tr[data-group-jobs="g"]')`)
	p.mustEval(`window.__mark = window.__swaps`, nil)
	p.wait(`window.__swaps >= window.__mark + 3`)
	if got := p.text(`#failures tr[data-group-jobs="g"] tr[data-job="1"] [data-field=error]`); got != "g: boom" {
		t.Errorf("after refreshes the open group shows %q, want job 1's error", got)
	}
	// An armed Retry group stays armed while refreshes go by.
	// (A refresh under way when it was armed ends without replacing it.)
	p.click(`#failures tr[data-group="g"] [data-action=retry-group]`)
	p.wait(`!document.querySelector('main').hasAttribute('aria-busy')`)
	before := len(s.requests())
	p.mustEval(`new Promise((r) => setTimeout(r, 25 * 1000))`, nil) // a second, five refresh periods
	if got := p.text(`#failures tr[data-group="g"] [data-action=retry-group]`); got != "Click again to retry 1 job" {
		t.Errorf("armed button after a second shows %q", got)
	}
	if n := len(s.requests()) - before; n != 0 {
		t.Errorf("%d requests while a button was armed, want none", n)
	}
	p.click(`#failures tr[data-group="g"] [data-action=retry-group]`)
	p.wait(ready + ` && document.querySelector('#notice').textContent === 'Group g: 1 job queued again'`)

	// Hidden: no request; shown: a refresh at once.
	p.mustEval(`window.__setHidden(true)`, nil)
	p.wait(`document.body.dataset.refresh === 'paused' && !document.querySelector('main').hasAttribute('aria-busy')`)
	if got := p.text(`#refresh-state`); got != "paused while the tab is hidden" {
		t.Errorf("refresh state shows %q", got)
	}
	before = len(s.requests())
	p.mustEval(`new Promise((r) => setTimeout(r, 25 * 1000))`, nil)
	if got := s.requests()[before:]; len(got) != 0 {
		t.Errorf("a hidden tab sent %q, want nothing", got)
	}
	s.must("POST", "/queue/q/job", `{}`, http.StatusCreated)
	p.mustEval(`window.__setHidden(false)`, nil)
	p.wait(`document.body.dataset.refresh === 'on' && document.querySelector('tr[data-queue="q"] td[data-status=queued]')?.textContent === '3'`)

	var blank, swaps int
	p.mustEval(`window.__blank`, &blank)
	p.mustEval(`window.__swaps`, &swaps)
	if blank != 0 || swaps < 5 {
		t.Errorf("over %d refreshes the view lacked its queues %d times, want refreshes and never", swaps, blank)
	}
	noProblems(t, p)
}
