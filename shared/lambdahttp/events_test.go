package lambdahttp_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/lambdahttp"
)

// eventsDir holds the sample events of every function (../../events).
const eventsDir = "../../events"

// eventFiles returns the sample event files: events/*.json except the
// sam local environment file.
func eventFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(eventsDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no events in %s: %v", eventsDir, err)
	}
	out := files[:0]
	for _, f := range files {
		if filepath.Base(f) != "local-env.json" {
			out = append(out, f)
		}
	}
	return out
}

// TestSampleEvents feeds every events/*.json through the adapter, in front
// of a mux holding the whole route table: each HTTP sample must reach the
// route its file is named after, with API Gateway's path values; each
// sweeper sample must be refused as not an HTTP event.
func TestSampleEvents(t *testing.T) {
	t.Parallel()
	routes := map[string]httpapi.Route{}
	mux := http.NewServeMux()
	var matched string
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }}
	for _, r := range httpapi.Routes() {
		routes[r.Name] = r
		name := r.Name
		mux.HandleFunc(r.Method+" "+r.Pattern, func(w http.ResponseWriter, req *http.Request) {
			matched = name
			rec.ServeHTTP(w, req)
		})
	}
	h := lambdahttp.New(mux, nil)
	for _, file := range eventFiles(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "sweep-") || name == "dispatcher" { // scheduled events, not HTTP
			if _, err := h.Invoke(t.Context(), data); !errors.Is(err, lambdahttp.ErrNotHTTPEvent) {
				t.Errorf("%s: Invoke = %v, want ErrNotHTTPEvent", file, err)
			}
			continue
		}
		route, ok := routes[name]
		if !ok {
			t.Errorf("%s: no route named %q", file, name)
			continue
		}
		var ev struct {
			RouteKey       string            `json:"routeKey"`
			PathParameters map[string]string `json:"pathParameters"`
			Body           string            `json:"body"`
			RequestContext struct {
				RouteKey string `json:"routeKey"`
			} `json:"requestContext"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		wantKey := route.Method + " " + route.Pattern
		if ev.RouteKey != wantKey || ev.RequestContext.RouteKey != wantKey {
			t.Errorf("%s: routeKey %q / %q, want %q", file, ev.RouteKey, ev.RequestContext.RouteKey, wantKey)
		}
		matched = ""
		resp := invoke(t, h, data)
		if resp.StatusCode != http.StatusNoContent || matched != name {
			t.Errorf("%s: status %d via route %q, want 204 via %q", file, resp.StatusCode, matched, name)
			continue
		}
		s := rec.seen(t)
		if s.Method != route.Method {
			t.Errorf("%s: method %s, want %s", file, s.Method, route.Method)
		}
		for k, v := range ev.PathParameters {
			if s.PathValues[k] != v {
				t.Errorf("%s: PathValue(%s) = %q, want %q", file, k, s.PathValues[k], v)
			}
		}
		if strings.Count(route.Pattern, "{") != len(ev.PathParameters) {
			t.Errorf("%s: pathParameters %v do not match %s", file, ev.PathParameters, route.Pattern)
		}
		if s.Body != ev.Body {
			t.Errorf("%s: body %q, want %q", file, s.Body, ev.Body)
		}
	}
}

// TestALBSampleEvents feeds every events/alb/*.json (each route's request
// as the internal load balancer delivers it) through the adapter: it must
// reach the route its file is named after with the same path values,
// query and body as the route's API Gateway sample.
func TestALBSampleEvents(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	var matched string
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }}
	for _, r := range httpapi.Routes() {
		name := r.Name
		mux.HandleFunc(r.Method+" "+r.Pattern, func(w http.ResponseWriter, req *http.Request) {
			matched = name
			rec.ServeHTTP(w, req)
		})
	}
	h := lambdahttp.New(mux, nil)
	files, err := filepath.Glob(filepath.Join(eventsDir, "alb", "*.json"))
	if err != nil || len(files) != len(httpapi.Routes()) {
		t.Fatalf("events/alb has %d samples (%v), want one per route (%d): run make generate", len(files), err, len(httpapi.Routes()))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		albData, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		apiData, err := os.ReadFile(filepath.Join(eventsDir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		matched = ""
		resp := invoke(t, h, albData)
		if resp.StatusCode != http.StatusNoContent || resp.StatusDescription != "204 No Content" || matched != name {
			t.Errorf("%s: %d %q via route %q, want 204 via %q", file, resp.StatusCode, resp.StatusDescription, matched, name)
			continue
		}
		viaALB := rec.seen(t)
		_ = invoke(t, h, apiData)
		viaAPI := rec.seen(t)
		if viaALB.Method != viaAPI.Method || viaALB.Path != viaAPI.Path || viaALB.Body != viaAPI.Body ||
			!reflect.DeepEqual(viaALB.PathValues, viaAPI.PathValues) || !reflect.DeepEqual(viaALB.Query, viaAPI.Query) {
			t.Errorf("%s: the load balancer's request differs from API Gateway's:\n%+v\n%+v", file, viaALB, viaAPI)
		}
	}
}
