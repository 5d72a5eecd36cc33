package httpapi

import (
	"github.com/ocyless/ocyless/shared/wire"

	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Handler returns every route on one router. An unknown path is a 404 with an
// empty body; a known path with another method is a 405 with an Allow header.
// Paths are matched as sent (r.URL.EscapedPath()), segment by segment, with no
// cleaning, redirects or trailing-slash handling, as Ocypod does.
func (a *API) Handler() http.Handler {
	return a.newRouter(routes)
}

// RouteHandler returns a handler serving only the route called name, for a
// Lambda function behind an API Gateway route of its own. It matches the path
// like Handler, except when the request already carries the route's path
// values (an adapter copied API Gateway's match into r.SetPathValue): those
// are then used as they are, and only the method is checked. Routes without
// wildcards (/health, /info, /info/version, /queue) always match the path, so
// an adapter must pass the path without any stage prefix. A 405's Allow
// lists every method the route table has for the path, since API Gateway
// sends the other methods to their own functions.
func (a *API) RouteHandler(name string) (http.Handler, error) {
	for _, rt := range routes {
		if rt.Name == name {
			return a.newRouter([]Route{rt}), nil
		}
	}
	return nil, fmt.Errorf("httpapi: unknown route %q", name)
}

// router serves a set of routes grouped by pattern.
type router struct {
	api      *API
	patterns []*pattern
	// single is set when the router serves one route (RouteHandler).
	single *endpoint
}

// pattern is one path pattern and the routes (one per method) it serves.
type pattern struct {
	text  string   // as written in the route table
	segs  []string // literal segments, or "" where a wildcard is
	names []string // wildcard names, by position; "" for literals
	eps   []*endpoint
	allow string // every method of this path in the whole route table
}

type endpoint struct {
	route   Route
	pattern *pattern
}

func (a *API) newRouter(rs []Route) *router {
	rt := &router{api: a}
	for _, r := range rs {
		p := rt.find(r.Pattern)
		if p == nil {
			p = compilePattern(r.Pattern)
			rt.patterns = append(rt.patterns, p)
		}
		p.eps = append(p.eps, &endpoint{route: r, pattern: p})
	}
	if len(rs) == 1 {
		rt.single = rt.patterns[0].eps[0]
	}
	return rt
}

func (rt *router) find(text string) *pattern {
	for _, p := range rt.patterns {
		if p.text == text {
			return p
		}
	}
	return nil
}

func compilePattern(text string) *pattern {
	p := &pattern{text: text}
	for _, s := range strings.Split(strings.TrimPrefix(text, "/"), "/") {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			p.segs = append(p.segs, "")
			p.names = append(p.names, s[1:len(s)-1])
		} else {
			p.segs = append(p.segs, s)
			p.names = append(p.names, "")
		}
	}
	var methods []string
	for _, r := range routes {
		if r.Pattern == text && !slices.Contains(methods, r.Method) {
			methods = append(methods, r.Method)
		}
	}
	p.allow = strings.Join(methods, ", ")
	return p
}

// match reports whether the path segments fit p: same count, literals equal,
// wildcards non-empty. It returns the percent-decoded wildcard values.
func (p *pattern) match(segs []string) ([]string, bool) {
	if len(segs) != len(p.segs) {
		return nil, false
	}
	var vals []string
	for i, s := range segs {
		if p.names[i] == "" {
			if s != p.segs[i] {
				return nil, false
			}
			continue
		}
		if s == "" {
			return nil, false
		}
		vals = append(vals, wire.PercentDecode(s))
	}
	return vals, true
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every answer, success, error or empty, tells browsers not to guess
	// its type.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			rt.api.logFailure(r, http.StatusInternalServerError, fmt.Errorf("panic: %v", v))
			if !sw.wrote {
				writeText(sw, http.StatusInternalServerError, internalMessage)
			}
			return
		}
		// The Lambda adapter turns a response without a status into a 504:
		// never leave one unwritten.
		if !sw.wrote {
			rt.api.logFailure(r, http.StatusInternalServerError, errors.New("handler wrote no response"))
			writeText(sw, http.StatusInternalServerError, internalMessage)
		}
	}()
	rt.serve(sw, r)
}

func (rt *router) serve(w http.ResponseWriter, r *http.Request) {
	if ep := rt.single; ep != nil && hasPathValues(r, ep.pattern) {
		if r.Method != ep.route.Method {
			methodNotAllowed(w, ep.pattern.allow)
			return
		}
		rt.run(ep, w, r, nil)
		return
	}
	path := r.URL.EscapedPath()
	if !strings.HasPrefix(path, "/") {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	segs := strings.Split(path[1:], "/")
	allow := ""
	for _, p := range rt.patterns {
		vals, ok := p.match(segs)
		if !ok {
			continue
		}
		for _, ep := range p.eps {
			if ep.route.Method == r.Method {
				rt.run(ep, w, r, vals)
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

// run sets the path values (vals by wildcard position; nil keeps the ones
// already on r) and runs ep's handler. This is the one place a handler's
// returned error is turned into a response, by writeError.
func (rt *router) run(ep *endpoint, w http.ResponseWriter, r *http.Request, vals []string) {
	if vals != nil {
		i := 0
		for _, name := range ep.pattern.names {
			if name != "" {
				r.SetPathValue(name, vals[i])
				i++
			}
		}
	}
	r.Pattern = ep.route.Method + " " + ep.route.Pattern
	if err := ep.route.handler(rt.api, w, r); err != nil {
		rt.api.writeError(w, r, err)
	}
}

// hasPathValues reports whether r already carries a value for every wildcard
// of p (and p has at least one).
func hasPathValues(r *http.Request, p *pattern) bool {
	n := 0
	for _, name := range p.names {
		if name == "" {
			continue
		}
		if r.PathValue(name) == "" {
			return false
		}
		n++
	}
	return n > 0
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
