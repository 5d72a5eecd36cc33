package httpapi

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// jobID parses the {id} path value (404 with upstream's text if it is not a
// u64).
func jobID(r *http.Request) (uint64, error) { return parseJobID(r.PathValue("id")) }

// getJob serves GET /job/{id}[?fields=a,b]: the job's fields, all 17 in
// ocypod.JobFields order, or those requested in the requested order.
func (a *API) getJob(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	fields, err := parseFields(r.URL.RawQuery)
	if err != nil {
		return err
	}
	job, err := a.store.GetJob(r.Context(), id)
	if err != nil {
		return err
	}
	if job == nil {
		return ocypod.JobNotFound(id)
	}
	writeJSON(w, http.StatusOK, wire.AppendJob(nil, job, fields))
	return nil
}

// parseFields reads the optional "fields" query parameter: nil when absent,
// otherwise its comma-separated names, each one of ocypod.JobFields.
// Upstream's query parser refused a repeated key before the names were
// looked at.
func parseFields(rawQuery string) ([]string, error) {
	var value string
	found := false
	for _, part := range strings.Split(rawQuery, "&") {
		if part == "" {
			continue
		}
		key, val, _ := strings.Cut(part, "=")
		if wire.FormDecode(key) != "fields" {
			continue
		}
		if found {
			return nil, badRequest("Query deserialize error: duplicate field `fields`")
		}
		found, value = true, wire.FormDecode(val)
	}
	if !found {
		return nil, nil
	}
	fields := strings.Split(value, ",")
	for _, f := range fields {
		if !slices.Contains(ocypod.JobFields, f) {
			return nil, badRequest("Unrecognised field: " + f)
		}
	}
	return fields, nil
}

// jobStatus serves GET /job/{id}/status: the status as a JSON string.
func (a *API) jobStatus(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	st, err := a.store.JobStatus(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendString(nil, string(st)))
	return nil
}

// getJobOutput serves GET /job/{id}/output: the output, null if none.
func (a *API) getJobOutput(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	out, err := a.store.JobOutput(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendRaw(nil, out))
	return nil
}

// setJobOutput serves PUT /job/{id}/output: replaces a running job's output
// with the body, any JSON value (null included). 204.
func (a *API) setJobOutput(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	if err := a.store.SetJobOutput(r.Context(), id, decodeOutput(doc), nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// heartbeat serves PUT /job/{id}/heartbeat (body ignored). 204.
func (a *API) heartbeat(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	if err := a.store.Heartbeat(r.Context(), id, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// updateJob serves PATCH /job/{id}: {"status":..., "output":...}, both
// optional. 204. Even an empty update is checked against the job's
// existence by the store.
func (a *API) updateJob(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	u, err := decodeJobUpdate(doc)
	if err != nil {
		return err
	}
	if _, _, err := a.store.UpdateJob(r.Context(), id, u, nil); err != nil {
		return err
	}
	if u.Status != nil {
		a.log.LogAttrs(r.Context(), slog.LevelInfo, statusEvents[*u.Status], slog.Uint64("job_id", id))
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// statusEvents names the job event a successful status change is.
var statusEvents = map[ocypod.Status]string{
	ocypod.StatusQueued:    "job requeued",
	ocypod.StatusRunning:   "job started",
	ocypod.StatusCompleted: "job completed",
	ocypod.StatusFailed:    "job failed",
	ocypod.StatusTimedOut:  "job timed out",
	ocypod.StatusCancelled: "job cancelled",
}

// deleteJob serves DELETE /job/{id}, whatever the job's state: 204, or 404
// with an empty body if there is no such job (a bad id keeps its text).
func (a *API) deleteJob(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	if err := a.store.DeleteJob(r.Context(), id); err != nil {
		return emptyNotFound(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
