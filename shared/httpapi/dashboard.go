package httpapi

import (
	"net/http"

	"github.com/ocyless/ocyless/shared/dashboard"
)

// dashboard serves GET /ui, the operators' page: a static document that
// calls the routes above from the browser. It never touches the store.
func (a *API) dashboard(w http.ResponseWriter, r *http.Request) error {
	dashboard.Serve(w, r)
	return nil
}
