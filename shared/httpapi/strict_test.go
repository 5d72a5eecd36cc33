package httpapi

import (
	"net/http"
	"testing"

	"github.com/ocyless/ocyless/shared/config"
)

// TestOcypodRoutesList: the hand-written list of Ocypod's routes is the
// table's first 19.
func TestOcypodRoutesList(t *testing.T) {
	t.Parallel()
	if len(ocypodRoutes) != 19 {
		t.Fatalf("ocypodRoutes has %d routes, want 19", len(ocypodRoutes))
	}
	for _, rt := range routes[:19] {
		if !ocypodRoutes[rt.Name] {
			t.Errorf("ocypodRoutes lacks %s", rt.Name)
		}
	}
	for name, p := range routeParams {
		found := false
		for _, rt := range routes {
			found = found || rt.Name == name
		}
		if !found || (len(p.ocypod) > 0 && !ocypodRoutes[name]) {
			t.Errorf("routeParams[%s]: not a route, or Ocypod parameters on a route Ocypod lacks", name)
		}
	}
}

// TestUnknownInputOcypodSilence: a pure Ocypod request keeps Ocypod's
// silence about keys and parameters it does not know (clients rely on
// it); the same request with StrictInput is refused and changes nothing.
func TestUnknownInputOcypodSilence(t *testing.T) {
	t.Parallel()
	requests := []struct{ method, path, body, text string }{
		{"POST", "/queue/q/job?verbose=1", `{"input":1}`, "Unknown parameter: verbose"},
		{"POST", "/queue/q/job", `{"input":1,"colour":"red"}`, "Unknown field: colour"},
		{"PUT", "/queue/q", `{"timeout":"1m","colour":"red"}`, "Unknown field: colour"},
		{"PATCH", "/job/1", `{"output":1,"colour":"red"}`, "Unknown field: colour"},
		{"GET", "/job/1?fields=id&pretty", "", "Unknown parameter: pretty"},
		{"GET", "/queue/q/size?x=1", "", "Unknown parameter: x"},
	}
	lenient := newEnv(t, Options{})
	lenient.seedQueue(t, "q", `{}`)
	lenient.seedJob(t, "q", `{}`)
	lenient.take(t, "q")
	for _, rq := range requests {
		if w := do(lenient.h, rq.method, rq.path, rq.body); w.Code >= 400 {
			t.Errorf("%s %s %s = %d %q: Ocypod ignores unknown input", rq.method, rq.path, rq.body, w.Code, w.Body)
		}
	}
	strict := newEnv(t, Options{StrictInput: true})
	strict.seedQueue(t, "q", `{}`)
	strict.seedJob(t, "q", `{}`)
	strict.take(t, "q")
	before := strict.snapshot(t)
	for _, rq := range requests {
		wantText(t, do(strict.h, rq.method, rq.path, rq.body), http.StatusBadRequest, rq.text)
	}
	if after := strict.snapshot(t); !equalSnapshots(before, after) {
		t.Error("refused strict requests changed Redis")
	}
	if !ConfigOptions(config.Server{StrictInput: true}).StrictInput {
		t.Error("server.strict_input does not reach the handlers' options")
	}
	// Known input still works when strict.
	wantJSON(t, do(strict.h, "GET", "/job/1?fields=id", ""), http.StatusOK, `{"id":1}`)
}
