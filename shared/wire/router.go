package wire

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// HandlerFunc answers one request: it writes its success response itself,
// or returns its failure without writing anything, for the router's
// ErrorFunc to answer.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// ErrorFunc answers err, a handler's failure, on w. When the response was
// already started (a handler panicked after writing), w drops what is
// written, so the ErrorFunc still sees the failure (to log it) but cannot
// corrupt the answer.
type ErrorFunc func(w http.ResponseWriter, r *http.Request, err error)

// Route is one method on one path pattern. Pattern is a path whose
// segments are literals or {name} wildcards; a wildcard matches one
// non-empty segment, percent-decoded, and the handler reads it with
// r.PathValue(name).
type Route struct {
	Method  string
	Pattern string
	Handler HandlerFunc
}

// Router serves routes as Ocypod's router does: the path is matched as
// sent (r.URL.EscapedPath()), segment by segment, with no cleaning, no
// redirects and no trailing-slash handling. An unknown path is a 404 with
// an empty body; a known path with another method is a 405 with an empty
// body and an Allow header listing the path's methods.
type Router struct {
	patterns []*pattern
	byCount  [][]*pattern // patterns by segment count
	single   *endpoint    // set when the router serves one route
	fail     ErrorFunc
}

type pattern struct {
	text  string
	segs  []string // literal segments, "" where a wildcard is
	names []string // wildcard names by position, "" for literals
	wild  int      // number of wildcards
	eps   []*endpoint
	allow string // every method of the pattern in the whole table
}

type endpoint struct {
	route   Route
	pattern *pattern
	label   string // "METHOD /pattern", set as r.Pattern
}

// NewRouter returns a router serving every route of table.
func NewRouter(table []Route, fail ErrorFunc) *Router {
	rt := &Router{fail: fail}
	for _, r := range table {
		var p *pattern
		for _, q := range rt.patterns {
			if q.text == r.Pattern {
				p = q
			}
		}
		if p == nil {
			p = compilePattern(r.Pattern, Allow(table, r.Pattern))
		}
		rt.add(p, r)
	}
	return rt
}

// NewRouteRouter returns a router serving only table[i], for a Lambda
// function behind an API Gateway route of its own. It matches the path like
// NewRouter's, except when the request already carries the route's path
// values (an adapter copied API Gateway's match into r.SetPathValue):
// those are then used as they are, and only the method is checked. A
// 405's Allow lists every method the table has for the path, since API
// Gateway sends the other methods to their own functions.
func NewRouteRouter(table []Route, i int, fail ErrorFunc) *Router {
	return NewSingleRouter(table[i], Allow(table, table[i].Pattern), fail)
}

// NewSingleRouter is NewRouteRouter without the table: it serves r alone,
// and a 405 carries allow, the methods the whole table has for r's path
// (Allow), worked out beforehand. A Lambda function that is handed its
// route this way links that route's handler and no other.
func NewSingleRouter(r Route, allow string, fail ErrorFunc) *Router {
	rt := &Router{fail: fail}
	p := compilePattern(r.Pattern, allow)
	rt.add(p, r)
	rt.single = p.eps[0]
	return rt
}

// Allow is the Allow header of a 405 on pattern: every method table has for
// it, in table order, each once.
func Allow(table []Route, pattern string) string {
	var methods []string
	for _, r := range table {
		if r.Pattern == pattern && !slices.Contains(methods, r.Method) {
			methods = append(methods, r.Method)
		}
	}
	return strings.Join(methods, ", ")
}

// add serves r on p, which it registers on first use.
func (rt *Router) add(p *pattern, r Route) {
	if len(p.eps) == 0 {
		rt.patterns = append(rt.patterns, p)
		for len(rt.byCount) <= len(p.segs) {
			rt.byCount = append(rt.byCount, nil)
		}
		rt.byCount[len(p.segs)] = append(rt.byCount[len(p.segs)], p)
	}
	p.eps = append(p.eps, &endpoint{route: r, pattern: p, label: r.Method + " " + r.Pattern})
}

