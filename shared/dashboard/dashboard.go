// Package dashboard is the operators' page, GET /ui: one HTML document with
// its style and script inline, embedded in the binary, that lists queues
// with their job counts, throughput charts and oldest queued job, running
// jobs, workers and failure groups, pages through a queue's jobs, shows its
// statistics and schedules, shows one job with its history, and cancels,
// retries and deletes jobs, retries failure groups and pauses and resumes
// queues, refreshing itself while visible. It talks only to the JSON API of the same origin, with URLs
// relative to its own, so it works wherever the API is mounted.
//
// The page is a static document: it builds its DOM from API data with
// text nodes only, and its Content-Security-Policy allows exactly its own
// inline style and script (by hash), same-origin fetches, and no string
// reaching an HTML sink (Trusted Types), so job data (inputs, outputs,
// tags, errors, worker names) can never run as script.
package dashboard

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

//go:embed page.html page.css page.js
var files embed.FS

// The markers page.html holds where the style and the script go.
const (
	styleMarker  = "/*STYLE*/"
	scriptMarker = "/*SCRIPT*/"
)

// document is the page served, its policy and its validator, all fixed by
// the build.
type document struct {
	html      []byte
	csp, etag string
}

// doc returns the page, built on first use. Nothing at init refers to it
// or to the embedded files, so a binary that never serves the page (every
// Lambda function but the dashboard's) leaves both out.
func doc() document {
	docOnce.Do(func() { docValue = build() })
	return docValue
}

var (
	docOnce  sync.Once
	docValue document
)

// build inlines page.css and page.js into page.html and derives the policy
// from their hashes. A broken embed panics: every build would serve the
// same broken page (a test builds it).
func build() document {
	read := func(name string) string {
		b, err := files.ReadFile(name)
		if err != nil {
			panic("dashboard: " + err.Error())
		}
		return string(b)
	}
	html, style, script := read("page.html"), read("page.css"), read("page.js")
	if strings.Count(html, styleMarker) != 1 || strings.Count(html, scriptMarker) != 1 {
		panic("dashboard: page.html must hold each marker once")
	}
	// The browser ends an inline block at the first closing tag: one inside
	// would cut it short and change its hash.
	if strings.Contains(strings.ToLower(style), "</style") || strings.Contains(strings.ToLower(script), "</script") {
		panic("dashboard: page.css or page.js contains a closing tag")
	}
	html = strings.Replace(html, styleMarker, style, 1)
	html = strings.Replace(html, scriptMarker, script, 1)
	policy := strings.Join([]string{
		"default-src 'none'",
		"script-src " + hashSource(script),
		"style-src " + hashSource(style),
		"connect-src 'self'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
		"require-trusted-types-for 'script'",
		"trusted-types 'none'",
	}, "; ")
	sum := sha256.Sum256([]byte(html))
	return document{html: []byte(html), csp: policy, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

// hashSource is the CSP source expression allowing one inline block.
func hashSource(block string) string {
	sum := sha256.Sum256([]byte(block))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// headers are set on every answer, 304 included.
func headers(h http.Header, d document) {
	h.Set("Content-Security-Policy", d.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	// The page changes only with a new build: browsers keep it but ask
	// each time, and get a bodiless 304 while the build is the same.
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", d.etag)
}

// Serve answers a GET of the page.
func Serve(w http.ResponseWriter, r *http.Request) {
	d := doc()
	h := w.Header()
	headers(h, d)
	if matches(r.Header.Values("If-None-Match"), d.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(d.html)))
	_, _ = w.Write(d.html)
}

// matches reports whether an If-None-Match header names tag (weakly, as
// RFC 9110 asks for GET) or is "*".
func matches(values []string, tag string) bool {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == tag {
				return true
			}
		}
	}
	return false
}
