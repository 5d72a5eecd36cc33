package httpapi

import (
	"net/http"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// workers serves GET /workers: [{"name","last_seen","running","timed_out"}]
// of the workers seen within the worker expiry, most recent first.
func (a *API) workers(w http.ResponseWriter, r *http.Request) error {
	ws, err := a.store.Workers(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendWorkers(nil, ws))
	return nil
}

// worker serves GET /workers/{name}: {"running": [ids], "timed_out": [ids]};
// 404 for a worker never seen or forgotten.
func (a *API) worker(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if !printable(name, ocypod.MaxWorkerName) {
		return invalid("worker", "must be 1 to 128 printable characters")
	}
	wj, err := a.store.Worker(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendWorkerJobs(nil, wj))
	return nil
}
