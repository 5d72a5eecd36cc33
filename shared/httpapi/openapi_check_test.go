package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ocyless/ocyless/shared/wire"
)

// conformance serves requests and checks each exchange against the
// document: the answer's status is one its operation lists, its body
// fits the schema of that status and media type, its Location is
// declared; a successful request's body and parameters fit theirs, and
// it gives no parameter the operation does not list. It records the
// responses and parameters seen, so that coverage can tell what the
// document lists but no request produced.
type conformance struct {
	doc *apiDoc
	ops map[string]operation // by "METHOD /pattern", as the router sets r.Pattern

	mu sync.Mutex
	// seen holds "<operationId> <status> <media type>" ("" for no body)
	// of the responses seen, and "<operationId> ?<name>" of the
	// parameters successful requests gave.
	seen map[string]bool
}

func newConformance(tb testing.TB) *conformance {
	tb.Helper()
	d := servedDoc(tb)
	c := &conformance{doc: d, ops: map[string]operation{}, seen: map[string]bool{}}
	for _, op := range d.operations(tb) {
		c.ops[op.method+" "+op.path] = op
	}
	return c
}

// serve runs r through h, checks the exchange and returns the response.
func (c *conformance) serve(tb testing.TB, h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	tb.Helper()
	var reqBody []byte
	if r.Body != nil {
		var err error
		if reqBody, err = io.ReadAll(r.Body); err != nil {
			tb.Fatal(err)
		}
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	w := serve(h, r)
	what := fmt.Sprintf("%s %.120s", r.Method, r.URL.RequestURI())
	if r.Pattern == "" {
		// The router answered: no such path, or not this method.
		if (w.Code != http.StatusNotFound && w.Code != http.StatusMethodNotAllowed) || w.Body.Len() != 0 {
			tb.Errorf("%s: answered by no route, yet %d %.120q", what, w.Code, w.Body)
		}
		return w
	}
	op, ok := c.ops[r.Pattern]
	if !ok {
		tb.Errorf("%s: route %q has no operation in openapi.json", what, r.Pattern)
		return w
	}
	what += " (" + op.id + ")"
	c.checkResponse(tb, what, op, w)
	if w.Code >= 200 && w.Code < 300 {
		c.checkRequest(tb, what, op, r, reqBody)
	}
	return w
}

// checkResponse checks w against op's response of its status.
func (c *conformance) checkResponse(tb testing.TB, what string, op operation, w *httptest.ResponseRecorder) {
	tb.Helper()
	d := c.doc
	status := strconv.Itoa(w.Code)
	resp, rptr := d.object(tb, op.ptr+"/responses/"+status)
	if resp == nil {
		tb.Errorf("%s answered %d %.120q: openapi.json lists no such status", what, w.Code, w.Body)
		return
	}
	media := w.Header().Get("Content-Type")
	body := w.Body.Bytes()
	content, _ := d.object(tb, rptr+"/content")
	switch {
	case len(content) == 0:
		if media != "" || len(body) != 0 {
			tb.Errorf("%s answered %d with a body (%s %.120q); openapi.json says none", what, w.Code, media, body)
		}
		media = ""
	case media == "" && len(body) == 0:
		if resp["x-empty-body"] != true {
			tb.Errorf("%s answered %d with no body; openapi.json wants one", what, w.Code)
		}
	default:
		if content[media] == nil {
			tb.Errorf("%s answered %d as %q; openapi.json lists %v", what, w.Code, media, slices.Sorted(maps.Keys(content)))
			return
		}
		var instance any = string(body)
		if strings.HasPrefix(media, "application/json") {
			instance = decodeJSON(tb, body)
		}
		if err := d.schema(tb, rptr+"/content/"+pointer(media)[1:]+"/schema").Validate(instance); err != nil {
			tb.Errorf("%s answered %d %.200q, which openapi.json's schema refuses: %v", what, w.Code, body, err)
		}
	}
	headers, hptr := d.object(tb, rptr+"/headers")
	if loc := w.Header().Get("Location"); loc != "" {
		if headers["Location"] == nil {
			tb.Errorf("%s answered %d with Location %q, which openapi.json does not declare", what, w.Code, loc)
		} else if err := d.schema(tb, d.headerPtr(tb, hptr)+"/schema").Validate(loc); err != nil {
			tb.Errorf("%s: Location %q: %v", what, loc, err)
		}
	} else if headers["Location"] != nil {
		if h, _ := d.object(tb, hptr+"/Location"); h["required"] == true {
			tb.Errorf("%s answered %d without the Location openapi.json requires", what, w.Code)
		}
	}
	c.mu.Lock()
	c.seen[op.id+" "+status+" "+media] = true
	c.mu.Unlock()
}

// headerPtr is the pointer of the Location header object of a response's
// headers at hptr.
func (d *apiDoc) headerPtr(tb testing.TB, hptr string) string {
	tb.Helper()
	_, p := d.object(tb, hptr+"/Location")
	return p
}

// ignoredQuery are the query keys Ocypod's request set sends to show that
// unknown parameters are ignored (testdata/ocypod-requests.txt). Any other
// key of a successful request must be a parameter its operation lists.
var ignoredQuery = map[string]bool{"x": true, "other": true}

// checkRequest checks a successful request: a request that the server
// accepted must fit the document, or the document is stricter than the
// server.
func (c *conformance) checkRequest(tb testing.TB, what string, op operation, r *http.Request, body []byte) {
	tb.Helper()
	d := c.doc
	rb, rbPtr := d.object(tb, op.ptr+"/requestBody")
	switch {
	case rb == nil:
	case len(body) == 0:
		if rb["required"] == true {
			tb.Errorf("%s succeeded without the body openapi.json requires", what)
		}
	default:
		if !wire.IsJSONContentType(r.Header.Get("Content-Type")) {
			tb.Errorf("%s succeeded with a %q body", what, r.Header.Get("Content-Type"))
			break
		}
		if err := d.schema(tb, rbPtr+"/content/application~1json/schema").Validate(decodeJSON(tb, body)); err != nil {
			tb.Errorf("%s succeeded with body %.200q, which openapi.json's schema refuses: %v", what, body, err)
		}
	}
	q := wire.ParseQuery(r.URL.RawQuery)
	params := d.params(tb, op)
	for _, part := range strings.Split(r.URL.RawQuery, "&") {
		key, _, _ := strings.Cut(part, "=")
		if key = wire.FormDecode(key); key != "" && !ignoredQuery[key] &&
			!slices.ContainsFunc(params, func(p param) bool { return p.in == "query" && p.name == key }) {
			tb.Errorf("%s succeeded with query parameter %q, which openapi.json does not list", what, key)
		}
	}
	for _, p := range params {
		var raw string
		var present bool
		switch p.in {
		case "path":
			raw, present = r.PathValue(p.name), true
		case "query":
			var err error
			if raw, present, err = q.Get(p.name); err != nil {
				tb.Errorf("%s succeeded with %v", what, err)
			}
		default:
			tb.Errorf("%s: parameter %q is in %q", what, p.name, p.in)
		}
		if !present {
			if p.required {
				tb.Errorf("%s succeeded without the required parameter %q", what, p.name)
			}
			continue
		}
		c.mu.Lock()
		c.seen[op.id+" ?"+p.name] = true
		c.mu.Unlock()
		v := d.parameterValue(tb, p, raw)
		if err := d.schema(tb, p.ptr+"/schema").Validate(v); err != nil {
			tb.Errorf("%s succeeded with %s %q, which openapi.json's schema refuses: %v", what, p.name, raw, err)
		}
	}
}

// parameterValue is the JSON value a parameter's text stands for, by the
// type of its schema: an array (form style, comma-separated), an integer
// or a boolean when the text is one, else the text.
func (d *apiDoc) parameterValue(tb testing.TB, p param, raw string) any {
	tb.Helper()
	typ := d.schemaType(tb, p.ptr+"/schema")
	if typ == "array" {
		var items []any
		itemType := d.schemaType(tb, p.ptr+"/schema/items")
		for _, s := range wire.List(raw) {
			items = append(items, scalarValue(itemType, s))
		}
		return items
	}
	return scalarValue(typ, raw)
}

func scalarValue(typ, s string) any {
	switch typ {
	case "integer":
		if n, err := wire.ParseU64(s); err == nil {
			return json.Number(strconv.FormatUint(n, 10))
		}
	case "boolean":
		if b, err := strconv.ParseBool(s); err == nil && (s == "true" || s == "false") {
			return b
		}
	}
	return s
}

// schemaType is the "type" of the schema at ptr, following $ref.
func (d *apiDoc) schemaType(tb testing.TB, ptr string) string {
	tb.Helper()
	m, _ := d.object(tb, ptr)
	typ, _ := m["type"].(string)
	return typ
}

// uncovered lists the documented responses no request produced, and the
// documented parameters no successful request gave.
// forbiddenResponse is the 403 every operation lists.
const forbiddenResponse = "/components/responses/Forbidden"

func (c *conformance) uncovered(tb testing.TB) []string {
	tb.Helper()
	d := c.doc
	var out []string
	for _, op := range d.operations(tb) {
		for _, p := range d.params(tb, op) {
			if key := op.id + " ?" + p.name; !c.seen[key] {
				out = append(out, key)
			}
		}
		responses, _ := d.object(tb, op.ptr+"/responses")
		for status := range responses {
			resp, rptr := d.object(tb, op.ptr+"/responses/"+status)
			if rptr == forbiddenResponse {
				// Answered in front of the routes (API Gateway's IAM
				// authorizer, the local server's Host/Origin guard):
				// cmd/ocypod-local's tests check the guard's answers.
				continue
			}
			content, _ := d.object(tb, rptr+"/content")
			var want []string
			for media := range content {
				want = append(want, media)
			}
			if len(content) == 0 || resp["x-empty-body"] == true {
				want = append(want, "")
			}
			for _, media := range want {
				if key := op.id + " " + status + " " + media; !c.seen[key] {
					out = append(out, strings.TrimSpace(key))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
