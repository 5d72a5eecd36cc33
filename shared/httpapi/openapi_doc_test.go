package httpapi

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// The OpenAPI document (openapi.json) is held true by three kinds of
// tests: here, its operations against the route table and its schema
// names against the decoders' field lists, and the document against the
// OpenAPI 3.1 schema; in openapi_walk_test.go, every answer of the
// handlers against the document.

const (
	// docURL is the base URL the tests compile the document's schemas
	// under; nothing is fetched from it.
	docURL = "https://ocyless.test/openapi.json"
	// oasSchemaPath is the OpenAPI 3.1 schema (testdata/README.md).
	oasSchemaPath = "testdata/openapi-3.1-schema.json"
	oasSchemaID   = "https://spec.openapis.org/oas/3.1/schema/2022-10-07"
)

// apiDoc is the document as served, with its schemas compiled on demand.
type apiDoc struct {
	root map[string]any

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema // by JSON pointer
}

// servedDoc fetches GET /openapi.json through the handler (no Redis is
// needed) and parses it.
func servedDoc(tb testing.TB) *apiDoc {
	tb.Helper()
	w := do(New(&fakeStore{}, Options{}).Handler(), http.MethodGet, "/openapi.json", "")
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != jsonType {
		tb.Fatalf("GET /openapi.json = %d (%s) %.200q", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	body := w.Body.Bytes()
	root, ok := decodeJSON(tb, body).(map[string]any)
	if !ok {
		tb.Fatalf("GET /openapi.json is not an object: %.200q", body)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	if err := c.AddResource(docURL, bytes.NewReader(body)); err != nil {
		tb.Fatal(err)
	}
	return &apiDoc{root: root, compiler: c, schemas: map[string]*jsonschema.Schema{}}
}

// decodeJSON decodes one JSON value, numbers as json.Number (what the
// schema validator takes), and fails tb on anything else.
func decodeJSON(tb testing.TB, data []byte) any {
	tb.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		tb.Fatalf("%.200q: %v", data, err)
	}
	if d.More() {
		tb.Fatalf("%.200q: more than one JSON value", data)
	}
	return v
}

// pointer joins JSON pointer tokens.
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString("/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// at returns the value at ptr, following a "$ref" at ptr itself (local
// references only), and the pointer it was found at.
func (d *apiDoc) at(tb testing.TB, ptr string) (any, string) {
	tb.Helper()
	for range 8 {
		var v any = d.root
		for _, tok := range strings.Split(ptr, "/")[1:] {
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			switch x := v.(type) {
			case map[string]any:
				var ok bool
				if v, ok = x[tok]; !ok {
					return nil, ptr
				}
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(x) {
					return nil, ptr
				}
				v = x[i]
			default:
				tb.Fatalf("openapi.json: %s: nothing to look %q up in", ptr, tok)
			}
		}
		m, ok := v.(map[string]any)
		ref, isRef := m["$ref"].(string)
		if !ok || !isRef {
			return v, ptr
		}
		if !strings.HasPrefix(ref, "#/") {
			tb.Fatalf("openapi.json: %s: $ref %q is not local", ptr, ref)
		}
		ptr = ref[1:]
	}
	tb.Fatalf("openapi.json: %s: $ref loop", ptr)
	return nil, ""
}

// object is at for a value that must be an object (nil when absent).
func (d *apiDoc) object(tb testing.TB, ptr string) (map[string]any, string) {
	tb.Helper()
	v, p := d.at(tb, ptr)
	if v == nil {
		return nil, p
	}
	m, ok := v.(map[string]any)
	if !ok {
		tb.Fatalf("openapi.json: %s is not an object", p)
	}
	return m, p
}

// schema returns the compiled schema at ptr.
func (d *apiDoc) schema(tb testing.TB, ptr string) *jsonschema.Schema {
	tb.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.schemas[ptr]; ok {
		return s
	}
	var frag strings.Builder
	for _, tok := range strings.Split(ptr, "/")[1:] {
		frag.WriteString("/" + url.PathEscape(tok))
	}
	s, err := d.compiler.Compile(docURL + "#" + frag.String())
	if err != nil {
		tb.Fatalf("openapi.json: compiling the schema at %s: %v", ptr, err)
	}
	d.schemas[ptr] = s
	return s
}

// operation is one method of one path of the document.
type operation struct {
	ptr, method, path, id string
}

// operations lists the document's operations.
func (d *apiDoc) operations(tb testing.TB) []operation {
	tb.Helper()
	paths, _ := d.object(tb, "/paths")
	var ops []operation
	for path := range paths {
		item, _ := d.object(tb, pointer("paths", path))
		for key := range item {
			method := strings.ToUpper(key)
			if !slices.Contains([]string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}, method) {
				continue
			}
			ptr := pointer("paths", path, key)
			op, _ := d.object(tb, ptr)
			id, _ := op["operationId"].(string)
			ops = append(ops, operation{ptr: ptr, method: method, path: path, id: id})
		}
	}
	return ops
}

// param is a resolved parameter of an operation: the pointer of its
// object and what it says.
type param struct {
	ptr, name, in string
	required      bool
}

// params returns op's parameters: the path item's, then the operation's
// (which win for the same name and location).
func (d *apiDoc) params(tb testing.TB, op operation) []param {
	tb.Helper()
	var out []param
	for _, list := range []string{pointer("paths", op.path, "parameters"), op.ptr + "/parameters"} {
		v, _ := d.at(tb, list)
		items, _ := v.([]any)
		for i := range items {
			m, p := d.object(tb, list+"/"+itoa(i))
			name, _ := m["name"].(string)
			in, _ := m["in"].(string)
			req, _ := m["required"].(bool)
			out = slices.DeleteFunc(out, func(q param) bool { return q.name == name && q.in == in })
			out = append(out, param{ptr: p, name: name, in: in, required: req})
		}
	}
	return out
}

// TestOpenAPIServed: GET /openapi.json serves the embedded document, as
// compact JSON.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	var want bytes.Buffer
	if err := json.Compact(&want, openapiDoc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	w := do(New(&fakeStore{}, Options{}).Handler(), http.MethodGet, "/openapi.json", "")
	wantJSON(t, w, http.StatusOK, want.String())
	w = do(New(&fakeStore{}, Options{}).Handler(), http.MethodPost, "/openapi.json", "")
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET" {
		t.Errorf("POST /openapi.json = %d Allow %q, want 405 Allow GET", w.Code, w.Header().Get("Allow"))
	}
}

// TestOpenAPIRoutes: the document's operations are exactly the route
// table's, each named by its route, with the path parameters of its
// pattern.
func TestOpenAPIRoutes(t *testing.T) {
	t.Parallel()
	d := servedDoc(t)
	var got, want []string
	for _, op := range d.operations(t) {
		got = append(got, op.method+" "+op.path+" "+op.id)
		var inPath []string
		for _, p := range d.params(t, op) {
			if p.in == "path" {
				if !p.required {
					t.Errorf("%s: path parameter %q is not required", op.id, p.name)
				}
				inPath = append(inPath, "{"+p.name+"}")
			}
		}
		var wildcards []string
		for _, seg := range strings.Split(op.path, "/") {
			if strings.HasPrefix(seg, "{") {
				wildcards = append(wildcards, seg)
			}
		}
		slices.Sort(inPath)
		slices.Sort(wildcards)
		if !slices.Equal(inPath, wildcards) {
			t.Errorf("%s %s: path parameters %v, want %v", op.method, op.path, inPath, wildcards)
		}
		if resp, _ := d.object(t, op.ptr+"/responses"); len(resp) == 0 {
			t.Errorf("%s: no responses", op.id)
		}
	}
	for _, rt := range Routes() {
		want = append(want, rt.Method+" "+rt.Pattern+" "+rt.Name)
	}
	slices.Sort(got)
	slices.Sort(want)
	for _, s := range got {
		if !slices.Contains(want, s) {
			t.Errorf("openapi.json has %q, which is not in the route table", s)
		}
	}
	for _, s := range want {
		if !slices.Contains(got, s) {
			t.Errorf("the route table has %q, which openapi.json lacks", s)
		}
	}
	if v, _ := d.at(t, "/info/version"); v != Version {
		t.Errorf("info.version = %v, want %q", v, Version)
	}
}

// TestOpenAPISchema validates the document against the OpenAPI 3.1
// schema, and compiles each of its schemas (checking it against JSON
// Schema 2020-12's meta-schema).
func TestOpenAPISchema(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(oasSchemaPath)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat = true
	if err := c.AddResource(oasSchemaID, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	oas, err := c.Compile(oasSchemaID)
	if err != nil {
		t.Fatalf("compiling %s: %v", oasSchemaPath, err)
	}
	d := servedDoc(t)
	if err := oas.Validate(d.root); err != nil {
		t.Errorf("openapi.json is not a valid OpenAPI 3.1 document: %v", err)
	}
	// The schema has teeth: a Swagger 2 body parameter fails it.
	broken := decodeJSON(t, []byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},`+
		`"paths":{"/a":{"post":{"parameters":[{"name":"b","in":"body","schema":{}}],"responses":{"204":{"description":"ok"}}}}}}`))
	if oas.Validate(broken) == nil {
		t.Error(`a parameter "in": "body" passed the OpenAPI schema`)
	}
	schemas, _ := d.object(t, "/components/schemas")
	for name := range schemas {
		d.schema(t, pointer("components", "schemas", name))
	}
}

// TestOpenAPINames: the names the document lists are the code's: job
// fields, statuses, and the fields each request decoder reads.
func TestOpenAPINames(t *testing.T) {
	t.Parallel()
	d := servedDoc(t)
	keys := func(ptr string) []string {
		m, _ := d.object(t, ptr)
		return slices.Sorted(maps.Keys(m))
	}
	enum := func(ptr string) []string {
		v, _ := d.at(t, ptr)
		var out []string
		for _, e := range v.([]any) {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	sorted := func(lists ...[]string) []string { return slices.Sorted(slices.Values(slices.Concat(lists...))) }
	jobFields := slices.Concat(ocypod.JobFields, ocypod.ExtJobFields)
	var statuses, ocypodStatuses []string
	for _, st := range ocypod.AllStatuses {
		statuses = append(statuses, string(st))
	}
	for _, st := range ocypod.Statuses {
		ocypodStatuses = append(ocypodStatuses, string(st))
	}
	const s = "/components/schemas/"
	for _, tt := range []struct {
		what string
		got  []string
		want []string
	}{
		{"Job properties", keys(s + "Job/properties"), sorted(jobFields)},
		{"JobField enum", enum(s + "JobField/enum"), jobFields},
		{"Status enum", enum(s + "Status/enum"), statuses},
		{"JobUpdate status enum", sorted(enum(s + "JobUpdate/properties/status/enum")), sorted(ocypodStatuses)},
		{"JobSpec properties", keys(s + "JobSpec/properties"), sorted(jobSpecFields)},
		{"JobUpdate properties", keys(s + "JobUpdate/properties"), sorted(jobUpdateFields)},
		{"QueueSettingsRequest properties", keys(s + "QueueSettingsRequest/properties"), sorted(queueSettingsFields)},
		{"QueuePatch properties", keys(s + "QueuePatch/properties"), sorted(queuePatchFields)},
		{"QueueSettings properties", keys(s + "QueueSettings/properties"), sorted(queuePatchFields)},
		{"ScheduleRequest properties", keys(s + "ScheduleRequest/properties"), sorted(scheduleFields)},
		{"RetryRequest properties", keys(s + "RetryRequest/properties"), sorted(runAtFields)},
		{"RateLimit properties", keys(s + "RateLimit/properties"), sorted(rateLimitFields)},
		{"BackoffRequest properties", keys(s + "BackoffRequest/properties"), sorted(backoffFields)},
		{"Backoff properties", keys(s + "Backoff/properties"), sorted(backoffFields)},
		{"JobUpdate error properties", keys(s + "JobUpdate/properties/error/anyOf/1/properties"), sorted(jobErrorFields)},
		{"QueueCounts properties", keys(s + "QueueCounts/properties"), sorted(statuses)},
		{"JobIds properties", keys(s + "JobIds/properties"), sorted(statuses)},
	} {
		if !slices.Equal(tt.got, tt.want) {
			t.Errorf("%s = %q, want %q", tt.what, tt.got, tt.want)
		}
	}
	for ptr, want := range map[string]int{
		s + "DurationStats/properties/histogram/minItems":  ocypod.HistogramBuckets,
		s + "DurationStats/properties/histogram/maxItems":  ocypod.HistogramBuckets,
		"/components/parameters/CountParam/schema/maximum": ocypod.MaxTakeCount,
		"/components/parameters/LimitParam/schema/maximum": ocypod.MaxListLimit,
		"/components/parameters/LimitParam/schema/default": ocypod.DefaultListLimit,
		s + "JobSpec/properties/tags/maxItems":             ocypod.MaxTags,
		s + "JobSpec/properties/key/maxLength":             ocypod.MaxKeyLength,
		s + "JobSpec/properties/priority/maximum":          ocypod.MaxPriority,
		s + "JobSpec/properties/priority/minimum":          ocypod.MinPriority,
		s + "WorkerName/maxLength":                         ocypod.MaxWorkerName,
		s + "ScheduleId/maxLength":                         ocypod.MaxScheduleID,
		s + "QueueName/maxLength":                          ocypod.MaxNameLength,
		s + "QueuePatch/properties/shards/maximum":         ocypod.MaxShards,
		s + "Job/properties/history/maxItems":              ocypod.MaxHistory,
	} {
		if v, _ := d.at(t, ptr); v != json.Number(strconv.Itoa(want)) {
			t.Errorf("%s = %v, want %d", ptr, v, want)
		}
	}
}
