package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// concrete turns a route pattern into a path that matches it.
func concrete(pattern string) string {
	return strings.NewReplacer("{id}", "7", "{name}", "q", "{group}", "g").Replace(pattern)
}

// sample is a valid request of rt: its path (with the query a route
// needs) and its body.
func sample(rt Route) (string, string) {
	path, body := concrete(rt.Pattern), ""
	switch rt.Name {
	case "take-jobs":
		path += "?queues=q"
	case "update-job":
		body = `{"status":"completed"}`
	case "create-jobs":
		body = `[{}]`
	case "update-jobs":
		body = `[{"id":7,"status":"completed"}]`
	case "heartbeat-jobs":
		body = `[{"id":7}]`
	case "put-schedule":
		body = `{"every":"1m","job":{}}`
	default:
		if rt.Method == http.MethodPut || rt.Method == http.MethodPost || rt.Method == http.MethodPatch {
			body = "{}"
		}
	}
	return path, body
}

func TestRouteTableIsServed(t *testing.T) {
	t.Parallel()
	h := New(&fakeStore{}, Options{}).Handler()
	for _, rt := range Routes() {
		path, body := sample(rt)
		w := do(h, rt.Method, path, body)
		if w.Code < 200 || w.Code > 299 {
			t.Errorf("%s %s (%s) = %d %q", rt.Method, rt.Pattern, rt.Name, w.Code, w.Body)
		}
	}
}

func TestRoutesAndLogicalID(t *testing.T) {
	t.Parallel()
	rs := Routes()
	if len(rs) != 39 {
		t.Fatalf("len(Routes()) = %d, want 39 (Ocypod's 19, the extension's 18, /openapi.json, the dashboard)", len(rs))
	}
	rs[0].Name = "changed"
	if Routes()[0].Name == "changed" {
		t.Error("Routes() returned the table itself, want a copy")
	}
	if got := LogicalID("create-job"); got != "CreateJobFunction" {
		t.Errorf(`LogicalID("create-job") = %q, want "CreateJobFunction"`, got)
	}
}

func TestUnknownPaths(t *testing.T) {
	t.Parallel()
	store := &fakeStore{}
	h := New(store, Options{}).Handler()
	for _, path := range []string{
		"/", "/queue/", "/queues", "/QUEUE", "/health/", "//health", "/info/", "/info/versions",
		"/job/", "/job//status", "/jobs/", "/workers/", "/failures/", "/failures//retry", "/queue/q/schedules/", "/job/1/status/", "/job/1/", "/job/1/foo",
		"/tag", "/tag/", "/tag/a/b", "/queue/a/b/c", "/queue//job", "/queue/a//", "/./health",
		"/health/..", "/queue/a/job/", "/job/1/output/x",
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			wantEmpty(t, do(h, method, path, ""), http.StatusNotFound)
		}
	}
	if calls := store.Calls(); len(calls) != 0 {
		t.Errorf("store calls = %v, want none", calls)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	h := New(&fakeStore{}, Options{}).Handler()
	tests := []struct {
		method, path, allow string
	}{
		{http.MethodPost, "/health", "GET"},
		{http.MethodHead, "/health", "GET"},
		{http.MethodDelete, "/info", "GET"},
		{http.MethodPost, "/info/version", "GET"},
		{http.MethodPut, "/tag/x", "GET"},
		{http.MethodDelete, "/job/5/status", "GET"},
		{http.MethodPost, "/job/5/output", "GET, PUT"},
		{http.MethodGet, "/job/5/heartbeat", "PUT"},
		{http.MethodPut, "/job/5", "GET, PATCH, DELETE"},
		{http.MethodOptions, "/job/abc", "GET, PATCH, DELETE"},
		{http.MethodPost, "/queue/q/job_ids", "GET"},
		{http.MethodPut, "/queue/q/job", "GET, POST"},
		{http.MethodPost, "/queue/q/size", "GET"},
		{http.MethodPost, "/queue/q", "GET, PUT, DELETE, PATCH"},
		{http.MethodPost, "/queue/bad%20name", "GET, PUT, DELETE, PATCH"},
		{http.MethodPost, "/job", "GET"},
		{http.MethodDelete, "/jobs", "GET, PATCH"},
		{http.MethodPut, "/queue/q/jobs", "GET, POST"},
		{http.MethodPost, "/queue/q/stats", "GET"},
		{http.MethodPost, "/queue/q/schedules/s", "GET, PUT, DELETE"},
		{http.MethodPut, "/job/1/retry", "POST"},
		{http.MethodPut, "/failures", "GET"},
		{http.MethodDelete, "/failures/g", "GET"},
		{http.MethodGet, "/failures/g/retry", "POST"},
		{http.MethodPost, "/workers/w", "GET"},
		{http.MethodPost, "/queue", "GET"},
		{"BREW", "/queue", "GET"},
	}
	for _, tt := range tests {
		w := do(h, tt.method, tt.path, "")
		if w.Code != http.StatusMethodNotAllowed || w.Body.Len() != 0 || w.Header().Get("Allow") != tt.allow {
			t.Errorf("%s %s = %d %q Allow %q, want 405, empty, Allow %q",
				tt.method, tt.path, w.Code, w.Body, w.Header().Get("Allow"), tt.allow)
		}
	}
}

