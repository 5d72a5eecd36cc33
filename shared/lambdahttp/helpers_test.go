package lambdahttp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ocyless/ocyless/shared/lambdahttp"
)

// seen is what a test handler observed of its request.
type seen struct {
	Method, Host, RemoteAddr string
	Path, EscapedPath        string
	RawQuery                 string
	Query                    map[string][]string
	Header                   http.Header
	Body                     string
	PathValues               map[string]string
	Pattern                  string
}

// recorder is an http.Handler remembering the last request it served and
// answering with respond (nil: 200 "ok").
type recorder struct {
	mu      sync.Mutex
	last    *seen
	respond func(w http.ResponseWriter, r *http.Request)
}

// pathNames are the wildcard names the tests read back.
var pathNames = []string{"id", "name", "group", "proxy"}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s := &seen{
		Method: r.Method, Host: r.Host, RemoteAddr: r.RemoteAddr,
		Path: r.URL.Path, EscapedPath: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
		Query: r.URL.Query(), Header: r.Header.Clone(), Body: string(body),
		PathValues: map[string]string{}, Pattern: r.Pattern,
	}
	for _, n := range pathNames {
		if v := r.PathValue(n); v != "" {
			s.PathValues[n] = v
		}
	}
	rec.mu.Lock()
	rec.last = s
	rec.mu.Unlock()
	if rec.respond != nil {
		rec.respond(w, r)
		return
	}
	_, _ = io.WriteString(w, "ok")
}

func (rec *recorder) seen(t *testing.T) *seen {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.last == nil {
		t.Fatal("the handler was not called")
	}
	s := rec.last
	rec.last = nil
	return s
}

// response is the union of both proxy response shapes.
type response struct {
	StatusCode        int                 `json:"statusCode"`
	StatusDescription string              `json:"statusDescription"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	Cookies           []string            `json:"cookies"`
	Body              string              `json:"body"`
	IsBase64Encoded   bool                `json:"isBase64Encoded"`
}

// invoke runs ev (any JSON-encodable value or raw []byte) through h.
func invoke(t *testing.T, h *lambdahttp.Handler, ev any) response {
	t.Helper()
	payload, ok := ev.([]byte)
	if !ok {
		var err error
		if payload, err = json.Marshal(ev); err != nil {
			t.Fatal(err)
		}
	}
	out, err := h.Invoke(t.Context(), payload)
	if err != nil {
		t.Fatalf("Invoke(%.200s) = %v, want nil error", payload, err)
	}
	var resp response
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("Invoke returned %q: %v", out, err)
	}
	return resp
}

var (
	fixturesOnce sync.Once
	fixturesDir  string
	fixturesErr  error
)

// awsFixture reads one of aws-lambda-go's own event fixtures in place, from
// the module directory (nothing is copied into this repository), as a
// generic JSON object for the test to mutate.
func awsFixture(t *testing.T, name string) map[string]any {
	t.Helper()
	fixturesOnce.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws/aws-lambda-go").Output()
		if err != nil {
			fixturesErr = err
			return
		}
		fixturesDir = filepath.Join(strings.TrimSpace(string(out)), "events", "testdata")
	})
	if fixturesErr != nil {
		t.Fatalf("locating aws-lambda-go: %v", fixturesErr)
	}
	data, err := os.ReadFile(filepath.Join(fixturesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ev
}

// obj returns m[key] as an object, creating it if needed.
func obj(m map[string]any, key string) map[string]any {
	o, ok := m[key].(map[string]any)
	if !ok {
		o = map[string]any{}
		m[key] = o
	}
	return o
}

// v2Event returns aws-lambda-go's payload 2.0 fixture rewritten to
// method and rawPath (already percent-decoded, as API Gateway sends it)
// with the given pathParameters and no body.
func v2Event(t *testing.T, method, rawPath string, params map[string]string) map[string]any {
	t.Helper()
	ev := awsFixture(t, "apigw-v2-request-lambda-authorizer.json")
	ev["rawPath"] = rawPath
	ev["rawQueryString"] = ""
	delete(ev, "queryStringParameters")
	delete(ev, "cookies")
	delete(ev, "body")
	ev["headers"] = map[string]any{"accept": "application/json"}
	if params == nil {
		delete(ev, "pathParameters")
	} else {
		ev["pathParameters"] = params
	}
	httpCtx := obj(obj(ev, "requestContext"), "http")
	httpCtx["method"] = method
	httpCtx["path"] = rawPath
	return ev
}
