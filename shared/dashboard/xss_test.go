package dashboard_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Markup that runs script when parsed as HTML, each setting window.__xss
// to say which one ran. Queue names and schedule ids cannot carry any: the
// API allows [A-Za-z0-9_.-] only (a name typed into the page's address is
// tried below).
const (
	xssImg    = `<img src=x onerror="window.__xss='img'">`
	xssScript = `<script>window.__xss='script'</script>`
	xssSVG    = `<svg onload="window.__xss='svg'"></svg>`
	xssAttr   = `"><img src=x onerror="window.__xss='attr'">`
	xssWorker = `<img src=x onerror="window.__xss='worker'">`
	xssGroup  = `<svg onload="window.__xss='group'">`
	xssKey    = `<iframe srcdoc="<script>parent.__xss='key'</script>">`
)

// seedHostile creates job 1 of queue hostile with markup in every string
// the page shows: input, output, tags, key, worker name, error group and
// message. The job fails for good, so the group is listed too. Job 2 runs,
// taken by the same worker, and a schedule's job carries markup in its
// input and tags.
func seedHostile(s *server) {
	s.must("PUT", "/queue/hostile", `{}`, http.StatusCreated)
	body, _ := json.Marshal(map[string]any{
		"input": map[string]any{"html": xssScript, "img": xssImg, xssSVG: "a key"},
		"tags":  []string{xssImg, xssAttr, "javascript:window.__xss='tag'"},
		"key":   xssKey,
	})
	s.must("POST", "/queue/hostile/job", string(body), http.StatusCreated)
	s.must("GET", "/queue/hostile/job?worker="+url.QueryEscape(xssWorker), "", http.StatusOK)
	out, _ := json.Marshal(map[string]any{"progress": xssSVG, "list": []string{xssImg, xssScript}})
	s.must("PUT", "/job/1/output", string(out), http.StatusNoContent)
	fail, _ := json.Marshal(map[string]any{"status": "failed", "error": map[string]string{"group": xssGroup, "message": xssScript + xssImg}})
	s.must("PATCH", "/job/1", string(fail), http.StatusNoContent)
	s.must("POST", "/queue/hostile/job", `{"input":2}`, http.StatusCreated)
	s.must("GET", "/queue/hostile/job?worker="+url.QueryEscape(xssWorker), "", http.StatusOK)
	sched, _ := json.Marshal(map[string]any{"every": "1h", "job": map[string]any{"input": map[string]string{"x": xssImg}, "tags": []string{xssSVG}}})
	s.must("PUT", "/queue/hostile/schedules/nightly", string(sched), http.StatusCreated)
}

// markupCheck lists what the page holds that its data may have become:
// elements that run script or load things (the page's own charts, SVG of
// its own shapes without handlers, aside), the value window.__xss took,
// and the policy's violations.
const markupCheck = `({
  elements: [...document.querySelectorAll('img, script, svg, iframe, object, embed')].filter((e) =>
    !(e.matches('svg[data-chart]') && [e, ...e.querySelectorAll('*')].every((n) =>
      ['svg', 'title', 'line', 'g', 'polyline', 'circle'].includes(n.localName) && ![...n.attributes].some((a) => a.name.startsWith('on'))))
  ).map((e) => e.outerHTML).filter((h) => !h.startsWith('<script>\'use strict\'')),
  xss: window.__xss ?? null,
  violations: window.__violations,
})`