func TestPathValues(t *testing.T) {
	t.Parallel()
	var gotID uint64
	var gotName, gotTag string
	store := &fakeStore{
		JobStatusFunc: func(_ context.Context, id uint64) (ocypod.Status, error) {
			gotID = id
			return "running", nil
		},
		QueueSizeFunc: func(_ context.Context, name string) (uint64, error) {
			gotName = name
			return 3, nil
		},
		TagJobIDsFunc: func(_ context.Context, tag string) ([]uint64, error) {
			gotTag = tag
			return []uint64{3, 1, 2}, nil
		},
	}
	h := New(store, Options{}).Handler()

	for path, id := range map[string]uint64{
		"/job/7/status":                    7,
		"/job/007/status":                  7,
		"/job/+7/status":                   7,
		"/job/%37/status":                  7,
		"/job/0/status":                    0,
		"/job/18446744073709551615/status": 18446744073709551615,
	} {
		gotID = 1 << 60
		w := do(h, http.MethodGet, path, "")
		wantJSON(t, w, http.StatusOK, `"running"`)
		if gotID != id {
			t.Errorf("GET %s: store got id %d, want %d", path, gotID, id)
		}
	}

	wantJSON(t, do(h, http.MethodGet, "/queue/a.b-C_9/size", ""), http.StatusOK, `3`)
	if gotName != "a.b-C_9" {
		t.Errorf("queue name = %q, want a.b-C_9", gotName)
	}
	wantJSON(t, do(h, http.MethodGet, "/queue/%61bc/size", ""), http.StatusOK, `3`)
	if gotName != "abc" {
		t.Errorf("queue name = %q, want abc (percent-decoded)", gotName)
	}

	for path, tag := range map[string]string{
		"/tag/a%2Fb":        "a/b",
		"/tag/%E2%9C%93":    "✓",
		"/tag/a+b":          "a+b",
		"/tag/100%25":       "100%",
		"/tag/%FF":          "\uFFFD",
		"/tag/with%20space": "with space",
	} {
		wantJSON(t, do(h, http.MethodGet, path, ""), http.StatusOK, `[1,2,3]`)
		if gotTag != tag {
			t.Errorf("GET %s: tag = %q, want %q", path, gotTag, tag)
		}
	}
}

func TestBadPathValues(t *testing.T) {
	t.Parallel()
	store := &fakeStore{}
	h := New(store, Options{}).Handler()
	for path, text := range map[string]string{
		"/job/abc":                     `can not parse "abc" to a u64`,
		"/job/-1/status":               `can not parse "-1" to a u64`,
		"/job/+/output":                `can not parse "+" to a u64`,
		"/job/++1":                     `can not parse "++1" to a u64`,
		"/job/1.0":                     `can not parse "1.0" to a u64`,
		"/job/0x10/status":             `can not parse "0x10" to a u64`,
		"/job/18446744073709551616":    `can not parse "18446744073709551616" to a u64`,
		"/job/%20/status":              `can not parse " " to a u64`,
		"/job/a%22b":                   `can not parse "a\"b" to a u64`,
		"/job/%0A":                     `can not parse "\n" to a u64`,
		"/job/%01":                     `can not parse "\u{1}" to a u64`,
		"/job/%E2%9C%93":               `can not parse "✓" to a u64`,
		"/job/1%2F2/status":            `can not parse "1/2" to a u64`,
		"/job/99999999999999999999999": `can not parse "99999999999999999999999" to a u64`,
	} {
		wantText(t, do(h, http.MethodGet, path, ""), http.StatusNotFound, text)
	}
	wantText(t, do(h, http.MethodPut, "/job/x/heartbeat", ""), http.StatusNotFound, `can not parse "x" to a u64`)
	wantText(t, do(h, http.MethodPut, "/job/x/output", `{}`), http.StatusNotFound, `can not parse "x" to a u64`)
	wantText(t, do(h, http.MethodPatch, "/job/x", `{`), http.StatusNotFound, `can not parse "x" to a u64`)
	wantText(t, do(h, http.MethodDelete, "/job/x", ""), http.StatusNotFound, `can not parse "x" to a u64`)

	const invalid = "Invalid queue name, valid characters: a-zA-Z0-9_.-"
	for _, path := range []string{
		"/queue/a%2Fb", "/queue/a%2Fb/size", "/queue/a%20b/job_ids", "/queue/n%C3%A2me/job",
		"/queue/%3A", "/queue/x'y", "/queue/" + strings.Repeat("a", 1025),
	} {
		wantText(t, do(h, http.MethodGet, path, ""), http.StatusBadRequest, invalid)
	}
	wantText(t, do(h, http.MethodDelete, "/queue/a%2Fb", ""), http.StatusBadRequest, invalid)
	wantText(t, do(h, http.MethodPut, "/queue/a%2Fb", "{}"), http.StatusBadRequest, invalid)
	wantText(t, do(h, http.MethodPost, "/queue/a%2Fb/job", "{}"), http.StatusBadRequest, invalid)
	if calls := store.Calls(); len(calls) != 0 {
		t.Errorf("store calls = %v, want none", calls)
	}
}

