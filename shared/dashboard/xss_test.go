package dashboard_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Markup that runs script when parsed as HTML, each setting window.__xss
// to say which one ran. Queue names cannot carry any: the API allows
// [A-Za-z0-9_.-] only.
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
// message. The job fails for good, so the group is listed too.
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
}

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
				{"#/", `document.querySelector('#failures')`, []string{xssWorker, xssGroup}},
				{"#/queue/hostile", `document.querySelector('#jobs')`, []string{xssImg, xssAttr, xssKey, xssWorker}},
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
				var got struct {
					Elements   []string
					XSS        any
					Violations []string
				}
				p.mustEval(`({
  elements: [...document.querySelectorAll('img, script, svg, iframe, object, embed')].map((e) => e.outerHTML).filter((h) => !h.startsWith('<script>\'use strict\'')),
  xss: window.__xss ?? null,
  violations: window.__violations,
})`, &got)
				if len(got.Elements) > 0 || got.XSS != nil || len(got.Violations) > 0 {
					t.Errorf("%s: data became markup: elements %q, window.__xss = %v, policy violations %q", v.hash, got.Elements, got.XSS, got.Violations)
				}
				var jsHref int
				p.mustEval(`[...document.querySelectorAll('a')].filter((a) => a.protocol !== location.protocol).length`, &jsHref)
				if jsHref != 0 {
					t.Errorf("%s: %d links leave the page's origin", v.hash, jsHref)
				}
				noProblems(t, p)
			}
			p.screenshot(shots, strings.ReplaceAll(tc.name, " ", "-"))
		})
	}
}
