package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// TestGateHoldsBackWhileCheckUnavailable: while the layout is unchecked, a
// ready check that fails with Unavailable (Open could not reach some node,
// e.g. CONFIG GET on a cluster primary that does not hold the namespace)
// answers 503 and keeps the request from the handler, which could reach a
// namespace whose upgrade is unfinished through its own node.
func TestGateHoldsBackWhileCheckUnavailable(t *testing.T) {
	api := New(&fakeStore{}, Options{})
	reached := false
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true; w.WriteHeader(http.StatusCreated) })
	ready := func(context.Context) (bool, error) {
		return false, ocypod.Unavailable(errors.New("redis 10.0.0.3:6379: connection refused"))
	}
	rec := httptest.NewRecorder()
	api.Gate(next, ready).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/queue/q/job", nil))
	if reached || rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("unchecked layout, ready failed: handler reached = %v, status %d; want a 503 without the handler", reached, rec.Code)
	}
}
