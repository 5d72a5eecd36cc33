package httpapi

import (
	"github.com/ocyless/ocyless/shared/wire"

	"net/http"
	"slices"
)

// health serves GET /health: 200 {"status":"healthy"} when Redis answers a
// PING, else 503 {"status":"unhealthy","error":"<message>"} (the message
// carries no secrets and no internal error text). It answers failures itself,
// in JSON, so it never returns an error.
func (a *API) health(w http.ResponseWriter, r *http.Request) error {
	err := a.store.Ping(r.Context())
	if err == nil {
		writeJSON(w, http.StatusOK, []byte(`{"status":"healthy"}`))
		return nil
	}
	_, msg := statusOf(err)
	a.logFailure(r, http.StatusServiceUnavailable, err)
	b := append([]byte(`{"status":"unhealthy","error":`), wire.AppendString(nil, msg)...)
	writeJSON(w, http.StatusServiceUnavailable, append(b, '}'))
	return nil
}

// info serves GET /info: job counts per queue and the global statistics;
// a queue's scheduled and waiting counts only when they are not zero.
func (a *API) info(w http.ResponseWriter, r *http.Request) error {
	info, err := a.store.Info(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendInfo(nil, info))
	return nil
}

// versionBody is the /info/version response.
var versionBody = wire.AppendString(nil, Version)

// version serves GET /info/version: the Ocypod API version as a JSON
// string. It does not touch Redis.
func (a *API) version(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, versionBody)
	return nil
}

// tagJobs serves GET /tag/{name}: the ids of the jobs carrying the tag,
// ascending; [] for an unknown tag. Any non-empty tag may be asked for.
func (a *API) tagJobs(w http.ResponseWriter, r *http.Request) error {
	tag := wire.ValidText(r.PathValue("name"))
	ids, err := a.store.TagJobIDs(r.Context(), tag)
	if err != nil {
		return err
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	writeJSON(w, http.StatusOK, wire.AppendIDs(nil, ids))
	return nil
}
