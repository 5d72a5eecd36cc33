package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestDashboardDotQueues: a queue named "." or ".." cannot be put in a URL
// path (URL parsing takes "." and "%2E" alike, ".." and "%2E%2E" alike, as
// directory steps: queue/%2E%2E/jobs is /jobs). The page lists such a
// queue from /info without links or buttons, says why, and never sends a
// request for it, which would reach another route.
func TestDashboardDotQueues(t *testing.T) {
	b := startBrowser(t)
	s := newServer(t)
	for _, q := range []string{"%2E", "%2E%2E"} {
		s.must("PUT", "/queue/"+q, `{}`, http.StatusCreated)
		s.must("POST", "/queue/"+q+"/job", `{}`, http.StatusCreated)
	}
	if got := s.must("GET", "/info", "", http.StatusOK); !strings.Contains(got, `".":{`) || !strings.Contains(got, `"..":{`) {
		t.Fatalf("GET /info = %s, want queues . and ..", got)
	}
	s.must("PUT", "/queue/ok", `{}`, http.StatusCreated)
	p := b.newPage(t, pageOptions{})
	p.navigate(s.url + "/ui")
	// What the browser makes of the escaped names.
	var resolved []string
	p.mustEval(`['queue/%2E', 'queue/%2E%2E/jobs', 'queue/%2e%2E'].map((p) => new URL(p, location.origin + '/').pathname)`, &resolved)
	if strings.Join(resolved, " ") != "/queue/ /jobs /" {
		t.Errorf("Chromium resolves queue/%%2E, queue/%%2E%%2E/jobs, queue/%%2e%%2E to %q", resolved)
	}
	start := len(s.requests())
	ready := `document.body.dataset.state === 'ready'`
	p.wait(ready + ` && document.querySelector('#queues tr[data-queue=".."]')`)
	p.click(`#auto`)
	p.wait(`document.body.dataset.refresh === 'off'`)
	for _, q := range []string{".", ".."} {
		row := `#queues tr[data-queue="` + q + `"]`
		var links, buttons int
		p.mustEval(`document.querySelectorAll('`+row+` a').length`, &links)
		p.mustEval(`document.querySelectorAll('`+row+` button').length`, &buttons)
		if links != 0 || buttons != 0 {
			t.Errorf("queue %s: %d links and %d buttons, want none", q, links, buttons)
		}
		if got := p.text(row + ` td[data-status=queued]`); got != "1" {
			t.Errorf("queue %s: queued = %q, want 1 (from /info)", q, got)
		}
	}
	if got := p.text(`#unaddressable`); !strings.Contains(got, "cannot send a name of only dots in a URL path") {
		t.Errorf("note = %q", got)
	}
	if got := p.text(`#queues tr[data-queue="ok"] td`); got != "ok" {
		t.Errorf("queue ok shows %q", got)
	}
	// The view of such a queue, from a typed address, says so too.
	p.mustEval(`location.hash = '#/queue/..'`, nil)
	p.wait(ready + ` && document.querySelector('main #unaddressable')`)
	for _, r := range s.requests()[start:] {
		path := strings.SplitN(r, " ", 2)[1]
		if strings.Contains(path, "%2E") || strings.Contains(path, "/.") || path == "/" || path == "/jobs" || path == "/queue/" || path == "/queue" {
			t.Errorf("the page sent %s", r)
		}
	}
	p.screenshot(t.ArtifactDir(), "dot-queues")
	noProblems(t, p)
}
