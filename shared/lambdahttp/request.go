package lambdahttp

import (
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"net/textproto"
	"net/url"
	"strings"
)

// escapePath percent-encodes each segment of a decoded path, so that the
// result parses as a URL path whose segments decode back to the input:
// "/tag/a b" becomes "/tag/a%20b", "/tag/50%" becomes "/tag/50%25" and a
// decoded "?" or "#" no longer starts a query or fragment.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// stripStage removes a named HTTP API stage from the front of path: with a
// stage other than $default, API Gateway's rawPath starts with "/<stage>".
func stripStage(path, stage string) string {
	if stage == "" || stage == "$default" {
		return path
	}
	prefix := "/" + stage
	if path == prefix {
		return "/"
	}
	if rest, ok := strings.CutPrefix(path, prefix+"/"); ok {
		return "/" + rest
	}
	return path
}

// headerFromMap turns payload 2.0 headers (one comma-joined value per name)
// into an http.Header holding that one value, as net/http would for a single
// header line.
func headerFromMap(m map[string]string) http.Header {
	h := make(http.Header, len(m))
	for k, v := range m {
		k = textproto.CanonicalMIMEHeaderKey(k)
		h[k] = append(h[k], v)
	}
	return h
}

// joinCookies joins payload 2.0 cookies into one Cookie header value.
func joinCookies(cookies []string) string { return strings.Join(cookies, "; ") }

// finishRequest gives r what net/http's server would: the Host header moved
// to r.Host, and the path values. params are API Gateway's pathParameters,
// already decoded; they win over whatever the path would give.
func finishRequest(r *http.Request, params map[string]string) {
	if host := r.Header.Get("Host"); host != "" {
		r.Host = host
	}
	r.Header.Del("Host")
	for name, value := range params {
		r.SetPathValue(strings.TrimSuffix(name, "+"), value)
	}
}

// decodeALBQuery returns the event's query parameters percent-decoded (the
// multi-value ones when present). ok is false for an encoding that does
// not decode, which net/http would refuse too.
func decodeALBQuery(ev events.ALBTargetGroupRequest) (map[string][]string, bool) {
	in := ev.MultiValueQueryStringParameters
	if in == nil {
		in = make(map[string][]string, len(ev.QueryStringParameters))
		for k, v := range ev.QueryStringParameters {
			in[k] = []string{v}
		}
	}
	out := make(map[string][]string, len(in))
	for k, vs := range in {
		key, err := url.QueryUnescape(k)
		if err != nil {
			return nil, false
		}
		for _, v := range vs {
			val, err := url.QueryUnescape(v)
			if err != nil {
				return nil, false
			}
			out[key] = append(out[key], val)
		}
	}
	return out, true
}