func TestRouteHandler(t *testing.T) {
	t.Parallel()
	if _, err := New(&fakeStore{}, Options{}).RouteHandler("no-such-route"); err == nil {
		t.Error(`RouteHandler("no-such-route") error = nil, want an error`)
	}
	var got []uint64
	store := &fakeStore{HeartbeatFunc: func(_ context.Context, id uint64, _ *uint64) error {
		got = append(got, id)
		return nil
	}}
	api := New(store, Options{})
	for _, rt := range Routes() {
		h, err := api.RouteHandler(rt.Name)
		if err != nil {
			t.Fatalf("RouteHandler(%q) error = %v", rt.Name, err)
		}
		// Its own route is served; another route's path is not.
		w := do(h, rt.Method, concrete(rt.Pattern), "{}")
		if w.Code == http.StatusNotFound || w.Code == http.StatusMethodNotAllowed {
			t.Errorf("RouteHandler(%q): %s %s = %d", rt.Name, rt.Method, rt.Pattern, w.Code)
		}
		if rt.Pattern != "/health" {
			wantEmpty(t, do(h, http.MethodGet, "/health", ""), http.StatusNotFound)
		}
	}

	h, _ := api.RouteHandler("heartbeat")
	w := do(h, http.MethodGet, "/job/5/heartbeat", "")
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "PUT" {
		t.Errorf("GET heartbeat = %d Allow %q, want 405 Allow PUT", w.Code, w.Header().Get("Allow"))
	}
	h, _ = api.RouteHandler("get-job")
	w = do(h, http.MethodPut, "/job/5", "")
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, PATCH, DELETE" {
		t.Errorf("PUT get-job = %d Allow %q, want 405 Allow GET, PATCH, DELETE", w.Code, w.Header().Get("Allow"))
	}

	// Path values set beforehand (API Gateway's match) are used as they
	// are, whatever the path says.
	h, _ = api.RouteHandler("heartbeat")
	r := newRequest(http.MethodPut, "/prod/job/1/heartbeat", "")
	r.SetPathValue("id", "42")
	wantEmpty(t, serve(h, r), http.StatusNoContent)
	r = newRequest(http.MethodPut, "/job/1/heartbeat", "")
	r.SetPathValue("id", "%34%32") // as-is: not decoded again
	wantText(t, serve(h, r), http.StatusNotFound, `can not parse "%34%32" to a u64`)
	r = newRequest(http.MethodGet, "/job/1/heartbeat", "")
	r.SetPathValue("id", "42")
	if w := serve(h, r); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET with preset path values = %d, want 405", w.Code)
	}
	wantEmpty(t, do(h, http.MethodPut, "/job/3/heartbeat", ""), http.StatusNoContent)
	if !slices.Equal(got, []uint64{7, 42, 3}) {
		t.Errorf("heartbeat ids = %v, want [7 42 3]", got)
	}

	h, _ = api.RouteHandler("get-queue")
	r = newRequest(http.MethodGet, "/anything", "")
	r.SetPathValue("name", "bad/name")
	wantText(t, serve(h, r), http.StatusBadRequest, "Invalid queue name, valid characters: a-zA-Z0-9_.-")
}

func TestPanicAnswers500(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	store := &fakeStore{InfoFunc: func(context.Context) (ocypod.ServerInfo, error) { panic("boom") }}
	h := New(store, Options{Logger: slog.New(logs)}).Handler()
	wantText(t, do(h, http.MethodGet, "/info", ""), http.StatusInternalServerError, "Internal server error")
	lines := logs.lines()
	if len(lines) != 1 || !strings.Contains(lines[0], "panic: boom") || !strings.Contains(lines[0], "status=500") {
		t.Errorf("logs = %q, want one line with the panic", lines)
	}
}