func compilePattern(text, allow string) *pattern {
	p := &pattern{text: text, allow: allow}
	for _, s := range strings.Split(strings.TrimPrefix(text, "/"), "/") {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			p.segs = append(p.segs, "")
			p.names = append(p.names, s[1:len(s)-1])
			p.wild++
		} else {
			p.segs = append(p.segs, s)
			p.names = append(p.names, "")
		}
	}
	return p
}

// match reports whether path (without its leading '/') fits p: the same
// number of segments (the caller checked), literals equal, wildcards
// non-empty. It walks the path without splitting it.
func (p *pattern) match(path string) bool {
	for i, lit := range p.segs {
		seg, rest, _ := strings.Cut(path, "/")
		path = rest
		if p.names[i] != "" {
			if seg == "" {
				return false
			}
		} else if seg != lit {
			return false
		}
	}
	return true
}

// setValues sets r's path values from path, which p matched.
func (p *pattern) setValues(r *http.Request, path string) {
	for _, name := range p.names {
		seg, rest, _ := strings.Cut(path, "/")
		path = rest
		if name != "" {
			r.SetPathValue(name, PercentDecode(seg))
		}
	}
}

func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every answer, success, error or empty, tells browsers not to guess
	// its type.
	w.Header()["X-Content-Type-Options"] = nosniff
	sw := writers.Get().(*statusWriter)
	sw.ResponseWriter, sw.wrote = w, false
	defer func() {
		sw.ResponseWriter = nil
		writers.Put(sw)
	}()
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			rt.answer(sw, r, fmt.Errorf("panic: %v", v))
			return
		}
		// The Lambda adapter turns a response without a status into a
		// 504: never leave one unwritten.
		if !sw.wrote {
			rt.answer(sw, r, errors.New("handler wrote no response"))
		}
	}()
	rt.serve(sw, r)
}

var nosniff = []string{"nosniff"}

// writers recycles the statusWriters: one per request otherwise. A handler
// never keeps its writer past its return.
var writers = sync.Pool{New: func() any { return new(statusWriter) }}

// answer hands err to the ErrorFunc, on a writer that drops everything if
// the response was already started.
func (rt *Router) answer(sw *statusWriter, r *http.Request, err error) {
	if sw.wrote {
		rt.fail(discard{sw.Header()}, r, err)
		return
	}
	rt.fail(sw, r, err)
}

func (rt *Router) serve(w *statusWriter, r *http.Request) {
	if ep := rt.single; ep != nil && hasPathValues(r, ep.pattern) {
		if r.Method != ep.route.Method {
			methodNotAllowed(w, ep.pattern.allow)
			return
		}
		rt.run(ep, w, r)
		return
	}
	path := r.URL.EscapedPath()
	if !strings.HasPrefix(path, "/") {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	path = path[1:]
	n := strings.Count(path, "/") + 1
	if n >= len(rt.byCount) {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	allow := ""
	for _, p := range rt.byCount[n] {
		if !p.match(path) {
			continue
		}
		for _, ep := range p.eps {
			if ep.route.Method == r.Method {
				if p.wild > 0 {
					p.setValues(r, path)
				}
				rt.run(ep, w, r)
				return
			}
		}
		if allow == "" {
			allow = p.allow
		}
	}
	if allow != "" {
		methodNotAllowed(w, allow)
		return
	}
	w.WriteHeader(http.StatusNotFound)
}

// run runs ep's handler and answers its error: the one place a handler's
// returned error becomes a response.
func (rt *Router) run(ep *endpoint, w *statusWriter, r *http.Request) {
	r.Pattern = ep.label
	if err := ep.route.Handler(w, r); err != nil {
		rt.answer(w, r, err)
	}
}

// hasPathValues reports whether r already carries a value for every
// wildcard of p (and p has at least one).
func hasPathValues(r *http.Request, p *pattern) bool {
	if p.wild == 0 {
		return false
	}
	for _, name := range p.names {
		if name != "" && r.PathValue(name) == "" {
			return false
		}
	}
	return true
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	w.WriteHeader(http.StatusMethodNotAllowed)
}

// statusWriter records whether a response has been started.
type statusWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// discard is a ResponseWriter that drops the status and body.
type discard struct{ h http.Header }

func (d discard) Header() http.Header       { return d.h }
func (discard) WriteHeader(int)             {}
func (discard) Write(b []byte) (int, error) { return len(b), nil }