// TestDashboardShowsDataAsText opens every view holding job data with
// markup in it, once with the page's Content-Security-Policy and once with
// Chromium told to ignore it (so that the page's own escaping is tested,
// not only the policy): the markup must show as text, create no element,
// run nothing, and violate no policy.
func TestDashboardShowsDataAsText(t *testing.T) {
	b := startBrowser(t)
	s := newServer(t)
	seedHostile(s)
	shots := t.ArtifactDir()
	for _, tc := range []struct {
		name string
		opts pageOptions
	}{{"policy enforced", pageOptions{}}, {"policy bypassed", pageOptions{bypassCSP: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			p := b.newPage(t, tc.opts)
			p.navigate(s.url + "/ui")
			for _, v := range []struct {
				hash, ready string
				shows       []string
			}{
				{"#/", `document.querySelector('#failures') && document.querySelector('#running tr[data-running="2"]')`, []string{xssWorker, xssGroup}},
				{"#/queue/hostile", `document.querySelector('#jobs') && document.querySelector('#schedules')`, []string{xssImg, xssAttr, xssKey, xssWorker,
					xssGroup + ": " + xssScript + xssImg, `"input":{"x":"` + strings.ReplaceAll(xssImg, `"`, `\"`) + `"}`, `"tags":["` + strings.ReplaceAll(xssSVG, `"`, `\"`) + `"]`}},
				{"#/job/1", `document.querySelector('#history')`, []string{
					`"html": "<script>window.__xss='script'</script>"`, `"<svg onload=\"window.__xss='svg'\"></svg>": "a key"`,
					`"progress": "<svg onload=\"window.__xss='svg'\"></svg>"`, xssImg, xssAttr, xssKey, xssWorker,
					xssGroup + ": " + xssScript + xssImg,
				}},
			} {
				p.mustEval(`location.hash = `+jsString(v.hash), nil)
				p.wait(`document.body.dataset.state === 'ready' && location.hash === ` + jsString(v.hash) + ` && ` + v.ready)
				var text string
				p.mustEval(`document.querySelector('main').innerText`, &text)
				for _, want := range v.shows {
					if !strings.Contains(text, want) {
						t.Errorf("%s: the page does not show %q as text:\n%s", v.hash, want, text)
					}
				}
				noMarkup(t, p, v.hash)
				var jsHref int
				p.mustEval(`[...document.querySelectorAll('a')].filter((a) => a.protocol !== location.protocol).length`, &jsHref)
				if jsHref != 0 {
					t.Errorf("%s: %d links leave the page's origin", v.hash, jsHref)
				}
				noProblems(t, p)
			}
			// The failure group opened: its jobs with their errors.
			p.mustEval(`location.hash = '#/'`, nil)
			p.wait(`document.body.dataset.state === 'ready' && document.querySelector('#failures [data-action=toggle]')`)
			p.click(`#failures [data-action=toggle]`)
			p.wait(`document.body.dataset.state === 'ready' && document.querySelector('#failures tr[data-group-jobs] tr[data-job="1"]')`)
			if got, want := p.text(`#failures tr[data-group-jobs] tr[data-job="1"] [data-field=error]`), xssGroup+": "+xssScript+xssImg; got != want {
				t.Errorf("failure group's job shows error %q, want %q", got, want)
			}
			if got := p.text(`#running tr[data-running="2"] [data-field=worker]`); got != xssWorker {
				t.Errorf("running job's worker shows %q, want %q", got, xssWorker)
			}
			noMarkup(t, p, "#/ with the group open")
			noProblems(t, p)
			p.screenshot(shots, strings.ReplaceAll(tc.name, " ", "-"))

			// Markup typed into the page's address, as a queue's name: the
			// API refuses the name, and the page shows it as text.
			hash := "#/queue/" + url.PathEscape(xssImg)
			p.mustEval(`location.hash = `+jsString(hash), nil)
			p.wait(`document.body.dataset.state === 'error'`)
			if got := p.text(`#crumbs`); !strings.Contains(got, xssImg) {
				t.Errorf("%s: crumbs show %q, want the name as text", hash, got)
			}
			if got := p.text(`#error-text`); !strings.Contains(got, "400") {
				t.Errorf("%s: error shown %q, want the API's 400", hash, got)
			}
			noMarkup(t, p, hash)
			for _, pr := range p.takeProblems() {
				if !strings.Contains(pr, "status of 400") {
					t.Errorf("page: %s", pr)
				}
			}
		})
	}
}

// noMarkup fails t if any data became markup in the page.
func noMarkup(t *testing.T, p *page, where string) {
	t.Helper()
	var got struct {
		Elements   []string
		XSS        any
		Violations []string
	}
	p.mustEval(markupCheck, &got)
	if len(got.Elements) > 0 || got.XSS != nil || len(got.Violations) > 0 {
		t.Errorf("%s: data became markup: elements %q, window.__xss = %v, policy violations %q", where, got.Elements, got.XSS, got.Violations)
	}
}
